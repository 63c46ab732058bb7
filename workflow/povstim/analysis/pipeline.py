"""The analysis pipeline behind ``povstim analyze`` and ``povstim release``: tables, learning curves,
the metric sensitivity table and the Bayesian models.

Item scores (our own runs) and published per-model accuracies (``povstim release``) go through the
same functions from the accuracy table on: :func:`write_tables` (accuracy.csv, chisq.csv, Tables 3
and 8) and :func:`fit_models` (Table 12 and/or the three-level model)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from povstim.io import PovstimError, atomic_path, atomic_write, write_json
from povstim.settings import build
from povstim.analysis import archs
from povstim.analysis.timing import age
from povstim.analysis.models import bayes
from povstim.analysis.tables import sensitivity
from povstim.analysis.guardrails import void
from povstim.analysis.models import formula as fml
from povstim.analysis.tables.conditions_page import size_sentence
from povstim.analysis.timing.curves import curve_table

log = logging.getLogger("povstim.analyze")


@dataclass(frozen=True)
class AnalysisSettings:
    """The ``analysis:`` section (defaults: workflow/schemas/config/analysis.schema.yaml)."""

    formula: str
    family: str
    correction: str
    significance: str
    models: tuple
    arch_terms: str
    three_level_formula: str
    run_effect: str
    draws: int
    tune: int
    chains: int
    target_accept: float
    seed: int
    refit: bool
    zscore: bool
    contrasts: str
    sampler: str
    init: str
    parametrization: str
    min_groups: int
    suite: str | None
    priors: dict
    void_evidence: int | str
    void_dose_share: float
    pool_learners: bool


def analysis_settings(given: dict | None = None, where: str = "--params", **overrides) -> AnalysisSettings:
    return build(AnalysisSettings, "analysis", given, where=where, **overrides)


def model_only(settings: "AnalysisSettings", out: Path, *, counts: str | None = None, items: str | None = None,
               meta: dict | None = None, family: str | None = None, cores: int | None = None,
               arch_meta: dict | None = None, as_written: frozenset = frozenset()) -> None:
    """Fit only the Bayesian model, on aggregated counts (binomial) or an item table (bernoulli unless
    ``family``); write summary.csv, diagnostics.json, posterior.nc and table12.* to ``out``. ``as_written``:
    the models whose formula was given by hand (fitted as written, :func:`model_spec`)."""
    from povstim.analysis.tables import exp3
    from povstim.analysis.tables import tidy

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
    fit_models(df, settings, out, family=family, cores=cores, as_written=as_written)


def full_analysis(score_paths, meta: dict | None, settings: "AnalysisSettings", out: Path, fit_model: bool = True,
                  cores: int | None = None, suite_dirs=(), arch_meta: dict | None = None,
                  sizes: tuple[list[dict], float] | None = None, external_paths=(), caveat: str = "",
                  as_written: frozenset = frozenset()) -> None:
    """Tidy item table, accuracy and chi-square tables, POSH Tables 3 and 8, the metric sensitivity
    table, learning curves, age-equivalent scores (suite folders in ``suite_dirs`` that ship norms),
    the Exp. 3 outputs (archs with a bias) and (unless ``fit_model`` is false) the Bayesian models,
    from item-score files, into ``out``. ``sizes``: the conditions' condition.json contents and the
    size-label tolerance, for the captions of Tables 3/8 (actual words beside the nominal labels).
    ``external_paths``: item scores of models trained elsewhere (external_models, arch ``external``): in the
    accuracy tables and learning curves, not in items.parquet (no condition predictors) nor the Bayesian model.
    ``caveat``: BABY's evidence shortfall, said with the BABY-F vs. BABY contrast (bayes.filtering_sentences)."""
    from povstim.analysis.tables import exp3
    from povstim.analysis.tables import tables
    from povstim.analysis.tables import tidy

    scores = tidy.read_scores(score_paths)
    # The tidy table: every item score of every model and checkpoint, with the condition's predictors.
    tidy_scores = archs.with_ordered(tidy.attach_conditions(scores, meta) if meta else scores, arch_meta)
    with atomic_path(out / "items.parquet") as tmp:
        tidy_scores.to_parquet(tmp, index=False)
    items = tidy.final_items(scores)
    external = tidy.read_scores(external_paths) if external_paths else None
    shown = items if external is None else tidy.normalise(
        pd.concat([items, tidy.final_items(external)], ignore_index=True), "item scores")
    acc = archs.with_ordered(tables.accuracy_table(shown), arch_meta)  # `ordered`: a label, not a table key
    voids = void_contrasts(sizes[0] if sizes else [], settings, meta)
    void_note = "".join(f" {r['duplicate'].upper()} is {r['kept'].upper()} at {', '.join(r['sizes'])} (void: "
                        f"{'identical training text' if all(r['identical'].values()) else 'no evidence apart'})."
                        for r in voids)
    chisq = write_tables(acc, settings, out, n_seeds=int(items["seed"].nunique()),
                         notes=lambda suite: caption_notes(items, suite, meta) + (size_sentence(*sizes) if sizes else "")
                         + void_note)
    curves = curve_table(scores if external is None else tidy.normalise(
        pd.concat([scores, external], ignore_index=True), "item scores"))
    write_csv(archs.with_ordered(curves, arch_meta), out / "accuracy_by_step.csv")
    if sensitivity.available(items):
        write_sensitivity(items, out)
    if suite_dirs:
        age_tables(items, suite_dirs, out)
    exp3.write_outputs(acc, chisq, curves, arch_meta, out, settings.correction, write_csv, write_table)
    log.info("accuracy tables for %d model(s), %d suite(s) written to %s",
             items.groupby(["arch", "condition", "size", "seed"]).ngroups, items["suite"].nunique(), out)
    if not fit_model:
        return
    groups = model_groups(items, settings, meta, arch_meta)
    pages = []
    for i, (suite, learner, modelled) in enumerate(groups):
        # the first group (analysis.suite or posh, the first learner) keeps bayes/ itself (Table 12, the figures);
        # every other suite x learner its own folder
        where = out / "bayes" if i == 0 else out / "bayes" / "by" / suite / (learner or "all")
        try:
            sentences = fit_models(drop_void(modelled, voids), settings, where, family=settings.family, cores=cores,
                                   suite=suite, caveat=caveat, void=voids,
                                   as_written=as_written, placebos=placebo_levels(meta),
                                   coverage=evidence_coverage(sizes[0] if sizes else [], settings, meta))
        except PovstimError as exc:
            if i == 0:
                raise
            log.warning("%s, %s: no Bayesian model (%s)", suite, learner, exc)
            sentences = [f"No model fitted ({exc})."]
        pages.append((suite, learner, sentences))
    if "three_level" not in settings.models:
        return
    if len(pages) > 1:  # every suite x learner's conclusions on the report's one page, each sentence naming both
        write_text_page(out / "bayes" / "filtering", FILTERING_TITLE,
                        [f"On {suite}, {learner or 'all learners'}: {x}" for suite, learner, sentences in pages
                         for x in sentences])
    elif pages[0][2]:  # one suite and one learner: the page's title names them
        suite, learner, sentences = pages[0]
        write_text_page(out / "bayes" / "filtering", f"{FILTERING_TITLE}: {suite}, {learner or 'all learners'}",
                        sentences)


FILTERING_TITLE = "Filtering and training source (three-level model contrasts)"


def learner_of(arch_meta: dict | None) -> dict[str, str]:
    """arch -> its learner family (families.py: gpt2, roberta, lstm, kneser-ney), from the --archs metadata
    (plan.analysis_archs)."""
    return {a: str(m["family"]) for a, m in (arch_meta or {}).items() if m.get("family")}


def model_groups(items: pd.DataFrame, settings: "AnalysisSettings", meta: dict | None,
                 arch_meta: dict | None) -> list[tuple[str, str | None, pd.DataFrame]]:
    """(suite, learner, its modelled items) for every suite of the experiment (``analysis.suite``: that one only)
    and every learner family, the primary suite (posh, else the first) and first learner first; with
    ``analysis.pool_learners`` one group of all learners per suite, which must score on one scale (the same
    family kind and no corpus model beside a neural one: else an error naming the key)."""
    primary = model_suite(settings, items["suite"])
    suites = [primary] + ([] if settings.suite else sorted(set(items["suite"]) - {primary}))
    learners = learner_of(arch_meta)
    out = []
    for suite in suites:
        _, modelled = model_items(items, settings, meta, arch_meta, suite=suite)
        fams = sorted({learners.get(str(a), "") for a in modelled["arch"]})
        if settings.pool_learners or len(fams) <= 1:
            if settings.pool_learners and len(fams) > 1:
                check_poolable(arch_meta, set(modelled["arch"].astype(str)))
            out.append((suite, "+".join(f for f in fams if f) or None, modelled))
            continue
        for fam in fams:
            archs_of = {a for a, f in learners.items() if f == fam}
            out.append((suite, fam or None, modelled[modelled["arch"].astype(str).isin(archs_of)]
                        .reset_index(drop=True)))
    return out


def check_poolable(arch_meta: dict, archs) -> None:
    """Learners pooled in one model (analysis.pool_learners) must give scores on one scale (``scale`` of the
    --archs metadata, plan.analysis_archs: causal, masked or a corpus model)."""
    kinds = {str(arch_meta[a]["family"]): str(arch_meta[a].get("scale")) for a in archs if a in arch_meta}
    if len(set(kinds.values())) > 1:
        raise PovstimError("analysis.pool_learners: true pools learners whose scores are not on one scale ("
                           + ", ".join(f"{f}: {k}" for f, k in sorted(kinds.items()))
                           + "); set it to false to fit each learner on its own")


def void_contrasts(stats: list[dict], settings: "AnalysisSettings", meta: dict | None) -> list[dict]:
    """The void pairs of conditions (analysis/guardrails/void.py) with the report's sentence about each."""
    sizes_of: dict[str, list[str]] = {}
    for s in stats:
        sizes_of.setdefault(s["condition"], []).append(s["size"])
    rows = void.summarise(void.void_pairs(stats, settings.void_evidence, list(meta or {}), settings.void_dose_share),
                          sizes_of)
    level_of = condition_levels(meta)
    for r in rows:
        r["sentence"] = void.describe(r, settings.void_evidence, level_of)
        log.warning("VOID %s", r["sentence"])
    return rows


def evidence_coverage(stats: list[dict], settings: "AnalysisSettings", meta: dict | None) -> dict:
    """The contrasts between conditions of one base and removals that are not void, with the phenomena each
    covers and those void for it (void.coverage): the filtering page reads such a contrast on its covered
    phenomena's categories only, never pooled with void ones."""
    partial: list = []
    void.void_pairs(stats, settings.void_evidence, list(meta or {}), settings.void_dose_share, partial)
    return void.coverage(partial, condition_levels(meta))


def condition_levels(meta: dict | None) -> dict[str, str]:
    """condition -> its level of the three-level model's source_filter (BABY-F, BABY, WIKI, BABY-F-PLACEBO1)."""
    from povstim.analysis.tables import tidy

    if not meta:
        return {}
    df = tidy.attach_conditions(pd.DataFrame({"condition": list(meta)}), meta)
    return dict(zip(df["condition"], bayes.derive(df)["source_filter"]))


def placebo_levels(meta: dict | None) -> dict[str, tuple[str, str]]:
    """placebo level -> (vs level, of level): what bayes.filtering_sentences reads each contrast against."""
    level = condition_levels(meta)
    return {level[c]: (level[m["placebo"]["vs"]], level[m["placebo"]["of"]])
            for c, m in (meta or {}).items() if m.get("placebo")}


def drop_void(df: pd.DataFrame, voids: list[dict]) -> pd.DataFrame:
    """The rows the Bayesian models are fitted on, less each void duplicate's cells at its void sizes."""
    if not voids:
        return df
    gone = {(r["duplicate"], s) for r in voids for s in r["sizes"]}
    keep = [(c, str(z)) not in gone for c, z in zip(df["condition"], df["size"])]
    return df[keep].reset_index(drop=True)


def model_items(items: pd.DataFrame, settings: "AnalysisSettings", meta: dict | None,
                arch_meta: dict | None, suite: str | None = None) -> tuple[str, pd.DataFrame]:
    """(suite, its final items with the condition and arch predictors): what the Bayesian models are fitted
    on (also what ``povstim analyze-prewarm`` compiles them for, analysis/models/prewarm.py); ``suite``: default the
    primary one (:func:`model_suite`)."""
    from povstim.analysis.tables import exp3
    from povstim.analysis.tables import tidy

    suite = suite or model_suite(settings, items["suite"])
    modelled = exp3.attach_archs(tidy.attach_conditions(items[items["suite"] == suite], meta), arch_meta)
    return suite, archs.with_ordered(modelled, arch_meta)


def counts_analysis(counts: pd.DataFrame, settings: "AnalysisSettings", out: Path, fit_model: bool = True,
                    cores: int | None = None, model_counts: pd.DataFrame | None = None) -> None:
    """The same tables and models from per-model x paradigm counts (n_correct, n_total; e.g. published
    accuracies, ``povstim release``) carrying ``source`` and ``filtered``; ``model_counts``: the rows the
    Bayesian models are fitted to (default: all)."""
    from povstim.analysis.tables import tables

    acc = tables.accuracy_from_counts(counts[[c for c in ("suite", "arch", "condition", "size", "seed", "category",
                                                          "paradigm", "n_correct", "n_total") if c in counts]])
    write_tables(acc, settings, out, n_seeds=int(counts["seed"].nunique()))
    write_csv(counts, out / "counts.csv")
    if not fit_model:
        return
    counts = counts if model_counts is None else model_counts
    suite = model_suite(settings, counts["suite"])
    # the published models' formula as the authors fitted it (POSH pools its GPT-2 sizes mini and small)
    fit_models(counts[counts["suite"] == suite], settings, out / "bayes", family="binomial", cores=cores, suite=suite,
               by_arch=False)


def model_suite(settings: "AnalysisSettings", suites: pd.Series) -> str:
    names = set(suites)
    suite = settings.suite or ("posh" if "posh" in names else sorted(names)[0])
    if suite not in names:
        raise PovstimError(f"analysis.suite {suite!r} was not scored (suites: {', '.join(sorted(names))})")
    return suite


def write_tables(acc: pd.DataFrame, settings: "AnalysisSettings", out: Path, n_seeds: int,
                 notes=None) -> pd.DataFrame:
    """accuracy.csv, chisq.csv (settings.significance, settings.correction) and Tables 3 and 8 per suite;
    ``notes(suite)`` adds to each caption (other task kinds' chance levels, unfiltered conditions)."""
    from povstim.analysis.tables import tables

    chisq = tables.chisq_table(acc, settings.correction, settings.significance)
    write_csv(acc, out / "accuracy.csv")
    write_csv(chisq, out / "chisq.csv")
    for suite in sorted(acc["suite"].unique()):
        t3 = tables.table3(chisq, suite)
        t8 = tables.table8(chisq, suite)
        t8 = pd.concat([t8, pd.DataFrame([tables.average_row(acc, suite)])], ignore_index=True).fillna("")
        for kind, t in (("table3", t3), ("table8", t8)):
            cap = tables.caption(kind, suite, settings.correction, n_seeds, settings.significance)
            extra = notes(suite) if notes else ""
            if "1/k" in extra:  # other task kinds: chance is not 50% for every item
                cap = cap.replace("against chance (50%)", "against chance")
            write_table(t, out / "tables" / f"{kind}_{suite}", cap + extra, f"tab:{kind}-{suite}")
    return chisq


def write_sensitivity(items: pd.DataFrame, out: Path) -> None:
    """sensitivity.csv and tables/metric_sensitivity_{suite}.* (docs/analysis.md)."""
    table = sensitivity.sensitivity_table(items)
    write_csv(table, out / "sensitivity.csv")
    primary = sensitivity.primary_metric(items)
    for suite in sorted(table["suite"].unique()):
        n_models = items[items["suite"] == suite].groupby(["arch", "condition", "size", "seed"]).ngroups
        write_table(sensitivity.formatted(table, suite, primary), out / "tables" / f"metric_sensitivity_{suite}",
                    sensitivity.caption(suite, primary, n_models), f"tab:metric-sensitivity-{suite}")


MODELS = ("table12", "three_level")


def model_spec(name: str, settings: "AnalysisSettings", df: pd.DataFrame | None = None,
               as_written: frozenset = frozenset()) -> dict:
    """The formula and per-variable coding of analysis model ``name`` (``analysis.models``); with the data
    ``df`` it is fitted on, plus the main effects of ``ordered`` and ``arch`` when the data hold more than one
    of them (analysis/archs.py: several learners are never pooled silently), unless ``analysis.arch_terms`` is
    none or the model is in ``as_written`` (a formula the user gave by hand, ``povstim analyze --formula``:
    fitted as written; the auto terms extend only the config's formulas)."""
    if name == "table12":
        spec = {"formula": settings.formula, "coding_of": None}
    elif name == "three_level":
        spec = {"formula": settings.three_level_formula,
                "coding_of": {"source_filter": ("treatment", bayes.THREE_LEVEL_REFERENCE)}}
    else:  # the schema's enum makes this a programming error
        raise PovstimError(f"analysis.models: unknown model {name!r} (use {', '.join(MODELS)})")
    if name == "three_level" and name not in as_written and run_effect_wanted(settings, df, spec["formula"]):
        spec["formula"] = f"{spec['formula']} + (1|run)"
    wanted = df is not None and settings.arch_terms == "auto"
    terms = archs.model_terms(df, fml.parse(spec["formula"]).variables()) if wanted else []
    if terms and name in as_written:
        log.warning("%s: the formula given by hand is fitted as written (%s): the data hold %d archs, pooled by "
                    "it (add %s to it to model them)", name, spec["formula"], df["arch"].nunique(),
                    " + ".join(terms))
        terms = []
    if terms:
        log.info("%s: the data hold %d archs%s: adding %s to its formula", name, df["arch"].nunique(),
                 " and both training orders" if "ordered" in terms else "", " + ".join(terms))
        spec["formula"] = f"{spec['formula']} + {' + '.join(terms)}"
    return spec


RUN_KEYS = ("arch", "condition", "size")  # with the seed, what tells one trained model from another


def fewest_seeds(df: pd.DataFrame) -> tuple[int, str]:
    """The fewest seeds any arch x condition x size of ``df`` has, and that cell (for the error)."""
    keys = [k for k in RUN_KEYS if k in df.columns] or [k for k in ("source_filter",) if k in df.columns]
    if "seed" not in df.columns:
        return 0, "the data (no seed column)"
    if not keys:
        return int(df["seed"].nunique()), "the data"
    per = df.groupby(keys, sort=True)["seed"].nunique()
    cell = per.idxmin()
    return int(per.min()), " x ".join(map(str, cell if isinstance(cell, tuple) else (cell,)))


def run_effect_wanted(settings: "AnalysisSettings", df: pd.DataFrame | None, formula: str) -> bool:
    """Whether the three-level model gets ``(1|run)`` (``analysis.run_effect``): auto with at least
    ``analysis.min_groups`` seeds in every arch x condition x size (a run variance is then estimated within each
    cell's replicates), always (fewer seeds: an error naming the key), never. A formula that names run already
    has it."""
    if settings.run_effect == "never" or any(g.group == "run" for g in fml.parse(formula).groups):
        return False
    if df is None:
        return settings.run_effect == "always"
    n, cell = fewest_seeds(df)
    if n >= settings.min_groups:
        return True
    if settings.run_effect == "always":
        raise PovstimError(f"analysis.run_effect: always needs at least {settings.min_groups} seeds (analysis."
                           f"min_groups) in every condition and size to estimate how much trained models differ; "
                           f"{cell} has {n}: add seeds, or set analysis.run_effect: auto")
    return False


def model_design(df: pd.DataFrame, settings: "AnalysisSettings", family: str, formula: str | None = None,
                 coding_of: dict | None = None):
    """The design of a model fitted on ``df`` (``formula`` defaults to settings.formula, Table 12's)."""
    return bayes.build_design(df, formula or settings.formula, family=family, zscore=bool(settings.zscore),
                              contrasts=settings.contrasts, coding_of=coding_of, min_groups=settings.min_groups)


def fit_models(df: pd.DataFrame, settings: "AnalysisSettings", out: Path, family: str, cores=None,
               suite=None, by_arch: bool = True, caveat: str = "", as_written: frozenset = frozenset(),
               void: list[dict] = (), placebos: dict | None = None, coverage: dict | None = None) -> list[str]:
    """Every model of ``settings.models``: table12 -> bayes/{summary.csv, table12.*, ...} (POSH Table 12 as
    printed, ``settings.formula``); three_level -> bayes/three_level_* and the pairwise contrasts of
    BABY-F, BABY and WIKI (POSH's released analysis, ``settings.three_level_formula``). ``by_arch``: each
    formula gets the arch terms the data need (:func:`model_spec`), but those in ``as_written``. ``void``: void contrasts (:func:`void_contrasts`,
    their cells already left out of ``df``): said in both models' captions and the filtering page."""
    note = " ".join(r["sentence"] for r in void)
    sentences: list[str] = []  # the three-level model's conclusions (the report's filtering page)
    if void:
        out.mkdir(parents=True, exist_ok=True)
        write_csv(pd.DataFrame([{"kept": r["kept"], "duplicate": r["duplicate"], "sizes": ",".join(r["sizes"]),
                                 "all_sizes": r["all_sizes"], "evidence": ",".join(str(r["evidence"][z]) for z in r["sizes"]),
                                 "identical": ",".join(str(r["identical"][z]) for z in r["sizes"])} for r in void]),
                  out / "void_contrasts.csv")
    for name in settings.models:
        spec = model_spec(name, settings, df if by_arch else None, as_written)  # an unknown name stops here
        if name == "table12":  # POSH's three conditions: placebos are read against the three-level contrasts only
            published = df[df["placebo"] == ""].reset_index(drop=True) if "placebo" in df.columns else df
            fit_and_write(published, settings, out, family=family, cores=cores, suite=suite, note=note, **spec)
        else:
            sentences = fit_three_level(df, settings, out, family=family, cores=cores, suite=suite, spec=spec,
                                        caveat=caveat, void=[r["sentence"] for r in void], note=note,
                                        placebos=placebos, coverage=coverage)
    return sentences


def fit_three_level(df: pd.DataFrame, settings: "AnalysisSettings", out: Path, family: str, cores=None,
                    suite=None, spec: dict | None = None, caveat: str = "", void=(), note: str = "",
                    placebos: dict | None = None, coverage: dict | None = None) -> list[str]:
    spec = spec or model_spec("three_level", settings)
    runs = any(g.group == "run" for g in fml.parse(spec["formula"]).groups)
    design, res, diag = fit_and_write(
        df, settings, out, family=family, cores=cores, suite=suite, prefix="three_level_", table="three_level",
        title=("Three-level model of POSH's released analysis with a run-level effect (1|run), run = arch x condition "
               "x size x seed: each contrast is judged against how much the trained models of a condition differ"
               if runs else "Three-level model of POSH's released analysis"), note=note, **spec)
    title = FILTERING_TITLE
    if "source_filter" not in design.codes:
        log.warning("three-level model: source_filter has a single level or was dropped: no contrasts")
        if void:  # the void contrasts are still the report's answer
            write_text_page(out / "filtering", title, list(void))
        return list(void)
    by = "category" if "category" in design.codes else None
    contrasts = bayes.pairwise_contrasts(res.idata.posterior, design, by=by or "")
    write_csv(_rounded(contrasts), out / "three_level_contrasts.csv")
    cap = ("Pairwise contrasts of the three-level model's conditions (log-odds; posterior median, 95% equal-"
           "tailed credible interval, posterior probability of a positive difference), overall (the mean over "
           "categories, training size at its mean) and per category. Unlike Table 12's terms, each contrast "
           "compares two conditions directly, so a difference between two of them cannot load on a term "
           "about the third.")
    banner = "" if diag["converged"] else ("CONVERGENCE PROBLEM — do not interpret these estimates: "
                                           + "; ".join(diag["problems"]))
    write_table(bayes.contrasts_table(contrasts), out / "three_level_contrasts_table", cap,
                "tab:three-level-contrasts", banner=banner)
    sentences = bayes.filtering_sentences(contrasts, diag["converged"], caveat, void=void,
                                          seed_note=seed_note(design, df, settings), placebos=placebos,
                                          coverage=coverage)
    write_text_page(out / "filtering", title, sentences)
    return sentences


def seed_note(design, df: pd.DataFrame, settings: "AnalysisSettings") -> str:
    """Said beside each conclusion when the model dropped (1|seed) (fewer seeds than analysis.min_groups)."""
    dropped = [t for t in design.dropped if t.startswith("(") and t.endswith("|seed)")]
    if not dropped:
        return ""
    n = int(df["seed"].nunique()) if "seed" in df.columns else 0
    runs = "" if any(g.group == "run" for g in design.groups) else " and has no run-level effect (1|run)"
    return (f"(With {n} seed(s), fewer than analysis.min_groups {settings.min_groups}, the model dropped "
            f"{', '.join(dropped)}{runs}: this interval leaves out run-to-run (seed) variance and overstates certainty; "
            "povstim power says how many seeds the contrast needs.)")


def _rounded(df: pd.DataFrame) -> pd.DataFrame:
    out = df.copy()
    for c in ("median", "lower", "upper", "p_gt0"):
        out[c] = out[c].round(4)
    return out


def write_text_page(stem: Path, title: str, paragraphs: list[str]) -> None:
    """A few sentences as Markdown and as a small HTML page (for the Snakemake report)."""
    import html

    with atomic_write(stem.with_suffix(".md")) as fh:
        fh.write(f"# {title}\n\n" + "\n\n".join(paragraphs) + "\n")
    body = "".join(f"<p>{html.escape(p)}</p>" for p in paragraphs)
    with atomic_write(stem.with_suffix(".html")) as fh:
        fh.write(f"<!DOCTYPE html><html><head><meta charset='utf-8'><style>body{{font-family:sans-serif;"
                 f"font-size:13px;max-width:60em}}</style></head><body><h3>{html.escape(title)}</h3>{body}"
                 f"</body></html>\n")


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
    """Age-equivalent scores for every suite folder that ships norms (analysis/timing/age.py)."""
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
                  suite=None, formula: str | None = None, prefix: str = "", table: str = "table12",
                  title: str = "Bayesian mixed-effects logistic regression", coding_of: dict | None = None,
                  note: str = ""):
    """Fit one model (``formula``, default settings.formula) and write {prefix}posterior.nc,
    {prefix}summary.csv, {prefix}diagnostics.json, {prefix}data.csv and {table}.* to ``out``."""
    design = model_design(df, settings, family, formula, coding_of)
    log.info("fitting %s (%s, %d rows, %d observations): %s", design.bambi_formula(), design.family,
             len(design.data), int(design.data["n_total"].sum()) if "n_total" in design.data else len(design.data),
             design.expanded())
    res = bayes.fit_converged(design, settings, cores=cores)
    diag = dict(res.diagnostics, suite=suite, priors=settings.priors)
    bayes.warn_if_unconverged(diag, str(out))
    out.mkdir(parents=True, exist_ok=True)
    with atomic_path(out / f"{prefix}posterior.nc") as tmp:
        res.idata.to_netcdf(str(tmp), engine="h5netcdf")
    write_csv(bayes.summary_for_csv(res.summary), out / f"{prefix}summary.csv")
    write_json(out / f"{prefix}diagnostics.json", diag)
    raw = design.raw.copy()
    write_csv(raw, out / f"{prefix}data.csv")
    banner = ""
    if not diag["converged"]:
        banner = "CONVERGENCE PROBLEM — do not interpret these estimates: " + "; ".join(diag["problems"])
    cap = (f"{title} ({design.family}) predicting item-level accuracy"
           f"{' on ' + suite if suite else ''}: {design.expanded()}. Posterior medians with 95% credible "
           f"intervals on the log-odds scale. Numeric predictors z-scored; categorical predictors "
           f"{settings.contrasts}-coded with the last level as the implicit reference. "
           f"{diag['chains']} chains x {diag['draws']} draws ({diag['tune']} tuning), seed {diag['seed']}; "
           f"{diag['divergences']} divergences, max R-hat {diag['max_r_hat']}, min bulk ESS {diag['min_ess_bulk']}.")
    if diag.get("refitted"):
        cap += " " + bayes.refit_sentence(diag)
    for var, (kind, ref) in (coding_of or {}).items():
        if var in design.coding:
            cap += f" {var} is {kind}-coded against {design.coding[var]['reference']} (not sum-coded)."
    if bayes.coding_sentence(design):
        cap += " " + bayes.coding_sentence(design)
    if design.dropped:
        cap += f" Dropped (not estimable in this design): {', '.join(design.dropped)}."
    if note:  # void contrasts: the duplicate condition's cells are not in this fit
        cap += " " + note
    write_table(bayes.table12(res.summary), out / table, cap, f"tab:{table.replace('_', '-')}", banner=banner)
    log.info("posterior summary written to %s (%.1f s sampling)", out / f"{prefix}summary.csv",
             diag["sampling_seconds"])
    return design, res, diag


def write_csv(df: pd.DataFrame, path: Path) -> None:
    with atomic_write(path) as fh:
        df.to_csv(fh, index=False, lineterminator="\n", float_format="%.6g")


def write_table(df: pd.DataFrame, stem: Path, cap: str, label: str, banner: str = "") -> None:
    from povstim.analysis.tables import tables

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
