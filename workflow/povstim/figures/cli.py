"""``povstim figures``: draw the paper's figures (PNG + PDF) from the analysis outputs.

Always drawn (from --analysis-dir, and --scores for the learning curves):
  fig1_children          POSH Fig. 1: children's accuracy (POSH Table 7) beside the models' at matched input
                         sizes (when the posh suite was scored)
  fig2_accuracy          POSH Fig. 2: category accuracy by size and condition, SD over seeds, chance line
  fig3_posterior         POSH Fig. 3: posterior medians and 95% intervals (from bayes/summary.csv)
  fig3_three_level       the same for the three-level model (bayes/three_level_summary.csv), when fitted
  learning_curves_{suite}[_category]   accuracy vs training step per paradigm / category and condition
Drawn when their inputs are given:
  fig4_biases, fig5_biases   POSH Figs. 4-5 (Experiment 3), when DIR/tables/exp3_*.csv exist
  tokenizer_study        POSH Table 9 as a figure (--tokenizer-study)
  filter_audit           DPE removed per rule and size, the targeted part inside each bar (--filter-audit)
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

import pandas as pd

from ..analysis.tables import tidy
from ..analysis.timing.curves import curve_table
from ..io import PovstimError, json_object_arg
from .draw import draw_analysis
from .filter_audit import read_filter_audit
from .index import write_index
from .runinfo import write_run_info

log = logging.getLogger("povstim.figures")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.description = __doc__.split("\n", 1)[1]
    p.add_argument("--analysis-dir", metavar="DIR",
                   help="output folder of `povstim analyze` (accuracy.csv, accuracy_by_step.csv, bayes/)")
    p.add_argument("--scores", nargs="*", metavar="PARQUET", default=[],
                   help="item-score files for the learning curves (default: DIR/accuracy_by_step.csv)")
    p.add_argument("--tokenizer-study", nargs="*", metavar="FILE", default=[],
                   help="vocab-study tables (CSV/TSV/JSON) with vocab_size, dataset|condition|corpus, size, "
                   "tokens|n_tokens|ctc")
    p.add_argument("--filter-audit", nargs=3, action="append", default=[], metavar=("CORPUS", "SIZE", "DPE_TSV"),
                   help="a DPE audit with its corpus and size, e.g. --filter-audit baby 50k "
                   "results/demo/filter/baby/50k/dpe.tsv (repeatable; summary.json beside it adds rates)")
    p.add_argument("--out-dir", required=True, metavar="DIR", help="where the PNG and PDF files go")
    p.add_argument("--run-info", metavar="HTML", help="also write the run's config and package versions here "
                   "(for the Snakemake report)")
    p.add_argument("--config", metavar="JSON", help="the whole config as JSON, shown in --run-info")
    p.add_argument("--index", metavar="FIGURES_DIR",
                   help="instead of drawing: make --out-dir an index of links to this experiment's figures folder")
    p.add_argument("--experiment", help="the experiment's name (with --index)")
    p.add_argument("--cores", type=int, default=1,
                   help="figures drawn at once, each in its own (forked) process; the files do not depend on it "
                   "(default: 1)")


def run(args) -> int:
    if args.index:
        files = write_index(args.index, args.experiment or Path(args.index).parent.name, args.out_dir)
        log.info("%s: links to the %d figure files of %s", args.out_dir, len(files), args.index)
        return 0
    if not args.analysis_dir:
        raise PovstimError("--analysis-dir is required (the output folder of `povstim analyze`)")
    curves = None
    if args.scores:
        curves = curve_table(tidy.read_scores(args.scores))
    study = read_tokenizer_study(args.tokenizer_study) if args.tokenizer_study else None
    audit = read_filter_audit(args.filter_audit) if args.filter_audit else None
    draw_analysis(Path(args.analysis_dir), Path(args.out_dir), curves=curves, study=study, audit=audit,
                  jobs=max(1, args.cores))
    if args.run_info:
        config = json_object_arg(args.config, "--config")
        write_run_info(args.run_info, config)
    return 0


_ALIASES = {
    "dataset": ["dataset", "condition", "corpus"],
    "tokens": ["tokens", "n_tokens", "ctc", "corpus_token_count", "token_count"],
    "vocab_size": ["vocab_size", "vocab"],
    "size": ["size"],
}


def read_tokenizer_study(paths) -> pd.DataFrame:
    frames = []
    for path in map(Path, paths):
        if not path.exists():
            raise PovstimError(f"{path}: no such tokenizer-study file")
        if path.suffix == ".json":
            obj = json.loads(path.read_text())
            df = pd.DataFrame(obj if isinstance(obj, list) else obj.get("rows", obj))
        else:
            df = pd.read_csv(path, sep="\t" if path.suffix in (".tsv", ".txt") else ",")
        cols = {}
        for want, names in _ALIASES.items():
            hit = next((n for n in names if n in df.columns), None)
            if hit is None:
                raise PovstimError(f"{path}: tokenizer study needs a column {' or '.join(names)}")
            cols[want] = df[hit]
        frames.append(pd.DataFrame(cols))
    out = pd.concat(frames, ignore_index=True)
    out["size"] = out["size"].astype(str)
    out["dataset"] = out["dataset"].astype(str)
    out["vocab_size"] = pd.to_numeric(out["vocab_size"])
    out["tokens"] = pd.to_numeric(out["tokens"])
    return out
