"""Several archs, and ordered vs shuffled training, are kept apart: recorded by training, a column of
the tidy tables, rows of their own in the figures, a term of the Bayesian models; a one-arch experiment unchanged.

The slow test runs a real two-arch experiment (one GPT-2 shuffled, the same GPT-2 age-ordered) through Snakemake.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from helpers.simulate import CONDITIONS, simulate_scores, write_score_files
from povstim import biases
from povstim.analysis import pipeline
from povstim.analysis.models import bayes
from povstim.analysis.tables import tidy
from povstim.figures import plots, style
from test_train import TRAINING, corpus, train  # noqa: F401 (corpus is a fixture)

REPO = Path(__file__).resolve().parents[1]
ORDERED = {"gpt2-nano": {"bias": "vanilla"}, "gpt2-nano-ordered": {"bias": "vanilla", "ordered": True}}


def test_arch_meta_marks_the_archs_that_train_in_order():
    cfg = {"training": {"ordered": False}, "archs": {"a": {"family": "gpt2"},
                                                     "b": {"family": "gpt2", "training": {"ordered": True}}}}
    assert biases.arch_meta(cfg) == {"a": {"bias": "vanilla"}, "b": {"bias": "vanilla", "ordered": True}}
    # the section's own setting counts for every arch that does not override it
    assert biases.arch_meta({"training": {"ordered": True}, "archs": {"a": {"family": "gpt2"}}}) == {
        "a": {"bias": "vanilla", "ordered": True}}


def test_train_summary_and_log_record_the_order(corpus, tmp_path, caplog):  # noqa: F811
    caplog.set_level(logging.INFO, logger="povstim.train")
    short = {**TRAINING, "max_steps": 4, "eval_every": 2, "save_every": 2}
    out = train(corpus, tmp_path / "ordered", training={**short, "ordered": True})
    assert json.loads((out / "train_summary.json").read_text())["ordered"] is True
    assert any(r.getMessage().startswith("order: ordered") for r in caplog.records)
    # a shuffled run records false: the slow end-to-end test below


def _two_archs() -> pd.DataFrame:
    # the ordered arch is much better at everything: any averaging of the two would show
    shuffled = simulate_scores(items=12, sizes=("50k",), steps=(50, 100), arch="gpt2-nano", rng_seed=1)
    ordered = simulate_scores(items=12, sizes=("50k",), steps=(50, 100), arch="gpt2-nano-ordered", rng_seed=2,
                              coefs={"Intercept": 3.0})
    return pd.concat([shuffled, ordered], ignore_index=True)


def _hand_category_means(scores: pd.DataFrame) -> dict:
    """(arch, condition, category) -> mean over seeds of the mean over the category's paradigms, by hand."""
    out: dict = {}
    final = scores[scores["final"]]
    for (arch, cond, cat), sub in final.groupby(["arch", "condition", "category"]):
        per_seed = [np.mean([g["correct"].mean() for _, g in s.groupby("paradigm")]) for _, s in sub.groupby("seed")]
        out[(arch, cond, cat)] = float(np.mean(per_seed))
    return out


@pytest.fixture(scope="module")
def two_arch_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("two_archs")
    scores = _two_archs()
    paths = write_score_files(scores, root)
    settings = pipeline.analysis_settings({"models": ["table12", "three_level"]})
    pipeline.full_analysis(paths, CONDITIONS, settings, root / "analysis", fit_model=False, arch_meta=ORDERED)
    return scores, root / "analysis", settings


def test_two_arch_tables_carry_the_order(two_arch_run):
    _, adir, _ = two_arch_run
    for name in ("accuracy.csv", "accuracy_by_step.csv"):
        table = pd.read_csv(adir / name)
        assert list(table.columns[:3]) == ["suite", "arch", "ordered"]
        assert dict(zip(table["arch"], table["ordered"])) == {"gpt2-nano": False, "gpt2-nano-ordered": True}
    items = pd.read_parquet(adir / "items.parquet")
    assert set(zip(items["arch"], items["ordered"])) == {("gpt2-nano", False), ("gpt2-nano-ordered", True)}


def test_fig2_draws_each_arch_in_its_own_row(two_arch_run):
    scores, adir, _ = two_arch_run
    style.apply()
    acc = pd.read_csv(adir / "accuracy.csv", dtype={"size": str})
    fig = plots.fig2_accuracy(acc)
    cats = sorted(acc.loc[acc["category"] != "Overall", "category"].unique())
    grid = np.array(fig.axes[:2 * (len(cats) + 1)]).reshape(2, len(cats) + 1)
    hand = _hand_category_means(scores)
    checked = 0
    for row, (arch, label) in zip(grid, [("gpt2-nano", "shuffled"), ("gpt2-nano-ordered", "ordered")]):
        assert f"{arch} ({label})" in row[0].get_ylabel()
        for ax, cat in zip(row, cats):
            for bars in ax.containers:  # errorbar containers, one per condition
                y = bars.lines[0].get_ydata()[0]
                assert y == pytest.approx(100 * hand[(arch, bars.get_label().lower(), cat)])
                checked += 1
    assert checked == 2 * len(cats) * 3
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["BABY-F", "BABY", "WIKI"]


def test_learning_curves_draw_each_arch_in_its_own_row(two_arch_run):
    scores, adir, _ = two_arch_run
    curves = pd.read_csv(adir / "accuracy_by_step.csv", dtype={"size": str})
    fig = plots.learning_curves(curves, "posh", level="category")
    n_panels = curves["category"].nunique() + 1
    assert len(fig.axes) == 2 * n_panels  # one size x two archs
    labels = [fig.axes[r * n_panels].get_ylabel() for r in range(2)]
    assert "gpt2-nano (shuffled)" in labels[0] and "gpt2-nano-ordered (ordered)" in labels[1]
    hand = _hand_category_means(scores)
    first_cat = min(curves["category"].unique())
    for r, arch in enumerate(["gpt2-nano", "gpt2-nano-ordered"]):
        baby = next(ln for ln in fig.axes[r * n_panels].get_lines() if ln.get_label() == "BABY")
        assert baby.get_ydata()[-1] == pytest.approx(100 * hand[(arch, "baby", first_cat)])


def test_the_models_of_two_archs_get_the_order_term(two_arch_run):
    scores, _, settings = two_arch_run
    _, df = pipeline.model_items(tidy.final_items(tidy.normalise(scores, "sim")), settings, CONDITIONS, ORDERED)
    for name, formula in (("table12", settings.formula), ("three_level", settings.three_level_formula)):
        spec = pipeline.model_spec(name, settings, df)
        assert spec["formula"] == f"{formula} + ordered"  # arch alone would be aliased with it: not added
        design = pipeline.model_design(df, settings, "binomial", **spec)
        assert "ordered[True]" in [c.label for c in design.columns]
        assert "Ordered training (yes vs. no)" in [c.pretty for c in design.columns]
    # a third arch that differs in more than its order: the arch term too
    third = simulate_scores(items=12, sizes=("50k",), steps=(100,), arch="lstm-nano", rng_seed=3)
    meta = {**ORDERED, "lstm-nano": {"bias": "vanilla"}}
    every = tidy.normalise(pd.concat([scores, third], ignore_index=True), "sim")
    _, df3 = pipeline.model_items(tidy.final_items(every), settings, CONDITIONS, meta)
    assert pipeline.model_spec("table12", settings, df3)["formula"] == f"{settings.formula} + ordered + arch"
    # analysis.arch_terms: none, the formulas as written (the archs pooled)
    pooled = pipeline.analysis_settings({"arch_terms": "none"})
    assert pipeline.model_spec("table12", pooled, df3)["formula"] == pooled.formula
    # an Exp. 3 formula names the arch-level bias itself: nothing added
    exp3 = pipeline.analysis_settings({"formula": "category * bias + (1|phenomenon)"})
    assert pipeline.model_spec("table12", exp3, df3)["formula"] == "category * bias + (1|phenomenon)"


def test_one_arch_keeps_its_formula_and_tables(tmp_path):
    scores = simulate_scores(items=12, sizes=("50k",), steps=(100,), arch="gpt2-tiny")
    settings = pipeline.analysis_settings({"models": ["table12", "three_level"]})
    meta = {"gpt2-tiny": {"bias": "vanilla"}}
    _, df = pipeline.model_items(tidy.final_items(tidy.normalise(scores, "sim")), settings, CONDITIONS, meta)
    assert pipeline.model_spec("table12", settings, df)["formula"] == settings.formula
    assert pipeline.model_spec("three_level", settings, df)["formula"] == settings.three_level_formula
    paths = write_score_files(scores, tmp_path)
    pipeline.full_analysis(paths, CONDITIONS, settings, tmp_path / "a", fit_model=False, arch_meta=meta)
    pipeline.full_analysis(paths, CONDITIONS, settings, tmp_path / "b", fit_model=False, arch_meta=None)
    for name in ("accuracy.csv", "accuracy_by_step.csv"):
        assert "ordered" not in pd.read_csv(tmp_path / "a" / name).columns
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_contrasts_average_over_the_arch_term():
    """BABY-F vs BABY with a main effect of the order: the coefficient of BABY-F (treatment-coded against BABY),
    whatever the order's coefficient; the design row averages the order over its levels."""
    rows = [{"source_filter": sf, "ordered": o, "n_correct": 5, "n_total": 10}
            for sf in ("BABY-F", "BABY", "WIKI") for o in (True, False)]
    design = bayes.build_design(pd.DataFrame(rows), "source_filter + ordered", family="binomial", zscore=True,
                                contrasts="sum", coding_of={"source_filter": ("treatment", "BABY")})
    beta = {"source_filter[BABY-F]": 0.7, "source_filter[WIKI]": -0.2, "ordered[True]": 5.0}
    posterior = {c.name: np.full(4, beta[c.label]) for c in design.columns}
    con = bayes.pairwise_contrasts(posterior, design, by="").set_index("contrast")["median"]
    assert con["BABY-F vs. BABY"] == pytest.approx(0.7)
    assert con["BABY vs. WIKI"] == pytest.approx(0.2)


def _snakemake(work: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["POVSTIM_NO_PROGRESS"] = "1"
    cmd = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(work), "--configfile",
           str(work / "config.yaml"), "--workflow-profile", "none", "--cores", "2", *args]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, env=env, timeout=1800, check=False)


@pytest.mark.slow
@pytest.mark.heavy
def test_an_ordered_and_a_shuffled_arch_end_to_end(tmp_path):
    cfg = yaml.safe_load((REPO / "tests/configs/tiny.yaml").read_text())
    nano = cfg["archs"]["gpt2-nano"]
    cfg["archs"]["gpt2-nano-ordered"] = {**nano, "training": {"ordered": True}}
    cfg["sizes"] = cfg["sizes"][:1]
    cfg["seeds"] = [1, 2]
    cfg["analysis"]["models"] = ["table12", "three_level"]
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    r = _snakemake(tmp_path, "results/figures")
    assert r.returncode == 0, r.stderr[-4000:]
    results = tmp_path / "results" / cfg["experiment"]
    size = cfg["sizes"][0]
    for arch, ordered in (("gpt2-nano", False), ("gpt2-nano-ordered", True)):
        summary = json.loads((results / "models" / arch / "baby" / size / "seed1" / "train_summary.json").read_text())
        assert summary["ordered"] is ordered
        log = (tmp_path / "logs" / cfg["experiment"] / "train" / arch / "baby" / size / "seed1.log").read_text()
        assert f"order: {'ordered' if ordered else 'shuffled'}" in log
    acc = pd.read_csv(results / "analysis" / "accuracy.csv", dtype={"size": str})
    assert dict(zip(acc["arch"], acc["ordered"])) == {"gpt2-nano": False, "gpt2-nano-ordered": True}
    for prefix in ("", "three_level_"):
        diag = json.loads((results / "analysis" / "bayes" / f"{prefix}diagnostics.json").read_text())
        assert diag["formula"].endswith(" + ordered")
        terms = pd.read_csv(results / "analysis" / "bayes" / f"{prefix}summary.csv")["term"]
        assert "ordered[True]" in set(terms)
    fig = plots.fig2_accuracy(acc)
    n_cols = acc.loc[acc["level"] == "category", "category"].nunique() + 1
    ylabels = [fig.axes[r * n_cols].get_ylabel() for r in range(2)]
    assert "gpt2-nano (shuffled)" in ylabels[0] and "gpt2-nano-ordered (ordered)" in ylabels[1]
    assert (results / "figures" / "fig2_accuracy.png").is_file()


def test_exp3_figures_keep_archs_that_share_a_bias_apart():
    """Two vanilla archs (say one ordered, one shuffled) get a bar each in Figure 5, not their average."""
    import matplotlib
    from povstim.figures.exp3 import fig5_biases, split_shared

    rows = [{"suite": "posh", "arch": arch, "bias": "vanilla", "condition": "baby", "size": "40k", "seed": seed,
             "level": "paradigm", "category": "Island", "paradigm": "island_wh", "accuracy": acc}
            for arch, accs in (("gpt2", (0.5, 0.6)), ("gpt2-ordered", (0.8, 0.9))) for seed, acc in zip((1, 2), accs)]
    acc = split_shared(pd.DataFrame(rows))
    assert sorted(acc["bias"].unique()) == ["vanilla: gpt2", "vanilla: gpt2-ordered"]
    fig = fig5_biases(acc)
    bars = [p for p in fig.axes[0].patches if isinstance(p, matplotlib.patches.Rectangle)]
    assert sorted(round(b.get_height(), 6) for b in bars) == [55.0, 85.0]
    assert sorted(t.get_text() for t in fig.legends[0].get_texts()) == ["vanilla: gpt2", "vanilla: gpt2-ordered"]
    # one arch per bias: unchanged
    one = pd.DataFrame(rows[:2])
    assert split_shared(one) is one


def test_fig1_draws_a_line_per_arch(two_arch_run):
    _, adir, _ = two_arch_run
    acc = pd.read_csv(adir / "accuracy.csv", dtype={"size": str})
    models, _ = plots.children_vs_models(acc, plots.load_children())
    assert set(models["arch"]) == {"gpt2-nano", "gpt2-nano-ordered"}  # not averaged over the archs
    fig = plots.fig1_children(acc, plots.load_children())
    labels = {t.get_text() for t in fig.legends[0].get_texts()}
    assert {"BABY, gpt2-nano (shuffled)", "BABY, gpt2-nano-ordered (ordered)"} <= labels


def test_a_formula_given_by_hand_gets_no_arch_terms(caplog):
    # `povstim analyze --formula F` fitted F + arch (arch_terms: auto), which moved POSH's Table 12
    # size term; a formula the user wrote is fitted as written, and the log says the archs are pooled by it.
    scores = tidy.normalise(_two_archs(), "sim")
    settings = pipeline.analysis_settings({})
    _, df = pipeline.model_items(tidy.final_items(scores), settings, CONDITIONS, {n: {"bias": "vanilla"}
                                                                                  for n in ORDERED})
    assert pipeline.model_spec("table12", settings, df)["formula"] == f"{settings.formula} + arch"  # the config's
    caplog.set_level(logging.WARNING, logger="povstim.analysis")
    spec = pipeline.model_spec("table12", settings, df, as_written=frozenset({"table12"}))
    assert spec["formula"] == settings.formula
    assert any("fitted as written" in r.getMessage() and "2 archs" in r.getMessage() for r in caplog.records)
    # the other model, not given by hand, keeps its auto terms
    assert pipeline.model_spec("three_level", settings, df, as_written=frozenset({"table12"}))["formula"] == (
        f"{settings.three_level_formula} + arch")


def test_analyze_flags_mark_the_formulas_fitted_as_written():
    # the command line's part: --formula / --three-level-formula name the models model_spec leaves as written
    # (a real fit through `povstim analyze --formula`: tests/test_analysis_cli.py)
    import argparse

    from povstim.analysis import cli as analysis_cli

    p = argparse.ArgumentParser()
    analysis_cli.add_arguments(p)
    written = analysis_cli.formulas_as_written
    assert written(p.parse_args(["--items", "x", "--formula", "size"])) == {"table12"}
    assert written(p.parse_args(["--items", "x", "--three-level-formula", "size"])) == {"three_level"}
    assert written(p.parse_args(["--items", "x", "--params", '{"formula": "size"}'])) == set()  # the config's
