"""Experiment 3 analysis: the arch-level 'bias' predictor, the Exp. 3 table and Figures 4-5."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from povstim import cli
from povstim.analysis.models import bayes
from povstim.analysis.tables import exp3
from povstim.analysis.tables.tidy import SCORE_COLUMNS
from povstim.io import PovstimError

ARCHS = {"vanilla": "vanilla", "dyck": "dyck", "tpt": "tpt", "rec": "recency", "dyck-rec": "dyck+recency"}
PARADIGMS = {"island_wh": "Island", "island_adjunct": "Island", "principle_a_locality": "Binding",
             "wanna": "Wanna"}
N_ITEMS = 20
# items correct per (arch, seed, paradigm): a known design, so every table cell can be computed by hand
CORRECT = {(a, s, p): (5 + 3 * i + 2 * s + j) % (N_ITEMS + 1)
           for i, a in enumerate(ARCHS) for s in (1, 2) for j, p in enumerate(PARADIGMS)}


def write_scores(folder: Path) -> list[str]:
    paths = []
    for arch in ARCHS:
        for seed in (1, 2):
            rows = []
            for step, final in ((50, False), (100, True)):
                for par, cat in PARADIGMS.items():
                    k = CORRECT[(arch, seed, par)] if final else N_ITEMS // 2
                    for item in range(N_ITEMS):
                        ok = item < k
                        rows.append({"arch": arch, "condition": "baby-f", "size": "40k", "seed": seed, "step": step,
                                     "final": final, "suite": "posh", "paradigm": par, "category": cat,
                                     "item_id": f"{par}-{item}", "logp_good": -1.0 if ok else -2.0,
                                     "logp_bad": -1.5, "ntok_good": 3, "ntok_bad": 3, "correct": ok})
            path = folder / f"{arch}_{seed}.parquet"
            pd.DataFrame(rows, columns=SCORE_COLUMNS).to_parquet(path, index=False)
            paths.append(str(path))
    return paths


@pytest.fixture(scope="module")
def analysed(tmp_path_factory):
    d = tmp_path_factory.mktemp("exp3")
    scores = write_scores(d)
    meta = {a: {"bias": b} for a, b in ARCHS.items()}
    assert cli.main(["analyze", "--scores", *scores, "--conditions", json.dumps({"baby-f": {"source": "baby",
                     "filtered": True}}), "--archs", json.dumps(meta), "--no-model", "--out-dir", str(d / "analysis")
                     ]) == 0
    return d


def cell(values) -> str:
    """'mean (SD)' in % as POSH tables print it, computed here from the design."""
    v = 100 * np.asarray(values, dtype=float)
    return f"{v.mean():.1f} ({v.std(ddof=1):.1f})"


def test_exp3_table_is_accuracy_per_phenomenon_and_bias(analysed):
    t = pd.read_csv(analysed / "analysis" / "tables" / "exp3_posh.csv", dtype=str, keep_default_na=False)
    assert list(t.columns) == ["Category", "Phenomenon", "vanilla", "dyck", "tpt", "recency", "dyck+recency"]
    for arch, bias in ARCHS.items():
        for par, cat in PARADIGMS.items():
            row = t[(t["Category"] == cat) & (t["Phenomenon"] == par)]
            got = row[bias].iloc[0].replace("*", "").replace("\u2020", "")  # significance marks above/below
            expected = cell([CORRECT[(arch, s, par)] / N_ITEMS for s in (1, 2)])
            assert got == expected, (arch, par)
        # the category row is the mean of its paradigms per seed, then mean (SD) over seeds
        isl = [np.mean([CORRECT[(arch, s, p)] / N_ITEMS for p, c in PARADIGMS.items() if c == "Island"])
               for s in (1, 2)]
        got = t[(t["Category"] == "Island") & (t["Phenomenon"] == "(mean)")][bias].iloc[0]
        assert got.replace("*", "").replace("\u2020", "") == cell(isl)
    assert t["Category"].iloc[-1] == "Overall"
    md = (analysed / "analysis" / "tables" / "exp3_posh.md").read_text()
    assert "Experiment 3" in md and "2 seed(s)" in md


def test_bias_annotated_data_for_the_figures(analysed):
    acc = pd.read_csv(analysed / "analysis" / "tables" / "exp3_accuracy.csv")
    curves = pd.read_csv(analysed / "analysis" / "tables" / "exp3_curves.csv")
    assert dict(zip(acc["arch"], acc["bias"])) == ARCHS
    assert sorted(curves["step"].unique()) == [50, 100]


def test_figures_4_and_5_are_drawn(analysed):
    out = analysed / "figures"
    assert cli.main(["figures", "--analysis-dir", str(analysed / "analysis"), "--out-dir", str(out)]) == 0
    made = json.loads((out / "figures.json").read_text())
    for stem in ("fig4_biases", "fig5_biases"):
        assert made[stem] == [f"{stem}.png", f"{stem}.pdf"]
        assert (out / f"{stem}.png").stat().st_size > 10_000


def test_fig5_shows_island_and_binding_paradigms_per_bias(analysed):
    import matplotlib

    from povstim.figures.exp3 import fig5_biases

    acc = pd.read_csv(analysed / "analysis" / "tables" / "exp3_accuracy.csv", dtype={"size": str})
    fig = fig5_biases(acc)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["principle a locality", "island adjunct", "island wh"]  # Binding, then Island; no Wanna
    bars = [p for p in ax.patches if isinstance(p, matplotlib.patches.Rectangle)]
    heights = sorted(round(b.get_height(), 6) for b in bars)
    expected = sorted(round(100 * np.mean([CORRECT[(a, s, p)] / N_ITEMS for s in (1, 2)]), 6)
                      for a in ARCHS for p in ("principle_a_locality", "island_adjunct", "island_wh"))
    assert heights == expected


def test_bias_is_a_factor_of_the_bayesian_model(analysed):
    items = pd.read_parquet(analysed / "analysis" / "items.parquet")
    items = exp3.attach_archs(items[items["final"]], {a: {"bias": b} for a, b in ARCHS.items()})
    items["phenomenon"] = items["paradigm"]
    design = bayes.build_design(items, "category * bias + (1|seed) + (1|phenomenon)", family="binomial", zscore=True, contrasts="sum")
    expanded = design.expanded()
    # bias is a factor with the vanilla model as the last (reference) level, crossed with category
    assert "bias[dyck+recency]" in expanded and "category[Island]:bias[tpt]" in expanded
    assert "bias[vanilla]" not in expanded
    assert design.coding["bias"]["reference"] == "vanilla"


def test_unknown_arch_is_an_error():
    df = pd.DataFrame({"arch": ["a", "b"]})
    with pytest.raises(PovstimError, match="arch\\(s\\) b .* not in --archs"):
        exp3.attach_archs(df, {"a": {"bias": "vanilla"}})
