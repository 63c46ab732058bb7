"""Measuring the DPE filter against gold trees: the library behind ``povstim filter-validation``.

POSH App. C's filter runs on a parser's output; whether BABY-F is really
filtered depends on how often that parse lets a rule miss what the rule would
find on a correct tree. This module measures it on a gold treebank (e.g. the
UD_English-CHILDES dev split, adult speakers only):

1. the treebank's sentences, filtered by speaker (``# speaker_role``);
2. the *reference*: the reference mode's rules (default ``posh``, App. C
   literally) applied to the gold trees;
3. the treebank's text parsed with the configured parser (same tokenizer,
   prefilter, cache and fallback as the pipeline's parse stage), and every
   measured mode's rules applied to those parses;
4. per phenomenon and mode: true/false positives and misses, recall and
   precision against the reference, the same against the mode's own decisions
   on the gold trees and against the strict rules on the gold trees (the
   targeted, disambiguating evidence), and a breakdown by the rule (cue) that
   fired;
5. all of it **cross-validated** (the headline) and in sample: K folds of whole
   transcripts (``cv_folds``, ``cv_group_by``); whatever a phenomenon fits to
   data (its ``fit``: word lists, thresholds) is fitted on the training folds
   only and measured on the held-out fold. Rules with no fitted part give equal
   numbers both ways, and ``validation.json: cv.fitted_parts`` says so.

The configured ``filter.mode``'s cross-validated numbers are checked against ``recall_floor`` /
``precision_floor``: a miss is reported loudly (log, table, figure title) or,
with ``fail_below_floor``, stops the run. Outputs hold no timings, so a rerun
is byte-identical.
"""

from __future__ import annotations

import hashlib
import logging
import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from .. import dpe
from ..io import PovstimError
from ..parse.conllu import Sentence, Skipped, read_file
from ..settings import build
from .evaluate import ratio
from .settings import FilterSettings

log = logging.getLogger("povstim.filter")

COUNTS = ("tp", "fp", "fn")
NO_MATCH = "NO MATCH in the treebank"
NOT_MEASURABLE = "not measurable"
WILSON_Z = 1.959964  # the standard normal's 97.5% quantile: two-sided 95% intervals


@dataclass(frozen=True)
class ValidationSettings:
    """The ``filter_validation:`` section (defaults: workflow/schemas/config/filter_validation.schema.yaml)."""

    treebank: str | None
    labels: str | None
    texts: str | None
    text_column: str
    speaker_key: str
    keep_speakers: tuple[str, ...] | None
    drop_speakers: tuple[str, ...]
    modes: tuple[str, ...]
    reference: str
    recall_floor: float
    precision_floor: float | dict
    fail_below_floor: bool
    cv_folds: int
    cv_group_by: tuple[str, ...]
    min_positives: int


def validation_settings(given: dict | None, where: str = "--validation-params", **overrides) -> ValidationSettings:
    vs = build(ValidationSettings, "filter_validation", given, where=where, **overrides)
    check_measured_on(vs.treebank, vs.labels, vs.texts, where)
    if isinstance(vs.precision_floor, dict):
        dpe.check_rules(list(vs.precision_floor) or ["question_formation"], "filter_validation.precision_floor")
    return vs


def check_measured_on(treebank, labels, texts, where: str = "filter_validation") -> None:
    """What the filter is measured on: a gold treebank or hand labels (with their texts), exactly one."""
    if bool(treebank) == bool(labels):
        raise PovstimError(f"{where}: give filter_validation.treebank (gold UD trees) or filter_validation.labels "
                           "(hand-labelled sentences, with filter_validation.texts), " +
                           ("not both" if treebank else "one of them"))
    if labels and not texts:
        raise PovstimError(f"{where}: filter_validation.labels needs filter_validation.texts, the CSV whose rows "
                           "the labels number (its text is not stored with the labels)")
    if texts and not labels:
        raise PovstimError(f"{where}: filter_validation.texts is only read with filter_validation.labels")


def precision_floor(vs: ValidationSettings, phen: str) -> float:
    """The precision floor of ``phen``: one number for all, or a per-phenomenon mapping (0 when not named)."""
    f = vs.precision_floor
    return float(f.get(phen, 0.0)) if isinstance(f, dict) else float(f)


def load_treebank(path: str | Path, vs: ValidationSettings, on_malformed: str = "error",
                  skipped: list[Skipped] | None = None) -> tuple[list[Sentence], dict]:
    """The treebank's sentences kept by the speaker filter, and counts (read, kept, per speaker)."""
    path = Path(path)
    if not path.is_file():
        raise PovstimError(f"filter_validation.treebank: {path} does not exist")
    sents = read_file(path, on_malformed, skipped)
    keep = set(vs.keep_speakers) if vs.keep_speakers is not None else None
    drop = set(vs.drop_speakers)
    kept: list[Sentence] = []
    speakers: Counter = Counter()
    for s in sents:
        if "text" not in s.meta:
            raise PovstimError(f"{path}: sentence {s.sent_id or len(kept)} has no '# text =' comment: the parser "
                               "needs the raw text of every gold tree")
        who = s.meta.get(vs.speaker_key)
        if (keep is not None and who not in keep) or who in drop:
            continue
        speakers[who if who is not None else "(none)"] += 1
        kept.append(s)
    if kept and all(t.deprel in ("_", "") for s in kept for t in s.tokens):
        raise PovstimError(f"filter_validation.treebank: {path} holds no dependency trees (DEPREL is '_' "
                           "throughout): the rules and constructions read UD relations, so nothing can be measured")
    if not kept:
        raise PovstimError(f"filter_validation: no sentence of {path} is left after the speaker filter "
                           f"(keep_speakers={vs.keep_speakers}, drop_speakers={list(vs.drop_speakers)})")
    return kept, {"n_read": len(sents), "n_kept": len(kept), "speakers": dict(sorted(speakers.items()))}


def decisions(sentences: list[Sentence | None], fs: FilterSettings, mode: str,
              ctx: dpe.Context | None = None) -> list[dict[str, str]]:
    """Per sentence: phenomenon -> the rule that fired (a sentence the parser never saw: nothing fires)."""
    ctx = ctx or fs.context
    return [{} if s is None else {m.phenomenon: m.rule for m in dpe.find_dpe(s, mode, fs.rules, ctx)}
            for s in sentences]


# ------------------------------------------------------------------------------ cross-validation

def groups(gold: list[Sentence], keys: tuple[str, ...]) -> list[tuple]:
    """Each sentence's cross-validation group: the values of its ``keys`` comments (UD_English-CHILDES
    has no transcript id; corpus, child and the child's age at the session name a transcript). A
    sentence with none of the keys is a group of its own."""
    out = []
    for k, s in enumerate(gold):
        vals = tuple(s.meta.get(key) for key in keys)
        out.append(vals if any(v is not None for v in vals) else ("#sentence", k))
    return out


def assign_folds(group_of: list[tuple], k: int) -> list[int]:
    """Fold of each sentence: whole groups, in a fixed pseudo-random order (sha256 of the group),
    each put in the fold with the fewest sentences so far. Deterministic, balanced, no seed."""
    sizes: Counter = Counter(group_of)
    order = sorted(sizes, key=lambda g: hashlib.sha256(repr(g).encode()).hexdigest())
    k = max(1, min(k, len(order)))
    load = [0] * k
    fold_of: dict[tuple, int] = {}
    for g in order:
        f = min(range(k), key=lambda i: (load[i], i))
        fold_of[g] = f
        load[f] += sizes[g]
    return [fold_of[g] for g in group_of]


def fit_context(fs: FilterSettings, gold: list[Sentence], parsed: list[Sentence | None], ref: list[dict],
                idx: list[int]) -> dpe.Context:
    """The filter's context with every enabled phenomenon's fitted parts learned from ``idx`` only."""
    fitted = {}
    for phen in fs.rules:
        fit = dpe.PHENOMENA[phen].fit
        if fit is not None:
            fitted[phen] = fit([gold[i] for i in idx], [parsed[i] for i in idx], [phen in ref[i] for i in idx])
    return fs.context.with_fitted(fitted) if fitted else fs.context


def wilson(k: int, n: int, z: float = WILSON_Z) -> list[float] | None:
    """The Wilson score interval of ``k`` successes in ``n`` trials (95% for the default z), or None for n = 0.
    Unlike the normal approximation it stays inside [0, 1] and is not empty at k = n (12/12 -> [0.76, 1])."""
    if n == 0:
        return None
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return [round(max(0.0, centre - half), 6), round(min(1.0, centre + half), 6)]


def _score(ref: list[dict], got: list[dict], phen: str, min_positives: int = 1) -> dict:
    """Counts, recall and precision with Wilson 95% intervals. Fewer than ``min_positives`` reference
    positives: recall and precision are None ("not measurable"); the counts and intervals stay."""
    c = dict.fromkeys(COUNTS, 0)
    for r, g in zip(ref, got):
        a, b = phen in r, phen in g
        c["tp"] += a and b
        c["fp"] += b and not a
        c["fn"] += a and not b
    c["n_reference"] = c["tp"] + c["fn"]
    c["n_flagged"] = c["tp"] + c["fp"]
    c["measurable"] = c["n_reference"] >= min_positives
    c["recall"] = ratio(c["tp"], c["tp"] + c["fn"]) if c["measurable"] else None
    c["precision"] = ratio(c["tp"], c["tp"] + c["fp"]) if c["measurable"] else None
    c["recall_ci95"] = wilson(c["tp"], c["n_reference"])
    c["precision_ci95"] = wilson(c["tp"], c["n_flagged"])
    return c


def shown(c: dict, what: str) -> str | float | None:
    """``c[what]`` for a table: NOT_MEASURABLE when the reference positives are too few for a number."""
    return c[what] if c.get("measurable", True) else NOT_MEASURABLE


def floor_reference(mode: str, vs: ValidationSettings) -> str:
    """What a mode's floor is checked against: strict targets other sentences than App. C by design,
    so strict mode is held to strict on the gold trees; every other mode to the reference."""
    return "same_mode_on_gold" if mode == "strict" and vs.reference != "strict" else "reference"


def _scores(ref: list[dict], strict_gold: list[dict], got: list[dict], on_gold: list[dict], phen: str,
            min_positives: int = 1) -> dict:
    return {"reference": _score(ref, got, phen, min_positives), "same_mode_on_gold": _score(on_gold, got, phen, min_positives),
            "targeted": _score(strict_gold, got, phen, min_positives)}


def validate(gold: list[Sentence], parsed: list[Sentence | None], fs: FilterSettings, vs: ValidationSettings,
             parser: str) -> dict:
    """Recall and precision of every measured mode on ``parsed`` against the gold-tree decisions,
    cross-validated (the headline) and in sample.

    ``parsed[i]`` is the parse of ``gold[i]``'s text (None: spared by the prefilter). Per mode and
    phenomenon, three references: ``reference`` (the reference mode, App. C literally, on the gold
    trees), ``same_mode_on_gold`` (the mode's own rules on the gold trees) and ``targeted`` (the strict
    rules on the gold trees: the disambiguating evidence BABY puts back and BABY-F must not hold).

    **Cross-validation**: the sentences are split into ``cv_folds`` folds of whole groups
    (``cv_group_by``: transcripts); every part of a rule fitted to data (a phenomenon's ``fit``) is
    fitted on the other folds and the rules are measured on the held-out fold; the counts are summed
    over the held-out folds. Rules without fitted parts give the same counts cross-validated and in
    sample, and ``cv.fitted_parts`` says so. The reference rules are never fitted.
    """
    if len(gold) != len(parsed):
        raise ValueError("gold and parsed must be aligned")
    modes = list(dict.fromkeys((*vs.modes, fs.mode)))
    ref = decisions(gold, fs, vs.reference)
    strict_gold = decisions(gold, fs, "strict")
    group_of = groups(gold, vs.cv_group_by)
    fold_of = assign_folds(group_of, vs.cv_folds)
    n_folds = max(fold_of) + 1 if fold_of else 0
    every = list(range(len(gold)))
    fitted_parts = [p for p in fs.rules if dpe.PHENOMENA[p].fit is not None]
    ctx_all = fit_context(fs, gold, parsed, ref, every)
    fold_ctx = [fit_context(fs, gold, parsed, ref, [i for i in every if fold_of[i] != f]) if fitted_parts
                else ctx_all for f in range(n_folds)]
    out_modes = {}
    for mode in modes:
        got = decisions(parsed, fs, mode, ctx_all)
        on_gold = decisions(gold, fs, mode, ctx_all)
        if fitted_parts:
            cv_got, cv_on_gold = [{}] * len(gold), [{}] * len(gold)
            for f in range(n_folds):
                held = [i for i in every if fold_of[i] == f]
                for i, g, o in zip(held, decisions([parsed[i] for i in held], fs, mode, fold_ctx[f]),
                                   decisions([gold[i] for i in held], fs, mode, fold_ctx[f])):
                    cv_got[i], cv_on_gold[i] = g, o
        else:
            cv_got, cv_on_gold = got, on_gold
        per = {}
        for phen in fs.rules:
            rules: dict[str, Counter] = {}
            for r, g in zip(ref, cv_got):
                if phen in g:
                    rc = rules.setdefault(g[phen], Counter())
                    rc["n"] += 1
                    rc["tp"] += phen in r
            folds = []
            for f in range(n_folds):
                held = [i for i in every if fold_of[i] == f]
                sub = [[lst[i] for i in held] for lst in (ref, strict_gold, cv_got, cv_on_gold)]
                folds.append({"fold": f, "n_sentences": len(held), **_scores(*sub, phen, vs.min_positives)})
            per[phen] = {
                "cross_validated": {**_scores(ref, strict_gold, cv_got, cv_on_gold, phen, vs.min_positives),
                                    "folds": folds},
                "in_sample": _scores(ref, strict_gold, got, on_gold, phen, vs.min_positives),
                "gold_trees": {"n_flagged": sum(phen in d for d in on_gold),
                               "vs_reference": _score(ref, on_gold, phen, vs.min_positives)},
                "per_rule": {k: {"n": v["n"], "tp": v["tp"], "precision": ratio(v["tp"], v["n"])}
                             for k, v in sorted(rules.items())},
            }
        n_removed = sum(bool(g) for g in cv_got)
        out_modes[mode] = {
            "rule_functions": {p: dpe.PHENOMENA[p].rules[mode].__name__ for p in fs.rules},
            "per_phenomenon": per,
            "n_removed": n_removed,
            "removed_fraction": ratio(n_removed, len(gold)),
        }
    result = {
        "parser": parser,
        "reference": vs.reference,
        "reference_note": f"the {vs.reference} rules applied to the treebank's gold trees",
        "rules": list(fs.rules),
        "filter_mode": fs.mode,
        "n_sentences": len(gold),
        "n_parsed": sum(p is not None for p in parsed),
        "reference_positives": {p: sum(p in r for r in ref) for p in fs.rules},
        "min_positives": vs.min_positives,
        "min_positives_note": (f"fewer than {vs.min_positives} reference positives: recall and precision are not "
                               "measurable (None; 'not measurable' in the table), whatever the counts say"),
        "targeted_positives": {p: sum(p in r for r in strict_gold) for p in fs.rules},
        "cv": {
            "folds": n_folds,
            "group_by": list(vs.cv_group_by),
            "n_groups": len(set(group_of)),
            "fold_sizes": [fold_of.count(f) for f in range(n_folds)],
            "fitted_parts": fitted_parts,
            "note": ("cross_validated: parts fitted to data are fitted on the other folds and measured on the "
                     "held-out fold, counts summed over the held-out folds (the headline); in_sample: fitted "
                     "on and measured on every sentence. "
                     + ("Fitted parts: " + ", ".join(fitted_parts) if fitted_parts else
                        "No enabled phenomenon has a fitted part, so the cross-validated counts equal the "
                        "in-sample ones; the rules' design was not fitted per fold (see docs/filter.md).")),
        },
        "modes": out_modes,
    }
    result["matches_nothing"] = matches_nothing(result)
    result["floor"] = check_floor(result, fs.mode, vs)
    return result


def matches_nothing(result: dict) -> list[str]:
    """The declarative constructions that no measured mode finds on any gold tree or parse, nor the reference
    or strict rules on the gold trees: the treebank cannot measure them (a NO MATCH warning, not a zero)."""
    out = []
    for p in result["rules"]:
        if dpe.PHENOMENA[p].origin == "python" or result["reference_positives"][p] or result["targeted_positives"][p]:
            continue
        per = [m["per_phenomenon"][p] for m in result["modes"].values()]
        if not any(d["gold_trees"]["n_flagged"] or d["in_sample"]["reference"]["n_flagged"]
                   or d["cross_validated"]["reference"]["n_flagged"] for d in per):
            out.append(p)
    return out


def check_floor(result: dict, mode: str, vs: ValidationSettings, against: str | None = None) -> dict:
    """Which phenomena of ``mode`` fall below the recall/precision floors, cross-validated (None: no
    reference positives); ``against``: the reference the floors are checked on (default: floor_reference)."""
    against = against or floor_reference(mode, vs)
    below = []
    for phen, d in result["modes"][mode]["per_phenomenon"].items():
        c = d["cross_validated"][against]
        for what, floor in (("recall", vs.recall_floor), ("precision", precision_floor(vs, phen))):
            if c[what] is not None and c[what] < floor:
                below.append({"phenomenon": phen, "measure": what, "value": c[what], "floor": floor})
    no_positives = [p for p, d in result["modes"][mode]["per_phenomenon"].items()
                    if d["cross_validated"][against]["n_reference"] == 0]
    too_few = [p for p, d in result["modes"][mode]["per_phenomenon"].items()
               if 0 < d["cross_validated"][against]["n_reference"] < vs.min_positives]
    return {"mode": mode, "against": against, "measured": "cross_validated", "recall_floor": vs.recall_floor,
            "precision_floor": {p: precision_floor(vs, p) for p in result["modes"][mode]["per_phenomenon"]},
            "below": below, "no_reference_positives": no_positives, "not_measurable": too_few,
            "ok": not below}


def table_rows(result: dict) -> list[dict]:
    """One row per mode x phenomenon (validation.tsv; the report's table): cross-validated numbers first,
    in-sample numbers beside them."""
    rows = []
    fl = result["floor"]
    below = {(b["phenomenon"], b["measure"]) for b in fl["below"]}
    for mode, m in result["modes"].items():
        for phen, d in m["per_phenomenon"].items():
            cv, ins = d["cross_validated"], d["in_sample"]
            c = cv["reference"]
            flag = ""
            if mode == fl["mode"]:
                flag = "BELOW FLOOR: " + ", ".join(w for p, w in sorted(below) if p == phen) \
                    if any(p == phen for p, _ in below) else "ok"
            rows.append({
                "parser": result["parser"], "mode": mode, "phenomenon": phen,
                "reference_positives": c["n_reference"], "flagged": c["n_flagged"],
                "tp": c["tp"], "fp": c["fp"], "fn": c["fn"],
                "cv_recall": shown(c, "recall"), "cv_precision": shown(c, "precision"),
                "cv_recall_ci95": _ci(c["recall_ci95"]), "cv_precision_ci95": _ci(c["precision_ci95"]),
                "in_sample_recall": shown(ins["reference"], "recall"),
                "in_sample_precision": shown(ins["reference"], "precision"),
                "cv_recall_vs_same_mode_on_gold": shown(cv["same_mode_on_gold"], "recall"),
                "cv_precision_vs_same_mode_on_gold": shown(cv["same_mode_on_gold"], "precision"),
                "targeted_positives": cv["targeted"]["n_reference"],
                "cv_recall_of_targeted": shown(cv["targeted"], "recall"),
                "rules": "; ".join(f"{k} {v['tp']}/{v['n']}" for k, v in d["per_rule"].items()),
                "floor": flag,
                "warning": NO_MATCH if phen in result.get("matches_nothing", ()) else "",
            })
    return rows


def _ci(ci: list[float] | None) -> str:
    return f"{ci[0]:.3f}-{ci[1]:.3f}" if ci else ""


def disagreement_rows(gold: list[Sentence], parsed: list[Sentence | None], fs: FilterSettings,
                      vs: ValidationSettings, speaker_key: str) -> list[dict]:
    """The sentences where the configured mode on the parse and the reference on the gold tree disagree."""
    ref = decisions(gold, fs, vs.reference)
    got = decisions(parsed, fs, fs.mode)
    rows = []
    for k, (g, r, d) in enumerate(zip(gold, ref, got)):
        for phen in fs.rules:
            if (phen in r) != (phen in d):
                rows.append({"index": k, "sent_id": g.sent_id or "", "speaker": g.meta.get(speaker_key, ""),
                             "phenomenon": phen, "kind": "miss" if phen in r else "extra",
                             "reference_rule": r.get(phen, ""), "parser_rule": d.get(phen, ""), "text": g.text})
    return rows


def warn_floor(result: dict, vs: ValidationSettings) -> None:
    fl = result["floor"]
    for phen in result.get("matches_nothing", ()):
        log.warning("%s: construction %r: no mode of it matches any sentence of the treebank (gold trees or "
                    "parses): its recall and precision are not measured here", NO_MATCH, phen)
    if fl.get("not_measurable"):
        log.warning("filter validation: fewer than %d reference positives for %s: their recall and precision are "
                    "not measurable on this treebank", vs.min_positives, ", ".join(fl["not_measurable"]))
    if fl["no_reference_positives"]:
        log.warning("filter validation: no reference positives for %s in the treebank: their recall is not "
                    "measured", ", ".join(fl["no_reference_positives"]))
    if fl["ok"]:
        log.info("filter validation: %s mode on %s parses is above the floors (recall %.2f, precision %s) "
                 "cross-validated for every phenomenon with reference positives", fl["mode"], result["parser"],
                 fl["recall_floor"], ", ".join(f"{p} {v:.2f}" for p, v in fl["precision_floor"].items()))
        return
    lines = [f"{b['phenomenon']} {b['measure']} {b['value']:.3f} < {b['floor']}" for b in fl["below"]]
    if result.get("labels"):  # measured against hand labels (filter/labelled.py)
        msg = (f"THE DPE FILTER IS BELOW ITS FLOOR: filter.mode={fl['mode']} on {result['parser']} parses, "
               f"against the hand labels ({result.get('sample', '')}): " + "; ".join(lines)
               + ". BABY-F keeps labelled direct evidence; see the disagreements table.")
    else:
        msg = (f"THE DPE FILTER IS BELOW ITS FLOOR: filter.mode={fl['mode']} on {result['parser']} parses, "
               "cross-validated, against "
               f"{fl['against'].replace('_', ' ')} on the gold trees: " + "; ".join(lines)
               + ". BABY-F keeps direct evidence App. C would remove; consider filter.mode: conservative "
               "(docs/filter.md).")
    if vs.fail_below_floor:
        raise PovstimError(msg + " (filter_validation.fail_below_floor is set)")
    bar = "!" * 78
    log.warning("\n%s\n%s\n%s", bar, msg, bar)
