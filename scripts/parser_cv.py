"""Cross-validate the parser adapted to child-directed speech, by child, against en_core_web_sm.

    python scripts/parser_cv.py train    --out results/parser_cv [--folds 3] [--epochs 10]
    python scripts/parser_cv.py evaluate --out results/parser_cv

``train`` (hours of CPU: run it with ``nice -n 10``, in the background, logging to a file):

1. the treebank (``../shared/data/ud_childes/gold_train``: 7 children's transcripts, all speakers)
   is split into ``--folds`` folds of whole children (``filter.validate.assign_folds`` over the child);
2. per fold, ``povstim.parse.adapted.train_parser`` trains on the other folds' children only and
   parses the held-out children's texts (``folds/fold{k}/model``, ``parses/fold{k}.childes.conllu``);
3. the parser of every child (``full/model``, what ``parser.backend: childes`` trains) parses the
   dev split (``en_childes-ud-dev.conllu``) less its texts that also occur in gold_train;
4. en_core_web_sm parses the same texts (``parses/*.spacy.conllu``). Each step is skipped when its
   output exists (a killed run resumes).

``evaluate`` reads the parses and writes ``scores.json``:

- UAS / LAS (LAS on the universal relation, subtypes stripped, as the CoNLL 2018 shared task, and
  on the full label) per held-out fold, pooled over the folds (cross-validated by child: each
  child's trees parsed by a parser that never saw that child) and on the dev split, for both
  parsers, on the same sentences: those whose gold tokens (multiword tokens merged as the
  tokenizer keeps them) are the tokens both parsers were given;
- the DPE filter and every construction of the library (``filter.validate.validate``, gold trees
  as reference, the parses measured), adults only, cross-validated by child with Wilson 95%
  intervals; fewer than ``filter_validation.min_positives`` positives is "not measurable".
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow"))

from povstim import dpe  # noqa: E402
from povstim.filter.settings import filter_settings  # noqa: E402
from povstim.filter.validate import assign_folds, validate, validation_settings  # noqa: E402
from povstim.io import write_json  # noqa: E402
from povstim.parse import adapted, backends  # noqa: E402
from povstim.parse.conllu import read_file, write  # noqa: E402
from povstim.parse.tokenize import tokenize  # noqa: E402

log = logging.getLogger("parser_cv")
DATA = ROOT.parent / "shared" / "data" / "ud_childes"


def gold_train() -> list:
    return adapted.read_treebank(adapted.treebank_files([DATA / "gold_train"]))


def fold_children(sents, k: int) -> dict[int, list[str]]:
    fold_of = assign_folds([(s.meta[adapted.GROUP_KEY],) for s in sents], k)
    out: dict[int, set] = {}
    for s, f in zip(sents, fold_of):
        out.setdefault(f, set()).add(s.meta[adapted.GROUP_KEY])
    return {f: sorted(c) for f, c in sorted(out.items())}


def dev_sentences(train_sents) -> tuple[list, int]:
    seen = {s.text for s in train_sents}
    dev = read_file(DATA / "en_childes-ud-dev.conllu")
    kept = [s for s in dev if s.text not in seen]
    return kept, len(dev) - len(kept)


def _write_parses(path: Path, gold, parses) -> None:
    for g, p in zip(gold, parses):
        p.meta = {"sent_id": g.sent_id or "", "text": g.text}
    path.parent.mkdir(parents=True, exist_ok=True)
    from povstim.io import atomic_write

    with atomic_write(path) as fh:
        write(fh, parses)


def _timed(what: str, fn):
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    log.info("%s: %.0f s wall, %.0f s CPU", what, time.perf_counter() - t0, time.process_time() - c0)
    return out, {"wall_s": round(time.perf_counter() - t0, 1), "cpu_s": round(time.process_time() - c0, 1)}


def cmd_train(args) -> None:
    out = Path(args.out)
    sents = gold_train()
    folds = fold_children(sents, args.folds)
    ts = adapted.TrainSettings(max_epochs=args.epochs, max_steps=args.max_steps, seed=0, dev_every=adapted.DEV_EVERY)
    timings = json.loads((out / "timings.json").read_text()) if (out / "timings.json").exists() else {}
    dev, n_overlap = dev_sentences(sents)
    log.info("folds by child: %s; dev split: %d sentences kept, %d also in gold_train dropped", folds, len(dev),
             n_overlap)
    jobs = [("full", [])] + [(f"fold{f}", kids) for f, kids in folds.items()]
    for name, held in [j for j in jobs if (not args.only or j[0] == args.only) and j[0] not in args.skip]:
        model = out / ("full" if name == "full" else f"folds/{name}") / "model"
        if not (model / adapted.MARKER).exists():
            _, timings[f"train_{name}"] = _timed(f"train {name} (without {held})", lambda: adapted.train_parser(
                [DATA / "gold_train"], model, ts, exclude=held))
            write_json(out / "timings.json", timings)
        target = dev if name == "full" else [s for s in sents if s.meta[adapted.GROUP_KEY] in held]
        what = "dev" if name == "full" else name
        p = out / "parses" / f"{what}.childes.conllu"
        if not p.exists():
            nlp = adapted.load(model)
            parses, _ = _timed(f"parse {what} with childes", lambda: backends.parse_childes(
                [s.text for s in target], nlp=nlp))
            _write_parses(p, target, parses)
    for what, target in (("gold_train", sents), ("dev", dev)):
        p = out / "parses" / f"{what}.spacy.conllu"
        if not p.exists():
            parses, _ = _timed(f"parse {what} with en_core_web_sm",
                               lambda: backends.parse_spacy([s.text for s in target]))
            _write_parses(p, target, parses)
    write_json(out / "folds.json", {"folds": {str(k): v for k, v in folds.items()}, "settings": ts.__dict__,
                                    "dev_overlap_dropped": n_overlap, "n_dev": len(dev)})


# ------------------------------------------------------------------------------ evaluation

def attachment(gold, parsed) -> dict:
    """UAS / LAS of ``parsed`` against ``gold`` on the sentences whose tokens agree."""
    n = uas = las = las_full = 0
    n_sent = skipped = 0
    for g, p in zip(gold, parsed):
        gs = adapted.surface_sentence(g)
        if gs is None or [t.form for t in gs.tokens] != [t.form for t in p.tokens]:
            skipped += 1
            continue
        n_sent += 1
        for a, b in zip(gs.tokens, p.tokens):
            n += 1
            if a.head == b.head:
                uas += 1
                if a.deprel == b.deprel:
                    las_full += 1
                if a.deprel.split(":")[0] == b.deprel.split(":")[0]:
                    las += 1
    return {"n_sentences": n_sent, "n_tokens": n, "n_unaligned_sentences": skipped,
            "uas": round(uas / n, 4) if n else None, "las": round(las / n, 4) if n else None,
            "las_full_label": round(las_full / n, 4) if n else None}


def cmd_evaluate(args) -> None:
    out = Path(args.out)
    sents = gold_train()
    folds = {int(k): v for k, v in json.loads((out / "folds.json").read_text())["folds"].items()}
    dev, _ = dev_sentences(sents)
    by_text_spacy = read_file(out / "parses" / "gold_train.spacy.conllu")
    spacy_of = {id(s): p for s, p in zip(sents, by_text_spacy)}
    result: dict = {"folds": {str(k): v for k, v in folds.items()}, "attachment": {}}
    cv_gold, cv_childes, cv_spacy = [], [], []
    missing = [f for f in folds if not (out / "parses" / f"fold{f}.childes.conllu").exists()]
    if missing:  # said in scores.json and the log: the pooled numbers are then over the other folds only
        log.warning("folds %s have no parses yet: evaluated over folds %s only", missing,
                    [f for f in folds if f not in missing])
    result["folds_missing"] = missing
    for f, kids in folds.items():
        if f in missing:
            continue
        held = [s for s in sents if s.meta[adapted.GROUP_KEY] in kids]
        parsed = read_file(out / "parses" / f"fold{f}.childes.conllu")
        sp = [spacy_of[id(s)] for s in held]
        result["attachment"][f"fold{f}"] = {"children": kids, "childes": attachment(held, parsed),
                                            "en_core_web_sm": attachment(held, sp)}
        cv_gold += held
        cv_childes += parsed
        cv_spacy += sp
    result["attachment"]["cross_validated_by_child"] = {"childes": attachment(cv_gold, cv_childes),
                                                        "en_core_web_sm": attachment(cv_gold, cv_spacy)}
    result["attachment"]["dev"] = {
        "childes": attachment(dev, read_file(out / "parses" / "dev.childes.conllu")),
        "en_core_web_sm": attachment(dev, read_file(out / "parses" / "dev.spacy.conllu"))}
    # The filter: every DPE phenomenon and every library construction, adults only; the folds of the
    # validation are the parser's folds (children), so each child's parse came from a parser that never saw it.
    rules = sorted(dpe.PHENOMENA)
    fs = filter_settings({"rules": rules, "mode": args.mode})
    vs = validation_settings({"treebank": str(DATA / "gold_train"), "cv_group_by": [adapted.GROUP_KEY],
                              "cv_folds": max(2, len(folds) - len(missing)), "modes": [args.mode]})
    adults = [k for k, s in enumerate(cv_gold) if s.meta.get("speaker_role") not in vs.drop_speakers]
    result["filter"] = {}
    for name, parsed in (("childes", cv_childes), ("en_core_web_sm", cv_spacy)):
        g = [cv_gold[k] for k in adults]
        p = [parsed[k] for k in adults]
        result["filter"][name] = validate(g, p, fs, vs, name)
    dev_adults = [k for k, s in enumerate(dev) if s.meta.get("speaker_role") not in vs.drop_speakers]
    result["filter_dev"] = {}
    for name, f in (("childes", "dev.childes.conllu"), ("en_core_web_sm", "dev.spacy.conllu")):
        parsed = read_file(out / "parses" / f)
        result["filter_dev"][name] = validate([dev[k] for k in dev_adults], [parsed[k] for k in dev_adults], fs,
                                              vs, name)
    write_json(out / "scores.json", result)
    print(json.dumps(result["attachment"], indent=1))


def _cell(c: dict) -> str:
    if not c["measurable"]:
        return f"not measurable ({c['n_reference']} positives)"
    lo, hi = c["recall_ci95"]
    plo, phi = c["precision_ci95"] or (0, 0)
    return (f"{c['recall']:.2f} [{lo:.2f}, {hi:.2f}] / {c['precision']:.2f} [{plo:.2f}, {phi:.2f}] "
            f"({c['tp']}/{c['n_reference']})")


def cmd_table(args) -> None:
    """Markdown tables of scores.json (docs/filter.md)."""
    res = json.loads((Path(args.out) / "scores.json").read_text())
    print("| sentences | parser | UAS | LAS | LAS (full label) | sentences / tokens |\n|---|---|---|---|---|---|")
    for split, d in res["attachment"].items():
        for name, a in d.items():
            if name == "children":
                continue
            print(f"| {split} | {name} | {a['uas']:.3f} | {a['las']:.3f} | {a['las_full_label']:.3f} | "
                  f"{a['n_sentences']} / {a['n_tokens']} |")
    for key in ("filter", "filter_dev"):
        f = res[key]
        mode = f["childes"]["filter_mode"]
        print(f"\n{key}: mode {mode}, reference {f['childes']['reference']}, {f['childes']['n_sentences']} sentences")
        print("| phenomenon | positives | adapted parser: recall [95%] / precision [95%] (tp/pos) | "
              "en_core_web_sm |\n|---|---|---|---|")
        for phen in f["childes"]["rules"]:
            # App. C's phenomena against App. C's rules on the gold trees; a construction against its own
            # definition (same mode) on the gold trees: the parser's errors, not a definition's difference
            against = "reference" if dpe.PHENOMENA[phen].origin == "python" else "same_mode_on_gold"
            cs = [f[n]["modes"][mode]["per_phenomenon"][phen]["cross_validated"][against]
                  for n in ("childes", "en_core_web_sm")]
            print(f"| {phen} ({against.replace('_', ' ')}) | {cs[0]['n_reference']} | {_cell(cs[0])} | {_cell(cs[1])} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("train")
    t.add_argument("--out", default="results/parser_cv")
    t.add_argument("--folds", type=int, default=3)
    t.add_argument("--epochs", type=int, default=10)
    t.add_argument("--max-steps", type=int, default=0, help="stop each training after this many updates (0: epochs)")
    t.add_argument("--only", help="train one job only: full, fold0, fold1, ...")
    t.add_argument("--skip", nargs="*", default=[], help="jobs not to train (full, fold0, ...): their parses are skipped too")
    e = sub.add_parser("evaluate")
    e.add_argument("--out", default="results/parser_cv")
    e.add_argument("--mode", default="conservative")
    tb = sub.add_parser("table")
    tb.add_argument("--out", default="results/parser_cv")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s: %(message)s")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    {"train": cmd_train, "evaluate": cmd_evaluate, "table": cmd_table}[args.cmd](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
