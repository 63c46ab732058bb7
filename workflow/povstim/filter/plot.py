"""The filter-validation figure: recall and precision per mode and phenomenon against gold-tree decisions."""

from __future__ import annotations

from pathlib import Path

from ..io import atomic_path


def validation_figure(result: dict):
    """Grouped bars (recall, precision) per mode, one panel per phenomenon; the floors as lines.

    The figure's title says, in red, when the configured mode is below a floor.
    """
    import matplotlib.pyplot as plt
    import numpy as np

    # deferred: matplotlib, only when the figure is drawn
    from ..figures import style

    style.apply()
    phens = result["rules"]
    modes = list(result["modes"])
    fl = result["floor"]
    labelled = "labels" in result  # measured against hand labels (filter/labelled.py), not gold trees
    fig, axes = plt.subplots(1, len(phens), figsize=(2.2 + 1.0 * len(modes) * len(phens), 2.8), squeeze=False,
                             sharey=True)
    x = np.arange(len(modes))
    width = 0.38
    for c, phen in enumerate(phens):
        ax = axes[0][c]
        for k, (what, hatch) in enumerate((("recall", ""), ("precision", "//"))):
            vals = []
            for mode in modes:
                v = result["modes"][mode]["per_phenomenon"][phen]["cross_validated"]["reference"][what]
                vals.append(np.nan if v is None else v)
            bars = ax.bar(x + (k - 0.5) * width, vals, width, label=what, color=style.PALETTE[1 + k],
                          edgecolor="black", linewidth=0.5, hatch=hatch)
            for b, v in zip(bars, vals):
                if not np.isnan(v):
                    ax.annotate(f"{v:.2f}", (b.get_x() + b.get_width() / 2, v), ha="center", va="bottom",
                                fontsize=6, xytext=(0, 1), textcoords="offset points")
        ax.axhline(fl["recall_floor"], color="#D55E00", linestyle="--", linewidth=0.9,
                   label=f"recall floor {fl['recall_floor']}")
        pf = fl["precision_floor"].get(phen, 0.0) if isinstance(fl["precision_floor"], dict) else fl["precision_floor"]
        if pf:
            ax.axhline(pf, color="#D55E00", linestyle=":", linewidth=0.9, label=f"precision floor {pf}")
        labels = [f"{m}{' *' if m == fl['mode'] else ''}" for m in modes]
        ax.set_xticks(x, labels)
        ax.set_ylim(0, 1.12)
        n_ref = result["reference_positives"][phen]
        ax.set_title(f"{phen.replace('_', ' ')} ({n_ref} {'labelled' if labelled else 'reference'} positives)")
        if c == 0:
            ax.set_ylabel("vs the hand labels" if labelled else
                          f"cross-validated, vs {result['reference']} rules on gold trees")
    axes[0][0].legend(frameon=False, loc="upper left", fontsize=6)
    if labelled:
        head = (f"DPE filter on {result['parser']} parses of {result['n_sentences']} hand-labelled sentences, "
                f"{result['sample']} (* = filter.mode)")
    else:
        head = (f"DPE filter on {result['parser']} parses of {result['n_sentences']} gold-tree sentences, "
                f"{result['cv']['folds']}-fold cross-validated by transcript (* = filter.mode)")
    if fl["ok"]:
        fig.suptitle(head, fontsize=8)
    else:
        below = ", ".join(f"{b['phenomenon']} {b['measure']} {b['value']:.2f}" for b in fl["below"])
        fig.suptitle(f"{head}\nBELOW THE FLOOR ({fl['mode']} mode): {below}", fontsize=8, color="#D55E00")
    fig.tight_layout()
    return fig


def save_png(fig, path: str | Path) -> None:
    """One PNG, atomically and without a timestamp (byte-identical reruns)."""
    import matplotlib.pyplot as plt

    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", metadata={"Software": None})
    plt.close(fig)
