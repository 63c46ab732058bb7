"""The paper's figures, each a function from tidy tables to a matplotlib Figure.

fig2_accuracy       POSH Fig. 2: category accuracy by training size and condition (mean ± SD
                    over seeds, chance line), one row of panels per benchmark suite
fig3_posterior      POSH Fig. 3: posterior medians with 95% intervals per coefficient
fig1_children       POSH Fig. 1: children's accuracy (Table 7) beside model accuracy at matched input sizes
learning_curves     accuracy vs training step, or words seen (training.checkpoint_words) (BabyBERTa Fig. 2, POSH Fig. 4 top)
tokenizer_study     POSH Table 9: corpus token count per vocab size and dataset
(the filter-audit figure is filter_audit.py's)
"""

from __future__ import annotations

import math

import matplotlib
import matplotlib.pyplot as plt
from matplotlib.ticker import MaxNLocator
import numpy as np
import pandas as pd

from ..analysis import archs as arch_factors
from ..analysis.tables.tidy import size_words
from ..io import load_yaml
from . import style

OVERALL = "Overall"


def _sizes(df):
    return sorted(df["size"].astype(str).unique(), key=size_words)


def _mean_sd(df: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    g = df.groupby(keys, sort=False)["accuracy"]
    out = g.agg(mean="mean", n="size").reset_index()
    sd = g.agg(lambda x: float(np.std(x, ddof=1)) if len(x) > 1 else 0.0).rename("sd").reset_index()
    return out.merge(sd, on=keys)


def arch_rows(d: pd.DataFrame) -> list:
    """The archs to draw in rows of their own (several archs, or ordered and shuffled ones, are never averaged
    together: analysis/archs.py), with their labels; [(None, "")] when the data hold one arch."""
    if "arch" not in d.columns:
        return [(None, "")]
    labels = arch_factors.figure_labels(d)
    return [(a, lab) for a, lab in labels.items()] if len(labels) > 1 else [(None, "")]


def fig2_accuracy(acc: pd.DataFrame):
    """acc: analysis/accuracy.csv. Panels: rows = suites (x archs, when several), columns = categories + Overall."""
    d = acc[acc["level"].isin(["category", "overall"])].copy()
    d["size"] = d["size"].astype(str)
    suites = sorted(d["suite"].unique())
    cats = sorted(c for c in d["category"].unique() if c != OVERALL) + [OVERALL]
    conds = style.condition_order(d["condition"].unique())
    sizes = _sizes(d)
    ms = _mean_sd(d, ["suite", "arch", "condition", "size", "category"])
    rows = [(suite, arch, lab) for suite in suites for arch, lab in arch_rows(d)
            if arch is None or ((d["suite"] == suite) & (d["arch"] == arch)).any()]
    fig, axes = plt.subplots(len(rows), len(cats), figsize=(1.9 * len(cats) + 0.6, 1.8 * len(rows) + 0.5),
                             squeeze=False, sharey=True)
    x = np.arange(len(sizes))
    width = 0.8 / max(1, len(conds))
    for r, (suite, arch, arch_label) in enumerate(rows):
        labelled = False
        for c, cat in enumerate(cats):
            ax = axes[r][c]
            if r == 0:
                ax.set_title(cat)
            if not ((d["suite"] == suite) & (d["category"] == cat)).any():
                # a suite without this category (suites share the columns): no empty axes drawn as data
                ax.set_axis_off()
                ax.text(0.5, 0.5, f"no {cat} items\nin {suite}", ha="center", va="center", fontsize=7,
                        color="0.5", transform=ax.transAxes)
                continue
            for k, cond in enumerate(conds):
                sub = ms[(ms["suite"] == suite) & (ms["category"] == cat) & (ms["condition"] == cond)]
                if arch is not None:
                    sub = sub[sub["arch"] == arch]
                sub = sub.set_index("size").reindex(sizes)
                st = style.condition_style(cond, conds)
                off = (k - (len(conds) - 1) / 2) * width * 0.6
                # one training size: a point with its SD, no line through it (one point is not a curve)
                ax.errorbar(x + off, 100 * sub["mean"], yerr=100 * sub["sd"], label=style.label(cond),
                            color=st["color"], marker=st["marker"],
                            linestyle=st["linestyle"] if len(sizes) > 1 else "none", capsize=2)
            chance = 0.5
            if "chance" in d.columns:  # other task kinds (tidy.with_chance): 1/k, or none for completion
                chance = d[(d["suite"] == suite) & (d["category"] == cat)]["chance"].mean()
            if chance == chance:  # not NaN
                ax.axhline(100 * chance, color="0.4", linestyle="--", linewidth=0.8)
            ax.set_xticks(x, sizes)
            ax.set_ylim(0, 100)
            if not labelled:  # the row's first drawn panel names the suite
                labelled = True
                ax.set_ylabel(f"{suite}{chr(10) + arch_label if arch_label else ''}\naccuracy (%)")
            if r == len(rows) - 1:
                ax.set_xlabel("training size (words)")
    handles, labels = next((h for h in (a.get_legend_handles_labels() for a in axes.flat) if h[0]), ([], []))
    fig.legend(handles, labels, loc="lower center", ncol=len(conds), bbox_to_anchor=(0.5, -0.02), frameon=False)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    return fig


def fig3_posterior(summary: pd.DataFrame, problems: list[str] | None = None):
    """summary: bayes/summary.csv. Group-level SDs are drawn in a separate panel."""
    s = summary.copy()
    if "label" not in s.columns:
        s["label"] = s["term"]
    fixed = s[~s["term"].str.startswith("sd(") & (s["term"] != "Intercept")]
    sds = s[s["term"].str.startswith("sd(")]
    n1, n2 = max(len(fixed), 1), max(len(sds), 0)
    ratios = [n1] + ([max(n2, 1)] if n2 else [])
    fig, axes = plt.subplots(len(ratios), 1, figsize=(4.6, 0.28 * (n1 + n2) + 1.2),
                             gridspec_kw={"height_ratios": ratios}, squeeze=False)
    for ax, part, title in zip(axes[:, 0], [fixed, sds], ["fixed effects (log-odds)", "group-level SD"]):
        y = np.arange(len(part))[::-1]
        ax.errorbar(part["median"], y, xerr=[part["median"] - part["lower"], part["upper"] - part["median"]],
                    fmt="o", color="black", capsize=2, markersize=4)
        ax.axvline(0, color="0.4", linestyle="--", linewidth=0.8)
        ax.set_yticks(y, part["label"])
        ax.xaxis.set_major_locator(MaxNLocator(nbins=6))
        ax.set_xlabel(f"{title}: median, 95% CrI")
        ax.grid(axis="y", visible=False)
    if problems:
        more = f" (+{len(problems) - 1} more, see bayes/diagnostics.json)" if len(problems) > 1 else ""
        axes[0][0].set_title(f"CONVERGENCE PROBLEM: {problems[0]}{more}", color="#b00000", fontsize=7,
                             loc="left", wrap=True)
    fig.tight_layout()
    return fig


def learning_curves(curves: pd.DataFrame, suite: str, level: str = "paradigm"):
    """curves: analysis/accuracy_by_step.csv. Rows = sizes, columns = paradigms (or categories)."""
    d = curves[curves["suite"] == suite].copy()
    d["size"] = d["size"].astype(str)
    # several archs (or ordered and shuffled training) get rows of their own: never averaged together
    archs = arch_rows(d)
    # training.checkpoint_words: words seen is the x-axis (models of every size and condition line up)
    words = "words_seen" in d.columns and bool(d["words_seen"].notna().all()) and bool((d["words_seen"] > 0).all())
    at = ["step", "words_seen"] if words else ["step"]
    if level == "category":
        d = (d.groupby(["arch", "condition", "size", "seed", *at, "category"], sort=False)["accuracy"]
             .mean().reset_index())
        ov = d.groupby(["arch", "condition", "size", "seed", *at], sort=False)["accuracy"].mean().reset_index()
        ov["category"] = OVERALL
        d = pd.concat([d, ov], ignore_index=True)
        panels = sorted(c for c in d["category"].unique() if c != OVERALL) + [OVERALL]
        key = "category"
    else:
        panels = [p for _, p in sorted({(c, p) for c, p in zip(d["category"], d["paradigm"])})]
        key = "paradigm"
    sizes = _sizes(d)
    conds = style.condition_order(d["condition"].unique())
    x = "step"
    if words:  # seeds reach a budget at slightly different words and steps: average each checkpoint (its rank)
        d["step"] = d.groupby(["arch", "condition", "size", "seed"])["step"].rank(method="dense")
        x = "words_seen"
    by = ["condition", "size", "step", key] + (["arch"] if archs[0][0] is not None else [])
    ms = _mean_sd(d, by).sort_values("step")
    if words:
        ms = ms.merge(d.groupby(by)["words_seen"].mean().reset_index(), on=by)
    rows = [(size, arch, lab) for size in sizes for arch, lab in archs
            if arch is None or ((d["size"] == size) & (d["arch"] == arch)).any()]
    fig, axes = plt.subplots(len(rows), len(panels), figsize=(1.7 * len(panels) + 0.6, 1.6 * len(rows) + 0.6),
                             squeeze=False, sharey=True, sharex=True)
    singles = drawn = 0  # conditions x panels with one point (no checkpoints scored): markers, not curves
    for r, (size, arch, arch_label) in enumerate(rows):
        for c, panel in enumerate(panels):
            ax = axes[r][c]
            for cond in conds:
                sub = ms[(ms["condition"] == cond) & (ms["size"] == size) & (ms[key] == panel)]
                if arch is not None:
                    sub = sub[sub["arch"] == arch]
                if sub.empty:
                    continue
                st = style.condition_style(cond, conds)
                singles += style.curve(ax, sub[x], 100 * sub["mean"], 100 * sub["sd"], st, style.label(cond))
                drawn += 1
                if words:
                    ax.set_xscale("log")
            chance = 0.5
            if "chance" in d.columns:  # other task kinds (tidy.with_chance): 1/k, or none for completion
                chance = d[d[key] == panel]["chance"].mean()
            if chance == chance:  # not NaN
                ax.axhline(100 * chance, color="0.4", linestyle="--", linewidth=0.8)
            ax.set_ylim(0, 100)
            if r == 0:
                ax.set_title(style.panel_title(panel))
            if c == 0:
                ax.set_ylabel(f"{size}{chr(10) + arch_label if arch_label else ''}\naccuracy (%)")
            if r == len(rows) - 1:
                ax.set_xlabel("words seen" if words else "training step")
    title = f"{suite}: accuracy over training (mean ± SD over seeds)"
    if singles:
        title += ("\nonly one scored point per model: markers, not curves (score checkpoints: "
                  "scoring.checkpoints)" if singles == drawn else
                  f"\n{singles} panel curve(s) with one scored point: drawn as a marker, not a curve")
    fig.suptitle(style.wrapped_for(fig, title, 8), fontsize=8, color="#b00000" if singles else "black")
    style.legend_below(fig, axes)
    return fig


def tokenizer_study(study: pd.DataFrame):
    """study: columns vocab_size, dataset, size, tokens (POSH Table 9)."""
    sizes = _sizes(study)
    datasets = style.condition_order(study["dataset"].unique())
    fig, axes = plt.subplots(1, len(sizes), figsize=(2.2 * len(sizes) + 0.6, 2.3), squeeze=False)
    for c, size in enumerate(sizes):
        ax = axes[0][c]
        for ds in datasets:
            sub = study[(study["size"] == size) & (study["dataset"] == ds)].sort_values("vocab_size")
            if sub.empty:
                continue
            st = style.condition_style(ds, datasets)
            ax.plot(sub["vocab_size"], sub["tokens"], color=st["color"], marker=st["marker"],
                    linestyle=st["linestyle"], label=style.label(ds))
        ax.set_xscale("log", base=2)
        ax.set_title(f"{size} words")
        ax.set_xlabel("vocabulary size")
        if c == 0:
            ax.set_ylabel("corpus token count")
    h, lab = axes[0][0].get_legend_handles_labels()
    fig.legend(h, lab, loc="lower center", ncol=max(1, len(lab)), bbox_to_anchor=(0.5, -0.04), frameon=False)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return fig


# ---- POSH Figure 1: children beside models ---------------------------------------------------

CHILDREN_FILE = "children_table7.yaml"


def load_children(path=None) -> pd.DataFrame:
    """POSH Table 7 (children's accuracy at a younger and an older age) as one row per phenomenon x
    stage: phenomenon, study, level, name (what models are compared with), stage, age, accuracy,
    matched_size (words of input the age is aligned with in POSH Fig. 1)."""
    from pathlib import Path

    path = Path(path) if path else Path(__file__).with_name(CHILDREN_FILE)
    doc = load_yaml(path, mapping=None, what="children's table")
    rows = []
    for ph in doc["phenomena"]:
        for st in ph["stages"]:
            rows.append({"phenomenon": ph["phenomenon"], "study": ph["study"], "level": ph["model"]["level"],
                         "name": ph["model"]["name"], "stage": st["stage"], "age": str(st["age"]),
                         "accuracy": float(st["accuracy"]), "matched_size": str(st["matched_size"])})
    return pd.DataFrame(rows)


def children_vs_models(acc: pd.DataFrame, children: pd.DataFrame, suite: str = "posh"):
    """Model accuracy per phenomenon x condition x size (mean, SD over seeds) for Figure 1, the sizes
    shown, and a note when no model was trained at the children's matched input sizes."""
    d = acc[acc["suite"] == suite].copy()
    d["size"] = d["size"].astype(str)
    parts = []
    for ph, sub in children.groupby("phenomenon", sort=False):
        level, name = sub["level"].iloc[0], sub["name"].iloc[0]
        key = "paradigm" if level == "paradigm" else "category"
        m = d[(d["level"] == level) & (d[key] == name)]
        if m.empty:
            continue
        g = _mean_sd(m, ["arch", "condition", "size"])  # several archs: one line each (fig1_children)
        g["phenomenon"] = ph
        parts.append(g)
    models = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(
        columns=["arch", "condition", "size", "mean", "sd", "phenomenon"])
    matched = set(children["matched_size"])
    have = sorted(set(models["size"]), key=size_words)
    at_matched = [s for s in have if size_words(s) in {size_words(x) for x in matched}]
    note = ""
    if have and not at_matched:
        note = (f"no model trained at the matched input sizes ({', '.join(sorted(matched, key=size_words))} words): "
                f"models shown at their own sizes ({', '.join(have)})")
    elif at_matched:
        models = models[models["size"].isin(at_matched)]
    return models, note


_SIZE_TICK_PT = 6
_PANEL_MARGIN_IN = 0.5  # a panel's width beyond its axis (the y labels of the first, the gaps between)


def _size_panel_width(labels: list[str]) -> float:
    """Inches a Figure 1 panel needs so that its upright size labels (about 1.5 x their font size wide) do not
    touch on the log axis, which spans the labels' range and a factor 1.6 on each side."""
    words = [size_words(t) for t in labels]
    if len(words) < 2:
        return 0.0
    decades = [math.log10(b / a) for a, b in zip(words, words[1:])]
    span = math.log10(max(words) * 1.6 / (min(words) / 1.6))
    need = 1.5 * _SIZE_TICK_PT / 72 / max(min(decades), 1e-3)  # inches per decade
    return min(span * need, 12.0) + _PANEL_MARGIN_IN


def fig1_children(acc: pd.DataFrame, children: pd.DataFrame, suite: str = "posh"):
    """POSH Fig. 1: children's accuracy at a younger and an older age (Table 7), placed at the input
    sizes POSH aligns them with (10M, 30M words), beside model accuracy by training size and
    condition (mean ± SD over seeds). One panel per phenomenon; log-scaled words of input."""
    models, note = children_vs_models(acc, children, suite)
    phen = list(dict.fromkeys(children["phenomenon"]))
    conds = style.condition_order(models["condition"].unique()) if len(models) else []
    archs = arch_rows(acc[acc["suite"] == suite])  # several archs: a line per arch x condition, dashes by arch
    ticks = {ph: sorted(set(children.loc[children["phenomenon"] == ph, "matched_size"]) | set(models["size"]),
                        key=size_words) for ph in phen}
    width = max([2.1] + [_size_panel_width(t) for t in ticks.values()])
    fig, axes = plt.subplots(1, len(phen), figsize=(width * len(phen) + 0.6, 2.6), squeeze=False, sharey=True)
    for c, ph in enumerate(phen):
        ax = axes[0][c]
        ch = children[children["phenomenon"] == ph]
        x = [size_words(s) for s in ch["matched_size"]]
        ax.plot(x, 100 * ch["accuracy"], color="0.35", marker="*", markersize=9, linewidth=2.0, label="children",
                zorder=3)
        for xi, (_, r) in zip(x, ch.iterrows()):
            ax.annotate(f"age {r['age']}", (xi, 100 * r["accuracy"]), textcoords="offset points", xytext=(0, 6),
                        ha="center", fontsize=6, color="0.25")
        for cond in conds:
            for j, (arch, arch_label) in enumerate(archs):
                sub = models[(models["phenomenon"] == ph) & (models["condition"] == cond)].copy()
                if arch is not None:
                    sub = sub[sub["arch"] == arch]
                if sub.empty:
                    continue
                sub["w"] = sub["size"].map(size_words)
                sub = sub.sort_values("w")
                st = style.condition_style(cond, conds)
                line = st["linestyle"] if arch is None else style.DASHES[j % len(style.DASHES)]
                ax.errorbar(sub["w"], 100 * sub["mean"], yerr=100 * sub["sd"],
                            label=style.label(cond) + (f", {arch_label}" if arch_label else ""), color=st["color"],
                            marker=st["marker"] if arch is None else style.MARKERS[j % len(style.MARKERS)],
                            linestyle=line if len(sub) > 1 else "none", capsize=2)  # one size: a point, no line
        ax.axhline(50, color="0.4", linestyle="--", linewidth=0.8)
        ax.set_xscale("log")
        labels = ticks[ph]
        # upright labels: sizes a factor 2 apart (15k, 30k) sit closer on the log axis than a word is wide
        ax.set_xticks([size_words(t) for t in labels], labels, rotation=90, fontsize=_SIZE_TICK_PT)
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        lo, hi = min(size_words(t) for t in labels), max(size_words(t) for t in labels)
        ax.set_xlim(lo / 1.6, hi * 1.6)
        ax.set_ylim(0, 105)
        ax.set_title(f"{ph}\n({ch['study'].iloc[0]})", fontsize=7)
        ax.set_xlabel("words of input")
        if c == 0:
            ax.set_ylabel("accuracy (%)")
    title = "Children (POSH Table 7, at the input sizes POSH aligns their ages with) vs. models"
    fig.suptitle(style.wrapped_for(fig, title + (f"\n{note}" if note else ""), 7), fontsize=7,
                 color="#b00000" if note else "black")
    style.legend_below(fig, axes)
    return fig
