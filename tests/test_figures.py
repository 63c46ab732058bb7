"""Figures: every plot draws from the tidy tables, files are PNG + PDF and reproducible."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from povstim.analysis.tables import tables

from povstim.analysis.tables import tidy
from povstim.analysis.timing.curves import curve_table
from helpers.simulate import simulate_scores
from povstim.cli import main
from povstim.figures import cli as fcli, filter_audit, plots, style
from povstim.io import PovstimError


@pytest.fixture(scope="module")
def scores():
    return tidy.normalise(simulate_scores(items=10, steps=(50, 100)), "sim")


def _png_pdf(out, stem):
    png, pdf = out / f"{stem}.png", out / f"{stem}.pdf"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert pdf.read_bytes()[:5] == b"%PDF-"
    return png, pdf


def test_fig2_and_learning_curves_are_reproducible(tmp_path, scores):
    style.apply()
    acc = tables.accuracy_table(tidy.final_items(scores))
    fig = plots.fig2_accuracy(acc)
    # one panel per category + Overall, chance line in each
    assert len(fig.axes) == 5
    assert all(any(line.get_ydata()[0] == 50 for line in ax.get_lines()) for ax in fig.axes)
    style.save(fig, tmp_path / "a", "fig2")
    style.save(plots.fig2_accuracy(acc), tmp_path / "b", "fig2")
    for ext in ("png", "pdf"):
        assert (tmp_path / "a" / f"fig2.{ext}").read_bytes() == (tmp_path / "b" / f"fig2.{ext}").read_bytes()
    curves = curve_table(scores)
    fig = plots.learning_curves(curves, "posh")
    assert len(fig.axes) == 2 * 9  # sizes x paradigms
    ax = fig.axes[0]
    steps = sorted({int(x) for line in ax.get_lines() if not line.get_label().startswith("_")
                    for x in line.get_xdata()})
    assert steps == [50, 100]
    cat = plots.learning_curves(curves, "posh", level="category")
    assert len(cat.axes) == 2 * 5


def test_learning_curves_draw_each_paradigms_own_chance(scores):
    """Other task kinds carry a per-item chance (1/k options): the dashed line is that paradigm's own."""
    curves = curve_table(scores)
    paradigms = sorted(curves["paradigm"].unique())
    curves["chance"] = curves["paradigm"].map({p: (0.25 if p == paradigms[0] else 0.5) for p in paradigms})
    fig = plots.learning_curves(curves, "posh")
    dashed = [[line.get_ydata()[0] for line in ax.get_lines() if line.get_color() == "0.4"] for ax in fig.axes]
    levels = {tuple(d) for d in dashed}
    assert levels == {(25.0,), (50.0,)}  # one chance line per panel, 25% only where chance is 1/4


def test_fig3_marks_convergence_problems():
    summary = pd.DataFrame({
        "term": ["Intercept", "size", "filtered[True]", "sd(1|seed)"],
        "median": [0.5, 0.1, -0.2, 0.05], "lower": [0.1, 0.05, -0.3, 0.0], "upper": [0.9, 0.15, -0.1, 0.3],
        "label": ["Intercept", "Training size (z)", "Filtering (yes vs. no)", "Random-seed intercept SD"],
    })
    fig = plots.fig3_posterior(summary, ["3 divergent transitions"])
    ticks = sorted(zip(fig.axes[0].get_yticks(), [t.get_text() for t in fig.axes[0].get_yticklabels()]))
    # summary order from the top; the intercept and the SDs are not among the fixed effects
    assert [lab for _, lab in ticks[::-1]] == ["Training size (z)", "Filtering (yes vs. no)"]
    assert "CONVERGENCE PROBLEM" in fig.axes[0].get_title(loc="left")
    assert len(fig.axes) == 2


def test_optional_inputs(tmp_path):
    study = tmp_path / "study.csv"
    study.write_text("vocab_size,corpus,size,n_tokens\n8192,wiki,10M,17341898\n32768,wiki,10M,14442880\n"
                     "8192,baby,10M,16216427\n32768,baby,10M,15318669\n")
    df = fcli.read_tokenizer_study([study])
    assert set(df.columns) == {"vocab_size", "dataset", "size", "tokens"} and len(df) == 4
    plots.tokenizer_study(df)
    bad = tmp_path / "bad.csv"
    bad.write_text("vocab,size,dataset\n1,2,wiki\n")
    with pytest.raises(PovstimError, match="tokens or n_tokens"):
        fcli.read_tokenizer_study([bad])

    d = tmp_path / "results" / "filter" / "baby" / "50k"
    d.mkdir(parents=True)
    (d / "dpe.tsv").write_text("sent_id\tphenomenon\trule\ttokens\tsentence\ttargeted\n"
                               "3\tquestion_formation\tqf_rel\t3:who\tIs the boy who is smiling happy?\ttrue\n"
                               "8\tbinding\tbinding_2np\t5:himself\tThe girl said that the boy hurt himself.\ttrue\n"
                               "9\tbinding\tbinding_2np\t5:himself\tMary's dad likes himself.\tfalse\n")
    (d / "summary.json").write_text(json.dumps({"n_sentences": 100}))
    audit = fcli.read_filter_audit([("baby", "50k", d / "dpe.tsv")])
    row = audit[audit["rule"] == "binding_2np"].iloc[0]
    assert (row["corpus"], row["size"], row["n"], row["rate"]) == ("baby", "50k", 2, 0.02)
    # targeted removals are a part of the rule's own (1 of 2), not a strict rule's row of their own
    assert (row["n_targeted"], row["rate_targeted"]) == (1, 0.01) and len(audit) == 2
    filter_audit.draw(audit)
    (tmp_path / "dpe.tsv").write_text("sent_id\tphenomenon\trule\n")
    with pytest.raises(PovstimError, match="not a dpe.tsv"):
        fcli.read_filter_audit([("baby", "50k", tmp_path / "dpe.tsv")])


def test_figures_cli_needs_the_analysis(tmp_path, capsys):
    assert main(["figures", "--analysis-dir", str(tmp_path), "--out-dir", str(tmp_path / "f")]) == 1
    assert "run `povstim analyze` first" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.heavy  # every figure of a simulated experiment drawn by the CLI; the figures themselves: the tests above, test_figure_faults
def test_figures_cli_on_simulated_results(tmp_path):
    from test_analysis_helpers import simulated_results

    results = simulated_results()
    out = tmp_path / "figures"
    # three figures at a time, in forked processes; the fixture drew them one by one in this process
    rc = main(["figures", "--analysis-dir", str(results / "analysis"), "--out-dir", str(out),
               "--run-info", str(tmp_path / "run_info.html"), "--config", json.dumps({"experiment": "x"}),
               "--cores", "3"])
    assert rc == 0
    for stem in ("fig2_accuracy", "fig3_posterior", "learning_curves_posh", "learning_curves_posh_category"):
        _png_pdf(out, stem)
    made = json.loads((out / "figures.json").read_text())
    assert made["fig3_posterior"] == ["fig3_posterior.png", "fig3_posterior.pdf"]
    info = (tmp_path / "run_info.html").read_text()
    assert "bambi" in info and "experiment: x" in info
    # identical, file for file and byte for byte, to the figures the shared fixture drew from the same analysis
    files = sorted(f.name for f in (results / "figures").iterdir())
    assert sorted(f.name for f in out.iterdir()) == files and len(files) >= 9
    for f in files:
        assert (out / f).read_bytes() == (results / "figures" / f).read_bytes(), f


def _square(value):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(1, 1))
    ax.plot([0, 1], [0, value])
    return fig


def _fails(message):
    raise PovstimError(message)


def test_figures_drawn_at_once_keep_their_order_and_errors(tmp_path):
    from povstim.figures.draw import render

    style.apply()
    figures = [(f"f{i}", _square, (i,)) for i in range(4)]
    made = render(figures, tmp_path / "par", jobs=3)
    assert list(made) == ["f0", "f1", "f2", "f3"] and made["f2"] == ["f2.png", "f2.pdf"]
    assert render(figures, tmp_path / "seq", jobs=1) == made
    for stem, files in made.items():
        for f in files:
            assert (tmp_path / "par" / f).read_bytes() == (tmp_path / "seq" / f).read_bytes()
    # a figure that cannot be drawn stops the command with its own message, whichever process drew it
    with pytest.raises(PovstimError, match="no rows for f1"):
        render([("f0", _square, (0,)), ("f1", _fails, ("no rows for f1",))], tmp_path / "bad", jobs=2)


def test_fig2_leaves_no_empty_data_panel_for_a_category_a_suite_lacks():
    """Two suites with different categories share Fig. 2's columns: a (suite, category) pair without items is a
    blank panel saying so, not an empty axis drawn like data; the suite's name and the legend survive."""
    import pandas as pd

    from povstim.figures import plots

    rows = []
    for suite, cats in (("posh", ["Binding", "Question Formation"]), ("zorro", ["Agreement"])):
        for cat in cats + ["Overall"]:
            for cond in ("baby-f", "baby"):
                for seed in (1, 2):
                    rows.append({"suite": suite, "arch": "gpt2", "condition": cond, "size": "10k", "seed": seed,
                                 "level": "overall" if cat == "Overall" else "category", "category": cat,
                                 "accuracy": 0.6 + 0.01 * seed})
    fig = plots.fig2_accuracy(pd.DataFrame(rows))
    grid = np.array(fig.axes).reshape(2, 4)  # rows posh, zorro; columns Agreement, Binding, QF, Overall
    assert [ax.get_title() for ax in grid[0]] == ["Agreement", "Binding", "Question Formation", "Overall"]
    off = [[not ax.axison for ax in row] for row in grid]
    assert off == [[True, False, False, False], [False, True, True, False]]
    assert not grid[1][1].lines and "no Binding items\nin zorro" in [t.get_text() for t in grid[1][1].texts]
    assert "posh" in grid[0][1].get_ylabel() and "zorro" in grid[1][0].get_ylabel()
    assert len(fig.legends[0].get_texts()) == 2
