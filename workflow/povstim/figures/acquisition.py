"""Figures of the acquisition analysis (analysis/timing/acquisition.py): curves over words seen with the fitted sigmoids
and acquisition points, and the points per condition with their intervals (does filtering delay acquisition?).

acquisition_curves   one panel per paradigm (rows: arch x size): mean accuracy and words seen over seeds at each
                     checkpoint (log axis), the seeds' mean fitted sigmoid, the pooled acquisition point (a dotted
                     line; not acquired: a '>' at the budget)
acquisition_points   one row per paradigm: each condition's point with its interval, not acquired drawn as
                     '>' at the budget, acquired before the first checkpoint as '<' there; the title gives BABY-F
                     vs BABY's mean delay over acquired paradigms
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..analysis.timing.acquisition import fitted_curve
from ..analysis.timing.word_learning import per_word
from ..analysis.tables.tidy import size_words
from . import style


def _panels(d: pd.DataFrame) -> list[str]:
    return [p for _, p in sorted({(c, p) for c, p in zip(d["category"], d["paradigm"])})]


def _rows(d: pd.DataFrame) -> list[tuple[str, str]]:
    return sorted({(a, s) for a, s in zip(d["arch"], d["size"])}, key=lambda r: (r[0], size_words(r[1])))


def acquisition_curves(curves: pd.DataFrame, points: pd.DataFrame, summ: pd.DataFrame, suite: str):
    d = curves[(curves["suite"] == suite) & curves["words_seen"].notna() & (curves["words_seen"] > 0)].copy()
    d["size"] = d["size"].astype(str)
    panels, rows = _panels(d), _rows(d)
    conds = style.condition_order(d["condition"].unique())
    fig, axes = plt.subplots(len(rows), len(panels), figsize=(1.8 * len(panels) + 0.6, 1.7 * len(rows) + 0.8),
                             squeeze=False, sharey=True, sharex=True)
    # seeds reach a budget at slightly different words: average each checkpoint (its rank in the model's curve)
    d["rank"] = d.groupby(["arch", "size", "condition", "seed", "paradigm"])["words_seen"].rank(method="dense")
    mean = (d.groupby(["arch", "size", "condition", "paradigm", "rank"])[["words_seen", "accuracy"]].mean()
            .reset_index())
    pts = points[points["suite"] == suite].astype({"size": str})
    sm = summ[summ["suite"] == suite].astype({"size": str})
    lo, hi = math.log10(d["words_seen"].min()), math.log10(d["words_seen"].max())
    xs = np.linspace(lo, hi, 80)
    for r, (arch, size) in enumerate(rows):
        for c, par in enumerate(panels):
            ax = axes[r][c]
            for cond in conds:
                st = style.condition_style(cond, conds)
                sub = mean[(mean["arch"] == arch) & (mean["size"] == size) & (mean["condition"] == cond)
                           & (mean["paradigm"] == par)]
                if sub.empty:
                    continue
                ax.plot(sub["words_seen"], 100 * sub["accuracy"], linestyle="none", marker=st["marker"],
                        color=st["color"], markersize=3, label=style.label(cond))
                fits = pts[(pts["arch"] == arch) & (pts["size"] == size) & (pts["condition"] == cond)
                           & (pts["paradigm"] == par)]
                if not fits.empty:
                    ax.plot(10 ** xs, 100 * fitted_curve(fits, xs), color=st["color"], linestyle=st["linestyle"],
                            linewidth=1)
                row = sm[(sm["arch"] == arch) & (sm["size"] == size) & (sm["condition"] == cond)
                         & (sm["paradigm"] == par)]
                if row.empty:
                    continue
                row = row.iloc[0]
                if row["acquisition"] == "not_acquired":
                    ax.plot([row["budget_words"]], [3], marker=">", color=st["color"], markersize=5)
                else:
                    ax.axvline(row["point_words"], color=st["color"], linestyle=":", linewidth=0.9)
            ax.axhline(50, color="0.4", linestyle="--", linewidth=0.8)
            ax.set_xscale("log")
            ax.set_ylim(0, 100)
            if r == 0:
                ax.set_title(par.replace("_", " "))
            if c == 0:
                ax.set_ylabel(f"{arch} {size}\naccuracy (%)")
            if r == len(rows) - 1:
                ax.set_xlabel("words seen")
    fig.suptitle(style.wrapped_for(fig, f"{suite}: accuracy over words seen, fitted sigmoids, acquisition points "
                                        "(dotted; > = not acquired within the budget)", 8), fontsize=8)
    style.legend_below(fig, axes)
    return fig


def acquisition_points(summ: pd.DataFrame, contrasts: pd.DataFrame, suite: str):
    d = summ[summ["suite"] == suite].astype({"size": str})
    rows = _rows(d)
    conds = style.condition_order(d["condition"].unique())
    panels = _panels(d)
    fig, axes = plt.subplots(1, len(rows), figsize=(3.6 * len(rows) + 0.6, 0.32 * len(panels) + 1.4),
                             squeeze=False, sharey=True)
    for c, (arch, size) in enumerate(rows):
        ax = axes[0][c]
        for k, cond in enumerate(conds):
            st = style.condition_style(cond, conds)
            off = (k - (len(conds) - 1) / 2) * 0.18
            for y, par in enumerate(panels):
                row = d[(d["arch"] == arch) & (d["size"] == size) & (d["condition"] == cond) & (d["paradigm"] == par)]
                if row.empty:
                    continue
                row = row.iloc[0]
                lab = style.label(cond) if y == 0 else None
                if row["acquisition"] == "not_acquired":
                    ax.plot([math.log10(row["budget_words"])], [y + off], marker=">", color=st["color"],
                            linestyle="none", label=lab, markerfacecolor="none")
                elif row["acquisition"] == "before_first":
                    # the data end at the first checkpoint: a posterior point before it is the prior's extrapolation
                    ax.plot([math.log10(row["first_words"])], [y + off], marker="<", color=st["color"],
                            linestyle="none", label=lab, markerfacecolor="none")
                else:
                    ax.errorbar([row["log10_point"]], [y + off],
                                xerr=[[row["log10_point"] - row["log10_lo"]], [row["log10_hi"] - row["log10_point"]]],
                                marker=st["marker"], color=st["color"], linestyle="none", capsize=2, label=lab)
        ax.set_yticks(range(len(panels)))
        ax.set_yticklabels([p.replace("_", " ") for p in panels])
        ax.invert_yaxis()
        ax.set_xlabel("acquisition point, log10 words seen")
        title = f"{arch} {size}"
        con = contrasts[(contrasts["suite"] == suite) & (contrasts["arch"] == arch)
                        & (contrasts["size"].astype(str) == size) & (contrasts["level"] == "paradigm")] \
            if not contrasts.empty else contrasts
        if not con.empty:
            pair = con[(con["condition_a"] == conds[0]) & (con["condition_b"] == conds[1])] if len(conds) > 1 \
                else con.iloc[:0]
            if len(pair) and pair["delta"].notna().any():
                title += (f"\n{style.label(conds[0])} - {style.label(conds[1])}: mean delay "
                          f"{pair['delta'].mean():+.2f} decades over {int(pair['delta'].notna().sum())} paradigm(s)")
        ax.set_title(title, fontsize=7)
    fig.suptitle(style.wrapped_for(fig, f"{suite}: acquisition points per condition (over seeds, with their "
                                        "interval; > = not acquired within the budget, < = before the first "
                                        "checkpoint)", 8), fontsize=8)
    style.legend_below(fig, axes)
    return fig


def word_learning(points: pd.DataFrame, kids: pd.DataFrame | None = None):
    """Word learning for models: one panel per condition (rows: arch x size), each word's acquisition point
    (log10 words seen, the seeds' mean) against the children's age of first production (months) when the ages are
    there, else against the word's log10 frequency per million. A word not acquired within the budget is a '^' at
    the budget, one acquired before the first checkpoint a 'v' there; a word whose point is not identified has no
    point to draw: the panel lists it below its axis (analysis/timing/word_learning.py)."""
    d = per_word(points)
    d["size"] = d["size"].astype(str)
    ages = kids is not None and not kids.empty
    if ages:
        d = d.merge(kids[["word", "age_first_months"]], on="word", how="left")
        xcol, xlabel = "age_first_months", "children's age of first production (months)"
    else:
        d["log10_per_million"] = np.log10(d["per_million"].clip(lower=1e-9))
        xcol, xlabel = "log10_per_million", "log10 frequency per million words"
    rows = _rows(d)
    conds = style.condition_order(d["condition"].unique())
    fig, axes = plt.subplots(len(rows), len(conds), figsize=(2.5 * len(conds) + 0.6, 2.3 * len(rows) + 0.9),
                             squeeze=False, sharey=True, sharex=True)
    for r, (arch, size) in enumerate(rows):
        for c, cond in enumerate(conds):
            ax = axes[r][c]
            st = style.condition_style(cond, conds)
            sub = d[(d["arch"] == arch) & (d["size"] == size) & (d["condition"] == cond)]
            placed = sub[sub[xcol].notna()] if ages else sub
            got = placed[placed["acquisition"] == "acquired"]
            # filled circles for points, hollow triangles for bounds: a condition's own marker could be one of them
            ax.plot(got[xcol], got["log10_point"], linestyle="none", marker="o", color=st["color"],
                    markersize=3.5, label="acquired (seeds' mean)" if r == c == 0 else None)
            late = placed[placed["acquisition"] == "not_acquired"]
            ax.plot(late[xcol], np.log10(late["budget_words"]), linestyle="none", marker="^", color=st["color"],
                    markerfacecolor="none", markersize=4, label="not acquired (at the budget)" if r == c == 0 else None)
            early = placed[placed["acquisition"] == "before_first"]
            ax.plot(early[xcol], np.log10(early["first_words"]), linestyle="none", marker="v", color=st["color"],
                    markerfacecolor="none", markersize=4,
                    label="before the first checkpoint" if r == c == 0 else None)
            unid = sorted(sub.loc[sub["acquisition"] == "not_identified", "word"])
            counts = f"{len(got)} acquired, {len(late)} not, {len(early)} early"
            if ages:
                counts += f" ({len(sub) - len(placed)} not said by children)"
            title = f"{style.label(cond)}\n{counts}"
            if unid:  # in the title, not over the points: these words have no point to draw
                shown = ", ".join(unid[:4]) + (f" +{len(unid) - 4} more" if len(unid) > 4 else "")
                title += f"\nnot identified ({len(unid)}, no point): {shown}"
            ax.set_title(title, fontsize=6.5)
            if c == 0:
                ax.set_ylabel(f"{arch} {size}\nacquisition point,\nlog10 words seen")
            if r == len(rows) - 1:
                ax.set_xlabel(xlabel)
    fig.suptitle(style.wrapped_for(fig, "Word learning: each word's acquisition point (halfway between its "
                                        "unigram surprisal and the fitted floor)" + (
                                            "" if ages else "\nno children's ages (acquisition.childes): against "
                                            "frequency"), 7), fontsize=7)
    style.legend_below(fig, axes)
    return fig
