"""Regenerate (or check) the spaCy rows of povstim's measured-recall table, ``filter/measured_recall.yaml``.

    python scripts/measured_recall_table.py --check     # the table's spacy rows against a fresh measurement
    python scripts/measured_recall_table.py --write     # rewrite them (the childes rows are kept as they are)

The table is what ``povstim plan``, the report's residual evidence and the parser-fallback warning quote. Its
spaCy rows are measured here, the same way every time: UD_English-CHILDES ``gold_train`` (../shared/data), adult
speakers; the reference is each phenomenon's literal (``posh``) rule on the gold tree (FiCT's filters as published
registered too); ``tp`` is how many of those reference positives the mode's rules flag on en_core_web_sm's parse
of the tree's text (the parse stage's spaCy path). Recall needs nothing but the positives, so only they are parsed.

``question_formation`` in ``conservative`` mode is the exception: its cues were written reading these trees, so its
row is the cue design split by child (scripts/qf_cue_design_cv.py; tests/test_qf_cue_design.py holds it at the
stated count) and is kept as it is.

``sample``: ``in`` for a phenomenon whose definition was written while reading these trees (``IN_SAMPLE``), ``out``
otherwise; the provenance line states, measured here, the share of the adult texts that also occur in the dev
split the library's conservative variants were designed on.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow"))

from povstim import dpe  # noqa: E402
from povstim.constructions import library  # noqa: E402
from povstim.filter.residual import TABLE  # noqa: E402
from povstim.io import PovstimError, atomic_write  # noqa: E402
from povstim.parse.conllu import read_file  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"
CHILDREN = ("Target_Child", "Child")
MODES = ("posh", "conservative")
# definitions written while reading gold_train's trees (docs/filter.md, docs/constructions.md)
IN_SAMPLE = ("binding_domain", "passive", "pp_modified_subject", "relative_clause")
# rows measured elsewhere, kept as the table has them: (mode, phenomenon)
KEPT = (("conservative", "question_formation"),)


def adults(paths) -> list:
    return [s for p in paths for s in read_file(p) if s.meta.get("speaker_role") not in CHILDREN]


def decide(sents, mode: str, rules) -> list[set]:
    return [set() if s is None else {m.phenomenon for m in dpe.find_dpe(s, mode, rules, dpe.Context())}
            for s in sents]


def measure(shared: Path = SHARED) -> dict:
    """The spaCy rows: {"provenance": str, mode: {phenomenon: {tp, positives, sample}}}."""
    from povstim.parse.run import parse_texts, parser_settings  # deferred: spaCy

    library.use({"constructions": str(ROOT / "workflow/povstim/constructions/published/fict.yaml"),
                 "blimp_vocabulary": str(shared / "blimp" / "data")})
    treebank = shared / "ud_childes"
    gold = adults(sorted((treebank / "gold_train").glob("*.conllu")))
    if not gold:
        raise PovstimError(f"{treebank / 'gold_train'}: no trees")
    dev_texts = {s.text for s in read_file(treebank / "en_childes-ud-dev.conllu")}
    overlap = sum(s.text in dev_texts for s in gold) / len(gold)
    table = yaml.safe_load(TABLE.read_text(encoding="utf-8"))
    rules = tuple(sorted({p for mode in MODES for p in table["spacy"][mode]}))
    ref = decide(gold, "posh", rules)
    positives = [k for k, r in enumerate(ref) if r]
    ps = parser_settings({"backend": "spacy", "prefilter": False, "cache_dir": None})
    parsed, _ = parse_texts({k: gold[k].text for k in positives}, ps, rules)
    by = {int(p.sent_id): p for p in parsed}
    rows: dict = {"provenance": (
        f"UD_English-CHILDES gold_train, adults ({len(gold):,} utterances), en_core_web_sm 3.8.0 vs the literal rules "
        f"on the gold trees; no rule was written reading them except those marked 'in', but {overlap:.0%} of these "
        "texts also occur in the dev split the library's conservative variants were designed on "
        "(scripts/measured_recall_table.py)")}
    for mode in MODES:
        got = dict(zip(positives, decide([by.get(k) for k in positives], mode, rules)))
        rows[mode] = {}
        for phen in sorted(table["spacy"][mode]):
            if (mode, phen) in KEPT:
                rows[mode][phen] = table["spacy"][mode][phen]
                continue
            pos = [k for k in positives if phen in ref[k]]
            rows[mode][phen] = {"tp": sum(phen in got[k] for k in pos), "positives": len(pos),
                                "sample": "in" if phen in IN_SAMPLE else "out"}
    return rows


def differences(table: dict, fresh: dict) -> list[str]:
    out = [] if table["spacy"].get("provenance") == fresh["provenance"] else [
        f"spacy/provenance: table {table['spacy'].get('provenance')!r}, measured {fresh['provenance']!r}"]
    for mode in MODES:
        for phen in sorted(set(table["spacy"][mode]) | set(fresh[mode])):
            a, b = table["spacy"][mode].get(phen), fresh[mode].get(phen)
            if a != b:
                out.append(f"spacy/{mode}/{phen}: table {a}, measured {b}")
    return out


def write(fresh: dict) -> None:
    """The table with its spacy rows replaced (the header comment and the childes rows as they are)."""
    text = TABLE.read_text(encoding="utf-8")
    head, rest = text.split("\nspacy:\n", 1)
    childes = rest[rest.index("\nchildes:\n"):] if "\nchildes:\n" in rest else "\n"
    lines = [f"  provenance: {fresh['provenance']}"]
    for mode in MODES:
        lines.append(f"  {mode}:")
        for phen, v in fresh[mode].items():
            lines.append(f"    {phen}: {{tp: {v['tp']}, positives: {v['positives']}, sample: {v['sample']}}}")
    with atomic_write(TABLE) as fh:
        fh.write(head + "\nspacy:\n" + "\n".join(lines) + childes)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--check", action="store_true", help="compare the table's spacy rows with a fresh measurement")
    g.add_argument("--write", action="store_true", help="rewrite the table's spacy rows")
    a = ap.parse_args(argv)
    try:
        fresh = measure()
    except PovstimError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    table = yaml.safe_load(TABLE.read_text(encoding="utf-8"))
    if a.write:
        write(fresh)
        print(f"{TABLE}: spacy rows written")
        return 0
    diffs = differences(table, fresh)
    print("\n".join(diffs) or "the table's spacy rows are what the measurement gives")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
