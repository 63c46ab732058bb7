"""Figure faults found by hand, each checked on the drawn matplotlib artists (tests/helpers/layout.py): learning-curve
panels with a single point are markers, not "curves"; BLiMP's long paradigm names no longer run into each other as
panel titles (the constructions demo's learning_curves_blimp); a 10-entry legend no longer spills over the children
figure (POSH Fig. 1 with three archs x three conditions); the acquisition and word-learning figures keep their texts
apart. (The filter-audit legend vs its bars: tests/test_filter_audit_figure.py.)"""

from __future__ import annotations

import matplotlib
import numpy as np
import pandas as pd
import pytest
from helpers import layout
from povstim.figures import acquisition as acq_figs
from povstim.figures import plots, style

# the constructions demo's eight BLiMP paradigms, in its config's order
BLIMP = ["determiner_noun_agreement_1", "determiner_noun_agreement_2", "distractor_agreement_relative_clause",
         "irregular_plural_subject_verb_agreement_1", "irregular_plural_subject_verb_agreement_2",
         "anaphor_number_agreement", "wh_questions_object_gap", "passive_1"]
CONDITIONS = ["full", "no-det-noun", "no-relative", "no-irregular-sv"]


def _curves(steps, paradigms=BLIMP, conditions=CONDITIONS, seeds=(1,)):
    rng = np.random.default_rng(0)
    return pd.DataFrame([{"suite": "blimp", "arch": "gpt2-tiny", "condition": c, "size": "50k", "seed": s,
                          "step": step, "category": p.split("_")[0], "paradigm": p,
                          "accuracy": float(rng.uniform(0.4, 0.9))}
                         for c in conditions for s in seeds for p in paradigms for step in steps])


@pytest.fixture(autouse=True)
def styled():
    with matplotlib.rc_context():  # the fonts `povstim figures` draws with; the settings end with the test
        style.apply()
        yield


def test_one_scored_point_is_a_marker_not_a_curve():
    """scoring.checkpoints: false (the constructions demo): each model has its final step only."""
    fig = plots.learning_curves(_curves([200]), "blimp")
    assert layout.single_point_lines(fig) == []
    for ax in fig.axes:
        points = [line for line in ax.get_lines() if not line.get_label().startswith("_")]  # not error-bar caps
        assert len(points) == len(CONDITIONS) and all(len(line.get_xdata()) == 1 for line in points)  # every condition is there, as a marker with no line
        assert all(line.get_linestyle() == "None" and line.get_marker() not in (None, "None") for line in points)
        assert not ax.collections or all(len(c.get_paths()) == 0 or c.__class__.__name__ == "LineCollection"
                                         for c in ax.collections)  # no ± SD band for one point (error bars only)
    assert "markers, not curves" in fig._suptitle.get_text()


def test_checkpoints_are_curves_and_a_lone_point_among_them_is_named():
    curves = _curves([100, 200, 300])
    fig = plots.learning_curves(curves, "blimp")
    assert layout.single_point_lines(fig) == []
    lines = [line for line in fig.axes[0].get_lines() if not line.get_label().startswith("_")]
    assert len(lines) == len(CONDITIONS) and all(line.get_linestyle() != "None" for line in lines)
    assert "one scored point" not in fig._suptitle.get_text() and "markers" not in fig._suptitle.get_text()
    # one condition scored only at its end: that one is a marker, and the title counts it
    lone = pd.concat([curves[curves["condition"] != "full"], _curves([300], conditions=["full"])])
    fig = plots.learning_curves(lone, "blimp")
    assert layout.single_point_lines(fig) == []
    assert "8 panel curve(s) with one scored point" in fig._suptitle.get_text()


@pytest.mark.parametrize("level", ["paradigm", "category"])
def test_long_paradigm_names_do_not_overlap_as_panel_titles(level):
    fig = plots.learning_curves(_curves([100, 200]), "blimp", level=level)
    assert layout.overlapping_texts(fig) == []
    assert layout.legends_over_axes(fig) == []
    titles = [ax.title.get_text() for ax in fig.axes]
    if level == "paradigm":
        assert "irregular plural\nsubject verb\nagreement 1" in titles  # wrapped, not cut


def _acc_three_archs():
    from helpers.simulate import simulate_scores
    from povstim.analysis.tables import tables
    from povstim.analysis.tables import tidy

    acc = tables.accuracy_table(tidy.final_items(tidy.normalise(
        simulate_scores(items=20, sizes=("10M", "30M"), seeds=(1, 2)), "sim")))
    return pd.concat([acc, acc.assign(arch="gpt2-tiny-ordered"), acc.assign(arch="gpt2-recency")],
                     ignore_index=True)


def test_a_ten_entry_legend_fits_below_the_children_figure():
    fig = plots.fig1_children(_acc_three_archs(), plots.load_children())
    fig.canvas.draw()
    legend = fig.legends[0]
    assert len(legend.get_texts()) == 10  # children + 3 archs x 3 conditions
    box = legend.get_window_extent(fig.canvas.get_renderer())
    assert box.width <= fig.bbox.width and box.x0 >= 0  # wrapped into rows, not wider than the figure
    assert legend._ncols < 10
    assert layout.legends_over_axes(fig) == [] and layout.overlapping_texts(fig) == []


def _acquisition_tables():
    from povstim.analysis.timing import acquisition as A
    from test_acquisition import SETTINGS, curves_table

    pars = {p: 5.0 + 0.1 * k for k, p in enumerate(["question_formation_sr", "island_complex_np",
                                                    "principle_a_locality", "wanna", "island_adjunct"])}
    curves = curves_table({c: dict(pars) for c in ("baby-f", "baby", "wiki")}, seeds=(1, 2))
    points, summ, con, _, _ = A.analyse(curves, SETTINGS)
    return curves, points, summ, con


def test_acquisition_figures_keep_their_texts_apart():
    curves, points, summ, con = _acquisition_tables()
    for fig in (acq_figs.acquisition_curves(curves, points, summ, "posh"),
                acq_figs.acquisition_points(summ, con, "posh")):
        assert layout.overlapping_texts(fig) == []
        assert layout.legends_over_axes(fig) == []
        assert layout.single_point_lines(fig) == []


def _word_points():
    rows = []
    for cond in ("baby-f", "baby", "wiki"):
        for seed in (1, 2):
            for k, word in enumerate(["dog", "cat", "ball", "cup", "hat"]):
                category = "not_identified" if word == "hat" else ("not_acquired" if word == "cup" else "acquired")
                point = 4.5 + 0.1 * k if category == "acquired" else np.nan
                rows.append({"arch": "gpt2-tiny", "condition": cond, "size": "50k", "seed": seed, "word": word,
                             "acquisition": category, "log10_point": point, "point_words": 10 ** point,
                             "first_words": 4e3, "budget_words": 1.5e5, "per_million": 100.0 * (k + 1)})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("with_ages", [True, False])
def test_word_learning_figure_draws_no_point_for_an_unidentified_word(with_ages):
    kids = pd.DataFrame({"word": ["dog", "cat", "ball", "cup", "hat"],
                         "age_first_months": [14.0, 16.0, 15.0, 20.0, 18.0]}) if with_ages else None
    fig = acq_figs.word_learning(_word_points(), kids)
    assert len(fig.axes) == 3
    for ax in fig.axes:
        drawn_y = np.concatenate([np.asarray(line.get_ydata(), float) for line in ax.get_lines()])
        # three acquired words (their seeds' mean), one '^' at the budget; "hat" nowhere
        assert sorted(np.round(drawn_y, 3).tolist()) == sorted([4.5, 4.6, 4.7, round(np.log10(1.5e5), 3)])
        assert ax.get_title().endswith("not identified (1, no point): hat")
        assert ax.get_xlabel() == "" or ("age" in ax.get_xlabel()) == with_ages
    assert layout.overlapping_texts(fig) == [] and layout.legends_over_axes(fig) == []


def _analysis_dir(root):
    """A small analysis folder with an input for every figure `povstim figures` plans: POSH scored at two steps and
    BLiMP (its long paradigm names) at the final step only, two archs with biases (Figs. 4-5), both Bayesian
    summaries with convergence problems; the tables written as `povstim analyze` writes them (CSV, read back)."""
    import json

    from helpers.simulate import simulate_scores
    from povstim.analysis.tables import exp3 as exp3_tables
    from povstim.analysis.tables import tables
    from povstim.analysis.tables import tidy
    from povstim.analysis.timing.curves import curve_table

    archs = {"gpt2-tiny": "vanilla", "gpt2-recency": "recency"}
    conditions = {"baby-f": {"source": "baby", "filtered": True}, "baby": {"source": "baby", "filtered": False}}
    frames = []
    for arch in archs:
        frames.append(simulate_scores(conditions, sizes=("10M",), items=6, steps=(50, 100), arch=arch))
        frames.append(simulate_scores(conditions, sizes=("10M",), items=6, steps=(100,), arch=arch, suite="blimp",
                                      paradigms={p: p.split("_")[0] for p in BLIMP}))
    scores = tidy.normalise(pd.concat(frames, ignore_index=True), "sim")
    adir = root / "analysis"
    (adir / "bayes").mkdir(parents=True)
    (adir / "tables").mkdir()
    acc, curves = tables.accuracy_table(tidy.final_items(scores)), curve_table(scores)
    acc.to_csv(adir / "accuracy.csv", index=False)
    curves.to_csv(adir / "accuracy_by_step.csv", index=False)
    meta = {a: {"bias": b} for a, b in archs.items()}
    exp3_tables.attach_archs(acc, meta).to_csv(adir / "tables" / "exp3_accuracy.csv", index=False)
    exp3_tables.attach_archs(curves, meta).to_csv(adir / "tables" / "exp3_curves.csv", index=False)
    summary = pd.DataFrame({"term": ["Intercept", "size", "filtered[True]", "sd(1|seed)"],
                            "median": [0.5, 0.1, -0.2, 0.05], "lower": [0.1, 0.05, -0.3, 0.0],
                            "upper": [0.9, 0.15, -0.1, 0.3]})
    for prefix in ("", "three_level_"):
        summary.to_csv(adir / "bayes" / f"{prefix}summary.csv", index=False)
        (adir / "bayes" / f"{prefix}diagnostics.json").write_text(json.dumps({"problems": [
            "max R-hat 1.030 > 1.01 (Intercept): chains have not mixed", "3 divergent transitions"]}))
    return adir


def _layout_faults(fig) -> dict:
    # (text outside the figure's box is no fault here: style.apply saves with savefig.bbox "tight", which keeps it)
    faults = {"overlapping texts": layout.overlapping_texts(fig), "legend over a panel": layout.legends_over_axes(fig),
              "one-point curves": layout.single_point_lines(fig), "legend over data": layout.legends_over_data(fig)}
    return {k: v for k, v in faults.items() if v}


def test_no_figure_the_figures_stage_draws_has_a_layout_fault(tmp_path):
    """Every figure `povstim figures` plans (figures/draw.py: the same (stem, function, args) it saves) on a small
    fixture, and the construction_delta stage's: no two titles, axis labels or legends overlap (every pair of panel
    titles included), no legend covers a panel (the Δ figure's loc="best" legend sat on the constructions demo's
    last interval), no single-point "curve" (Fig. 4's row of a suite scored at its final step only, and Figs. 1-2's
    errorbar lines at one training size, were lines through one point)."""
    import matplotlib.pyplot as plt
    from povstim.figures import construction_delta, draw
    from povstim.figures import cli as fcli
    from test_filter_audit_figure import LONG, _dpe

    adir = _analysis_dir(tmp_path)
    study = pd.DataFrame({"vocab_size": [8192, 32768] * 2, "dataset": ["wiki", "wiki", "baby", "baby"],
                          "size": ["10M"] * 4, "tokens": [17341898, 14442880, 16216427, 15318669]})
    rows = [(i, "question_formation", LONG, i % 3 == 0) for i in range(10)]
    rows += [(100 + i, "binding", "binding_posh_self_after_two_nominals", i % 2 == 0) for i in range(6)]
    audit = fcli.read_filter_audit([(c, s, _dpe(tmp_path / "filter", c, s, rows, n_sentences=1000))
                                    for c in ("baby", "wiki") for s in ("8k", "290k")])
    planned = draw.plan(adir, study=study, audit=audit)
    stems = [stem for stem, _, _ in planned]
    assert {"fig1_children", "fig2_accuracy", "fig3_posterior", "fig3_three_level", "learning_curves_posh",
            "learning_curves_posh_category", "learning_curves_blimp", "learning_curves_blimp_category",
            "tokenizer_study", "filter_audit"} <= set(stems)
    assert {s for s in stems if s.startswith("fig4_biases")} == {"fig4_biases_baby_10M", "fig4_biases_baby-f_10M"}
    delta = pd.DataFrame([{"suite": "blimp", "constructions": c, "arch": "gpt2-tiny", "size": "50k",
                           "converged": c != "relative_clause", "delta_target": -0.02, "delta_target_lower": -0.05,
                           "delta_target_upper": 0.01, "delta_control": 0.0, "delta_control_lower": -0.01,
                           "delta_control_upper": 0.01}
                          for c in ("det_noun", "relative_clause", "irregular_subject_verb_agreement")])
    faults = {}
    for stem, fn, args in planned + [("delta_blimp", construction_delta.delta_figure, (delta, "blimp"))]:
        fig = fn(*args)
        if found := _layout_faults(fig):
            faults[stem] = found
        plt.close(fig)
    assert faults == {}
