"""Figure 1's size tick labels ("15k", "30k", and the children's "10M", "30M") overlapped in a
two-arch experiment; upright labels and a panel wide enough keep their boxes apart (checked on the drawn
text's bounding boxes, as tests/test_filter_audit_figure.py does), with and without the figure style."""

from __future__ import annotations

from itertools import combinations

import matplotlib
import pandas as pd
import pytest
from helpers.simulate import simulate_scores
from povstim.analysis.tables import tables
from povstim.analysis.tables import tidy
from povstim.figures import plots, style


def _two_arch_acc(sizes):
    acc = tables.accuracy_table(tidy.final_items(tidy.normalise(
        simulate_scores(items=20, sizes=sizes, seeds=(1, 2)), "sim")))
    return pd.concat([acc, acc.assign(arch="gpt2-tiny-ordered")], ignore_index=True)


@pytest.mark.parametrize("styled", [False, True])
@pytest.mark.parametrize("sizes", [("15k", "30k"), ("150k", "290k"), ("100k", "120k")])
def test_size_tick_labels_do_not_overlap(styled, sizes):
    with matplotlib.rc_context():  # the style's settings end with the block
        if styled:
            style.apply()  # the fonts `povstim figures` draws with
        fig = plots.fig1_children(_two_arch_acc(sizes), plots.load_children())
        fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    assert len(fig.axes) == 4
    for ax in fig.axes:
        labels = [t for t in ax.get_xticklabels() if t.get_text()]
        assert [t.get_text() for t in labels] == [*sizes, "10M", "30M"]  # models' sizes, then the children's
        boxes = [t.get_window_extent(renderer) for t in labels]
        for (ta, a), (tb, b) in combinations(zip(labels, boxes), 2):
            assert not a.overlaps(b), (ta.get_text(), tb.get_text(), a, b)
        xlabel = ax.xaxis.label.get_window_extent(renderer)
        assert not any(b.overlaps(xlabel) for b in boxes)
        legend = fig.legends[0].get_window_extent(renderer)
        assert not any(b.overlaps(legend) for b in boxes)
    # the two-arch shape of the report: a line per arch x condition
    assert {"BABY, gpt2-tiny", "BABY, gpt2-tiny-ordered"} <= {t.get_text() for t in fig.legends[0].get_texts()}


def test_closer_sizes_widen_the_panels():
    """Sizes a factor 1.2 apart need more width per decade than the default panel gives."""
    assert plots._size_panel_width(["15k", "30k", "10M", "30M"]) <= 2.1  # the default width suffices
    assert plots._size_panel_width(["100k", "120k", "10M", "30M"]) > 2.1
    fig = plots.fig1_children(_two_arch_acc(("100k", "120k")), plots.load_children())
    assert fig.get_size_inches()[0] > 4 * 2.1 + 0.6
