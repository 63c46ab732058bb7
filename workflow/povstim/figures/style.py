"""One figure style for every povstim figure: small, serif-free, readable in greyscale.

Conditions are told apart by marker and line style as well as by colour, so a greyscale
print keeps them distinct. Saving strips timestamps so reruns give identical files.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from ..conditions.order import KNOWN_CONDITIONS, condition_order  # noqa: E402,F401 (figures call style.condition_order)
from ..io import atomic_path  # noqa: E402

# Colour-blind safe (Okabe-Ito) colours with distinct luminance, plus redundant markers/dashes.
PALETTE = ["#000000", "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
DASHES = ["-", "--", ":", "-.", (0, (5, 1, 1, 1)), (0, (1, 1)), (0, (3, 1)), (0, (6, 2))]
# Fixed styles for the paper's condition names so BABY-F looks the same in every figure.
KNOWN = KNOWN_CONDITIONS

RC = {
    "font.size": 8,
    "axes.titlesize": 8,
    "axes.labelsize": 8,
    "legend.fontsize": 7,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "#dddddd",
    "grid.linewidth": 0.5,
    "lines.linewidth": 1.2,
    "lines.markersize": 4,
    "savefig.dpi": 150,
    "savefig.bbox": "tight",
    "pdf.fonttype": 42,
    "svg.hashsalt": "povstim",
}


def apply() -> None:
    plt.rcParams.update(RC)


def condition_style(condition: str, order: list[str]) -> dict:
    i = order.index(condition) if condition in order else 0
    if condition in KNOWN:
        i = KNOWN.index(condition)
    elif condition in order:
        i = len(KNOWN) + [c for c in order if c not in KNOWN].index(condition)
    return {"color": PALETTE[i % len(PALETTE)], "marker": MARKERS[i % len(MARKERS)],
            "linestyle": DASHES[i % len(DASHES)]}


def label(condition: str) -> str:
    return condition.upper()


def save(fig, out_dir: str | os.PathLike, stem: str) -> list[Path]:
    """Write stem.png and stem.pdf atomically, without timestamps."""
    out = []
    for ext, meta in (("png", {"Software": None}), ("pdf", {"CreationDate": None, "ModDate": None,
                                                            "Producer": None, "Creator": None})):
        path = Path(out_dir) / f"{stem}.{ext}"
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=ext, metadata=meta)
        out.append(path)
    plt.close(fig)
    return out


def _entries(axes) -> tuple[list, list]:
    handles, labels = [], []
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    return handles, labels


def fitted_legend(fig, handles, labels, y: float = 0.0):
    """A legend below the panels in as many columns as fit the figure's width: one row when they fit, more rows
    when not (a one-row legend of 10 entries was twice the children figure's width)."""
    n = max(1, len(labels))
    for ncol in range(n, 0, -1):
        legend = fig.legend(handles, labels, loc="lower center", ncol=ncol, bbox_to_anchor=(0.5, y), frameon=False)
        fig.canvas.draw()
        if ncol == 1 or legend.get_window_extent(fig.canvas.get_renderer()).width <= fig.bbox.width * 0.98:
            return legend
        legend.remove()
    return legend


def legend_below(fig, axes, top: float = 1.0):
    """The shared legend at the figure's foot and the panels laid out above it, however many rows it takes (its
    height is measured, so it never covers a panel or its axis labels)."""
    legend = fitted_legend(fig, *_entries(axes), y=0.0)
    for _ in range(2):  # tight_layout moves the panels, not the legend; a second pass settles its margins
        fig.canvas.draw()
        h = legend.get_window_extent(fig.canvas.get_renderer()).height
        fig.tight_layout(rect=(0, min(0.6, (h + 4) / fig.bbox.height), 1, top))
    return legend


# A 1.7-inch panel holds about 22 characters of an 8-pt title; longer ones (BLiMP's paradigm names) are wrapped so
# that neighbouring titles never run into each other
TITLE_CHARS = 20


def panel_title(name: str, chars: int = TITLE_CHARS) -> str:
    """A paradigm's or category's name as a panel title: underscores as spaces, wrapped at ``chars`` characters."""
    return textwrap.fill(name.replace("_", " "), chars, break_long_words=False)


def curve(ax, x, y, sd, st: dict, label: str, markersize: float = 3, band: float = 0.15, **line) -> bool:
    """A condition's curve over training with its ± SD band; one point is drawn as a marker alone (no line, no
    band: one checkpoint is not a curve). True when it was a single point. ``line``: more keywords of
    the line (linewidth, zorder)."""
    import numpy as np

    x, y, sd = (np.asarray(v, float) for v in (x, y, sd))
    single = len(x) < 2
    ax.plot(x, y, color=st["color"], marker=st["marker"], linestyle="none" if single else st["linestyle"],
            label=label, markersize=markersize + (1.5 if single else 0), **line)
    if single:
        ax.errorbar(x, y, yerr=sd, color=st["color"], linestyle="none", capsize=2, linewidth=0.8)
    else:
        ax.fill_between(x, y - sd, y + sd, color=st["color"], alpha=band, linewidth=0)
    return single


def wrapped_for(fig, text: str, fontsize: float) -> str:
    """``text`` wrapped to the figure's width (each line about its characters at ``fontsize``): a suptitle wider
    than the figure is cut off at both sides when saved."""
    chars = max(20, int(fig.get_size_inches()[0] * 72 / (0.56 * fontsize)))
    return "\n".join(textwrap.fill(line, chars, break_long_words=False) for line in text.split("\n"))
