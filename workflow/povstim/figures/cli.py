"""``povstim figures``: draw the paper's figures (PNG + PDF) from the analysis outputs.

Always drawn (from --analysis-dir, and --scores for the learning curves):
  fig2_accuracy          POSH Fig. 2: category accuracy by size and condition, SD over seeds, chance line
  fig3_posterior         POSH Fig. 3: posterior medians and 95% intervals (from bayes/summary.csv)
  learning_curves_{suite}[_category]   accuracy vs training step per paradigm / category and condition
Drawn when their inputs are given:
  fig4_biases, fig5_biases   POSH Figs. 4-5 (Experiment 3), when DIR/tables/exp3_*.csv exist
  tokenizer_study        POSH Table 9 as a figure (--tokenizer-study)
  filter_audit           DPE removed per rule and size (--filter-audit)
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

import pandas as pd

from ..io import PovstimError, json_object_arg, write_json

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


def run(args) -> int:
    from . import plots, style

    if args.index:
        from .index import write_index

        files = write_index(args.index, args.experiment or Path(args.index).parent.name, args.out_dir)
        log.info("%s: links to the %d figure files of %s", args.out_dir, len(files), args.index)
        return 0
    if not args.analysis_dir:
        raise PovstimError("--analysis-dir is required (the output folder of `povstim analyze`)")

    logging.getLogger("fontTools").setLevel(logging.WARNING)
    style.apply()
    adir = Path(args.analysis_dir)
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    made: dict[str, list[str]] = {}

    acc_path = adir / "accuracy.csv"
    if not acc_path.exists():
        raise PovstimError(f"{acc_path}: missing; run `povstim analyze` first")
    acc = pd.read_csv(acc_path, dtype={"size": str})
    made["fig2_accuracy"] = _save(plots.fig2_accuracy(acc), out, "fig2_accuracy")

    summary_path = adir / "bayes" / "summary.csv"
    if summary_path.exists():
        summary = pd.read_csv(summary_path)
        diag_path = adir / "bayes" / "diagnostics.json"
        problems = json.loads(diag_path.read_text())["problems"] if diag_path.exists() else []
        made["fig3_posterior"] = _save(plots.fig3_posterior(summary, problems), out, "fig3_posterior")
    else:
        log.warning("%s missing: no posterior figure (was the model skipped?)", summary_path)

    if args.scores:
        from ..analysis import tidy
        from ..analysis.curves import curve_table

        curves = curve_table(tidy.read_scores(args.scores))
    else:
        cpath = adir / "accuracy_by_step.csv"
        if not cpath.exists():
            raise PovstimError(f"{cpath}: missing and no --scores given")
        curves = pd.read_csv(cpath, dtype={"size": str})
    for suite in sorted(curves["suite"].unique()):
        made[f"learning_curves_{suite}"] = _save(plots.learning_curves(curves, suite), out,
                                                 f"learning_curves_{suite}")
        made[f"learning_curves_{suite}_category"] = _save(plots.learning_curves(curves, suite, "category"), out,
                                                          f"learning_curves_{suite}_category")

    from . import exp3  # POSH Figs. 4-5 (inductive biases), when the analysis wrote the Exp. 3 tables

    made.update(exp3.draw(adir, out))
    if args.tokenizer_study:
        study = read_tokenizer_study(args.tokenizer_study)
        made["tokenizer_study"] = _save(plots.tokenizer_study(study), out, "tokenizer_study")
    if args.filter_audit:
        audit = read_filter_audit(args.filter_audit)
        if audit.empty:
            log.warning("filter audit: no DPE removed in any corpus; drawing nothing")
        else:
            made["filter_audit"] = _save(plots.filter_audit(audit), out, "filter_audit")
    if args.run_info:
        from .runinfo import write_run_info

        config = json_object_arg(args.config, "--config")
        write_run_info(args.run_info, config)
    write_json(out / "figures.json", made)
    log.info("%d figures written to %s", len(made), out)
    return 0


def _save(fig, out, stem):
    from . import style

    return [p.name for p in style.save(fig, out, stem)]


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


def read_filter_audit(audits) -> pd.DataFrame:
    """Removed sentences per corpus x size x phenomenon x rule from (corpus, size, dpe.tsv) triples.

    Targeted removals also count under the phenomenon's strict rule, so the
    figure shows how much of App. C's removal is disambiguating evidence.
    """
    from .. import dpe
    from ..dpe import audit

    rows = []
    for corpus, size, path in audits:
        path = Path(path)
        dpe_rows = audit.read(path)
        total = _sentence_total(path.with_name("summary.json"))
        groups: dict[tuple[str, str], set[int]] = {}
        for r in dpe_rows:
            groups.setdefault((r.phenomenon, r.rule), set()).add(r.sent_id)
            strict = dpe.PHENOMENA[r.phenomenon].rules["strict"].__name__ if r.phenomenon in dpe.PHENOMENA else None
            if r.targeted and strict and strict != r.rule:
                groups.setdefault((r.phenomenon, strict), set()).add(r.sent_id)
        for (phen, rule), ids in sorted(groups.items()):
            rows.append({"corpus": corpus, "size": size, "phenomenon": phen, "rule": rule, "n": len(ids),
                         "rate": (len(ids) / total) if total else None})
    return pd.DataFrame(rows, columns=["corpus", "size", "phenomenon", "rule", "n", "rate"])


def _sentence_total(path: Path):
    """The corpus's sentence count from the filter's summary.json, if there is one."""
    if not path.exists():
        return None
    try:
        obj = json.loads(path.read_text())
    except json.JSONDecodeError:
        return None
    v = obj.get("n_sentences") if isinstance(obj, dict) else None
    return float(v) if isinstance(v, (int, float)) and v > 0 else None
