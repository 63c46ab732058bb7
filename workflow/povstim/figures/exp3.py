"""POSH Figures 4 and 5 (Experiment 3, inductive biases), drawn from ``analysis/tables/exp3_*.csv``.

fig4_biases   Fig. 4: top row, accuracy over training per POSH-BENCH category, one line per
              bias, shaded ± 1 SD over seeds, the plain model (bias 'vanilla') as a solid darker
              line; bottom row, each benchmark's overall accuracy (mean over its categories)
              over training.
fig5_biases   Fig. 5: final accuracy on the island and binding phenomena of every benchmark
              (paradigms whose POSH category is Island or Binding), one bar per bias, mean
              over seeds with the SD as error bars.

When the analysis holds several condition x size cells, each gets its own pair of figures
(``fig4_biases_{condition}_{size}``).
"""

from __future__ import annotations

import logging
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from . import style

log = logging.getLogger("povstim.figures")
OVERALL = "Overall"
NONE = "vanilla"
SELECTED = ("Island", "Binding")  # POSH Fig. 5: "selected PoS islands and binding phenomena"
ORDER = ["vanilla", "dyck", "tpt", "recency", "dyck+recency"]
LABELS = {"vanilla": "vanilla", "dyck": "Dyck", "tpt": "TPT", "recency": "recency", "dyck+recency": "Dyck + recency"}


def bias_order(labels) -> list[str]:
    labels = list(dict.fromkeys(str(x) for x in labels))
    return [b for b in ORDER if b in labels] + sorted(b for b in labels if b not in ORDER)


def bias_style(bias: str, order: list[str]) -> dict:
    if bias == NONE:  # the vanilla baseline: solid, darker, thicker (POSH Fig. 4)
        return {"color": "#000000", "marker": "o", "linestyle": "-", "linewidth": 2.0}
    others = [b for b in order if b != NONE]
    i = others.index(bias) + 1 if bias in others else 1
    return {"color": style.PALETTE[i % len(style.PALETTE)], "marker": style.MARKERS[i % len(style.MARKERS)],
            "linestyle": style.DASHES[i % len(style.DASHES)], "linewidth": 1.2}


def _label(bias: str) -> str:
    return LABELS.get(bias, bias)


def _sd(x) -> float:
    return float(np.std(x, ddof=1)) if len(x) > 1 else 0.0


def curve_levels(curves: pd.DataFrame) -> pd.DataFrame:
    """Per bias x seed x step: category accuracy (mean of paradigms) and Overall (mean of categories)."""
    keys = ["suite", "bias", "arch", "seed", "step"]
    cat = curves.groupby(keys + ["category"], sort=False)["accuracy"].mean().reset_index()
    ovr = cat.groupby(keys, sort=False)["accuracy"].mean().reset_index()
    ovr["category"] = OVERALL
    return pd.concat([cat, ovr], ignore_index=True)


def _mean_sd(df: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    g = df.groupby(keys, sort=False)["accuracy"]
    return g.agg(mean="mean", sd=_sd, n="size").reset_index()


def fig4_biases(curves: pd.DataFrame, main_suite: str | None = None):
    """curves: exp3_curves.csv of one condition x size."""
    d = curve_levels(curves)
    suites = sorted(d["suite"].unique())
    main = main_suite if main_suite in suites else ("posh" if "posh" in suites else suites[0])
    cats = sorted(c for c in d.loc[d["suite"] == main, "category"].unique() if c != OVERALL)
    ms = _mean_sd(d, ["suite", "bias", "step", "category"]).sort_values("step")
    order = bias_order(d["bias"])
    ncol = max(len(cats), len(suites))
    fig, axes = plt.subplots(2, ncol, figsize=(1.9 * ncol + 0.6, 4.0), squeeze=False, sharey=True)
    panels = [(0, i, main, c, c) for i, c in enumerate(cats)] + \
             [(1, i, s, OVERALL, f"{s}: overall") for i, s in enumerate(suites)]
    used = set()
    for r, c, suite, cat, title in panels:
        ax = axes[r][c]
        used.add((r, c))
        for bias in order:
            sub = ms[(ms["suite"] == suite) & (ms["category"] == cat) & (ms["bias"] == bias)]
            if sub.empty:
                continue
            st = bias_style(bias, order)
            # a suite scored at the final step only (scoring.checkpoints: false) is a marker, not a "curve"
            style.curve(ax, sub["step"], 100 * sub["mean"], 100 * sub["sd"], st, _label(bias), markersize=2.5,
                        band=0.12, linewidth=st["linewidth"], zorder=3 if bias == NONE else 2)
        ax.axhline(50, color="0.4", linestyle="--", linewidth=0.8)
        ax.set_ylim(0, 100)
        ax.set_title(title)
        ax.set_xlabel("training step")
        if c == 0:
            ax.set_ylabel(f"{main}: category\naccuracy (%)" if r == 0 else "benchmark overall\naccuracy (%)")
    for r in range(2):
        for c in range(ncol):
            if (r, c) not in used:
                axes[r][c].set_visible(False)
    fig.suptitle("Inductive biases: accuracy over training (mean ± SD over seeds)", fontsize=8)
    style.legend_below(fig, axes)
    return fig


def fig5_biases(acc: pd.DataFrame):
    """acc: exp3_accuracy.csv of one condition x size (final models)."""
    par = acc[(acc["level"] == "paradigm") & acc["category"].isin(SELECTED)]
    level_note = "island and binding phenomena"
    if par.empty:  # no overlapping phenomena: show every category instead
        par = acc[acc["level"] == "category"].copy()
        par["paradigm"] = par["category"]
        level_note = "categories"
    ms = _mean_sd(par, ["suite", "bias", "category", "paradigm"])
    suites = sorted(ms["suite"].unique())
    order = bias_order(ms["bias"])
    widths = [max(1, ms.loc[ms["suite"] == s, "paradigm"].nunique()) for s in suites]
    fig, axes = plt.subplots(1, len(suites), figsize=(0.9 * sum(widths) + 1.2 * len(suites) + 0.6, 3.0),
                             squeeze=False, sharey=True, gridspec_kw={"width_ratios": widths})
    width = 0.8 / max(1, len(order))
    for c, suite in enumerate(suites):
        ax = axes[0][c]
        sub = ms[ms["suite"] == suite]
        paradigms = [p for _, p in sorted({(cat, p) for cat, p in zip(sub["category"], sub["paradigm"])})]
        x = np.arange(len(paradigms))
        for k, bias in enumerate(order):
            b = sub[sub["bias"] == bias].set_index("paradigm").reindex(paradigms)
            st = bias_style(bias, order)
            ax.bar(x + (k - (len(order) - 1) / 2) * width, 100 * b["mean"], width, yerr=100 * b["sd"],
                   color=st["color"], edgecolor="black", linewidth=0.4, capsize=1.5, label=_label(bias),
                   error_kw={"linewidth": 0.6})
        ax.axhline(50, color="0.4", linestyle="--", linewidth=0.8)
        ax.set_xticks(x, [p.replace("_", " ") for p in paradigms], rotation=35, ha="right")
        ax.set_ylim(0, 100)
        ax.set_title(suite)
        if c == 0:
            ax.set_ylabel("accuracy (%)")
    h, lab = axes[0][0].get_legend_handles_labels()
    fig.legend(h, lab, loc="lower center", ncol=max(1, len(lab)), bbox_to_anchor=(0.5, -0.04), frameon=False)
    fig.suptitle(f"Inductive biases on {level_note} (final models, mean ± SD over seeds)", fontsize=8)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return fig


def split_shared(d: pd.DataFrame) -> pd.DataFrame:
    """Archs that share a bias (two vanilla archs, an ordered and a shuffled one) get a line or bar each,
    labelled 'bias: arch' as the Exp. 3 table's columns, instead of being averaged together."""
    shared = d.groupby("bias")["arch"].transform("nunique") > 1
    if not shared.any():
        return d
    d = d.copy()
    d["bias"] = d["bias"].where(~shared, d["bias"] + ": " + d["arch"].astype(str))
    return d


def plan(analysis_dir: str | Path) -> list[tuple]:
    """(stem, function, args) of Figures 4 and 5 (``povstim.figures.draw.plan``) when the analysis wrote the
    Exp. 3 tables; [] otherwise."""
    tdir = Path(analysis_dir) / "tables"
    curves_path, acc_path = tdir / "exp3_curves.csv", tdir / "exp3_accuracy.csv"
    if not (curves_path.exists() and acc_path.exists()):
        return []
    curves = pd.read_csv(curves_path, dtype={"size": str, "bias": str})
    acc = pd.read_csv(acc_path, dtype={"size": str, "bias": str})
    cells = sorted({(c, s) for c, s in zip(acc["condition"], acc["size"])})
    figures = []
    for cond, size in cells:
        suffix = "" if len(cells) == 1 else f"_{cond}_{size}"
        cur = split_shared(curves[(curves["condition"] == cond) & (curves["size"] == size)])
        fin = split_shared(acc[(acc["condition"] == cond) & (acc["size"] == size)])
        figures += [(f"fig4_biases{suffix}", fig4_biases, (cur,)), (f"fig5_biases{suffix}", fig5_biases, (fin,))]
    log.info("Experiment 3 figures: %s", ", ".join(stem for stem, _, _ in figures))
    return figures
