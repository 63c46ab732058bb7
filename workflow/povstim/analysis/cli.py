"""``povstim analyze``: accuracy tables, chi-square tests and the Bayesian mixed model.

Two ways to run it:

* from the DAG (rules/analysis.smk): ``--scores`` item-score files + ``--conditions`` +
  ``--params`` (the config's analysis section) -> ``--out-dir`` with accuracy.csv, chisq.csv,
  accuracy_by_step.csv, tables/ (POSH Tables 3 and 8) and bayes/ (posterior, Table 12).
* by hand, model only: ``--counts FILE.csv`` or ``--items FILE.parquet`` + ``--formula`` ->
  ``--out DIR`` with summary.csv and diagnostics.json (+ posterior.nc, table12.*; with
  ``--models three_level`` also three_level_* and the pairwise contrasts).

Published per-model accuracy files (one CSV per model): ``povstim release``.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from povstim.io import PovstimError, json_object_arg, load_yaml
from povstim.settings import build, section
from povstim.analysis.tables.conditions_page import read_condition, shortfall_caveat

log = logging.getLogger("povstim.analyze")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.description = __doc__.split("\n", 1)[1] if __doc__ else None
    p.epilog = (
        "examples:\n"
        "  povstim analyze --scores results/scores/*/*/*/*/posh.parquet --conditions conditions.json \\\n"
        "      --params '{\"correction\": \"holm\"}' --out-dir results/analysis\n"
        "  povstim analyze --counts table8_counts.csv --formula \"(size + category) * filtered + source"
        " + (1|seed) + (1|phenomenon)\" --out fit/\n"
        "input formats: see docs/analysis.md"
    )
    src = p.add_argument_group("inputs (one of)")
    src.add_argument("--scores", nargs="+", metavar="PARQUET", help="item-score files (full analysis)")
    p.add_argument("--external-scores", nargs="+", default=[], metavar="PARQUET",
                   help="with --scores: item scores of models trained elsewhere (external_models; povstim "
                   "score-model): in the accuracy tables and curves, not in the Bayesian model")
    src.add_argument("--items", metavar="PARQUET", help="one item table with a 'correct' column (model only, "
                     "Bernoulli unless --family binomial)")
    src.add_argument("--counts", metavar="CSV", help="aggregated counts with n_correct, n_total (model only, binomial)")
    p.add_argument("--conditions", metavar="JSON",
                   help="condition -> {source, filtered} as a JSON string or a .json file "
                   "(adds the 'source' and 'filtered' predictors)")
    p.add_argument("--archs", metavar="JSON", help="arch -> {bias, ordered} (povstim.biases.arch_meta): adds the "
                   "'bias' predictor and the Experiment 3 table (analysis/tables/exp3.py), and with several archs or an "
                   "ordered one the 'ordered' column and the models' arch terms (analysis/archs.py)")
    p.add_argument("--params", metavar="JSON", help="the config's analysis section as JSON (flags override it)")
    out = p.add_argument_group("outputs")
    out.add_argument("--out-dir", metavar="DIR", help="full analysis folder (with --scores)")
    out.add_argument("--out", metavar="DIR", help="model-only folder (with --counts/--items)")
    m = p.add_argument_group("model (override --params)")
    m.add_argument("--formula", help="right-hand side, e.g. \"(size + category) * filtered + source + "
                   "(1|seed) + (1|phenomenon)\"; fitted as written (no arch terms added, whatever "
                   "analysis.arch_terms says)")
    m.add_argument("--family", choices=["bernoulli", "binomial"],
                   help="likelihood on items; binomial aggregates to cells (same likelihood, faster)")
    m.add_argument("--no-zscore", dest="zscore", action="store_false", default=None,
                   help="keep numeric predictors on their own scale")
    m.add_argument("--contrasts", choices=["sum", "treatment"],
                   help="coding of categorical predictors (reference = last level; default sum)")
    m.add_argument("--draws", type=int)
    m.add_argument("--tune", type=int)
    m.add_argument("--chains", type=int)
    m.add_argument("--seed", type=int, help="sampler seed")
    m.add_argument("--target-accept", type=float)
    m.add_argument("--sampler", choices=["auto", "pymc", "nutpie"], help="NUTS implementation (auto: nutpie for runs "
                   "of >= 2000 iterations in all, else pymc)")
    m.add_argument("--init", choices=["auto", "jitter+adapt_diag", "jitter+adapt_diag_grad", "jitter+adapt_full",
                                      "adapt_diag", "adapt_full"],
                   help="PyMC's initialisation / mass-matrix adaptation (adapt_full: a dense mass matrix)")
    m.add_argument("--priors", metavar="YAML", help="priors file: {intercept|common|group_sd: {dist: Normal, "
                   "mu: 0, sigma: 0.5}}")
    m.add_argument("--parametrization", choices=["noncentered", "centered"],
                   help="of the group-level effects (centered suits many observations per group)")
    m.add_argument("--min-groups", type=int, help="fewest groups a (1|g) term needs (fewer: dropped; default 3)")
    m.add_argument("--suite", help="benchmark suite the model is fitted on (default: posh, else the first)")
    m.add_argument("--no-model", action="store_true", help="tables only, skip the Bayesian model")
    p.add_argument("--correction", choices=["none", "holm", "bonferroni", "bh"],
                   help="multiple-comparison correction of the chi-square tests")
    p.add_argument("--significance", choices=["pooled", "posh"],
                   help="tests against chance: items pooled over seeds (pooled) or POSH's per-seed tests, "
                   "Fisher-combined, corrected within each training-data column (posh)")
    m.add_argument("--models", nargs="+", choices=["table12", "three_level"],
                   help="Bayesian models to fit (table12: POSH Table 12 as printed; three_level: one "
                   "BABY-F/BABY/WIKI factor with pairwise contrasts)")
    m.add_argument("--three-level-formula", help="right-hand side of the three-level model; fitted as written")
    p.add_argument("--cores", type=int, help="processes for the chains (default: min(chains, CPUs))")
    p.add_argument("--suite-dirs", nargs="+", metavar="DIR", default=[],
                   help="benchmark suite folders (results/benchmarks/{suite}); a norms.json/norms.csv in one "
                   "adds age-equivalent scores (analysis/timing/age.py)")
    p.add_argument("--condition-stats", nargs="*", default=[], metavar="JSON",
                   help="condition.json files ({condition}/{size}/condition.json; missing ones are skipped): "
                   "the captions of Tables 3/8 give each condition's actual words and sentences beside its size label")
    p.add_argument("--size-label", type=float, metavar="FRACTION",
                   help="with --condition-stats: the caption says plainly which conditions differ from their size "
                   "label by more than this fraction (the config's guardrails.size_label)")
    p.add_argument("--reinsert-share", type=float, metavar="FRACTION",
                   help="with --condition-stats: the BABY-F vs. BABY sentence carries a caveat when a condition's "
                   "measured targeted rate is below this share of its configured reinsert rate, or its pool fell "
                   "short (the config's guardrails.reinsert_share; default: the schema's)")


def _priors_file(path: str | None) -> dict | None:
    if not path:
        return None
    p = Path(path)
    if not p.exists():
        raise PovstimError(f"{p}: no such priors file")
    priors = load_yaml(p, mapping=None) or {}
    if not isinstance(priors, dict):
        raise PovstimError(f"{p}: priors must be a mapping of intercept/common/group_sd")
    section("analysis", {"priors": priors}, where=str(p))  # errors name the priors file and the key
    return priors


def resolve_params(args):
    """The analysis section from --params, overridden by the flags, defaulted and checked by the schema."""
    # deferred: pandas loads when the command runs, not for --help
    from povstim.analysis.pipeline import analysis_settings

    given = json_object_arg(args.params, "--params", allow_file=True)
    priors = _priors_file(args.priors)
    if priors is not None:  # a priors file replaces the named priors, the others keep their defaults
        given = {**given, "priors": {**(given.get("priors") or {}), **priors}}
    flags = {key: getattr(args, key, None) for key in (
        "formula", "family", "contrasts", "draws", "tune", "chains", "seed", "target_accept", "correction",
        "suite", "zscore", "sampler", "init", "parametrization", "min_groups", "significance", "models",
        "three_level_formula")}
    return analysis_settings(given, **flags)


def _condition_stats(paths: list[str], tolerance: float | None) -> tuple[list[dict], float] | None:
    """The condition.json files that exist (an analysis-only run has none) and the size-label tolerance."""
    if not paths:
        return None
    if tolerance is None:
        raise PovstimError("--condition-stats needs --size-label (the config's guardrails.size_label)")
    missing = [p for p in paths if not Path(p).exists()]
    if missing:
        log.info("skipping %d missing condition.json file(s) (e.g. %s)", len(missing), missing[0])
    return [read_condition(p) for p in paths if Path(p).exists()], tolerance


def _shortfall_caveat(sizes: tuple[list[dict], float] | None, share: float | None) -> str:
    """BABY's evidence shortfall in words (conditions_page.shortfall_caveat); "" without condition stats."""
    if not sizes:
        return ""
    if share is None:
        from povstim.analysis.guardrails.settings import GuardrailSettings

        share = build(GuardrailSettings, "guardrails", {}).reinsert_share
    return shortfall_caveat(sizes[0], share)


def formulas_as_written(args) -> frozenset:
    """The models whose formula was given on the command line (``--formula``: table12, ``--three-level-formula``):
    fitted as written; analysis.arch_terms' auto terms extend the config's formulas only (pipeline.model_spec)."""
    return frozenset(m for m, given in (("table12", args.formula), ("three_level", args.three_level_formula))
                     if given)


def run(args) -> int:
    # deferred: pandas loads when the command runs, not for --help
    from povstim.analysis.pipeline import full_analysis, model_only

    n_inputs = sum(x is not None for x in (args.scores, args.items, args.counts))
    if n_inputs != 1:
        raise PovstimError("give exactly one of --scores, --items, --counts")
    settings = resolve_params(args)
    meta = json_object_arg(args.conditions, "--conditions", allow_file=True) or None
    arch_meta = json_object_arg(args.archs, "--archs", allow_file=True) or None
    as_written = formulas_as_written(args)
    if args.scores:
        out = args.out_dir or args.out
        if not out:
            raise PovstimError("--scores needs --out-dir")
        sizes = _condition_stats(args.condition_stats, args.size_label)
        full_analysis(args.scores, meta, settings, Path(out), fit_model=not args.no_model, cores=args.cores,
                      suite_dirs=args.suite_dirs, arch_meta=arch_meta,
                      sizes=sizes, external_paths=args.external_scores,
                      caveat=_shortfall_caveat(sizes, args.reinsert_share), as_written=as_written)
    else:
        out = args.out or args.out_dir
        if not out:
            raise PovstimError("--counts/--items need --out DIR")
        model_only(settings, Path(out), counts=args.counts, items=args.items, meta=meta, family=args.family,
                   cores=args.cores, arch_meta=arch_meta, as_written=as_written)
    return 0
