"""The filter-audit figure: the DPE sentences the filter removed per corpus x size and rule, and of those the
targeted ones.

A targeted removal is one the phenomenon's strict rule also flags (``dpe.tsv``'s ``targeted`` column): the
disambiguating evidence BABY may put back. It is a *subset* of the removals of the configured mode's rule, not
an extra removal, so each bar's height is everything the rule removed and a darker, hatched bar inside it (from
0) is the targeted part ("of which targeted"). Tick labels are the phenomena (with the rule when a phenomenon
has several), wrapped, and each group is wide enough for its label; the legend sits below the panels.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pandas as pd

from ..dpe import audit
from ..io import PovstimError

COLUMNS = ["corpus", "size", "phenomenon", "rule", "n", "n_targeted", "rate", "rate_targeted"]
LABEL_CHARS = 14  # tick labels are wrapped at this many characters
GROUP_INCHES = 1.15  # width of one phenomenon's group: a wrapped label of LABEL_CHARS at 7 pt fits in it


def read_filter_audit(audits) -> pd.DataFrame:
    """Per corpus x size x phenomenon x rule (from (corpus, size, dpe.tsv) triples): ``n`` sentences the rule
    removed, ``n_targeted`` of them targeted, and both as a share of the corpus's sentences (the filter's
    summary.json beside dpe.tsv; blank when it is missing)."""
    rows = []
    for corpus, size, path in audits:
        path = Path(path)
        total = _sentence_total(path.with_name("summary.json"))
        removed: dict[tuple[str, str], set[int]] = {}
        targeted: dict[tuple[str, str], set[int]] = {}
        for r in audit.read(path):
            removed.setdefault((r.phenomenon, r.rule), set()).add(r.sent_id)
            if r.targeted:
                targeted.setdefault((r.phenomenon, r.rule), set()).add(r.sent_id)
        for (phen, rule), ids in sorted(removed.items()):
            n_t = len(targeted.get((phen, rule), ()))
            rows.append({"corpus": corpus, "size": size, "phenomenon": phen, "rule": rule, "n": len(ids),
                         "n_targeted": n_t, "rate": len(ids) / total if total else None,
                         "rate_targeted": n_t / total if total else None})
    return pd.DataFrame(rows, columns=COLUMNS)


def _sentence_total(path: Path):
    """The corpus's sentence count from the filter's summary.json, if there is one."""
    if not path.exists():
        return None
    try:
        obj = json.loads(path.read_text())
    except json.JSONDecodeError:
        raise PovstimError(f"{path}: not JSON") from None
    v = obj.get("n_sentences") if isinstance(obj, dict) else None
    return float(v) if isinstance(v, (int, float)) and v > 0 else None


def group_labels(audit_df: pd.DataFrame) -> list[tuple[tuple[str, str], str]]:
    """((phenomenon, rule), wrapped tick label) per bar group, sorted: the phenomenon, and the rule too when
    the phenomenon has several rules in the data."""
    groups = sorted({(p, r) for p, r in zip(audit_df["phenomenon"], audit_df["rule"])})
    n_rules = pd.Series([p for p, _ in groups]).value_counts()
    out = []
    for phen, rule in groups:
        label = textwrap.fill(phen.replace("_", " "), LABEL_CHARS)
        if n_rules[phen] > 1:
            label += "\n" + _wrap_name(f"({rule})")
        out.append(((phen, rule), label))
    return out


def _wrap_name(name: str) -> str:
    """A rule name wrapped after its underscores (``wanna_posh_`` / ``contraction``), at LABEL_CHARS a line."""
    lines = [""]
    for piece in name.replace("_", "_\0").split("\0"):
        if lines[-1] and len(lines[-1]) + len(piece) > LABEL_CHARS:
            lines.append("")
        lines[-1] += piece
    return "\n".join(lines)


def bar_style(colour: str, kind: str) -> dict:
    """How a size's bars look: everything the rule removed pale, the targeted part inside it solid and hatched."""
    if kind == "removed":
        return {"color": colour, "alpha": 0.3, "edgecolor": "black", "linewidth": 0.5}
    return {"color": colour, "edgecolor": "black", "linewidth": 0.5, "hatch": "//"}


def draw(audit_df: pd.DataFrame):
    """One panel per corpus: per rule group a bar per size (removed) with the targeted part inside it."""
    # deferred: the figures command reads the audit table (and `--index` runs) without matplotlib
    import matplotlib.pyplot as plt
    import numpy as np

    from ..analysis.tables.tidy import size_words
    from . import style

    corpora = sorted(audit_df["corpus"].unique())
    groups = group_labels(audit_df)
    sizes = sorted(audit_df["size"].astype(str).unique(), key=size_words)
    use_rate = audit_df["rate"].notna().all()
    panel_w = max(2.4, GROUP_INCHES * len(groups) + 0.9)
    fig, axes = plt.subplots(1, len(corpora), figsize=(panel_w * len(corpora), 3.0), squeeze=False)
    x = np.arange(len(groups))
    keys: dict[tuple[str, str], object] = {}  # (size, removed | targeted) -> its first bar container
    for c, corpus in enumerate(corpora):
        ax = axes[0][c]
        sub = audit_df[audit_df["corpus"] == corpus]
        here = [size for size in sizes if size in set(sub["size"].astype(str))]  # colours stay the same across
        width = 0.8 / len(here)  # panels, slots are only the sizes this corpus has
        for j, size in enumerate(here):
            k = sizes.index(size)
            s = sub[sub["size"].astype(str) == size].set_index(["phenomenon", "rule"])
            col = ("rate", "rate_targeted") if use_rate else ("n", "n_targeted")
            scale = 100.0 if use_rate else 1.0
            total = [scale * float(s.loc[g, col[0]]) if g in s.index else 0.0 for g, _ in groups]
            part = [scale * float(s.loc[g, col[1]]) if g in s.index else 0.0 for g, _ in groups]
            pos = x + (j - (len(here) - 1) / 2) * width
            colour = style.PALETTE[k % len(style.PALETTE)]
            bars = (ax.bar(pos, total, width, gid="removed", **bar_style(colour, "removed")),
                    ax.bar(pos, part, width * 0.6, gid="targeted", **bar_style(colour, "targeted")))
            for kind, container in zip(("removed", "targeted"), bars):
                keys.setdefault((size, kind), container)
        ax.set_xticks(x, [label for _, label in groups])
        ax.set_xlim(-0.6, len(groups) - 0.4)
        ax.set_ylabel("% of sentences removed" if use_rate else "sentences removed")
        ax.set_title(corpus)
    # the legend's keys are the bars themselves (the first drawn of each size and kind), so each entry looks
    # exactly like the bars it names: a size's pale bar "removed by the rule", its hatched inner bar "of which
    # targeted" (solid and grey keys matched no bar); a column per size
    handles, labels = [], []
    for size in sizes:
        for kind, what in (("removed", "removed by the rule"), ("targeted", "of which targeted")):
            if (size, kind) in keys:
                handles.append(keys[(size, kind)])
                labels.append(f"{size}: {what}")
    legend = fig.legend(handles, labels, loc="lower center", ncol=max(1, len(sizes)), frameon=False,
                        bbox_to_anchor=(0.5, 0.0))
    _fit(fig, legend, len(groups))
    return fig


def _fit(fig, legend, n_groups: int, gap: float = 1.15) -> None:
    """Lay the figure out so that nothing overlaps: the panels sit above the legend, the figure is at least as
    wide as the legend, and every group is ``gap`` times as wide as its widest tick label. Text widths depend
    on the font the style sets, so they are measured, not guessed."""
    for _ in range(4):  # a resize changes tight_layout's margins a little; the passes settle it
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        w, h = fig.get_size_inches()
        box = legend.get_window_extent(renderer)
        fig.tight_layout(rect=(0, (box.height + 6) / (h * fig.dpi), 1, 1))
        fig.canvas.draw()
        widest = max((t.get_window_extent(renderer).width for ax in fig.axes for t in ax.get_xticklabels()),
                     default=0.0)
        have = min(ax.get_window_extent(renderer).width for ax in fig.axes) / n_groups
        grow = max((widest * gap - have) * n_groups * len(fig.axes), box.width + 12 - w * fig.dpi, 0.0)
        if grow <= 0:
            return
        fig.set_size_inches(w + grow / fig.dpi + 0.05, h)
    fig.tight_layout(rect=(0, (legend.get_window_extent(fig.canvas.get_renderer()).height + 6)
                           / (fig.get_size_inches()[1] * fig.dpi), 1, 1))
