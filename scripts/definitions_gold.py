"""Matches of every construction and of App. C's phenomena on gold UD trees, and on spaCy's parse of the
same texts ("definitions that match their names", FiCT as published).

    python scripts/definitions_gold.py --out /tmp/defs.json [--treebank FILE ...] [--spacy] [--all-speakers]

For each treebank (default: ../shared/data/ud_childes/gold_train/*.conllu and the dev split; dev sentences whose
text also occurs in gold_train are kept in the dev count, the two are reported apart) and each registered
phenomenon: the number of gold trees its literal (``posh``) rule matches and, with ``--spacy``, the recall /
precision of its ``conservative`` rule on en_core_web_sm's parse of the tree's ``# text`` against that
reference (the protocol of ``povstim filter-validation``, in sample: no folds). ``--list NAME`` prints the
sentences a phenomenon matches on the gold trees (to read what a definition removes).

Numbers on these treebanks are in sample for any definition written while reading them (docs/constructions.md).
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow"))

from povstim import dpe  # noqa: E402
from povstim.constructions import library  # noqa: E402
from povstim.parse.conllu import read_file  # noqa: E402

SHARED = ROOT.parent / "shared" / "data" / "ud_childes"
CHILDREN = ("Target_Child", "Child")


def load(paths, all_speakers: bool):
    out = []
    for p in paths:
        for s in read_file(p):
            if not all_speakers and s.meta.get("speaker_role") in CHILDREN:
                continue
            out.append(s)
    return out


def parses(texts: list[str], cache: Path):
    """en_core_web_sm parses of ``texts`` (the parse stage's spaCy path), pickled at ``cache``."""
    if cache.is_file():
        got = pickle.loads(cache.read_bytes())
        if got["texts"] == texts:
            return got["parses"]
    from povstim.parse.run import parse_texts, parser_settings  # deferred: spaCy

    ps = parser_settings({"backend": "spacy", "prefilter": False, "cache_dir": None})
    sents, _ = parse_texts(dict(enumerate(texts)), ps, tuple(dpe.PHENOMENA))
    by = {int(s.sent_id): s for s in sents}
    got = [by.get(i) for i in range(len(texts))]
    cache.write_bytes(pickle.dumps({"texts": texts, "parses": got}))
    return got


def decide(sents, mode, rules):
    return [{} if s is None else {m.phenomenon: m.rule for m in dpe.find_dpe(s, mode, rules, dpe.Context())}
            for s in sents]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--treebank", action="append", help="CoNLL-U file(s); default gold_train/* and dev")
    ap.add_argument("--all-speakers", action="store_true", help="keep the children's utterances too")
    ap.add_argument("--spacy", action="store_true", help="also parse the texts with en_core_web_sm")
    ap.add_argument("--cache", default="/tmp/povstim_definitions_parses", help="folder of the pickled parses")
    ap.add_argument("--rules", nargs="*", help="phenomena (default: every registered one)")
    ap.add_argument("--list", help="print the gold matches of this phenomenon (literal rule)")
    ap.add_argument("--list-mode", default="posh")
    ap.add_argument("--out", help="JSON of the counts")
    ap.add_argument("--modes", nargs="+", default=["conservative"], help="filter modes measured on the parses")
    ap.add_argument("--fict-published", action="store_true",
                    help="also register FiCT's filters as published (constructions/published/fict.yaml, BLiMP "
                         "vocabulary from ../shared/data/blimp/data)")
    a = ap.parse_args(argv)
    if a.fict_published:
        library.use({"constructions": "workflow/povstim/constructions/published/fict.yaml",
                     "blimp_vocabulary": str(ROOT.parent / "shared" / "data" / "blimp" / "data")})
    sets = ({"custom": [Path(p) for p in a.treebank]} if a.treebank else
            {"gold_train": sorted((SHARED / "gold_train").glob("*.conllu")),
             "dev": [SHARED / "en_childes-ud-dev.conllu"]})
    rules = tuple(a.rules or dpe.PHENOMENA)
    result = {}
    for name, paths in sets.items():
        gold = load(paths, a.all_speakers)
        ref = decide(gold, "posh", rules)
        row = {"n": len(gold), "posh_on_gold": dict(Counter(p for d in ref for p in d)),
               "conservative_on_gold": dict(Counter(p for d in decide(gold, "conservative", rules) for p in d))}
        if a.list:
            got = decide(gold, a.list_mode, (a.list,))
            for s, d in zip(gold, got):
                if a.list in d:
                    print(f"{name}\t{d[a.list]}\t{s.text}")
        if a.spacy:
            Path(a.cache).mkdir(parents=True, exist_ok=True)
            tag = "all" if a.all_speakers else "adults"
            parsed = parses([s.text for s in gold], Path(a.cache) / f"{name}-{tag}.pickle")
            for mode in a.modes:
                got = decide(parsed, mode, rules)
                scores = {}
                for r in rules:
                    tp = sum(1 for x, y in zip(ref, got) if r in x and r in y)
                    fp = sum(1 for x, y in zip(ref, got) if r not in x and r in y)
                    fn = sum(1 for x, y in zip(ref, got) if r in x and r not in y)
                    scores[r] = {"tp": tp, "fp": fp, "fn": fn,
                                 "recall": round(tp / (tp + fn), 3) if tp + fn else None,
                                 "precision": round(tp / (tp + fp), 3) if tp + fp else None}
                row[f"{mode}_on_spacy_vs_posh_on_gold"] = scores
        result[name] = row
    text = json.dumps(result, indent=1, sort_keys=True)
    if a.out:
        Path(a.out).write_text(text + "\n")
    if not a.list:
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
