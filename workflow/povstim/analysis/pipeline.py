"""The analysis pipeline behind ``povstim analyze``: tables, learning curves and the Bayesian model."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..io import PovstimError, atomic_path, atomic_write, write_json
from ..settings import build

log = logging.getLogger("povstim.analyze")


@dataclass(frozen=True)
class AnalysisSettings:
    """The ``analysis:`` section (defaults: workflow/schemas/config/analysis.schema.yaml)."""

    formula: str
    family: str
    correction: str
    draws: int
    tune: int
    chains: int
    target_accept: float
    seed: int
    zscore: bool
    contrasts: str
    sampler: str
    parametrization: str
    suite: str | None
    priors: dict


def analysis_settings(given: dict | None = None, where: str = "--params", **overrides) -> AnalysisSettings:
    return build(AnalysisSettings, "analysis", given, where=where, **overrides)


def model_only(settings: "AnalysisSettings", out: Path, *, counts: str | None = None, items: str | None = None,
               meta: dict | None = None, family: str | None = None, cores: int | None = None,
               arch_meta: dict | None = None) -> None:
    """Fit only the Bayesian model, on aggregated counts (binomial) or an item table (bernoulli unless
    ``family``); write summary.csv, diagnostics.json, posterior.nc and table12.* to ``out``."""
    from . import exp3, tidy

    if counts:
        df = tidy.read_counts(counts)
        family = "binomial"
    else:
        path = Path(items)
        df = tidy.read_frame(path, "items")
        if "correct" not in df.columns:
            raise PovstimError(f"{path}: items need a 'correct' column")
        df = tidy.normalise(df, str(path))
        if "final" in df.columns:
            df = df[df["final"]]
        if settings.suite and "suite" in df.columns:
            df = df[df["suite"] == settings.suite]
        family = family or "bernoulli"
    if meta:
        df = tidy.attach_conditions(df, meta)
    df = exp3.attach_archs(df, arch_meta)  # the arch-level predictor `bias` (Exp. 3)
    fit_and_write(df, settings, out, family=family, cores=cores)


def full_analysis(score_paths, meta: dict | None, settings: "AnalysisSettings", out: Path, fit_model: bool = True,
                  cores: int | None = None, suite_dirs=(), arch_meta: dict | None = None) -> None:
    """Tidy item table, accuracy and chi-square tables, POSH Tables 3 and 8, learning curves,
    age-equivalent scores (suite folders in ``suite_dirs`` that ship norms) and (unless
    ``fit_model`` is false) the Bayesian model, from item-score files, into ``out``."""
    from . import exp3, tables, tidy
    from .curves import curve_table

    scores = tidy.read_scores(score_paths)
    # The tidy table: every item score of every model and checkpoint, with the condition's predictors.
    tidy_scores = tidy.attach_conditions(scores, meta) if meta else scores
    with atomic_path(out / "items.parquet") as tmp:
        tidy_scores.to_parquet(tmp, index=False)
    items = tidy.final_items(scores)
    acc = tables.accuracy_table(items)
    chisq = tables.chisq_table(acc, settings.correction)
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
            cap = tables.caption(kind, suite, settings.correction, n_seeds)
            notes = caption_notes(items, suite, meta)
            if "1/k" in notes:  # other task kinds: chance is not 50% for every item
                cap = cap.replace("against chance (50%)", "against chance")
            cap += notes
            write_table(t, out / "tables" / f"{kind}_{suite}", cap, f"tab:{kind}-{suite}")
    if suite_dirs:
        age_tables(items, suite_dirs, out)
    exp3.write_outputs(acc, chisq, curves, arch_meta, out, settings.correction, write_csv, write_table)
    log.info("accuracy tables for %d model(s), %d suite(s) written to %s",
             items.groupby(["arch", "condition", "size", "seed"]).ngroups, items["suite"].nunique(), out)
    if not fit_model:
        return
    suite = settings.suite or ("posh" if "posh" in set(items["suite"]) else sorted(items["suite"].unique())[0])
    if suite not in set(items["suite"]):
        raise PovstimError(f"analysis.suite {suite!r} was not scored (suites: {', '.join(sorted(items['suite'].unique()))})")
    model_items = exp3.attach_archs(tidy.attach_conditions(items[items["suite"] == suite], meta), arch_meta)
    fit_and_write(model_items, settings, out / "bayes", family=settings.family, cores=cores, suite=suite)


def caption_notes(items: pd.DataFrame, suite: str, meta: dict | None) -> str:
    """What a table caption must add for other task kinds and for conditions left unfiltered."""
    note = ""
    if "chance" in items.columns:
        sub = items[items["suite"] == suite]
        if set(sub["task"]) != {"minimal_pair"}:
            note += (" Chance is each item's own: 50% for a minimal pair, 1/k for a k-option multiple-choice "
                     "item; completion items have none and are not tested.")
    unfiltered = {c: m["note"] for c, m in (meta or {}).items() if m.get("note")}
    if unfiltered:
        note += " " + " ".join(f"{c.upper()}: {n}." for c, n in sorted(unfiltered.items()))
    return note


def age_tables(items: pd.DataFrame, suite_dirs, out: Path) -> None:
    """Age-equivalent scores for every suite folder that ships norms (analysis/age.py)."""
    from . import age

    frames = []
    for d in suite_dirs:
        suite = age.suite_name(d)
        path = age.find_norms(d)
        if path is None or suite not in set(items["suite"]):
            continue
        norms = age.read_norms(path)
        t = age.age_table(items, suite, norms)
        frames.append(t)
        write_table(t, out / "tables" / f"age_{suite}", age.caption(suite, norms), f"tab:age-{suite}")
    if frames:
        write_csv(pd.concat(frames, ignore_index=True), out / "age_equivalents.csv")
        log.info("age-equivalent scores for %d suite(s) -> %s", len(frames), out / "age_equivalents.csv")


def fit_and_write(df: pd.DataFrame, settings: "AnalysisSettings", out: Path, family: str, cores=None,
                  suite=None) -> None:
    from . import bayes

    design = bayes.build_design(df, settings.formula, family=family, zscore=bool(settings.zscore),
                                contrasts=settings.contrasts)
    log.info("fitting %s (%s, %d rows, %d observations): %s", design.bambi_formula(), design.family,
             len(design.data), int(design.data["n_total"].sum()) if "n_total" in design.data else len(design.data),
             design.expanded())
    res = bayes.fit(design, settings, cores=cores)
    diag = dict(res.diagnostics, suite=suite, priors=settings.priors)
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
           f"{settings.contrasts}-coded with the last level as the implicit reference. "
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
