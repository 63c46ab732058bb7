"""The direct-positive-evidence (DPE) contract: one registry entry per phenomenon.

A :class:`Phenomenon` declares, in one place (one module per phenomenon in this
package):

- its **rule per mode**: ``posh`` states POSH App. C literally (over-filters on
  gold trees, but misses what a parser misparses); ``strict`` targets the
  disambiguating evidence itself; ``conservative`` aims at App. C's decisions on
  *gold* trees from a real parser's output, recall first: App. C's test on the
  parse united with general structural patterns that flag what the parse may
  have missed (measured against gold trees, cross-validated by transcript:
  docs/filter.md);
- its **surface pre-test**: a *necessary* condition of every mode's rule,
  computed from the raw text alone, so a sentence that fails it never needs
  parsing (the parse stage's prefilter is derived from these);
- its **App. C sanity check**: which surviving sentences a human should
  inspect (a seeded sample is written next to ``dpe.tsv``);
- the **languages** its rules are written for.

Everything that needs to know about DPE asks this registry: the parse stage
(what to parse), the filter (what to remove), the audit file (``dpe.tsv``, see
:mod:`povstim.dpe.audit`), the conditions (which removals are targeted
evidence), the config schema check and the figures. Changing a rule is an edit
of its phenomenon module; adding a phenomenon is one new module registered at
the bottom of this file.

A rule takes a parsed :class:`~povstim.parse.conllu.Sentence` and a
:class:`Context` and returns the tuple of tokens that triggered it, or None.
The rule function's name is what ``dpe.tsv`` records in its ``rule`` column,
unless the rule returns a :class:`Hit`, which names the cue that fired (a rule
that is a union of cues says which one).

A phenomenon is either a Python module of this package (POSH App. C's question
formation, binding, wanna) or a declarative construction, a YAML entry read by
:mod:`povstim.constructions` (the library under ``constructions/library/`` and
the user's ``filter.constructions``): both register here, and every stage
treats them the same. The registry lives in this module, not in the package's
``__init__``, so the phenomenon modules import it without an import cycle.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import inspect
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..io import PovstimError
from ..parse.conllu import Sentence, Token
from ..parse.tokenize import tokenize
from .words import ANIMATE_NOUNS

MODES = ("posh", "strict", "conservative")

# A cue (the ``rule`` a removal records) measured below this precision never makes a removal targeted: BABY's
# evidence pool would be mostly noise. The measurements: CUE_PRECISION_FILE, written by
# scripts/french_cue_precision.py from hand labels; a cue it does not list is not gated.
TARGETED_PRECISION = 0.5
CUE_PRECISION_FILE = Path(__file__).with_name("cue_precision.yaml")

RuleFn = Callable[[Sentence, "Context"], "tuple[Token, ...] | None"]
SurfaceFn = Callable[[list[str], str], bool]
SanityFn = Callable[[list[str], str], bool]
FitFn = Callable[[list[Sentence], "list[Sentence | None]", list[bool]], dict]
BatchFn = Callable[[Sentence, str, tuple], dict]


@dataclass(frozen=True)
class Context:
    """What rules may consult besides the parse: the animate nouns of the strict binding rule."""

    animate_nouns: frozenset[str] = ANIMATE_NOUNS
    # Parameters a phenomenon's ``fit`` learned from data (phenomenon -> its parameters). Empty in the
    # pipeline; filter_validation fills it per cross-validation fold from the training folds only.
    fitted: dict = field(default_factory=dict, compare=False, hash=False)

    @classmethod
    def with_nouns(cls, extra=()) -> "Context":
        return cls(ANIMATE_NOUNS | frozenset(w.lower() for w in extra))

    def with_fitted(self, fitted: dict) -> "Context":
        return Context(self.animate_nouns, dict(fitted))


@dataclass(frozen=True)
class Phenomenon:
    name: str
    rules: dict[str, RuleFn]  # mode -> rule
    surface: SurfaceFn  # (tokens of parse.tokenize, raw text) -> could any mode's rule fire?
    sanity: SanityFn | None = None  # App. C sanity-check candidate among the survivors
    languages: tuple[str, ...] = ("en",)
    description: str = ""
    extras: dict = field(default_factory=dict)
    # A rule with parts learned from data (a word list, a threshold) declares how to learn them:
    # ``fit(gold_trees, parses, reference) -> parameters`` (``reference[i]``: the reference rules fire on
    # gold tree i), read by its rules from ``ctx.fitted[name]``. filter_validation fits it on the training
    # folds only and measures it on the held-out fold. None: the rules have no fitted parts.
    fit: FitFn | None = None
    # What the surface pre-test is when its source is not a function of its own: a declarative
    # construction's derived pre-test (its required word forms), hashed by surface_hash instead of the
    # function's source (one generic function serves every construction).
    surface_key: str | None = None
    # Whether the App. C sanity sample is drawn whatever is filtered (App. C's own checks) or only when
    # the phenomenon is among the filtered rules (a construction's sample).
    sanity_always: bool = True
    # Where the phenomenon is defined: "python" (a module of this package) or "file:line" of its YAML entry.
    origin: str = "python"
    # The benchmark paradigms its removal should hurt: {"blimp": [UIDs], "zorro": [...], "posh": [...]}.
    targets: dict = field(default_factory=dict)
    # Phenomena answered together: ``batch(sent, mode, rules) -> {name: hit}`` for every one of ``rules``
    # that shares this function (the same hits as each one's rule; one call per sentence and mode in
    # find_dpe). The declarative constructions share one (one pass over the tokens for all of them).
    batch: BatchFn | None = field(default=None, compare=False)


class Hit(tuple):
    """The tokens a rule matched, plus the name of the cue that fired (recorded as the ``rule``)."""

    rule: str

    def __new__(cls, tokens, rule: str):
        obj = super().__new__(cls, tokens)
        obj.rule = rule
        return obj


@dataclass(frozen=True)
class Match:
    phenomenon: str
    rule: str
    tokens: tuple[Token, ...]

    def tokens_str(self) -> str:
        return "|".join(f"{t.id}:{t.form}" for t in self.tokens)


class _Registry(dict):
    """The phenomena by name. Every change bumps ``version``, so find_dpe's plan per list of rules (which
    phenomena run alone, which in one batch) is rebuilt after any registration, even a test's setitem."""

    version = 0

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        self.version += 1

    def __delitem__(self, key):
        super().__delitem__(key)
        self.version += 1

    def pop(self, *args):
        self.version += 1
        return super().pop(*args)

    def update(self, *args, **kw):
        super().update(*args, **kw)
        self.version += 1

    def clear(self):
        super().clear()
        self.version += 1


PHENOMENA: dict[str, Phenomenon] = _Registry()
_LAYOUTS: dict[tuple, tuple] = {}  # (mode, rules) -> (registry version, batch functions, lone phenomena)


def register(ph: Phenomenon, replace: bool = False) -> Phenomenon:
    """Add ``ph`` to the registry. A second phenomenon of the same name is an error naming both
    definitions, unless ``replace`` (the same definition registered again, e.g. a config loaded twice)."""
    missing = [m for m in MODES if m not in ph.rules]
    if missing:
        raise ValueError(f"phenomenon {ph.name}: no rule for mode(s) {', '.join(missing)}")
    old = PHENOMENA.get(ph.name)
    if old is not None and not replace:
        raise PovstimError(f"{ph.origin}: a construction named {ph.name!r} is already defined ({old.origin}): "
                           "construction names must be unique")
    PHENOMENA[ph.name] = ph
    return ph


def sanity_names(rules=()) -> list[str]:
    """The phenomena whose App. C sanity sample a filter run writes: App. C's own checks always (App. C
    inspects them whatever is filtered), a construction's only when it is among ``rules``."""
    rules = set(rules)
    # App. C's checks read English: only where the filtered rules' language is theirs
    langs = languages(rules) if rules else {"en"}
    return [n for n, ph in PHENOMENA.items() if ph.sanity is not None
            and ((ph.sanity_always and langs & set(ph.languages)) or n in rules)]


def check_rules(rules, where: str = "filter.rules") -> tuple[str, ...]:
    """The names, checked against the registry (a did-you-mean error names the key)."""
    rules = tuple(rules)
    for r in rules:
        if r not in PHENOMENA:
            hint = difflib.get_close_matches(str(r), PHENOMENA, n=1)
            tip = f" (did you mean '{hint[0]}'?)" if hint else ""
            raise PovstimError(f"{where}: unknown phenomenon {r!r}{tip}; known: {', '.join(sorted(PHENOMENA))}")
    if not rules:
        raise PovstimError(f"{where} is empty: name at least one phenomenon to filter")
    return rules


def languages(rules) -> set[str]:
    """Languages every one of ``rules`` has rules for."""
    out: set[str] | None = None
    for r in check_rules(rules):
        langs = set(PHENOMENA[r].languages)
        out = langs if out is None else out & langs
    return out or set()


def find_dpe(sent: Sentence, mode: str, rules, ctx: Context = Context()) -> list[Match]:
    """Every one of ``rules`` (phenomenon names) whose ``mode`` rule fires on ``sent``, in rule order.

    A phenomenon with a ``batch`` function is answered by one call of it per sentence for all of them
    (the declarative constructions); the others by their rule. Most sentences match nothing: then the
    per-name loop is skipped."""
    if mode not in MODES:
        raise PovstimError(f"filter.mode: unknown mode {mode!r} (choose from {', '.join(MODES)})")
    rules = rules if type(rules) is tuple else tuple(rules)
    lay = _LAYOUTS.get((mode, rules))
    if lay is None or lay[0] != PHENOMENA.version:
        if len(_LAYOUTS) > 1000:
            _LAYOUTS.clear()
        lay = _LAYOUTS[(mode, rules)] = _layout(rules)
    hits: dict = {}
    for b in lay[1]:
        got = b(sent, mode, rules)
        if got:
            hits.update(got)
    for name, ph in lay[2]:
        hit = ph.rules[mode](sent, ctx)
        if hit:
            hits[name] = hit
    if not hits:
        return []
    out = []
    for name in rules:
        hit = hits.get(name)
        if hit:
            rule = getattr(hit, "rule", None) or PHENOMENA[name].rules[mode].__name__
            out.append(Match(name, rule, tuple(t for t in hit if t is not None)))
    return out


def _layout(rules: tuple) -> tuple:
    """(registry version, the batch functions of ``rules`` in first-use order, the (name, phenomenon) pairs
    that run alone)."""
    batches, alone = [], []
    for name in dict.fromkeys(rules):
        ph = PHENOMENA[name]
        if ph.batch is None:
            alone.append((name, ph))
        elif ph.batch not in batches:
            batches.append(ph.batch)
    return PHENOMENA.version, tuple(batches), tuple(alone)


@functools.cache
def cue_precision() -> dict[str, dict[str, float]]:
    """phenomenon -> cue -> its measured precision (CUE_PRECISION_FILE's ``gate``; {} without the file)."""
    if not CUE_PRECISION_FILE.is_file():
        return {}
    import yaml  # deferred: only the filter's targeted flag reads it

    try:
        gate = (yaml.safe_load(CUE_PRECISION_FILE.read_text(encoding="utf-8")) or {}).get("gate") or {}
    except (OSError, yaml.YAMLError) as exc:
        raise PovstimError(f"{CUE_PRECISION_FILE}: cannot read the cues' measured precision ({exc})") from None
    return {p: {c: float(v) for c, v in cues.items()} for p, cues in gate.items()}


def feeds_targeted(phenomenon: str, rule: str) -> bool:
    """Whether a removal by ``rule`` (the cue dpe.tsv records) may be targeted evidence: not when the cue's
    measured precision is below TARGETED_PRECISION."""
    measured = cue_precision().get(phenomenon, {}).get(rule)
    return measured is None or measured >= TARGETED_PRECISION


def needs_parse(text: str, rules) -> bool:
    """False only when no phenomenon of ``rules`` can fire on ``text``, in any mode (the prefilter)."""
    words, _ = tokenize(text)
    return any(PHENOMENA[r].surface(words, text) for r in rules)


def surface_hash(rules) -> str:
    """A hash of what decides the prefilter: the enabled phenomena's surface tests and the word lists.

    The parse rule carries it, so editing a surface test reruns the parse while
    editing a rule (same module) reruns only the filter.
    """
    h = hashlib.sha256()
    for r in sorted(check_rules(rules)):
        h.update(r.encode())
        ph = PHENOMENA[r]
        h.update((ph.surface_key if ph.surface_key is not None else inspect.getsource(ph.surface)).encode())
    for helper in (Path(__file__), Path(__file__).with_name("words.py"), Path(__file__).with_name("surface.py")):
        h.update(helper.read_bytes())
    return h.hexdigest()[:16]
