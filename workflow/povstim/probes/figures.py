"""MSGS-style figures from the tidy LBS rows (style: povstim.figures.style).

msgs_controls        MSGS Fig. 2: control-task MCC by pretraining size, one panel per feature
msgs_lbs_tasks       MSGS Fig. 4: LBS by pretraining size for every linguistic × surface pair,
                     coloured by inoculation rate, failed controls in grey
msgs_lbs_inoculation MSGS Fig. 3: LBS of all ambiguous tasks by pretraining size, one panel per
                     inoculation rate (failed controls left out)
msgs_learning_curves mean LBS over the checkpoints of each model (when checkpoints are probed)

The x axis is pretraining size (corpus words); conditions sit side by side at
each size, told apart by marker as in the other povstim figures.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..analysis.tables.tidy import size_words
from ..figures import style
from .msgs.features import DESCRIPTIONS, LINGUISTIC
from .msgs.surface import SURFACE

import matplotlib.pyplot as plt  # noqa: E402  (after style: Agg backend)

GREY = "#9a9a9a"


def _sizes(df) -> list[str]:
    return sorted(df["size"].astype(str).unique(), key=size_words)


def _inoc_color(rates: list[float], rate: float) -> str:
    return style.PALETTE[sorted(rates).index(rate) % len(style.PALETTE)]


def _jitter(n: int, width: float, key: int) -> np.ndarray:
    """Deterministic horizontal spread of n points (reruns draw identical figures)."""
    return np.random.default_rng(key).uniform(-width / 2, width / 2, n) if n else np.zeros(0)


def _x(sizes, conds, size, cond, n_inner=1, inner=0):
    """x position of (size, condition[, inner group]): sizes at integers, conditions side by side."""
    slot = 0.8 / max(1, len(conds))
    base = sizes.index(size) + (conds.index(cond) - (len(conds) - 1) / 2) * slot
    return base + (inner - (n_inner - 1) / 2) * slot / max(1, n_inner)


def _title(feature: str) -> str:
    return DESCRIPTIONS[feature][0]


def _legend_conditions(fig, conds, extra=()):
    handles = [plt.Line2D([], [], color="black", marker=style.condition_style(c, conds)["marker"], linestyle="",
                          label=style.label(c)) for c in conds]
    handles += list(extra)
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), bbox_to_anchor=(0.5, -0.01), frameon=False)


def msgs_controls(df: pd.DataFrame, threshold: float | None = None):
    d = df[(df["kind"] == "control") & df["final"]].copy()
    d["feature"] = d["linguistic"].fillna(d["surface"])
    feats = [f for f in SURFACE + LINGUISTIC if f in set(d["feature"])]
    sizes, conds = _sizes(d), style.condition_order(d["condition"].unique())
    ncol = min(5, len(feats))
    nrow = int(np.ceil(len(feats) / ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(1.9 * ncol + 0.4, 1.8 * nrow + 0.6), squeeze=False, sharey=True)
    for k, feat in enumerate(feats):
        ax = axes[k // ncol][k % ncol]
        for cond in conds:
            st = style.condition_style(cond, conds)
            for size in sizes:
                sub = d[(d["feature"] == feat) & (d["condition"] == cond) & (d["size"].astype(str) == size)]
                if sub.empty:
                    continue
                x = _x(sizes, conds, size, cond) + _jitter(len(sub), 0.1, k)
                ax.plot(x, sub["mcc"], linestyle="", marker=st["marker"], color=st["color"], alpha=0.8)
                ax.plot([x.mean()], [sub["mcc"].mean()], marker="_", markersize=10, color=st["color"])
        if threshold is not None:
            ax.axhline(threshold, color="0.4", linestyle=":", linewidth=0.8)
        ax.axhline(0, color="0.4", linestyle="--", linewidth=0.6)
        ax.set_title(f"{_title(feat)} ({'surface' if feat in SURFACE else 'linguistic'})")
        ax.set_xticks(range(len(sizes)), sizes)
        ax.set_ylim(-1.05, 1.05)
        if k % ncol == 0:
            ax.set_ylabel("control MCC (test)")
        if k + ncol >= len(feats):
            ax.set_xlabel("pretraining size (words)")
    for k in range(len(feats), nrow * ncol):
        axes[k // ncol][k % ncol].set_visible(False)
    _legend_conditions(fig, conds)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig


def msgs_lbs_tasks(df: pd.DataFrame):
    d = df[(df["kind"] == "ambiguous") & df["final"]].copy()
    lings = [f for f in LINGUISTIC if f in set(d["linguistic"])]
    surfs = [f for f in SURFACE if f in set(d["surface"])]
    sizes, conds = _sizes(d), style.condition_order(d["condition"].unique())
    rates = sorted(d["inoculation"].unique())
    fig, axes = plt.subplots(max(1, len(lings)), max(1, len(surfs)),
                             figsize=(1.8 * len(surfs) + 0.8, 1.6 * len(lings) + 0.9),
                             squeeze=False, sharex=True, sharey=True)
    for r, ling in enumerate(lings):
        for c, surf in enumerate(surfs):
            ax = axes[r][c]
            cell = d[(d["linguistic"] == ling) & (d["surface"] == surf)]
            for cond in conds:
                st = style.condition_style(cond, conds)
                for size in sizes:
                    for i, rate in enumerate(rates):
                        sub = cell[(cell["condition"] == cond) & (cell["size"].astype(str) == size)
                                   & (cell["inoculation"] == rate)]
                        if sub.empty:
                            continue
                        x = _x(sizes, conds, size, cond, len(rates), i) + _jitter(len(sub), 0.04, r * 31 + c)
                        ok = sub["status"] == "scored"
                        ax.plot(x[ok.to_numpy()], sub.loc[ok, "mcc"], linestyle="", marker=st["marker"],
                                color=_inoc_color(rates, rate), markersize=3.5)
                        ax.plot(x[~ok.to_numpy()], sub.loc[~ok, "mcc"], linestyle="", marker=st["marker"],
                                color=GREY, markersize=3.5, alpha=0.7)
            ax.axhline(0, color="0.4", linestyle="--", linewidth=0.6)
            ax.set_ylim(-1.05, 1.05)
            ax.set_xticks(range(len(sizes)), sizes)
            if r == 0:
                ax.set_title(_title(surf))
            if c == 0:
                ax.set_ylabel(f"{_title(ling)}\nLBS")
            if r == len(lings) - 1:
                ax.set_xlabel("pretraining size (words)")
    extra = [plt.Line2D([], [], color=_inoc_color(rates, rt), marker="o", linestyle="",
                        label=f"inoculation {100 * rt:g}%") for rt in rates]
    extra.append(plt.Line2D([], [], color=GREY, marker="o", linestyle="", label="failed control"))
    _legend_conditions(fig, conds, extra)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    return fig


def msgs_lbs_inoculation(df: pd.DataFrame):
    d = df[(df["kind"] == "ambiguous") & df["final"] & (df["status"] == "scored")].copy()
    all_amb = df[(df["kind"] == "ambiguous") & df["final"]]
    rates = sorted(all_amb["inoculation"].unique())
    sizes, conds = _sizes(all_amb), style.condition_order(all_amb["condition"].unique())
    fig, axes = plt.subplots(1, max(1, len(rates)), figsize=(2.0 * len(rates) + 0.6, 2.4), squeeze=False,
                             sharey=True)
    for k, rate in enumerate(rates):
        ax = axes[0][k]
        for cond in conds:
            st = style.condition_style(cond, conds)
            for size in sizes:
                sub = d[(d["inoculation"] == rate) & (d["condition"] == cond) & (d["size"].astype(str) == size)]
                if sub.empty:
                    continue
                x = _x(sizes, conds, size, cond) + _jitter(len(sub), 0.12, k)
                ax.plot(x, sub["lbs"], linestyle="", marker=st["marker"], color=st["color"], alpha=0.35,
                        markersize=3)
                ax.plot([x.mean()], [sub["lbs"].mean()], marker="_", markersize=12, color=st["color"],
                        markeredgewidth=2)
        ax.axhline(0, color="0.4", linestyle="--", linewidth=0.6)
        ax.set_ylim(-1.05, 1.05)
        ax.set_xticks(range(len(sizes)), sizes)
        ax.set_title(f"inoculation rate {100 * rate:g}%")
        if k == 0:
            ax.set_ylabel("LBS (all ambiguous tasks)")
        ax.set_xlabel("pretraining size (words)")
    _legend_conditions(fig, conds)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    return fig


def msgs_learning_curves(df: pd.DataFrame):
    """Mean LBS over scored ambiguous runs by checkpoint step; None when no checkpoint was probed."""
    d = df[(df["kind"] == "ambiguous") & (df["status"] == "scored")]
    if df[~df["final"]].empty or d.empty:
        return None
    rates = sorted(df.loc[df["kind"] == "ambiguous", "inoculation"].unique())
    conds = style.condition_order(d["condition"].unique())
    sizes = _sizes(d)
    fig, axes = plt.subplots(len(sizes), max(1, len(rates)), figsize=(2.0 * len(rates) + 0.6, 1.7 * len(sizes) + 0.6),
                             squeeze=False, sharey=True, sharex=True)
    curve = d.groupby(["condition", "size", "inoculation", "step"])["lbs"].mean().reset_index()
    for r, size in enumerate(sizes):
        for k, rate in enumerate(rates):
            ax = axes[r][k]
            for cond in conds:
                sub = curve[(curve["condition"] == cond) & (curve["size"].astype(str) == size)
                            & (curve["inoculation"] == rate)].sort_values("step")
                if sub.empty:
                    continue
                st = style.condition_style(cond, conds)
                ax.plot(sub["step"], sub["lbs"], color=st["color"], marker=st["marker"], linestyle=st["linestyle"],
                        label=style.label(cond), markersize=3)
            ax.axhline(0, color="0.4", linestyle="--", linewidth=0.6)
            ax.set_ylim(-1.05, 1.05)
            if r == 0:
                ax.set_title(f"inoculation rate {100 * rate:g}%")
            if k == 0:
                ax.set_ylabel(f"{size}\nmean LBS")
            if r == len(sizes) - 1:
                ax.set_xlabel("pretraining step")
    _legend_conditions(fig, conds)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig


def draw_all(df: pd.DataFrame, out_dir, threshold: float | None = None) -> list[str]:
    """Write every figure that has data to ``out_dir`` (PNG + PDF); return the stems written."""
    style.apply()
    written = []
    makers = [("msgs_controls", lambda: msgs_controls(df, threshold)), ("msgs_lbs_tasks", lambda: msgs_lbs_tasks(df)),
              ("msgs_lbs_inoculation", lambda: msgs_lbs_inoculation(df)),
              ("msgs_learning_curves", lambda: msgs_learning_curves(df))]
    for stem, make in makers:
        if stem != "msgs_controls" and df[df["kind"] == "ambiguous"].empty:
            continue
        if stem == "msgs_controls" and df[df["kind"] == "control"].empty:
            continue
        fig = make()
        if fig is None:
            continue
        style.save(fig, out_dir, stem)
        written.append(stem)
    return written
