"""``povstim release``: POSH Tables 3, 8 and 12 and Figures 1-3 from published per-model accuracies.

Reads a folder of released result files (one CSV per model: paradigm, accuracy; the model's arch,
corpus, size, filtered flag and seed in the file name) and runs the analysis our own item scores
go through (``povstim analyze``: same tables, tests and models) and the figures:

    povstim release --results posh-bench/results/posh_gpt_results --config configs/release/posh-bench.yaml \\
        --out-dir results/posh-release

-> OUT/analysis/ (counts.csv, accuracy.csv, chisq.csv, tables/table{3,8}_posh.*, bayes/) and
OUT/figures/ (fig1_children, fig2_accuracy, fig3_posterior). ``--config`` is a YAML file whose
``release:`` and ``analysis:`` sections (workflow/schemas/config/) set how the files are read and
analysed; flags override it. configs/release/posh-bench.yaml reads the POSH-BENCH authors'
results/posh_gpt_results/ folder (posh_results/ before their commit 5c4049b; ``--results`` may also be the
checkout, where either is found). Those public files postdate the benchmark revision of the paper's printed
tables: the command gives the authors' analysis of them, not the printed numbers (docs/analysis.md,
"Published results").

Other studies' releases too (docs/published.md): the folder's layout is found from its files
(``release.layout: auto``): POSH-BENCH's per-model CSVs, FiCT's
tidy_results.csv (configs/release/fict.yaml), or CHILDES vs Wikipedia's json_<suite>/ folders
(configs/release/childes-vs-wiki.yaml); figures/release_studies.py writes the latter two.

It sits with the figures, above the analysis whose tables it writes: the one command that does both.
"""

from __future__ import annotations

import argparse
import logging
import os
import time
from pathlib import Path

from ..io import PovstimError, json_object_arg, load_yaml

log = logging.getLogger("povstim.release")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.description = __doc__.split("\n", 1)[1]
    p.add_argument("--results", required=True, metavar="DIR",
                   help="folder of released results: per-model result CSVs, or a checkout of xiulinyang/posh-bench "
                   "(its results/posh_gpt_results/, or posh_results/ in older checkouts); FiCT's results/data/; "
                   "CHILDES vs Wikipedia's json_results_clm/ (or one json_<suite>/ folder)")
    p.add_argument("--out-dir", required=True, metavar="DIR", help="writes DIR/analysis and DIR/figures")
    p.add_argument("--config", metavar="YAML", help="a file with release: and analysis: sections "
                   "(and acquisition: for CHILDES vs Wikipedia; e.g. configs/release/posh-bench.yaml)")
    p.add_argument("--params", metavar="JSON", help="the release section as JSON (overrides --config)")
    p.add_argument("--analysis", metavar="JSON", help="the analysis section as JSON (overrides --config)")
    p.add_argument("--pattern", help="regular expression for the file names (named groups size, seed, "
                   "condition or source, optional filtered and arch)")
    p.add_argument("--items-per-paradigm", type=int, help="minimal pairs behind each accuracy")
    p.add_argument("--accuracy-column", help="column holding the accuracy")
    p.add_argument("--ignore", nargs="+", metavar="GLOB", help="file-name globs to skip")
    p.add_argument("--no-model", action="store_true", help="tables and accuracy figures only, no Bayesian model")
    p.add_argument("--cores", type=int, help="processes for the chains (default: min(chains, CPUs)) and figures "
                   "drawn at once (default: CPUs)")


def _config_sections(path: str | None) -> dict:
    if not path:
        return {}
    p = Path(path)
    if not p.exists():
        raise PovstimError(f"{p}: no such config file")
    doc = load_yaml(p, mapping=None) or {}
    if not isinstance(doc, dict):
        raise PovstimError(f"{p}: expected a mapping with release: and analysis: sections")
    return doc


def settings(args):
    from ..analysis.pipeline import analysis_settings  # pandas: only when the command runs, not for --help
    from ..analysis.tables.released import release_settings

    doc = _config_sections(args.config)
    where = args.config or "--params"
    rel = {**(doc.get("release") or {}), **json_object_arg(args.params, "--params")}
    ana = {**(doc.get("analysis") or {}), **json_object_arg(args.analysis, "--analysis")}
    flags = {"pattern": args.pattern, "items_per_paradigm": args.items_per_paradigm,
             "accuracy_column": args.accuracy_column, "ignore": args.ignore}
    return release_settings(rel, where=where, **flags), analysis_settings(ana, where=args.config or "--analysis")


def acquisition_settings(args):
    """The config's ``acquisition:`` section (the childes_vs_wiki layout's acquisition points)."""
    from ..analysis.timing.acquisition_settings import AcquisitionSettings
    from ..settings import build

    return build(AcquisitionSettings, "acquisition", _config_sections(args.config).get("acquisition") or {},
                 where=args.config or "--config")


def run(args) -> int:
    from ..analysis.pipeline import counts_analysis  # pandas: only when the command runs, not for --help
    from ..analysis.tables.released import read_released
    from . import release_studies
    from .draw import draw_analysis

    t0 = time.perf_counter()
    rel, ana = settings(args)
    out = Path(args.out_dir)
    layout, folder = release_studies.detect_layout(args.results, rel)
    if layout == "fict":
        check = release_studies.run_fict(folder, rel, ana, out, fit_model=not args.no_model, cores=args.cores)
        log.info("FiCT release: %d of %d delta cells equal the authors' in %.1f s -> %s", check["match"],
                 check["cells"], time.perf_counter() - t0, out)
        return 0
    if layout == "childes_vs_wiki":
        info = release_studies.run_curves(folder, rel, ana, acquisition_settings(args), out,
                                          fit_model=not args.no_model, cores=args.cores)
        log.info("CHILDES vs Wikipedia release: %s in %.1f s -> %s", ", ".join(info["suites"]),
                 time.perf_counter() - t0, out)
        return 0
    counts = read_released(args.results, rel)
    # Tables 3/8 and the figures get every learner's rows (release.learners); Table 12 stays the model of the
    # results folder's (GPT-2) files, as POSH fitted it, not a pool of architectures its formula cannot tell apart
    counts_analysis(counts, ana, out / "analysis", fit_model=not args.no_model, cores=args.cores,
                    model_counts=counts[counts["learner"] == ""])
    draw_analysis(out / "analysis", out / "figures", learning_curves=False, jobs=args.cores or os.cpu_count() or 1)
    log.info("tables, model and figures from %d released result files in %.1f s -> %s",
             counts["file"].nunique(), time.perf_counter() - t0, out)
    return 0
