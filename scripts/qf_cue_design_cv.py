"""Question formation's conservative cues measured out of sample: the cue design split by child.

    python scripts/qf_cue_design_cv.py --cv results/parser_cv [--out results/parser_cv/cue_design.json]

``scripts/parser_cv.py`` measures the filter with parsers that never saw the held-out children, but the QF
cues added in the second round were written reading the misses on those same trees (gold_train), so that number is in
sample for the cues. This script measures them as if each fold's cues had been written without that fold's
children:

1. The cues added since the cue set was frozen before gold_train existed (git ``V0`` = f4d13ab, written on the
   dev split) are split into units (``UNITS``), each a switch that restores the earlier behaviour. Turning every
   unit off must reproduce ``V0`` and turning the second round's units off must reproduce ``V1`` = 0151248,
   on every sentence: the script checks both against the modules read from git and stops if they differ.
2. A unit's *evidence* is the adult gold positives it rescued on the parses its author read (round 1: spaCy's
   parses of gold_train; round 2: the adapted parser's held-out parses), i.e. flagged with the unit and missed
   without it, in the cue set of its round.
3. Fold ``f`` (parser_cv's folds of whole children) is measured with the units whose evidence holds at least
   one sentence of another fold's children; a unit whose every rescue lies in fold ``f`` is off for fold ``f``
   (its author could not have written it without reading those children). The counts are pooled over folds.

Also written: the ``V0`` cues everywhere (frozen before gold_train was read: out of sample with no
assumption) and the current cues (in sample), on the same parses, for the adapted parser and en_core_web_sm.

The attribution in step 2-3 is an assumption: that a unit written after reading rescues in several children
would have been written the same from the other children's alone. It is stated beside the number.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow"))
sys.path.insert(0, str(ROOT / "scripts"))

from povstim.dpe import question_formation as qf  # noqa: E402
from povstim.dpe import registry  # noqa: E402
from povstim.filter.settings import filter_settings  # noqa: E402
from povstim.filter.validate import decisions, validation_settings, wilson  # noqa: E402
from povstim.io import write_json  # noqa: E402
from povstim.parse.conllu import read_file  # noqa: E402

QF_PATH = "workflow/povstim/dpe/question_formation.py"
# The cue set frozen before gold_train was read (written on the dev split), and after the first round of added cues.
V0, V1 = "f4d13ab", "0151248"
PHEN = "question_formation"


def load_at(rev: str):
    """``dpe/question_formation.py`` as it was at ``rev``, imported beside the current one (its relative imports
    resolve in the current package: dpe's tree, surface and words helpers it uses are unchanged since)."""
    got = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{QF_PATH}"], capture_output=True, text=True)
    if got.returncode:
        raise SystemExit(f"git show {rev}:{QF_PATH}: {got.stderr.strip()} (a shallow clone? git fetch --unshallow)")
    src = got.stdout
    name = f"povstim.dpe._question_formation_{rev}"
    spec = importlib.util.spec_from_loader(name, loader=None)
    mod = importlib.util.module_from_spec(spec)
    mod.__package__ = "povstim.dpe"
    saved = registry.register
    registry.register = lambda p: p  # the old module registers its phenomenon again: not into the registry
    try:
        exec(compile(src, f"{rev}:{QF_PATH}", "exec"), mod.__dict__)
    finally:
        registry.register = saved
    return mod


class Units:
    """The cue changes since ``V0``, each a switch on the current module (``off`` restores the earlier code)."""

    def __init__(self) -> None:
        self.v1 = load_at(V1)
        self._v1_subject_end = self.v1._subject_end
        # V1's relativizer cue finds subjects through whatever subject finder the current module has (so the
        # two round-2 switches stay independent)
        self.v1._subject_end = lambda ws, j: qf._subject_end(ws, j)
        self.round = {"cleft": 1, "extraposed": 1, "place_time_wh": 1, "possessive_subject": 2,
                      "relativizer_open_or_adverb": 2}
        self._patches = {
            # round 1 (0151248): it-clefts (with the tag-question guard of their relative), extraposed
            # relatives after a wh-question's verb, free relatives of place and time
            "cleft": ("CONSERVATIVE_CUES", lambda cur: tuple(c for c in cur if c is not qf.qf_conservative_cleft)),
            "extraposed": ("CONSERVATIVE_CUES",
                           lambda cur: tuple(c for c in cur if c is not qf.qf_conservative_extraposed)),
            "place_time_wh": ("PLACE_TIME_WH", lambda cur: frozenset()),
            # round 2 (83dd4e0): a possessive/demonstrative before a noun phrase determines it; a relativizer
            # after a noun phrase that opens a non-question, or after an adverb
            "possessive_subject": ("_subject_end", lambda cur: self._v1_subject_end),
            "relativizer_open_or_adverb": ("CONSERVATIVE_CUES", lambda cur: tuple(
                self.v1.qf_conservative_relativizer if c is qf.qf_conservative_relativizer else c for c in cur)),
        }
        assert set(self._patches) == set(self.round)

    @contextlib.contextmanager
    def off(self, names):
        """The current cues with ``names`` switched off."""
        saved = {g: getattr(qf, g) for g in ("CONSERVATIVE_CUES", "PLACE_TIME_WH", "_subject_end")}
        try:
            for n in names:
                glob, patch = self._patches[n]
                setattr(qf, glob, patch(getattr(qf, glob)))
            yield
        finally:
            for g, v in saved.items():
                setattr(qf, g, v)


def qf_hits(sents, fs, units: Units, off=()) -> list[bool]:
    with units.off(off):
        return [PHEN in d for d in decisions(sents, fs, "conservative")]


def rule_hits(rule, sents, ctx) -> list[bool]:
    """Whether ``rule`` (a conservative QF rule function) fires on each sentence."""
    return [s is not None and rule(s, ctx) is not None for s in sents]


def counts(ref: list[bool], got: list[bool]) -> dict:
    return tally(sum(r and g for r, g in zip(ref, got)), sum(g and not r for r, g in zip(ref, got)),
                 sum(r and not g for r, g in zip(ref, got)))


def tally(tp: int, fp: int, fn: int) -> dict:
    return {"tp": tp, "fp": fp, "fn": fn, "positives": tp + fn,
            "recall": round(tp / (tp + fn), 4) if tp + fn else None, "recall_ci95": wilson(tp, tp + fn),
            "precision": round(tp / (tp + fp), 4) if tp + fp else None, "precision_ci95": wilson(tp, tp + fp)}


def add(a: dict | None, b: dict) -> dict:
    return b if a is None else tally(a["tp"] + b["tp"], a["fp"] + b["fp"], a["fn"] + b["fn"])


def units_for_fold(evidence: dict, fold: int) -> tuple[list[str], list[str]]:
    """The units fold ``fold`` is measured with (evidence in another fold's children) and those switched off
    (every rescue in ``fold``, or none at all: a unit nothing motivated on the parses read is not credited)."""
    on = [n for n, e in evidence.items() if any(int(k) != fold and v for k, v in e["by_fold"].items())]
    return on, [n for n in evidence if n not in on]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cv", default="results/parser_cv", help="parser_cv.py train's output folder")
    ap.add_argument("--out", help="JSON to write (default: <cv>/cue_design.json)")
    args = ap.parse_args(argv)
    import parser_cv

    cv = Path(args.cv)
    if not (cv / "folds.json").is_file():
        raise SystemExit(f"{cv / 'folds.json'}: missing: run python scripts/parser_cv.py train --out {cv} first")
    out = Path(args.out) if args.out else cv / "cue_design.json"
    folds = {int(k): v for k, v in json.loads((cv / "folds.json").read_text())["folds"].items()}
    sents = parser_cv.gold_train()
    spacy_all = read_file(cv / "parses" / "gold_train.spacy.conllu")
    vs = validation_settings({"treebank": str(parser_cv.DATA / "gold_train")})
    adult = [s.meta.get("speaker_role") not in vs.drop_speakers for s in sents]
    child_of = [s.meta[parser_cv.adapted.GROUP_KEY] for s in sents]
    fold_of_child = {c: f for f, cs in folds.items() for c in cs}
    fold_of = [fold_of_child[c] for c in child_of]
    adapted_all: list = [None] * len(sents)
    for f, kids in folds.items():
        held = [k for k, c in enumerate(child_of) if c in kids]
        parsed = read_file(cv / "parses" / f"fold{f}.childes.conllu")
        if len(parsed) != len(held):
            raise SystemExit(f"{cv}/parses/fold{f}.childes.conllu: {len(parsed)} parses for {len(held)} sentences")
        for k, p in zip(held, parsed):
            adapted_all[k] = p
    idx = [k for k in range(len(sents)) if adult[k]]
    gold = [sents[k] for k in idx]
    paths = {"adapted": [adapted_all[k] for k in idx], "en_core_web_sm": [spacy_all[k] for k in idx]}
    fold = [fold_of[k] for k in idx]
    fs = filter_settings({"rules": [PHEN], "mode": "conservative"})
    ref = [PHEN in d for d in decisions(gold, fs, "posh")]
    units = Units()
    names = list(units.round)
    r2 = [n for n in names if units.round[n] == 2]

    # 1. the switches reproduce the cue sets read from git, on every sentence and every path
    v0, v1 = load_at(V0), load_at(V1)  # unpatched copies (Units' V1 reads the current subject finder)
    checks = {}
    for path, parsed in {"gold": gold, **paths}.items():
        for label, mod, off in (("V0", v0, names), ("V1", v1, r2)):
            want = rule_hits(mod.qf_conservative, parsed, fs.context)
            with units.off(off):
                got = rule_hits(qf.qf_conservative, parsed, fs.context)
            diff = sum(a != b for a, b in zip(want, got))
            checks[f"{label}/{path}"] = diff
            if diff:
                raise SystemExit(f"switching off {off} differs from {label} ({mod.__name__}) on {diff} {path} "
                                 "sentences: the units do not restore the old cues")

    # 2. each unit's evidence: the positives it rescued in its round's cue set, on the parses its author read
    design = {1: ("en_core_web_sm", r2), 2: ("adapted", [])}
    evidence = {}
    for n in names:
        path, base_off = design[units.round[n]]
        with_u = qf_hits(paths[path], fs, units, base_off)
        without = qf_hits(paths[path], fs, units, [*base_off, n])
        rescued = [i for i in range(len(gold)) if ref[i] and with_u[i] and not without[i]]
        evidence[n] = {"round": units.round[n], "read_on": path, "rescued": len(rescued),
                       "by_fold": {str(f): sum(fold[i] == f for i in rescued) for f in folds},
                       "by_child": {c: sum(child_of[idx[i]] == c for i in rescued)
                                    for c in sorted(set(child_of))}}

    # 3. per fold: the units with evidence in another fold's children
    result = {"folds": {str(f): v for f, v in folds.items()}, "units_reproduce_git": checks, "evidence": evidence,
              "n_sentences": len(gold), "positives": sum(ref), "per_fold": {}, "pooled": {}}
    for path, parsed in paths.items():
        pooled = {"design_split_by_child": None, "frozen_before_gold_train": None, "current_in_sample": None}
        for f in folds:
            on, off = units_for_fold(evidence, f)
            held = [i for i in range(len(gold)) if fold[i] == f]
            r = [ref[i] for i in held]
            p = [parsed[i] for i in held]
            row = {"units_on": on, "units_off": off,
                   "design_split_by_child": counts(r, qf_hits(p, fs, units, off)),
                   "frozen_before_gold_train": counts(r, qf_hits(p, fs, units, names)),
                   "current_in_sample": counts(r, qf_hits(p, fs, units, []))}
            result["per_fold"].setdefault(str(f), {})[path] = row
            for key in pooled:
                pooled[key] = add(pooled[key], row[key])
        result["pooled"][path] = pooled
    write_json(out, result)
    for path, pooled in result["pooled"].items():
        for key, c in pooled.items():
            lo, hi = c["recall_ci95"]
            plo, phi = c["precision_ci95"]
            print(f"{path:15s} {key:26s} recall {c['recall']:.3f} [{lo:.2f}, {hi:.2f}] ({c['tp']}/{c['positives']})"
                  f"  precision {c['precision']:.3f} [{plo:.2f}, {phi:.2f}]  fp {c['fp']}")
    print(json.dumps({"evidence": evidence, "units_off_per_fold": {f: result["per_fold"][f]["adapted"]["units_off"]
                                                                   for f in result["per_fold"]}}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
