"""``povstim analyze``: accuracy tables, chi-square tests and the Bayesian mixed model.

Two ways to run it:

* from the DAG (rules/analysis.smk): ``--scores`` item-score files + ``--conditions`` +
  ``--params`` (the config's analysis section) -> ``--out-dir`` with accuracy.csv, chisq.csv,
  accuracy_by_step.csv, tables/ (POSH Tables 3 and 8) and bayes/ (posterior, Table 12).
* by hand, model only: ``--counts FILE.csv`` or ``--items FILE.parquet`` + ``--formula`` ->
  ``--out DIR`` with summary.csv and diagnostics.json (+ posterior.nc, table12.*).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
from pathlib import Path

import pandas as pd

from ..io import PovstimError, atomic_path, atomic_write, write_json

log = logging.getLogger("povstim.analyze")

DEFAULTS = {
    "formula": "(size + category) * filtered + source + (1|seed) + (1|phenomenon)",
    "family": "binomial",
    "correction": "holm",
    "draws": 1000,
    "tune": 1000,
    "chains": 4,
    "target_accept": 0.9,
    "seed": 1,
    "zscore": True,
    "contrasts": "sum",
    "suite": None,
    "priors": None,
    "sampler": "pymc",
    "parametrization": "noncentered",
}


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
    src.add_argument("--items", metavar="PARQUET", help="one item table with a 'correct' column (model only, "
                     "Bernoulli unless --family binomial)")
    src.add_argument("--counts", metavar="CSV", help="aggregated counts with n_correct, n_total (model only, binomial)")
    p.add_argument("--conditions", metavar="JSON",
                   help="condition -> {source, filtered} as a JSON string or a .json file "
                   "(adds the 'source' and 'filtered' predictors)")
    p.add_argument("--archs", metavar="JSON", help="arch -> {bias} (povstim.biases.arch_meta): adds the 'bias' "
                   "predictor and the Experiment 3 table (analysis/exp3.py)")
    p.add_argument("--params", metavar="JSON", help="the config's analysis section as JSON (flags override it)")
    out = p.add_argument_group("outputs")
    out.add_argument("--out-dir", metavar="DIR", help="full analysis folder (with --scores)")
    out.add_argument("--out", metavar="DIR", help="model-only folder (with --counts/--items)")
    m = p.add_argument_group("model (override --params)")
    m.add_argument("--formula", help="right-hand side, e.g. \"(size + category) * filtered + source + "
                   "(1|seed) + (1|phenomenon)\"")
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
    m.add_argument("--sampler", choices=["pymc", "nutpie"], help="NUTS implementation (nutpie: faster, "
                   "needs the nutpie package)")
    m.add_argument("--priors", metavar="YAML", help="priors file: {intercept|common|group_sd: {dist: Normal, "
                   "mu: 0, sigma: 0.5}}")
    m.add_argument("--parametrization", choices=["noncentered", "centered"],
                   help="of the group-level effects (centered suits many observations per group)")
    m.add_argument("--suite", help="benchmark suite the model is fitted on (default: posh, else the first)")
    m.add_argument("--no-model", action="store_true", help="tables only, skip the Bayesian model")
    p.add_argument("--correction", choices=["none", "holm", "bonferroni", "bh"],
                   help="multiple-comparison correction of the chi-square tests")
    p.add_argument("--cores", type=int, help="processes for the chains (default: min(chains, CPUs))")


def _json_arg(value: str | None, what: str):
    if value is None:
        return None
    text = value
    if not value.lstrip().startswith("{") and Path(value).exists():
        text = Path(value).read_text(encoding="utf-8")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise PovstimError(f"{what}: not valid JSON ({exc})") from None


def resolve_params(args) -> dict:
    params = dict(DEFAULTS)
    given = _json_arg(args.params, "--params") or {}
    unknown = sorted(set(given) - set(DEFAULTS))
    if unknown:
        raise PovstimError(f"--params: unknown analysis key(s) {', '.join(unknown)}; known: "
                           f"{', '.join(sorted(DEFAULTS))}")
    params.update(given)
    for key in ("formula", "family", "contrasts", "draws", "tune", "chains", "seed", "target_accept",
                "correction", "suite", "zscore", "sampler", "parametrization"):
        v = getattr(args, key, None)
        if v is not None:
            params[key] = v
    if args.priors:
        import yaml

        path = Path(args.priors)
        if not path.exists():
            raise PovstimError(f"{path}: no such priors file")
        try:
            params["priors"] = yaml.safe_load(path.read_text()) or {}
        except yaml.YAMLError as exc:
            raise PovstimError(f"{path}: not valid YAML ({exc})") from None
        if not isinstance(params["priors"], dict):
            raise PovstimError(f"{path}: priors must be a mapping of intercept/common/group_sd")
    for key in ("draws", "tune", "chains"):
        if int(params[key]) < 1:
            raise PovstimError(f"{key} must be >= 1")
    if not 0 < float(params["target_accept"]) < 1:
        raise PovstimError("target_accept must be between 0 and 1")
    return params


def run(args) -> int:
    n_inputs = sum(x is not None for x in (args.scores, args.items, args.counts))
    if n_inputs != 1:
        raise PovstimError("give exactly one of --scores, --items, --counts")
    params = resolve_params(args)
    meta = _json_arg(args.conditions, "--conditions")
    arch_meta = _json_arg(args.archs, "--archs")
    if args.scores:
        out = args.out_dir or args.out
        if not out:
            raise PovstimError("--scores needs --out-dir")
        full_analysis(args.scores, meta, params, Path(out), fit_model=not args.no_model, cores=args.cores,
                      arch_meta=arch_meta)
    else:
        out = args.out or args.out_dir
        if not out:
            raise PovstimError("--counts/--items need --out DIR")
        model_only(args, meta, params, Path(out), arch_meta)
    return 0


def model_only(args, meta, params, out: Path, arch_meta=None) -> None:
    from . import exp3, tidy

    if args.counts:
        df = tidy.read_counts(args.counts)
        family = "binomial"
    else:
        path = Path(args.items)
        if not path.exists():
            raise PovstimError(f"{path}: no such items file")
        try:
            df = pd.read_parquet(path)
        except Exception as exc:
            raise PovstimError(f"{path}: cannot read as parquet ({exc})") from None
        if "correct" not in df.columns:
            raise PovstimError(f"{path}: items need a 'correct' column")
        df = tidy.normalise(df, str(path))
        if "final" in df.columns:
            df = df[df["final"]]
        if params.get("suite") and "suite" in df.columns:
            df = df[df["suite"] == params["suite"]]
        family = args.family or "bernoulli"
    if meta:
        df = tidy.attach_conditions(df, meta)
    df = exp3.attach_archs(df, arch_meta)
    fit_and_write(df, params, out, family=family, cores=args.cores)


def full_analysis(score_paths, meta, params, out: Path, fit_model=True, cores=None, arch_meta=None) -> None:
    from . import exp3, tables, tidy

    scores = tidy.read_scores(score_paths)
    # The tidy table: every item score of every model and checkpoint, with the condition's predictors.
    tidy_scores = tidy.attach_conditions(scores, meta) if meta else scores
    with atomic_path(out / "items.parquet") as tmp:
        tidy_scores.to_parquet(tmp, index=False)
    items = tidy.final_items(scores)
    acc = tables.accuracy_table(items)
    chisq = tables.chisq_table(acc, params["correction"])
    write_csv(acc, out / "accuracy.csv")
    write_csv(chisq, out / "chisq.csv")
    curves = curve_table(scores)
    write_csv(curves, out / "accuracy_by_step.csv")
    n_seeds = int(items["seed"].nunique())
    for suite in sorted(items["suite"].unique()):
        t3 = tables.table3(chisq, suite)
        t8 = tables.table8(chisq, suite)
        t8 = pd.concat([t8, pd.DataFrame([tables.average_row(acc, suite)])], ignore_index=True).fillna("")
        for kind, t in (("table3", t3), ("table8", t8)):
            cap = tables.caption(kind, suite, params["correction"], n_seeds)
            write_table(t, out / "tables" / f"{kind}_{suite}", cap, f"tab:{kind}-{suite}")
    exp3.write_outputs(acc, chisq, curves, arch_meta, out, params["correction"], write_csv, write_table)
    log.info("accuracy tables for %d model(s), %d suite(s) written to %s",
             items.groupby(["arch", "condition", "size", "seed"]).ngroups, items["suite"].nunique(), out)
    if not fit_model:
        return
    suite = params.get("suite") or ("posh" if "posh" in set(items["suite"]) else sorted(items["suite"].unique())[0])
    if suite not in set(items["suite"]):
        raise PovstimError(f"analysis.suite {suite!r} was not scored (suites: {', '.join(sorted(items['suite'].unique()))})")
    model_items = exp3.attach_archs(tidy.attach_conditions(items[items["suite"] == suite], meta), arch_meta)
    fit_and_write(model_items, params, out / "bayes", family=params["family"], cores=cores, suite=suite)


def curve_table(scores: pd.DataFrame) -> pd.DataFrame:
    """Accuracy per model x step x paradigm (checkpoints and the final model): learning curves."""
    from . import tables, tidy

    rows = tidy.curve_items(scores)
    keys = ["suite", "arch", "condition", "size", "seed", "step", "category", "paradigm"]
    par = rows.groupby(keys, sort=False)["correct"].agg(n_correct="sum", n_total="size").reset_index()
    par["accuracy"] = par["n_correct"] / par["n_total"]
    final_steps = rows[rows["final"]].groupby(["suite", "arch", "condition", "size", "seed"])["step"].max()
    par = par.merge(final_steps.rename("final_step").reset_index(), how="left",
                    on=["suite", "arch", "condition", "size", "seed"])
    par["final"] = par["step"] == par["final_step"]
    par = par.drop(columns=["final_step"])
    par["level"] = "paradigm"
    out = tables.sort_table(par)
    order = ["suite", "arch", "condition", "size", "seed", "step", "final", "category", "paradigm",
             "n_correct", "n_total", "accuracy"]
    out = out[order].sort_values(["suite", "arch", "condition", "size", "seed", "step", "category", "paradigm"],
                                 kind="mergesort", key=lambda s: s.map(tidy.size_words) if s.name == "size" else s)
    return out.reset_index(drop=True)


def fit_and_write(df: pd.DataFrame, params: dict, out: Path, family: str, cores=None, suite=None) -> None:
    from . import bayes, tables

    design = bayes.build_design(df, params["formula"], family=family, zscore=bool(params["zscore"]),
                                contrasts=params["contrasts"])
    log.info("fitting %s (%s, %d rows, %d observations): %s", design.bambi_formula(), design.family,
             len(design.data), int(design.data["n_total"].sum()) if "n_total" in design.data else len(design.data),
             design.expanded())
    res = bayes.fit(design, draws=int(params["draws"]), tune=int(params["tune"]), chains=int(params["chains"]),
                    seed=int(params["seed"]), target_accept=float(params["target_accept"]),
                    priors=params.get("priors"), cores=cores, sampler=params["sampler"],
                    centered=params["parametrization"] == "centered")
    diag = dict(res.diagnostics, suite=suite, priors=params.get("priors") or bayes.DEFAULT_PRIORS)
    bayes.warn_if_unconverged(diag, str(out))
    out.mkdir(parents=True, exist_ok=True)
    with atomic_path(out / "posterior.nc") as tmp:
        res.idata.to_netcdf(str(tmp), engine="h5netcdf")
    write_csv(bayes.summary_for_csv(res.summary), out / "summary.csv")
    write_json(out / "diagnostics.json", diag)
    raw = design.raw.copy()
    write_csv(raw, out / "data.csv")
    banner = ""
    if not diag["converged"]:
        banner = "CONVERGENCE PROBLEM — do not interpret these estimates: " + "; ".join(diag["problems"])
    cap = (f"Bayesian mixed-effects logistic regression ({design.family}) predicting item-level accuracy"
           f"{' on ' + suite if suite else ''}: {design.expanded()}. Posterior medians with 95% credible "
           f"intervals on the log-odds scale. Numeric predictors z-scored; categorical predictors "
           f"{params['contrasts']}-coded with the last level as the implicit reference. "
           f"{diag['chains']} chains x {diag['draws']} draws ({diag['tune']} tuning), seed {diag['seed']}; "
           f"{diag['divergences']} divergences, max R-hat {diag['max_r_hat']}, min bulk ESS {diag['min_ess_bulk']}.")
    if design.dropped:
        cap += f" Dropped (not estimable in this design): {', '.join(design.dropped)}."
    write_table(bayes.table12(res.summary), out / "table12", cap, "tab:table12", banner=banner)
    log.info("posterior summary written to %s (%.1f s sampling)", out / "summary.csv", diag["sampling_seconds"])


def write_csv(df: pd.DataFrame, path: Path) -> None:
    with atomic_write(path) as fh:
        df.to_csv(fh, index=False, lineterminator="\n", float_format="%.6g")


def write_table(df: pd.DataFrame, stem: Path, cap: str, label: str, banner: str = "") -> None:
    from . import tables

    write_csv(df, stem.with_suffix(".csv"))
    md = tables.to_markdown(df, cap)
    if banner:
        md = f"**{banner}**\n\n" + md
    with atomic_write(stem.with_suffix(".md")) as fh:
        fh.write(md)
    with atomic_write(stem.with_suffix(".tex")) as fh:
        fh.write(tables.to_latex(df, cap, label))
    with atomic_write(stem.with_suffix(".html")) as fh:
        fh.write(tables.to_html(df, cap, banner))
