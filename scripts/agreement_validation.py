"""subject_verb_agreement_ud on English CHILDES parses against the construction on gold trees.

UD_English-CHILDES's gold trees carry no FEATS (gold_train: none; the dev split: 12 tokens), and the
adapted parser, trained on them, writes none either; agreement through Number/Person cannot be read off
them as they are. Both get their features here from their XPOS (and form, deprel) by en_core_web_sm's own
attribute ruler, the component that writes the spaCy parses' morph from its predicted tags: the gold
trees' features are then what en_core_web_sm would write given gold tags, so the comparison measures the
parsers' tag and tree errors, not two feature schemes. The spaCy parses keep their own morph (the script
says how often re-deriving it from their tags gives it back).

The sentences, folds and speakers are scripts/parser_cv.py's: every held-out child of the three folds, each
parsed by an adapted parser that never saw the child (out of sample by child), adults only
(filter_validation.drop_speakers). The construction was written from UD's definition and French/German
examples before these numbers were measured and has not been changed after reading them.

    python scripts/agreement_validation.py [--out /work/parser_cv_full]
    python scripts/agreement_validation.py --french   # the share of French CDS utterances it matches (no
                                                      # labels: not a recall), and a seeded sample to read
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow"))
sys.path.insert(0, str(ROOT / "scripts"))

from parser_cv import gold_train  # noqa: E402
from povstim import dpe  # noqa: E402
from povstim.constructions import fastmatch, library, match  # noqa: E402
from povstim.filter.validate import validation_settings, wilson  # noqa: E402
from povstim.parse import adapted  # noqa: E402
from povstim.parse.backends import load_spacy  # noqa: E402
from povstim.parse.conllu import Sentence, read_file  # noqa: E402

NAME = "subject_verb_agreement_ud"


def with_features(sents: list[Sentence], nlp) -> list[Sentence]:
    """Each sentence with FEATS from its XPOS, form and deprel by the pipeline's attribute ruler."""
    from spacy.tokens import Doc

    ruler = nlp.get_pipe("attribute_ruler")
    out = []
    for s in sents:
        c = fastmatch.columns(s)
        doc = Doc(nlp.vocab, words=c["words"], heads=c["heads"], deps=c["deps"],
                  tags=[t or "XX" for t in c["tags"]])
        doc = ruler(doc)
        out.append(Sentence([replace(t, feats=str(d.morph) or "_") for t, d in zip(s.tokens, doc)], dict(s.meta)))
    return out


def french() -> None:
    import csv
    import random

    from povstim.parse.backends import parse_spacy

    path = ROOT.parent / "shared" / "data" / "childes_vs_wiki_fr" / "cds_validation_random.csv"
    with open(path, newline="", encoding="utf-8") as fh:
        texts = [r["text"] for r in csv.DictReader(fh) if r["text"].strip()]
    parses = parse_spacy(texts, language="fr")
    library.use({})
    c = library.CONSTRUCTIONS[NAME]
    result = {"utterances": len(texts), "modes": {}}
    for mode in dpe.MODES:
        got = [match.match(c, mode, s) for s in parses]
        hits = [(t, r) for t, r in zip(texts, got) if r is not None]
        k = len(hits)
        sample = random.Random(1).sample(hits, min(15, k))
        result["modes"][mode] = {"matches": k, "share": round(k / len(texts), 4),
                                 "sample": [f"{t}  [{r[0]}: {' '.join(x.form for x in r[1])}]" for t, r in sample]}
    print(json.dumps(result, indent=1, ensure_ascii=False))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="/work/parser_cv_full", help="parser_cv.py's output folder")
    ap.add_argument("--french", action="store_true", help="French CDS: the share matched and a sample")
    args = ap.parse_args()
    if args.french:
        return french()
    out = Path(args.out)
    sents = gold_train()
    folds = {int(k): v for k, v in json.loads((out / "folds.json").read_text())["folds"].items()}
    spacy_all = read_file(out / "parses" / "gold_train.spacy.conllu")
    spacy_of = {id(s): p for s, p in zip(sents, spacy_all)}
    gold, childes, sp = [], [], []
    for f, kids in folds.items():
        held = [s for s in sents if s.meta[adapted.GROUP_KEY] in kids]
        gold += held
        childes += read_file(out / "parses" / f"fold{f}.childes.conllu")
        sp += [spacy_of[id(s)] for s in held]
    drop = validation_settings({"treebank": "x"}).drop_speakers
    adults = [k for k, s in enumerate(gold) if s.meta.get("speaker_role") not in drop]
    nlp = load_spacy(None, "en")
    g = with_features([gold[k] for k in adults], nlp)
    ch = with_features([childes[k] for k in adults], nlp)
    spc = [sp[k] for k in adults]
    rederived = with_features(spc, nlp)
    same = sum(a.feats == b.feats or (a.feats in ("", "_") and b.feats in ("", "_"))
               for x, y in zip(spc, rederived) for a, b in zip(x.tokens, y.tokens))
    total = sum(len(x.tokens) for x in spc)
    library.use({})
    c = library.CONSTRUCTIONS[NAME]
    result = {"adult_sentences": len(adults), "spacy_morph_rederived_share": round(same / total, 4), "modes": {}}
    for mode in dpe.MODES:
        ref = [match.match(c, mode, s) is not None for s in g]
        row = {"gold_positives": sum(ref)}
        for name, parsed in (("childes", ch), ("en_core_web_sm", spc)):
            got = [match.match(c, mode, s) is not None for s in parsed]
            tp = sum(a and b for a, b in zip(ref, got))
            row[name] = {"tp": tp, "matches": sum(got), "recall": round(tp / max(1, sum(ref)), 3),
                         "recall_ci95": wilson(tp, sum(ref)), "precision": round(tp / max(1, sum(got)), 3),
                         "precision_ci95": wilson(tp, sum(got))}
        result["modes"][mode] = row
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
