"""The Δ-accuracy figure of filtered training (analysis/models/construction_delta.py): FiCT's question per construction.

One row per filtered condition (its constructions; with several archs or sizes, one row each): Δ accuracy
(filtered - full, percentage points) on the constructions' target paradigms and on the control paradigms,
posterior medians with 95% intervals, and a zero line. A row whose fit did not converge is labelled so.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from . import style

KINDS = (("target", "target paradigms", 0), ("control", "control (other paradigms)", 1))


def _label(r, multi: bool) -> str:
    text = r["constructions"]
    if multi:
        text += f" · {r['arch']} {r['size']}"
    if not r["converged"]:
        text += " (not converged)"
    return text


def delta_figure(table: pd.DataFrame, suite: str):
    """The figure of one suite's rows of the Δ table."""
    d = table[table["suite"] == suite].reset_index(drop=True)
    multi = d[["arch", "size"]].drop_duplicates().shape[0] > 1
    fig, ax = plt.subplots(figsize=(5.2, 0.42 * len(d) + 1.2))
    offset = 0.14
    for kind, name, i in KINDS:
        ys = [len(d) - 1 - k + (offset if i == 0 else -offset) for k in range(len(d))]
        mid = 100 * d[f"delta_{kind}"]
        err = [mid - 100 * d[f"delta_{kind}_lower"], 100 * d[f"delta_{kind}_upper"] - mid]
        ax.errorbar(mid, ys, xerr=err, fmt=style.MARKERS[i], color=style.PALETTE[i + 1], capsize=2,
                    markerfacecolor=style.PALETTE[i + 1] if i == 0 else "white", label=name)
    ax.axvline(0, color="#555555", linewidth=0.8)
    ax.set_yticks(range(len(d)))
    ax.set_yticklabels([_label(r, multi) for _, r in d.iloc[::-1].iterrows()])
    ax.set_xlabel("Δ accuracy, filtered − full (percentage points; 95% CrI)")
    ax.set_title(f"{suite}: does removing a construction cost more on its own paradigms?")
    # below the axis, not inside it: loc="best" put it over the last row's interval in the constructions demo's figure
    style.legend_below(fig, np.array([ax]))
    return fig
