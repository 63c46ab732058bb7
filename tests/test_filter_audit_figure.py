"""The filter-audit figure draws the targeted removals as a subset of each rule's removals (a bar
inside the bar, never a rule of its own beside it), with tick labels, titles and legend that do not overlap."""

from __future__ import annotations

import json
from itertools import combinations

import pytest
from povstim.figures import cli as fcli
from povstim.figures import filter_audit
from povstim.io import PovstimError

HEAD = "sent_id\tphenomenon\trule\ttokens\tsentence\ttargeted\n"


def _dpe(tmp_path, corpus, size, rows, n_sentences=100):
    d = tmp_path / corpus / size
    d.mkdir(parents=True)
    (d / "dpe.tsv").write_text(HEAD + "".join(
        f"{i}\t{phen}\t{rule}\t1:x\tsentence {i}\t{'true' if t else 'false'}\n" for i, phen, rule, t in rows))
    if n_sentences:
        (d / "summary.json").write_text(json.dumps({"n_sentences": n_sentences}))
    return d / "dpe.tsv"


def test_targeted_removals_are_counted_inside_their_rule_not_beside_it(tmp_path):
    path = _dpe(tmp_path, "baby", "50k", [
        (3, "question_formation", "qf_posh", True),
        (8, "binding", "binding_posh", True), (9, "binding", "binding_posh", False),
        (12, "binding", "binding_posh", False)])
    audit = fcli.read_filter_audit([("baby", "50k", path)])
    # by hand: binding removed 3 (8, 9, 12), 1 of them targeted; question formation 1 of 1; 100 sentences
    got = {r["rule"]: (r["n"], r["n_targeted"], r["rate"], r["rate_targeted"]) for _, r in audit.iterrows()}
    assert got == {"binding_posh": (3, 1, 0.03, 0.01), "qf_posh": (1, 1, 0.01, 0.01)}
    # no strict rule appears as a rule of its own (it used to, as extra removals)
    assert len(audit) == 2 and not audit["rule"].str.contains("strict").any()
    (tmp_path / "bad.tsv").write_text("sent_id\tphenomenon\trule\n")
    with pytest.raises(PovstimError, match="not a dpe.tsv"):
        fcli.read_filter_audit([("baby", "50k", tmp_path / "bad.tsv")])


LONG = "qf_posh_interrogative_nsubj_before_relcl"


@pytest.fixture
def crowded(tmp_path):
    """Two corpora x three sizes, three phenomena, one with two long rule names: the case that overlapped."""
    audits = []
    for corpus in ("baby", "wiki"):
        for k, size in enumerate(("8k", "16k", "290k")):
            rows = [(i, "question_formation", LONG, i % 3 == 0) for i in range(10 + k)]
            rows += [(100 + i, "binding", "binding_posh_self_after_two_nominals", i % 2 == 0) for i in range(6)]
            rows += [(200 + i, "wanna", "wanna_posh_contraction", False) for i in range(2)]
            rows += [(300 + i, "wanna", "wanna_posh_gap_after_want", True) for i in range(3)]
            audits.append((corpus, size, _dpe(tmp_path, corpus, size, rows, n_sentences=1000)))
    return fcli.read_filter_audit(audits)


def test_inner_bars_are_subsets_of_their_bars(crowded):
    fig = filter_audit.draw(crowded)
    for ax in fig.axes:
        outer = [p for p in ax.patches if p.get_gid() == "removed"]
        inner = [p for p in ax.patches if p.get_gid() == "targeted"]
        assert len(outer) == len(inner) == 4 * 3  # 4 rule groups x 3 sizes
        for o, i in zip(outer, inner):
            assert o.get_x() + o.get_width() / 2 == pytest.approx(i.get_x() + i.get_width() / 2)  # same place
            assert i.get_width() < o.get_width() and 0 <= i.get_height() <= o.get_height()
        # baby 8k's question formation: 10 removed, 4 targeted (0, 3, 6, 9) of 1,000 sentences -> 1.0% and 0.4%
        heights = {(round(o.get_height(), 6), round(i.get_height(), 6)) for o, i in zip(outer, inner)}
        assert (1.0, 0.4) in heights
    # the strict rule never appears as a tick of its own
    assert not any("strict" in t.get_text() for ax in fig.axes for t in ax.get_xticklabels())


def _inside(fig, renderer, artist) -> bool:
    box, page = artist.get_window_extent(renderer), fig.bbox
    return box.x0 >= page.x0 and box.x1 <= page.x1 and box.y0 >= page.y0 and box.y1 <= page.y1


@pytest.mark.parametrize("styled", [False, True])
def test_one_corpus_keeps_its_legend_inside_the_figure(tmp_path, styled):
    """One corpus with two sizes (the tiny run's shape): the legend is wider than one panel would be."""
    import matplotlib
    from povstim.figures import style

    rows = [(i, "binding", "binding_posh", i % 2 == 0) for i in range(5)]
    rows += [(10 + i, "question_formation", "qf_posh", i == 0) for i in range(9)]
    audit = fcli.read_filter_audit([("baby", size, _dpe(tmp_path, "baby", size, rows)) for size in ("8k", "16k")])
    with matplotlib.rc_context():  # the style's settings end with the block
        if styled:
            style.apply()  # the fonts `povstim figures` draws with
        fig = filter_audit.draw(audit)
        fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legend = fig.legends[0]
    assert _inside(fig, renderer, legend)
    assert all(_inside(fig, renderer, t) for t in fig.axes[0].get_xticklabels() if t.get_text())
    assert not any(legend.get_window_extent(renderer).overlaps(t.get_window_extent(renderer))
                   for t in fig.axes[0].get_xticklabels() if t.get_text())


def test_labels_titles_and_legend_do_not_overlap(crowded):
    fig = filter_audit.draw(crowded)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    labels = [t for ax in fig.axes for t in ax.get_xticklabels() if t.get_text()]
    assert len(labels) == 2 * 4
    # phenomena, sorted; the rule too where a phenomenon has two (wrapped: compared without the line breaks)
    assert ["".join(t.get_text().split()) for t in labels[:4]] == [
        "binding", "questionformation", "wanna(wanna_posh_contraction)", "wanna(wanna_posh_gap_after_want)"]
    # rule names break after an underscore, never inside a word
    assert labels[2].get_text() == "wanna\n(wanna_posh_\ncontraction)"
    boxes = [t.get_window_extent(renderer) for t in labels]
    for a, b in combinations(boxes, 2):
        assert not a.overlaps(b)
    titles = [ax.title.get_window_extent(renderer) for ax in fig.axes]
    assert not titles[0].overlaps(titles[1])
    assert _inside(fig, renderer, fig.legends[0]) and all(_inside(fig, renderer, t) for t in labels)
    legend = fig.legends[0].get_window_extent(renderer)
    assert all(not legend.overlaps(b) for b in boxes)
    assert all(not legend.overlaps(ax.get_window_extent(renderer)) for ax in fig.axes)
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [
        f"{size}: {what}" for size in ("8k", "16k", "290k") for what in ("removed by the rule", "of which targeted")]


def _look(patch) -> tuple:
    """What tells a bar (or a legend key) apart: face colour with its alpha, edge colour, hatch."""
    return (tuple(round(v, 4) for v in patch.get_facecolor()), tuple(round(v, 4) for v in patch.get_edgecolor()),
            patch.get_hatch())


@pytest.mark.parametrize("styled", [False, True])
def test_legend_keys_look_like_the_bars_they_name(crowded, styled):
    """The legend showed solid size swatches and grey "removed"/"targeted" keys that no bar looked
    like. Each key must be drawn as its bars are, and every kind of bar drawn must have a key."""
    import matplotlib
    from povstim.figures import style

    with matplotlib.rc_context():
        if styled:
            style.apply()
        fig = filter_audit.draw(crowded)
    legend = fig.legends[0]
    keys = {t.get_text(): _look(h) for t, h in zip(legend.get_texts(), legend.legend_handles)}
    assert len(keys) == len(legend.legend_handles) == 3 * 2
    bars = {}
    for ax in fig.axes:
        for size_index, container in enumerate(ax.containers):
            for p in container.patches:
                bars.setdefault(_look(p), set()).add(p.get_gid())
    # every bar style has exactly one key, and every key is a style some bar has
    assert set(keys.values()) == set(bars)
    assert len(set(keys.values())) == len(keys)
    for text, look in keys.items():
        want = "targeted" if text.endswith("of which targeted") else "removed"
        assert bars[look] == {want}, (text, bars[look])
    # a size's two keys share its colour; the targeted one is hatched and opaque, the removed one pale
    for size in ("8k", "16k", "290k"):
        removed, targeted = keys[f"{size}: removed by the rule"], keys[f"{size}: of which targeted"]
        assert removed[0][:3] == targeted[0][:3] and removed[0][3] < 1 and targeted[0][3] == 1
        assert targeted[2] == "//" and not removed[2]
