"""POSH Table 7 (children's accuracy) as shipped data, and Figure 1 (children beside models)."""

from __future__ import annotations

import pytest

from helpers.simulate import simulate_scores
from povstim.analysis.tables import tables
from povstim.analysis.tables import tidy
from povstim.figures import plots, style

# POSH-BENCH Table 7, typed from the paper: phenomenon -> ((younger age, acc), (older age, acc))
TABLE7 = {
    "adjunct island": (("3", 0.67), ("4", 0.78)),
    "complex-NP island": (("3-4", 0.553), ("4-5", 0.925)),
    "question formation": (("3;2-4;7", 0.38), ("4;7-5;11", 0.80)),
    "binding": (("4-4;6", 0.575), ("6-6;6", 0.894)),
}


def test_shipped_table7_is_the_papers():
    ch = plots.load_children()
    assert len(ch) == 8
    for ph, stages in TABLE7.items():
        sub = ch[ch["phenomenon"] == ph].set_index("stage")
        for stage, (age, acc) in zip(("younger", "older"), stages):
            assert sub.loc[stage, "age"] == age and sub.loc[stage, "accuracy"] == pytest.approx(acc)
        # POSH Fig. 1 aligns the younger age with 10M words of input and the older with 30M
        assert sub.loc["younger", "matched_size"] == "10M" and sub.loc["older", "matched_size"] == "30M"
    assert set(ch["study"]) == {"Goodluck, Foley & Sedivy (1992)", "De Villiers & Roeper (1995)",
                                "Crain & Nakayama (1987)", "Chien & Wexler (1990)"}


def _acc(sizes):
    items = tidy.final_items(tidy.normalise(simulate_scores(items=20, sizes=sizes, seeds=(1, 2)), "sim"))
    return tables.accuracy_table(items)


def test_figure1_uses_the_matched_sizes_when_trained_and_says_so_otherwise():
    ch = plots.load_children()
    models, note = plots.children_vs_models(_acc(("10M", "30M", "50M")), ch)
    assert note == "" and set(models["size"]) == {"10M", "30M"}  # the paper's two sizes only
    qf = models[(models["phenomenon"] == "question formation") & (models["condition"] == "baby-f")]
    acc = _acc(("10M", "30M", "50M"))
    want = acc[(acc["level"] == "category") & (acc["category"] == "Question Formation")
               & (acc["condition"] == "baby-f") & (acc["size"] == "10M")]["accuracy"].mean()
    assert qf.set_index("size").loc["10M", "mean"] == pytest.approx(want)
    models, note = plots.children_vs_models(_acc(("50k", "150k")), ch)
    assert "no model trained at the matched input sizes (10M, 30M words)" in note
    assert set(models["size"]) == {"50k", "150k"}


def test_figure1_draws_children_and_every_condition(tmp_path):
    style.apply()
    fig = plots.fig1_children(_acc(("10M", "30M")), plots.load_children())
    assert len(fig.axes) == 4
    ax = fig.axes[2]  # question formation
    children = [ln for ln in ax.get_lines() if ln.get_label() == "children"][0]
    assert list(children.get_ydata()) == pytest.approx([38.0, 80.0])
    assert list(children.get_xdata()) == [10_000_000, 30_000_000]
    labels = {t.get_text() for t in fig.legends[0].get_texts()}
    assert labels == {"children", "BABY-F", "BABY", "WIKI"}
    style.save(fig, tmp_path, "fig1")
    assert (tmp_path / "fig1.pdf").read_bytes()[:5] == b"%PDF-"
