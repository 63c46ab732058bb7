"""Declarative constructions in the DPE registry: the library's YAML files and the user's config entries.

Each :class:`~povstim.constructions.spec.Construction` becomes a
:class:`~povstim.dpe.registry.Phenomenon` whose rule per mode runs the mode's patterns
(:func:`povstim.constructions.match.match`), whose surface pre-test is derived from the patterns
(the word forms every match needs), and whose sanity check is its ``sanity:``. The filter, the
prefilter, ``dpe.tsv``, the conditions and ``filter_validation`` treat it as any phenomenon.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path

from ..dpe.registry import MODES, PHENOMENA, Hit, Phenomenon, register
from ..io import PovstimError, project_dir
from ..parse.tokenize import tokenize
from . import fastmatch, match
from .spec import Construction, Where, norm, parse_entries, read_file

log = logging.getLogger("povstim.constructions")

LIBRARY = Path(__file__).with_name("library")
CONSTRUCTIONS: dict[str, Construction] = {}  # name -> definition (library and user)
_USER: dict[str, str] = {}  # name -> fingerprint of the user constructions registered


def library_files() -> list[Path]:
    return sorted(LIBRARY.glob("*.yaml"))


def _rule(c: Construction, mode: str):
    run = None  # the compiled matcher, built at the first sentence (spaCy-free, but not at import)

    def rule(sent, ctx):
        nonlocal run
        if run is None:
            run = match.matcher(c, mode)
        got = run(sent)
        if got is None:
            return None
        pname, toks = got
        return Hit(toks, f"{c.name}:{pname}")

    rule.__name__ = f"{c.name}_{mode}"
    rule.__qualname__ = rule.__name__
    return rule


def _sanity(c: Construction, surface):
    if c.sanity_forms is None and not c.sanity_surface:
        return None
    forms = c.sanity_forms or frozenset()

    def sanity(words: list[str], text: str) -> bool:
        toks = tokenize(text)[0]
        if forms and any(norm(w) in forms for w in toks):
            return True
        return c.sanity_surface and surface(toks, text)

    return sanity


_PLANS: dict[tuple, fastmatch.Plan] = {}  # (mode, rules) -> the constructions among them, compiled together


def _batch(sent, mode: str, rules: tuple) -> dict:
    """The hits of every construction among ``rules`` on ``sent`` (find_dpe's one call per sentence and
    mode for all of them): the same hits as each one's rule, from one :class:`fastmatch.Plan`."""
    key = (mode, rules)
    plan = _PLANS.get(key)
    if plan is None:
        names = [r for r in dict.fromkeys(rules) if r in CONSTRUCTIONS and PHENOMENA[r].batch is _batch]
        plan = _PLANS[key] = fastmatch.Plan([(n, match.fast_patterns(CONSTRUCTIONS[n], mode)) for n in names])
    if not sent.tokens:
        return {}
    try:
        found = plan.run(sent)
    except fastmatch.HeadCycle:  # a tree the compiled matcher does not take: the DependencyMatcher answers
        found = {n: got for n, _ in plan.items
                 if (got := match.match(CONSTRUCTIONS[n], mode, sent, engine="spacy")) is not None}
    return {n: Hit(toks, f"{n}:{pname}") for n, (pname, toks) in found.items()}


def clear_caches() -> None:
    """Forget the compiled plans and the token-row caches (a benchmark's cold start; outputs never
    depend on them)."""
    _PLANS.clear()
    fastmatch.clear_caches()


def phenomenon(c: Construction) -> Phenomenon:
    spec = match.surface_spec(c)
    surface = match.make_surface(spec)
    return Phenomenon(
        name=c.name, rules={m: _rule(c, m) for m in MODES}, surface=surface, sanity=_sanity(c, surface),
        languages=c.languages, description=c.description,
        extras={"citation": c.citation, "fingerprint": match.fingerprint(c)},
        surface_key="construction-surface:" + json.dumps(spec), sanity_always=False, origin=c.origin,
        targets={k: list(v) for k, v in c.targets.items()}, batch=_batch,
    )


def add(constructions: list[Construction], replace: bool = False) -> None:
    for c in constructions:
        old = PHENOMENA.get(c.name)
        same = old is not None and replace and old.extras.get("fingerprint") == match.fingerprint(c)
        if old is not None and not same:
            raise PovstimError(f"{c.origin}: a construction named {c.name!r} is already defined ({old.origin}): "
                               "construction names must be unique")
        register(phenomenon(c), replace=same)
        CONSTRUCTIONS[c.name] = c
        _PLANS.clear()


def register_library() -> None:
    """Register every construction of the library's YAML files (once, at import of povstim.dpe)."""
    for path in library_files():
        add(read_file(path))


def user_constructions(value, where: str = "filter.constructions", base_dir: Path | None = None,
                       blimp: str | None = None) -> list[Construction]:
    """The constructions of ``filter.constructions``: a list of entries, or the path of a YAML file
    (relative to ``base_dir``, by default the project folder: ``io.project_dir``) holding
    ``constructions:``; ``blimp``: ``filter.blimp_vocabulary``, the BLiMP folder a ``{blimp: name}`` word list is
    read from (relative likewise)."""
    if value in (None, [], (), ""):
        return []
    base_dir = project_dir() if base_dir is None else base_dir
    if blimp:
        b = Path(blimp)
        blimp = str(b if b.is_absolute() else base_dir / b)
    if isinstance(value, tuple):
        value = list(value)
    if isinstance(value, str):
        p = Path(value)
        return read_file(p if p.is_absolute() else base_dir / p, blimp=blimp)
    return parse_entries(value, Where(where, None), (where,), base_dir, blimp=blimp)


def use(filter_section: dict | None, where: str = "filter.constructions") -> list[str]:
    """Register the user's constructions of a filter section (again: the same definitions are fine, a
    name already taken by another definition is an error). Returns their names."""
    if not filter_section:
        return []
    cs = user_constructions(filter_section.get("constructions"), where, blimp=filter_section.get("blimp_vocabulary"))
    for c in cs:
        fp = match.fingerprint(c)
        old = PHENOMENA.get(c.name)
        # the same place redefined (a BLiMP vocabulary read again from another folder) replaces itself; another
        # definition under a taken name is an error
        if old is not None and _USER.get(c.name) != fp and getattr(old, "origin", None) != c.origin:
            raise PovstimError(f"{c.origin}: a construction named {c.name!r} is already defined ({old.origin}): "
                               "construction names must be unique")
        register(phenomenon(c), replace=c.name in PHENOMENA)
        CONSTRUCTIONS[c.name] = c
        _USER[c.name] = fp
        _PLANS.clear()
    return [c.name for c in cs]


def warn_untargeted(rules) -> list[str]:
    """A warning for each filtered construction that names no benchmark paradigm (no target to measure)."""
    out = []
    for r in rules:
        ph = PHENOMENA.get(r)
        if ph is not None and ph.origin != "python" and not any(ph.targets.values()):
            msg = (f"{ph.origin}: construction {r!r} names no target paradigm (targets: blimp/zorro/posh): its "
                   "removal cannot be measured against the paradigms it should affect")
            log.warning("NO TARGET: %s", msg)
            out.append(msg)
    return out


def spec_hash(rules, filter_section: dict | None = None) -> str:
    """A hash of the definitions of ``rules`` that are constructions (library or user, word lists
    resolved): a rule of Snakemake carries it so an edited YAML entry reruns the filter."""
    h = hashlib.sha256()
    for r in sorted(rules):
        ph = PHENOMENA.get(r)
        if ph is not None and "fingerprint" in ph.extras:
            h.update(f"{r}:{ph.extras['fingerprint']}".encode())
    return h.hexdigest()[:16]


# The library registers when this module loads: imported by povstim.dpe (after App. C's modules) or
# first (it imports the registry, whose package imports App. C's modules first): the same order either way.
register_library()
