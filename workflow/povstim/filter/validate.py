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
   on the gold trees, and a breakdown by the rule (cue) that fired.

The configured ``filter.mode`` is checked against ``recall_floor`` /
``precision_floor``: a miss is reported loudly (log, table, figure title) or,
with ``fail_below_floor``, stops the run. Outputs hold no timings, so a rerun
is byte-identical.
"""

from __future__ import annotations

import logging
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


@dataclass(frozen=True)
class ValidationSettings:
    """The ``filter_validation:`` section (defaults: workflow/schemas/config/filter_validation.schema.yaml)."""

    treebank: str
    speaker_key: str
    keep_speakers: tuple[str, ...] | None
    drop_speakers: tuple[str, ...]
    modes: tuple[str, ...]
    reference: str
    recall_floor: float
    precision_floor: float
    fail_below_floor: bool


def validation_settings(given: dict | None, where: str = "--validation-params", **overrides) -> ValidationSettings:
    return build(ValidationSettings, "filter_validation", given, where=where, **overrides)


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
    if not kept:
        raise PovstimError(f"filter_validation: no sentence of {path} is left after the speaker filter "
                           f"(keep_speakers={vs.keep_speakers}, drop_speakers={list(vs.drop_speakers)})")
    return kept, {"n_read": len(sents), "n_kept": len(kept), "speakers": dict(sorted(speakers.items()))}


def decisions(sentences: list[Sentence | None], fs: FilterSettings, mode: str) -> list[dict[str, str]]:
    """Per sentence: phenomenon -> the rule that fired (a sentence the parser never saw: nothing fires)."""
    return [{} if s is None else {m.phenomenon: m.rule for m in fs.find(s, mode)} for s in sentences]


def _score(ref: list[dict], got: list[dict], phen: str) -> dict:
    c = dict.fromkeys(COUNTS, 0)
    for r, g in zip(ref, got):
        a, b = phen in r, phen in g
        c["tp"] += a and b
        c["fp"] += b and not a
        c["fn"] += a and not b
    c["n_reference"] = c["tp"] + c["fn"]
    c["n_flagged"] = c["tp"] + c["fp"]
    c["recall"] = ratio(c["tp"], c["tp"] + c["fn"])
    c["precision"] = ratio(c["tp"], c["tp"] + c["fp"])
    return c


def floor_reference(mode: str, vs: ValidationSettings) -> str:
    """What a mode's floor is checked against: strict targets other sentences than App. C by design,
    so strict mode is held to strict on the gold trees; every other mode to the reference."""
    return "same_mode_on_gold" if mode == "strict" and vs.reference != "strict" else "reference"


def validate(gold: list[Sentence], parsed: list[Sentence | None], fs: FilterSettings, vs: ValidationSettings,
             parser: str) -> dict:
    """Recall and precision of every measured mode on ``parsed`` against the gold-tree decisions.

    ``parsed[i]`` is the parse of ``gold[i]``'s text (None: spared by the prefilter).
    """
    if len(gold) != len(parsed):
        raise ValueError("gold and parsed must be aligned")
    modes = list(dict.fromkeys((*vs.modes, fs.mode)))
    ref = decisions(gold, fs, vs.reference)
    out_modes = {}
    for mode in modes:
        got = decisions(parsed, fs, mode)
        on_gold = decisions(gold, fs, mode)
        per = {}
        for phen in fs.rules:
            rules: dict[str, Counter] = {}
            for r, g in zip(ref, got):
                if phen in g:
                    rc = rules.setdefault(g[phen], Counter())
                    rc["n"] += 1
                    rc["tp"] += phen in r
            per[phen] = {
                "reference": _score(ref, got, phen),
                "same_mode_on_gold": _score(on_gold, got, phen),
                "gold_trees": {"n_flagged": sum(phen in d for d in on_gold),
                               "vs_reference": _score(ref, on_gold, phen)},
                "per_rule": {k: {"n": v["n"], "tp": v["tp"], "precision": ratio(v["tp"], v["n"])}
                             for k, v in sorted(rules.items())},
            }
        n_removed = sum(bool(g) for g in got)
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
        "modes": out_modes,
    }
    result["floor"] = check_floor(result, fs.mode, vs)
    return result


def check_floor(result: dict, mode: str, vs: ValidationSettings) -> dict:
    """Which phenomena of ``mode`` fall below the recall/precision floors (None: no reference positives)."""
    against = floor_reference(mode, vs)
    below = []
    for phen, d in result["modes"][mode]["per_phenomenon"].items():
        c = d[against]
        for what, floor in (("recall", vs.recall_floor), ("precision", vs.precision_floor)):
            if c[what] is not None and c[what] < floor:
                below.append({"phenomenon": phen, "measure": what, "value": c[what], "floor": floor})
    no_positives = [p for p, d in result["modes"][mode]["per_phenomenon"].items() if d[against]["n_reference"] == 0]
    return {"mode": mode, "against": against, "recall_floor": vs.recall_floor,
            "precision_floor": vs.precision_floor, "below": below, "no_reference_positives": no_positives,
            "ok": not below}


def table_rows(result: dict) -> list[dict]:
    """One row per mode x phenomenon (validation.tsv; the report's table)."""
    rows = []
    fl = result["floor"]
    below = {(b["phenomenon"], b["measure"]) for b in fl["below"]}
    for mode, m in result["modes"].items():
        for phen, d in m["per_phenomenon"].items():
            c, same = d["reference"], d["same_mode_on_gold"]
            flag = ""
            if mode == fl["mode"]:
                flag = "BELOW FLOOR: " + ", ".join(w for p, w in sorted(below) if p == phen) \
                    if any(p == phen for p, _ in below) else "ok"
            rows.append({
                "parser": result["parser"], "mode": mode, "phenomenon": phen,
                "reference_positives": c["n_reference"], "flagged": c["n_flagged"],
                "tp": c["tp"], "fp": c["fp"], "fn": c["fn"],
                "recall": c["recall"], "precision": c["precision"],
                "recall_vs_same_mode_on_gold": same["recall"], "precision_vs_same_mode_on_gold": same["precision"],
                "rules": "; ".join(f"{k} {v['tp']}/{v['n']}" for k, v in d["per_rule"].items()),
                "floor": flag,
            })
    return rows


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
    if fl["no_reference_positives"]:
        log.warning("filter validation: no reference positives for %s in the treebank: their recall is not "
                    "measured", ", ".join(fl["no_reference_positives"]))
    if fl["ok"]:
        log.info("filter validation: %s mode on %s parses is above the floors (recall %.2f, precision %.2f) "
                 "for every phenomenon with reference positives", fl["mode"], result["parser"],
                 fl["recall_floor"], fl["precision_floor"])
        return
    lines = [f"{b['phenomenon']} {b['measure']} {b['value']:.3f} < {b['floor']}" for b in fl["below"]]
    msg = (f"THE DPE FILTER IS BELOW ITS FLOOR: filter.mode={fl['mode']} on {result['parser']} parses, against "
           f"{fl['against'].replace('_', ' ')} on the gold trees: " + "; ".join(lines)
           + ". BABY-F keeps direct evidence App. C would remove; consider filter.mode: conservative "
           "(docs/filter.md).")
    if vs.fail_below_floor:
        raise PovstimError(msg + " (filter_validation.fail_below_floor is set)")
    bar = "!" * 78
    log.warning("\n%s\n%s\n%s", bar, msg, bar)
