"""Corpus operations: a condition's ``operations:`` list, applied in order to its base corpus, each change a
row of the condition's audit (``operations.tsv``).

| op | keys | what |
|---|---|---|
| ``remove`` | ``constructions`` (list, or true = filter.rules) | every sentence dpe.tsv lists for them goes |
| ``random_remove`` | ``of`` (a condition with a remove) | as many sentences and words as that remove takes, drawn (seeded) from sentences with no evidence of anything |
| ``reinsert`` | ``rates`` (construction -> share) | targeted evidence this chain removed goes back at the rate |
| ``add`` | ``construction``, ``n`` | n removed sentences of the construction go back |
| ``replace`` | ``construction``, ``variant`` | each instance in the corpus rewritten into its counterfactual variant (conditions/variants.py) |
| ``placebo`` | ``of``, ``vs``, ``draw`` (set by :func:`expand_placebo`) | as many random sentences without evidence taken out as the corpora of ``of`` and ``vs`` differ by (words matched) |

Token matching: ``reinsert`` and ``add`` put sentences back in place of sentences *without evidence* chosen so
their words add up to the words put back (within ``WORD_TOLERANCE``), so the condition keeps the sentence
and word count of the corpus before the operation; ``replace`` keeps every word; ``random_remove`` matches
its remove in sentences exactly and in words within the tolerance.

Each operation is an :class:`Op` in ``OPERATIONS`` (name, config check, apply). ``check`` runs at config time
(``povstim.config``), before any job; ``apply`` at build time, on a :class:`State`.
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass, field
from typing import Callable

from .. import dpe
from ..io import PovstimError
from . import variants

log = logging.getLogger("povstim.condition")

WORD_TOLERANCE = 0.001  # |words(put in) - words(taken out)| <= 0.1% of the condition's words
AUDIT_COLUMNS = ("step", "op", "action", "sent_id", "construction", "reason", "sentence", "new_sentence")


@dataclass
class State:
    """A condition being built: base.txt line ids present (base order), rewritten texts, the audit."""

    lines: list[str]
    dpe_of: dict[int, list[str]]           # id -> constructions dpe.tsv lists it for (every row)
    targeted_of: dict[int, set[str]]
    seed: int
    name: str = "condition"
    trees: dict | None = None               # id -> parsed Sentence (replace only)
    ids: list[int] = field(default_factory=list)
    text: dict[int, str] = field(default_factory=dict)
    removed: dict[str, list[int]] = field(default_factory=dict)  # construction -> ids a remove took
    audit: list[tuple] = field(default_factory=list)
    notes: dict = field(default_factory=dict)

    def words(self, i: int) -> int:
        return len(self.text.get(i, self.lines[i]).split())

    def n_words(self) -> int:
        return sum(self.words(i) for i in self.ids)

    def log(self, step: int, op: str, action: str, i: int, construction: str, reason: str, new: str = "") -> None:
        self.audit.append((step, op, action, i, construction, reason, self.lines[i], new))


def nothing_changed(state: State, message: str) -> None:
    """An operation that changed nothing: a WARNING in the log and ``warnings`` in condition.json (the report's
    conditions page shows them), never a silent unchanged copy."""
    state.notes.setdefault("warnings", []).append(message)
    log.warning("conditions.%s: %s", state.name, message)


@dataclass(frozen=True)
class Op:
    name: str
    check: Callable[[dict, str, dict], None]   # (op spec, config key, all conditions) -> None or PovstimError
    apply: Callable[[State, dict, int], None]  # (state, resolved spec, step)


OPERATIONS: dict[str, Op] = {}


def register(op: Op) -> Op:
    OPERATIONS[op.name] = op
    return op


def _rng(state: State, step: int, what: str) -> random.Random:
    return random.Random(f"{state.seed}:{state.name}:{step}:{what}")


def match_words(pool: list[int], k: int, target: int, words: Callable[[int], int], rng: random.Random,
                tolerance: int, strict: bool = True) -> list[int]:
    """k ids of ``pool`` (seeded sample) whose words add up to ``target`` within ``tolerance``: a random
    sample, then swaps (one in, one out) that bring the sum closer, until it is exact or no swap helps.
    Out of tolerance: an error, or (``strict=False``, the old-style ``reinsert:`` key, whose configs built
    before words were matched) a warning and the closest sample."""
    if k > len(pool):
        raise PovstimError(f"needs {k} sentences without evidence, the corpus has {len(pool)}")
    if k == 0:
        return []
    chosen = rng.sample(pool, k)
    inside = set(chosen)
    out = [i for i in pool if i not in inside]
    total = sum(words(i) for i in chosen)
    by_len: dict[int, list[int]] = {}
    for i in out:
        by_len.setdefault(words(i), []).append(i)
    for _ in range(10 * k + 100):
        diff = target - total
        if diff == 0:  # aim for the exact count; within the tolerance is accepted when no swap gets closer
            break
        # the chosen sentence whose swap for a sentence of the best length closes the gap most
        best = None
        for pos in rng.sample(range(k), min(k, 200)):
            w = words(chosen[pos])
            want = w + diff
            lens = [n for n in by_len if by_len[n]]
            if not lens:
                break
            n = min(lens, key=lambda n: (abs(n - want), n))
            gain = abs(diff) - abs(want - n)
            if gain > 0 and (best is None or gain > best[0]):
                best = (gain, pos, n)
        if best is None:
            break
        _, pos, n = best
        new = by_len[n].pop(rng.randrange(len(by_len[n])))
        old = chosen[pos]
        by_len.setdefault(words(old), []).append(old)
        chosen[pos] = new
        total += n - words(old)
    if abs(target - total) > tolerance:
        if strict:
            raise PovstimError(f"cannot match {target} words with {k} sentences (closest: {total})")
        log.warning("WORDS NOT MATCHED: no %d sentences without evidence add up to %d words within %d (closest: "
                    "%d); the condition differs from its reference by %+d words", k, target, tolerance, total,
                    target - total)
    return sorted(chosen)


def _tolerance(state: State) -> int:
    return int(WORD_TOLERANCE * state.n_words())


def _evidence_free(state: State) -> list[int]:
    return [i for i in state.ids if i not in state.dpe_of and i not in state.text]


def _put_back(state: State, step: int, op: str, back: dict[str, list[int]], why: str) -> None:
    """Put ``back`` (construction -> ids) in, each replacing a sentence without evidence, words matched."""
    ins = sorted(i for v in back.values() for i in v)
    if not ins:
        return
    target = sum(state.words(i) for i in ins)
    out = match_words(_evidence_free(state), len(ins), target, state.words, _rng(state, step, "room"),
                      _tolerance(state))
    gone = set(out)
    state.ids = sorted([i for i in state.ids if i not in gone] + ins)
    for c, ids in sorted(back.items()):
        for i in ids:
            state.log(step, op, "added", i, c, why)
    for i in out:
        state.log(step, op, "removed", i, "", f"makes room for the {op} (words matched)")


# --- remove

def _check_remove(spec, where, conditions):
    pass


def _apply_remove(state: State, spec: dict, step: int) -> None:
    cons = set(spec["constructions"])
    take = [i for i in state.ids if cons.intersection(state.dpe_of.get(i, ()))]
    gone = set(take)
    state.ids = [i for i in state.ids if i not in gone]
    for i in take:
        hit = [c for c in state.dpe_of[i] if c in cons]
        for c in hit:
            state.removed.setdefault(c, []).append(i)
        state.log(step, "remove", "removed", i, ",".join(hit), "direct positive evidence (dpe.tsv)")
    unmatched = sorted(c for c in cons if c not in state.removed)
    if unmatched:
        nothing_changed(state, f"operations[{step}] remove: {', '.join(unmatched)} matched no sentence of the corpus "
                               "(NO MATCH: nothing removed for it)")
    if not state.ids:
        raise PovstimError(f"conditions.{state.name}: every sentence was removed: the corpus is empty")


register(Op("remove", _check_remove, _apply_remove))


# --- random_remove

def _check_random_remove(spec, where, conditions):
    of = spec.get("of")
    if not of:
        raise PovstimError(f"{where}.of: random_remove must name a condition whose remove it matches")
    if of not in conditions:
        raise PovstimError(f"{where}.of: {of!r} is not a condition (known: {', '.join(sorted(conditions))})")
    if not removes(conditions[of]):
        raise PovstimError(f"{where}.of: condition {of!r} removes nothing (no remove operation, no filter): "
                           "random_remove needs a remove to match")


def _apply_random_remove(state: State, spec: dict, step: int) -> None:
    cons = set(spec["constructions"])
    like = [i for i in range(len(state.lines)) if cons.intersection(state.dpe_of.get(i, ()))]
    k, target = len(like), sum(len(state.lines[i].split()) for i in like)
    tol = int(WORD_TOLERANCE * sum(len(state.lines[i].split()) for i in range(len(state.lines))))
    take = match_words(_evidence_free(state), k, target, state.words, _rng(state, step, "random"), tol)
    gone = set(take)
    state.ids = [i for i in state.ids if i not in gone]
    state.notes.setdefault("random_remove", []).append(
        {"of": spec["of"], "sentences": k, "words": target, "removed_words": sum(state.words(i) for i in take)})
    for i in take:
        state.log(step, "random_remove", "removed", i, "", f"random control for {spec['of']}'s remove "
                  f"({k} sentences, {target} words)")


register(Op("random_remove", _check_random_remove, _apply_random_remove))


# --- reinsert

def sentences_for(rate, n: int) -> int:
    """Sentences a reinsert rate asks for in a corpus of ``n`` sentences: one rounding for ``conditions.build``,
    this operation and ``povstim plan``'s forecast (preflight/evidence.py, dose_outlook.py)."""
    return int(round(float(rate) * n))


def pool_phenomenon(phenomena, targeted) -> str | None:
    """The phenomenon a removed sentence can be put back for: removed for it alone and targeted (strict-rule)
    evidence of it; None when it is not in any reinsert pool. The one definition of the pool for
    ``conditions.build``, this operation and ``povstim plan``."""
    phenomena = list(phenomena)
    return phenomena[0] if len(phenomena) == 1 and phenomena[0] in targeted else None


def _check_reinsert(spec, where, conditions):
    for c, r in (spec.get("rates") or {}).items():
        if not 0 <= float(r) < 1:
            raise PovstimError(f"{where}.rates.{c}: {r} is not a rate in [0, 1)")


def _single(state: State, c: str, targeted_only: bool) -> list[int]:
    """Ids a remove of this chain took for ``c`` alone (targeted evidence only if asked), not back yet."""
    present = set(state.ids)
    return [i for i in state.removed.get(c, []) if i not in present and (
        pool_phenomenon(state.dpe_of[i], state.targeted_of.get(i, ())) == c if targeted_only
        else state.dpe_of[i] == [c])]


def _apply_reinsert(state: State, spec: dict, step: int) -> None:
    n = len(state.ids)
    back: dict[str, list[int]] = {}
    for c, rate in sorted(spec["rates"].items()):
        pool = _single(state, c, targeted_only=True)
        need = sentences_for(rate, n)
        if need > len(pool):
            state.notes.setdefault("shortfall", {})[c] = {"needed": need, "available": len(pool)}
            log.warning("SHORTFALL conditions.%s reinsert %s=%s: needs %d targeted sentences, %d were removed; "
                        "all go back", state.name, c, rate, need, len(pool))
            need = len(pool)
        back[c] = sorted(_rng(state, step, c).sample(pool, need))
    _put_back(state, step, "reinsert", back, "targeted evidence put back at the configured rate")


register(Op("reinsert", _check_reinsert, _apply_reinsert))


# --- add

def _check_add(spec, where, conditions):
    if int(spec.get("n", 0)) < 0:
        raise PovstimError(f"{where}.n: must be >= 0")


def _apply_add(state: State, spec: dict, step: int) -> None:
    c, n = spec["construction"], int(spec["n"])
    pool = _single(state, c, targeted_only=False)
    if n > len(pool):
        raise PovstimError(f"conditions.{state.name}.operations[{step}].n: add {n} of {c} but its removed pool "
                           f"holds {len(pool)} sentences (removed for {c} alone by an earlier remove)")
    back = {c: sorted(_rng(state, step, c).sample(pool, n))}
    _put_back(state, step, "add", back, f"{n} instances of {c} from the removed pool")


register(Op("add", _check_add, _apply_add))


# --- replace

def _check_replace(spec, where, conditions):
    variants.get(spec.get("construction", ""), spec.get("variant"), where)


def _apply_replace(state: State, spec: dict, step: int) -> None:
    c = spec["construction"]
    fn = variants.get(c, spec.get("variant"), f"conditions.{state.name}.operations[{step}]")
    name = spec.get("variant") or variants.default_variant(c)
    counts = {"rewritten": 0, "kept": 0}
    for i in list(state.ids):
        if c not in state.dpe_of.get(i, ()):
            continue
        tree = (state.trees or {}).get(i)
        if tree is None:
            out: object = variants.Skip("no parse of this sentence")
        elif variants.render(tree.tokens) != state.lines[i]:
            out = variants.Skip("the parse's tokens do not rebuild the sentence")
        else:
            out = fn(tree)
        if isinstance(out, variants.Skip):
            counts["kept"] += 1
            state.log(step, "replace", "kept", i, c, f"{name}: {out.reason}")
            continue
        if len(out.split()) != len(state.lines[i].split()):
            raise PovstimError(f"variant {c}/{name} changed the word count of line {i + 1}: {out!r}")
        counts["rewritten"] += 1
        state.text[i] = out
        state.log(step, "replace", "rewritten", i, c, f"{name} variant", out)
    state.notes.setdefault("replace", {})[f"{c}/{name}"] = counts
    if not counts["rewritten"]:  # an unchanged copy trained as if it were the counterfactual: say so
        held = (f"its {counts['kept']} sentence(s) with {c} were all kept ({name} does not apply to them)"
                if counts["kept"] else f"the corpus holds no sentence with {c}")
        nothing_changed(state, f"operations[{step}] replace {c}/{name}: nothing was changed: {held}")


register(Op("replace", _check_replace, _apply_replace))


# --- placebo

def _check_placebo(spec, where, conditions):
    for key in ("of", "vs"):
        if spec.get(key) not in conditions:
            raise PovstimError(f"{where}.{key}: {spec.get(key)!r} is not a condition (known: "
                               f"{', '.join(sorted(conditions))})")


def _apply_placebo(state: State, spec: dict, step: int) -> None:
    """Take out ``spec['n_changed']`` random sentences without evidence whose words add up to
    ``spec['words_changed']`` (how many sentences and words the corpora of ``of`` and ``vs`` differ by,
    conditions/placebo.py, filled in by the build): a corpus change of the manipulation's size that carries no
    evidence."""
    k, target = int(spec["n_changed"]), int(spec["words_changed"])
    key = f"conditions.{spec.get('series') or state.name}.placebo"
    pool = _evidence_free(state)
    if k > len(pool):
        raise PovstimError(f"{key}: cannot be matched: {spec['of']} and {spec['vs']} differ by {k} sentences, "
                           f"the corpus of {spec['vs']} has {len(pool)} without evidence to change")
    if k == 0:
        nothing_changed(state, f"operations[{step}] placebo: {spec['of']} and {spec['vs']} have the same sentences, "
                               "so the placebo changes nothing (the contrast is void)")
    try:
        take = match_words(pool, k, target, state.words, _rng(state, step, f"placebo{spec['draw']}"),
                           max(_tolerance(state), 1))
    except PovstimError as exc:
        raise PovstimError(f"{key}: cannot be matched: {exc}") from None
    gone = set(take)
    state.ids = [i for i in state.ids if i not in gone]
    state.notes["placebo"] = {"of": spec["of"], "vs": spec["vs"], "draw": int(spec["draw"]), "sentences": k,
                              "words": target, "removed_words": sum(state.words(i) for i in take)}
    for i in take:
        state.log(step, "placebo", "removed", i, "", f"placebo {spec['draw']} of {spec['of']} vs. {spec['vs']} "
                  f"({k} sentences, {target} words changed)")


register(Op("placebo", _check_placebo, _apply_placebo))


# --- config-level helpers

def removes(spec: dict) -> list | bool:
    """What a condition removes: its remove operations' constructions (true = filter.rules), or its
    legacy ``filter`` key; [] / False when it removes nothing."""
    ops = spec.get("operations")
    if ops:
        out: list = []
        for o in ops:
            if o["op"] == "remove":
                if o.get("constructions", True) is True:
                    return True
                out += [c for c in o["constructions"] if c not in out]
        return out
    return spec.get("filter") or False


def constructions(spec: dict, rules: list[str]) -> list[str]:
    """Every construction a condition's operations read from dpe.tsv."""
    out: list[str] = []
    for o in spec.get("operations") or []:
        names = (rules if o.get("constructions", True) is True else o["constructions"]) if o["op"] == "remove" \
            else list(o.get("rates", {})) if o["op"] == "reinsert" \
            else [o["construction"]] if o["op"] in ("add", "replace") else []
        out += [c for c in names if c not in out]
    return out


def needs_trees(spec: dict) -> bool:
    return any(o["op"] == "replace" for o in spec.get("operations") or [])


def check(conditions: dict, rules: list[str], where: str = "conditions") -> None:
    """Config-time checks of every condition's operations (before any job); ``rules``: what ``true``
    removes (filter.settings.removal_rules). A dose series' members (``qf-dose0``, expanded by
    :func:`expand_dose`) are reported under the keys written in the file: ``conditions.qf.dose.construction``,
    ``conditions.qf.operations[k]``."""
    for series, p in dose_series(conditions).items():
        dpe.check_rules([p["construction"]], f"{where}.{series}.dose.construction")
    for name, spec in conditions.items():
        point = spec.get("dose_point")
        for k, o in enumerate(spec.get("operations") or []):
            key = f"{where}.{point['series'] if point else name}.operations[{k}]"
            if o["op"] not in OPERATIONS:
                raise PovstimError(f"{key}.op: unknown operation {o['op']!r} (known: {', '.join(OPERATIONS)})")
            OPERATIONS[o["op"]].check(o, key, conditions)
            cons = constructions({"operations": [o]}, rules)
            # a construction named here is run by the filter without being listed in filter.rules
            # (filter.settings.filter_rules); it must be one the registry knows
            if cons:
                dpe.check_rules(cons, key)
            if o["op"] in ("reinsert", "add") and not [c for c in cons if c in removed_before(spec, k, rules)]:
                raise PovstimError(f"{key}: {o['op']} puts back sentences an earlier remove of this condition "
                                   f"took, and none removed {', '.join(cons)}")


def removed_before(spec: dict, k: int, rules: list[str]) -> list[str]:
    return constructions({"operations": [o for o in spec["operations"][:k] if o["op"] == "remove"]}, rules)


def resolve(conditions: dict, name: str, rules: list[str]) -> list[dict]:
    """The operations as the build gets them: remove's true -> filter.rules, random_remove's ``of`` -> the
    constructions that condition removes."""
    out = []
    for o in conditions[name].get("operations") or []:
        o = dict(o)
        if o["op"] == "remove":
            o["constructions"] = list(rules) if o.get("constructions", True) is True else list(o["constructions"])
        elif o["op"] == "random_remove":
            r = removes(conditions[o["of"]])
            o["constructions"] = list(rules) if r is True else list(r)
        elif o["op"] == "placebo":
            o["series"] = (conditions[name].get("placebo_point") or {}).get("series", name)
            o["match"] = {k: _as_built(conditions, o[k], rules) for k in ("of", "vs")}
        out.append(o)
    return out


def _as_built(conditions: dict, name: str, rules: list[str]) -> dict:
    """How condition ``name`` is built, for a placebo to rebuild its sentence list: its resolved operations, or
    its old-style filter (the phenomena it removes; None: unfiltered) and reinsert rates."""
    spec = conditions[name]
    if spec.get("operations"):
        return {"name": name, "operations": resolve(conditions, name, rules)}
    f = spec.get("filter")
    return {"name": name, "filter": (list(f) if isinstance(f, (list, tuple)) else list(rules)) if f else None,
            "reinsert": dict(spec.get("reinsert") or {})}


def apply(state: State, ops: list[dict]) -> State:
    """Run the resolved operations in order (``state.ids`` starts as every line of the base)."""
    for step, o in enumerate(ops):
        OPERATIONS[o["op"]].apply(state, o, step)
    return state


# --- placebo conditions

def expand_placebo(config: dict, where: str = "conditions") -> None:
    """Replace every condition with a ``placebo: {of, vs, draws}`` by one condition per draw, named
    ``<name><draw>`` (``baby-placebo1``, ...), each ``vs``'s corpus (its operations, or ``remove`` of its old-style
    filter) followed by ``{op: placebo, of, vs, draw}``, with ``placebo_point`` saying series, of, vs and draw. An
    arch's ``conditions`` list naming the series gets its members. Idempotent (the ``placebo`` key goes)."""
    conds = config.get("conditions") or {}
    if not any("placebo" in s for s in conds.values()):
        return
    out: dict = {}
    members: dict[str, list[str]] = {}
    for name, spec in conds.items():
        if "placebo" not in spec:
            out[name] = spec
            continue
        p = spec["placebo"]
        key = f"{where}.{name}.placebo"
        for k in ("of", "vs"):
            if p[k] not in conds or "placebo" in conds[p[k]]:
                raise PovstimError(f"{key}.{k}: {p[k]!r} is not a condition (known: "
                                   f"{', '.join(sorted(c for c, s in conds.items() if 'placebo' not in s))})")
        of, vs = conds[p["of"]], conds[p["vs"]]
        if p["of"] == p["vs"]:
            raise PovstimError(f"{key}: of and vs are the same condition ({p['of']}); a placebo matches a contrast "
                               "between two conditions")
        if of.get("from") != vs.get("from"):
            raise PovstimError(f"{key}: {p['of']} is built from {of.get('from')!r} and {p['vs']} from "
                               f"{vs.get('from')!r}: a placebo matches two conditions of one corpus")
        if vs.get("reinsert") or vs.get("dose") or vs.get("dose_point"):
            raise PovstimError(f"{key}.vs: the placebos change {p['vs']}'s corpus, which puts evidence back "
                               "(reinsert/dose); name the condition without it as vs (BABY-F), the one with it as of")
        f = vs.get("filter")
        base_ops = [dict(o) for o in vs.get("operations") or []] or (
            [{"op": "remove", "constructions": list(f) if isinstance(f, (list, tuple)) else True}] if f else [])
        rest = {k: v for k, v in spec.items() if k not in ("placebo", "filter", "reinsert", "operations")}
        if vs.get("sizes") and "sizes" not in rest:
            rest["sizes"] = list(vs["sizes"])
        for draw in range(1, int(p["draws"]) + 1):
            member = f"{name}{draw}"
            if member in conds:
                raise PovstimError(f"{key}.draws: the placebo {member!r} is also a condition of its own")
            out[member] = {**rest, "from": vs["from"], "operations": base_ops + [
                {"op": "placebo", "of": p["of"], "vs": p["vs"], "draw": draw}],
                "placebo_point": {"series": name, "of": p["of"], "vs": p["vs"], "draw": draw}}
            members.setdefault(name, []).append(member)
    config["conditions"] = out
    for arch in (config.get("archs") or {}).values():
        if isinstance(arch, dict) and arch.get("conditions"):
            arch["conditions"] = [m for c in arch["conditions"] for m in members.get(c, [c])]


def placebo_series(conditions: dict) -> dict[str, dict]:
    """series -> {of, vs, members: [condition, ...]} of the expanded placebo conditions."""
    out: dict[str, dict] = {}
    for name, spec in conditions.items():
        p = spec.get("placebo_point")
        if p:
            out.setdefault(p["series"], {"of": p["of"], "vs": p["vs"], "members": []})["members"].append(name)
    return out


# --- dose series

MIN_DOSE_RATES = 3


def rate_name(rate: float) -> str:
    """A rate as a condition-name suffix: 0 -> '0', 1e-4 -> '1e-4', 0.0025 -> '2p5e-3' (no '.': names are
    [A-Za-z0-9_-])."""
    if rate == 0:
        return "0"
    mant, exp = f"{rate:.6e}".split("e")
    mant = mant.rstrip("0").rstrip(".").replace(".", "p")
    return f"{mant}e{int(exp)}"


def expand_dose(config: dict, where: str = "conditions") -> None:
    """Replace every condition with a ``dose:`` by one condition per rate (in place, before any job), named
    ``<name>-dose<rate>``, each the condition's operations (default: remove the construction) then
    ``reinsert {construction: rate}`` (none at rate 0), with ``dose_point`` saying series, construction and
    rate. An arch's ``conditions`` list naming the series gets its members. Idempotent (the ``dose`` key goes)."""
    conds = config.get("conditions") or {}
    if not any("dose" in s for s in conds.values()):
        return
    out: dict = {}
    members: dict[str, list[str]] = {}
    for name, spec in conds.items():
        if "dose" not in spec:
            out[name] = spec
            continue
        dose = spec["dose"]
        rates = [float(r) for r in dose["rates"]]
        key = f"{where}.{name}.dose.rates"
        if len(rates) < MIN_DOSE_RATES:
            raise PovstimError(f"{key}: a dose series needs at least {MIN_DOSE_RATES} rates to fit a curve, "
                               f"it has {len(rates)}")
        for r in rates:
            if not 0 <= r < 1:
                raise PovstimError(f"{key}: {r} is not a rate in [0, 1)")
        c = dose["construction"]
        base_ops = spec.get("operations") or [{"op": "remove", "constructions": [c]}]
        rest = {k: v for k, v in spec.items() if k not in ("dose", "operations", "filter", "reinsert")}
        for r in sorted(rates):
            member = f"{name}-dose{rate_name(r)}"
            if member in conds:
                raise PovstimError(f"{key}: the series member {member!r} is also a condition of its own")
            ops = [dict(o) for o in base_ops] + ([{"op": "reinsert", "rates": {c: r}}] if r > 0 else [])
            point = {"series": name, "construction": c, "rate": r, **({"paradigms": dose["paradigms"]}
                                                                     if dose.get("paradigms") else {})}
            out[member] = {**rest, "operations": ops, "dose_point": point}
            members.setdefault(name, []).append(member)
    config["conditions"] = out
    for arch in (config.get("archs") or {}).values():
        if isinstance(arch, dict) and arch.get("conditions"):
            arch["conditions"] = [m for c in arch["conditions"] for m in members.get(c, [c])]


def dose_series(conditions: dict) -> dict[str, dict]:
    """series -> {construction, members: {condition: rate}} of the expanded dose conditions."""
    out: dict[str, dict] = {}
    for name, spec in conditions.items():
        p = spec.get("dose_point")
        if p:
            s = out.setdefault(p["series"], {"construction": p["construction"], "members": {},
                                             **({"paradigms": p["paradigms"]} if p.get("paradigms") else {})})
            s["members"][name] = p["rate"]
    return out
