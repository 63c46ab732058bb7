"""``povstim export-babylm``: a model's checkpoints and predictions in the BabyLM evaluation pipeline's layout.

    povstim export-babylm results/demo/models/gpt2-tiny/baby/10k/seed1 --out-dir babylm-export \\
        --predictions results/demo/scores/gpt2-tiny/baby/10k/seed1/blimp.parquet results/demo/benchmarks/blimp

writes OUT/models/{name}/ (the final model, revision main) with a chck_{budget}/ folder per word checkpoint
(training.checkpoint_words), each loadable with transformers' Auto classes, and per --predictions pair
OUT/results/{name}/{revision}/zero_shot/{causal|mlm}/blimp/{dataset}/predictions.json and
best_temperature_report.txt, as the pipeline's zero-shot blimp task writes them (scoring/babylm.py).
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from ..io import PovstimError

log = logging.getLogger("povstim.export")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = __doc__.split("\n\n", 1)[1]
    p.add_argument("model", help="a povstim model folder (povstim train's output)")
    p.add_argument("--out-dir", required=True, help="export folder (models/ and results/ inside)")
    p.add_argument("--name", help="the model's name in the layout (default: arch-condition-size-seedN from "
                   "train_summary.json, else the folder's name)")
    p.add_argument("--predictions", nargs=2, action="append", default=[], metavar=("SCORES", "SUITE"),
                   help="an item-score file of this model (povstim score, with checkpoints) and its suite (folder "
                   "or .jsonl): exported as predictions.json for every revision (repeatable)")
    p.add_argument("--dataset", action="append", default=[], metavar="SUITE=NAME",
                   help="the dataset folder name of a suite (default: the suite's name)")
    p.add_argument("--checkpoints", action=argparse.BooleanOptionalAction,
                   help="export the word checkpoints as chck_* revisions (the default; an error when there are "
                   "none); --no-checkpoints: the final model only")


def default_name(model: Path) -> str:
    from .items import model_meta

    meta, _ = model_meta(model)
    if {"arch", "condition", "size", "seed"} <= set(meta):
        return f"{meta['arch']}-{meta['condition']}-{meta['size']}-seed{meta['seed']}"
    return model.resolve().name


def run(args) -> int:
    import pandas as pd
    from transformers import AutoConfig

    from .. import families
    from ..benchmarks.importers import load_pairs
    from ..benchmarks.tasks import resolve_path
    from .babylm import build_predictions, export_models, revisions, write_predictions
    from .prepare import model_kind

    model = Path(args.model)
    # every suite read first: a broken line is an error before the model's config and checkpoints are read
    suites = {suite_path: load_pairs(resolve_path(suite_path)) for _, suite_path in args.predictions}
    revs = revisions(model, args.checkpoints is not False)
    datasets = {}
    for spec in args.dataset:
        suite, sep, name = spec.partition("=")
        if not sep or not suite or not name:
            raise PovstimError(f"--dataset {spec!r}: write SUITE=NAME")
        datasets[suite] = name
    name = args.name or default_name(model)
    families.register_auto_classes()
    backend = "mlm" if model_kind(AutoConfig.from_pretrained(model)) == "masked" else "causal"
    out = Path(args.out_dir)
    built = {}
    for scores_path, suite_path in args.predictions:  # every prediction built before anything is written
        if not Path(scores_path).is_file():
            raise PovstimError(f"--predictions: no score file {scores_path}")
        pairs = suites[suite_path]
        suite = str(pairs[0]["suite"])
        built.update(build_predictions(pd.read_parquet(scores_path), pairs, revs, name, backend,
                                       datasets.get(suite, suite)))
    folders = export_models(model, out / "models" / name, revs)
    log.info("%s: %d revision(s) -> %s", model, len(folders), out / "models" / name)
    write_predictions(built, out / "results")
    log.info("predictions of %d revision x suite pair(s) -> %s", len(built), out / "results" / name)
    return 0
