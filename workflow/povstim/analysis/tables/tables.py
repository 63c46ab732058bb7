"""Accuracy, chi-square tests against chance, and POSH Tables 3 and 8.

Accuracy of one model on a paradigm is the share of its items where the grammatical
sentence scored higher. Following POSH-BENCH, a category's accuracy is the mean over its
paradigms and "Overall" the mean over categories (Table 3); the "Average" row of Table 8 is
the mean over paradigms. Cells report the mean over seeds with the SD over seeds (ddof=1).

Significance against chance (p = 0.5), two procedures (``analysis.significance``):

* ``pooled``: one two-sided chi-square goodness-of-fit test of the items pooled over seeds,
  corrected (``analysis.correction``) within each suite x level (the whole table).
* ``posh``: POSH-BENCH's released analysis (xiulinyang/posh-bench, posh-analysis.py): a
  chi-square test per seed (a category pools its paradigms' items within the seed), the
  seeds' p values combined with Fisher's method, p set to 1 when the combined p < 0.05 but
  the seeds disagree in direction (some at or above chance, some below), then corrected
  (POSH: Holm) within each training-data column, i.e. each suite x arch x condition x size x
  level: Table 3's four categories of one column form a family, Table 8's nine paradigms another.

Marks: ``*`` / ``**`` / ``***`` for p_adj < 0.05 / 0.01 / 0.001 above chance; ``†`` / ``††`` /
``†††`` for the same levels *below* chance (POSH's tables star both alike).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
from scipy import stats

from povstim.conditions.order import condition_order
from povstim.analysis.tables.tidy import size_words

LEVELS = ["paradigm", "category", "overall"]
SIGNIFICANCE = {
    "pooled": "two-sided chi-square test of the items pooled over seeds against chance (50%), {corr} within "
              "the table",
    "posh": "two-sided chi-square test against chance (50%) per seed, the seeds' p values combined with "
            "Fisher's method (p = 1 when the seeds disagree in direction), {corr} within each training-data "
            "column (POSH-BENCH's procedure)",
}
ABOVE, BELOW = "*", "\u2020"  # '†' marks significance below chance
CORRECTIONS = {
    "none": "no correction for multiple comparisons",
    "holm": "Holm-corrected for multiple comparisons",
    "bonferroni": "Bonferroni-corrected for multiple comparisons",
    "bh": "Benjamini-Hochberg (FDR) corrected",
}
OVERALL = "Overall"
AVERAGE = "Average"


def _model_cols(df):
    return [c for c in ("suite", "arch", "condition", "size", "seed") if c in df.columns]


def accuracy_table(items: pd.DataFrame) -> pd.DataFrame:
    """Accuracy per model x paradigm, x category (mean of its paradigms) and overall."""
    model = _model_cols(items)
    par = (
        items.groupby(model + ["category", "paradigm"], sort=False)["correct"]
        .agg(n_correct="sum", n_total="size")
        .reset_index()
    )
    if "chance" in items.columns:
        # Mixed task kinds (tidy.with_chance): expected correct by guessing, NaN if any item has no chance level.
        par = par.merge(items.groupby(model + ["category", "paradigm"], sort=False)["chance"]
                        .agg(lambda x: x.sum(min_count=len(x))).rename("expected").reset_index(),
                        on=model + ["category", "paradigm"], how="left")
    return accuracy_from_counts(par)


def accuracy_from_counts(par: pd.DataFrame) -> pd.DataFrame:
    """The accuracy table from one row per model x paradigm with n_correct and n_total (item scores
    counted, or published per-model accuracies) and, for suites of other task kinds, ``expected``
    (correct answers expected by guessing): paradigm, category and overall levels."""
    model = _model_cols(par)
    par = par.copy()
    par["accuracy"] = par["n_correct"] / par["n_total"]
    par["level"] = "paradigm"
    chance = "expected" in par.columns
    extra = {"expected": ("expected", lambda x: x.sum(min_count=len(x)))} if chance else {}
    cat = (
        par.groupby(model + ["category"], sort=False)
        .agg(n_correct=("n_correct", "sum"), n_total=("n_total", "sum"), accuracy=("accuracy", "mean"), **extra)
        .reset_index()
    )
    cat["paradigm"] = ""
    cat["level"] = "category"
    ovr = (
        cat.groupby(model, sort=False)
        .agg(n_correct=("n_correct", "sum"), n_total=("n_total", "sum"), accuracy=("accuracy", "mean"), **extra)
        .reset_index()
    )
    ovr["category"] = OVERALL
    ovr["paradigm"] = ""
    ovr["level"] = "overall"
    out = pd.concat([par, cat, ovr], ignore_index=True)
    out["n_correct"] = out["n_correct"].astype(int)
    out["n_total"] = out["n_total"].astype(int)
    cols = model + ["level", "category", "paradigm", "n_correct", "n_total", "accuracy"]
    if chance:
        out["chance"] = out["expected"] / out["n_total"]
        cols.append("chance")
    return sort_table(out[cols])


def sort_table(df: pd.DataFrame) -> pd.DataFrame:
    keys, tmp = [], df.copy()
    for col in ("suite", "arch", "level", "category", "paradigm", "condition", "size", "seed"):
        if col not in tmp.columns:
            continue
        if col == "size":
            tmp["_k_size"] = tmp["size"].map(size_words)
            keys.append("_k_size")
        elif col == "level":
            tmp["_k_level"] = tmp["level"].map(LEVELS.index)
            keys.append("_k_level")
        elif col == "category":
            tmp["_k_cat"] = tmp["category"].eq(OVERALL)
            keys += ["_k_cat", "category"]
        else:
            keys.append(col)
    tmp = tmp.sort_values(keys, kind="mergesort")
    return tmp.drop(columns=[c for c in tmp.columns if c.startswith("_k_")]).reset_index(drop=True)


def chisq_vs_chance(k: int, n: int, p: float = 0.5) -> tuple[float, float]:
    """Two-sided chi-square goodness-of-fit test of k correct out of n against chance p
    (0.5 for minimal pairs; 1/k for k-option items; NaN = no chance level, no test)."""
    if n == 0 or p is None or math.isnan(p):
        return math.nan, math.nan
    res = stats.chisquare([k, n - k], [n * p, n * (1 - p)])
    return float(res.statistic), float(res.pvalue)


def adjust(p: np.ndarray, method: str) -> np.ndarray:
    """Multiple-comparison correction of a family of p-values (NaNs are left out)."""
    p = np.asarray(p, dtype=float)
    out = p.copy()
    ok = ~np.isnan(p)
    q = p[ok]
    m = len(q)
    if m == 0 or method == "none":
        return out
    order = np.argsort(q, kind="mergesort")
    ranked = q[order]
    if method == "bonferroni":
        adj = np.minimum(q * m, 1.0)
    elif method == "holm":
        steps = np.maximum.accumulate((m - np.arange(m)) * ranked)
        adj = np.empty(m)
        adj[order] = np.minimum(steps, 1.0)
    elif method == "bh":
        steps = np.minimum.accumulate((m / np.arange(m, 0, -1)) * ranked[::-1])[::-1]
        adj = np.empty(m)
        adj[order] = np.minimum(steps, 1.0)
    else:
        raise ValueError(f"unknown correction {method!r}")
    out[ok] = adj
    return out


def stars(p: float, direction: str = "above") -> str:
    """``*``/``**``/``***`` at p < .05/.01/.001; the same number of ``†`` when below chance."""
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return ""
    n = 3 if p < 0.001 else 2 if p < 0.01 else 1 if p < 0.05 else 0
    return (BELOW if direction == "below" else ABOVE) * n


def seed_direction(accs, chance: float = 0.5) -> str:
    """POSH's ``get_direction``: above when every seed is at or above chance, below when every seed is
    below, else mixed (every seed exactly at chance: none)."""
    a = np.asarray(accs, dtype=float)
    if np.all(a == chance):
        return "none"
    if np.all(a >= chance):
        return "above"
    if np.all(a < chance):
        return "below"
    return "mixed"


def posh_p(counts: list[tuple[int, int]], chance: float = 0.5) -> tuple[float, str, list[float]]:
    """POSH's per-cell p value from each seed's (n_correct, n_total): per-seed chi-square tests,
    Fisher-combined when there are several seeds, set to 1 when significant but mixed in direction.
    Returns (p, direction, per-seed p values). ``chance``: 0.5 for minimal pairs (POSH); 1/k for
    k-option items (task kinds)."""
    ps = [chisq_vs_chance(k, n, chance)[1] for k, n in counts]
    if len(ps) == 1:
        p = ps[0]
    else:
        p = float(stats.combine_pvalues(ps, method="fisher").pvalue)
    direction = seed_direction([k / n for k, n in counts], chance)
    if p < 0.05 and direction == "mixed":  # as POSH: only a would-be significant mixed cell is reset
        p = 1.0
    return p, direction, ps


def chisq_table(acc: pd.DataFrame, correction: str = "holm", significance: str = "pooled") -> pd.DataFrame:
    """Per suite x arch x condition x size x paradigm/category/overall: mean and SD over seeds,
    pooled counts, the test against chance of ``significance`` (pooled | posh) and p_adj corrected
    within its family (pooled: suite x level; posh: suite x arch x condition x size x level)."""
    if significance not in SIGNIFICANCE:
        raise ValueError(f"unknown significance procedure {significance!r}")
    group = [c for c in ("suite", "arch", "condition", "size") if c in acc.columns] + [
        "level", "category", "paradigm"]
    agg = {"n_correct": ("n_correct", "sum"), "n_total": ("n_total", "sum"),
           "accuracy_mean": ("accuracy", "mean"), "n_seeds": ("accuracy", "size")}
    if "seed" in acc.columns:
        agg["accuracy_sd"] = ("accuracy", lambda x: float(np.std(x, ddof=1)) if len(x) > 1 else math.nan)
    if "chance" in acc.columns:
        agg["chance"] = ("chance", "mean")  # the same items for every seed
    out = acc.groupby(group, sort=False).agg(**agg).reset_index()
    if "accuracy_sd" not in out.columns:
        out["accuracy_sd"] = math.nan
    testable = (out["level"] != "overall").to_numpy().copy()
    chance = (out["chance"].astype(float) if "chance" in out.columns else pd.Series(0.5, index=out.index)).to_numpy().copy()
    testable &= ~np.isnan(chance)  # completion items have no chance level: not tested
    if significance == "pooled":
        tests = [chisq_vs_chance(int(k), int(n), float(c)) if t else (math.nan, math.nan)
                 for k, n, t, c in zip(out["n_correct"], out["n_total"], testable, chance)]
        out["chi2"] = [t[0] for t in tests]
        out["p"] = [t[1] for t in tests]
        out["p_seeds"] = ""
        frac = (out["n_correct"] / out["n_total"]).to_numpy()
        out["direction"] = np.where(frac > chance, "above", np.where(frac < chance, "below", "none"))
        fam_cols = [c for c in ("suite",) if c in out.columns] + ["level"]
    else:
        per_seed = {key: list(zip(sub["n_correct"].astype(int), sub["n_total"].astype(int)))
                    for key, sub in acc.groupby(group, sort=False)}
        res = [posh_p(per_seed[key], float(c)) if t else (math.nan, "none", [])
               for key, t, c in zip(out[group].itertuples(index=False, name=None), testable, chance)]
        out["chi2"] = math.nan  # one test per seed: see p_seeds
        out["p"] = [r[0] for r in res]
        out["p_seeds"] = [";".join(f"{x:.4g}" for x in r[2]) for r in res]
        out["direction"] = [r[1] for r in res]
        fam_cols = [c for c in ("suite", "arch", "condition", "size") if c in out.columns] + ["level"]
    out.loc[~testable, "direction"] = ""
    out["p_adj"] = math.nan
    for _, idx in out.groupby(fam_cols, sort=False).groups.items():
        out.loc[idx, "p_adj"] = adjust(out.loc[idx, "p"].to_numpy(), correction)
    out["stars"] = [stars(p, d) for p, d in zip(out["p_adj"], out["direction"])]
    out["correction"] = correction
    out["significance"] = significance
    out = sort_table(out)
    return out[group + ["n_seeds", "n_correct", "n_total", "accuracy_mean", "accuracy_sd", "chi2", "p",
                        "p_seeds", "p_adj", "direction", "stars", "correction", "significance"]
               + (["chance"] if "chance" in out.columns else [])]


# ---- formatted tables -------------------------------------------------------------------

def _cell(row) -> str:
    mean = f"{100 * row['accuracy_mean']:.1f}{row['stars']}"
    sd = row["accuracy_sd"]
    return mean if (sd is None or math.isnan(sd)) else f"{mean} ({100 * sd:.1f})"


def _model_label(df: pd.DataFrame) -> pd.Series:
    """Condition name, prefixed by the arch when one size was trained with several archs."""
    several = "arch" in df.columns and (df.groupby("size")["arch"].nunique() > 1).any()
    cond = df["condition"].str.upper()
    return (df["arch"] + " " + cond) if several else cond


def _models_at(d: pd.DataFrame, size) -> list[str]:
    """Model labels at one size, in condition order (then arch)."""
    sub = d[d["size"] == size]
    order = condition_order(sub["condition"])
    pairs = {(order.index(c), a if "arch" in sub.columns else "", m)
             for c, a, m in zip(sub["condition"], sub["arch"] if "arch" in sub.columns else [""] * len(sub),
                                sub["Model"])}
    return list(dict.fromkeys(m for _, _, m in sorted(pairs)))


def table3(chisq: pd.DataFrame, suite: str) -> pd.DataFrame:
    """POSH Table 3: rows size x condition, columns categories + Overall."""
    d = chisq[(chisq["suite"] == suite) & chisq["level"].isin(["category", "overall"])].copy()
    d["Model"] = _model_label(d)
    d["cell"] = d.apply(_cell, axis=1)
    cats = [c for c in sorted(d["category"].unique()) if c != OVERALL] + [OVERALL]
    rows = []
    for size in sorted(d["size"].unique(), key=size_words):
        for model in _models_at(d, size):
            sub = d[(d["size"] == size) & (d["Model"] == model)].set_index("category")["cell"]
            rows.append({"Size": size, "Cond.": model, **{c: sub.get(c, "") for c in cats}})
    return pd.DataFrame(rows, columns=["Size", "Cond."] + cats)


def table8(chisq: pd.DataFrame, suite: str) -> pd.DataFrame:
    """POSH Table 8: rows category x paradigm (+ Average), columns size x condition."""
    d = chisq[chisq["suite"] == suite].copy()
    d["Model"] = _model_label(d)
    d["cell"] = d.apply(_cell, axis=1)
    cols = []
    for size in sorted(d["size"].unique(), key=size_words):
        for model in _models_at(d, size):
            cols.append((size, model))
    rows = []
    par = d[d["level"] == "paradigm"]
    for (cat, p), sub in sorted(par.groupby(["category", "paradigm"]), key=lambda kv: kv[0]):
        cells = {f"{s} {m}": "" for s, m in cols}
        for _, r in sub.iterrows():
            cells[f"{r['size']} {r['Model']}"] = r["cell"]
        rows.append({"Category": cat, "Phenomenon": p, **cells})
    # Average row: mean over paradigms per seed, then mean/SD over seeds (computed by caller).
    return pd.DataFrame(rows, columns=["Category", "Phenomenon"] + [f"{s} {m}" for s, m in cols])


def average_row(acc: pd.DataFrame, suite: str) -> dict:
    """Table 8's last row: per seed the mean over all paradigms, then mean (SD) over seeds."""
    d = acc[(acc["suite"] == suite) & (acc["level"] == "paradigm")].copy()
    d["Model"] = _model_label(d)
    keys = ["size", "Model"] + (["seed"] if "seed" in d.columns else [])
    per_seed = d.groupby(keys)["accuracy"].mean().reset_index()
    row = {"Category": AVERAGE, "Phenomenon": ""}
    for (size, model), sub in per_seed.groupby(["size", "Model"]):
        sd = float(np.std(sub["accuracy"], ddof=1)) if len(sub) > 1 else math.nan
        row[f"{size} {model}"] = _cell({"accuracy_mean": sub["accuracy"].mean(), "stars": "",
                                        "accuracy_sd": sd})
    return row


def caption(kind: str, suite: str, correction: str, n_seeds: int, significance: str = "pooled") -> str:
    what = {
        "table3": f"Category-level accuracy (%) on {suite} by training size and condition "
                  "(Overall = mean over categories).",
        "table8": f"Paradigm-level accuracy (%) on {suite} by training size and condition "
                  "(Average = mean over paradigms).",
    }[kind]
    how = SIGNIFICANCE[significance].format(corr=CORRECTIONS[correction])
    return (f"{what} Mean over {n_seeds} seed(s), SD over seeds in parentheses. Significance "
            f"(analysis.significance: {significance}): {how}. Above chance: * p < 0.05, ** p < 0.01, "
            f"*** p < 0.001; below chance (italic): \u2020 p < 0.05, \u2020\u2020 p < 0.01, "
            f"\u2020\u2020\u2020 p < 0.001.")


def to_markdown(df: pd.DataFrame, cap: str) -> str:
    cols = list(df.columns)
    esc = lambda s: str(s).replace("|", "\\|").replace("*", "\\*")  # noqa: E731
    lines = ["| " + " | ".join(esc(c) for c in cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for _, r in df.iterrows():
        lines.append("| " + " | ".join(esc(r[c]) for c in cols) + " |")
    return "\n".join(lines) + f"\n\n{cap}\n"


def to_latex(df: pd.DataFrame, cap: str, label: str) -> str:
    def tex(s):
        s = str(s)
        for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("_", r"\_"), ("#", r"\#")):
            s = s.replace(a, b)
        s = re.sub(r"(\*{1,3})", lambda m: "$^{" + m.group(1) + "}$", s)
        # below chance: the number in italics and daggers instead of stars
        s = re.sub(r"^([0-9.]+)(\u2020{1,3})", lambda m: r"\textit{" + m.group(1) + "}$^{"
                   + r"\dagger" * len(m.group(2)) + "}$", s)
        return s.replace(BELOW, r"\textdagger{}")  # in captions

    cols = list(df.columns)
    lines = [r"\begin{table}[t]", r"\centering", r"\small",
             r"\begin{tabular}{" + "l" * 2 + "r" * (len(cols) - 2) + "}", r"\toprule",
             " & ".join(tex(c) for c in cols) + r" \\", r"\midrule"]
    for _, r in df.iterrows():
        lines.append(" & ".join(tex(r[c]) for c in cols) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\caption{" + tex(cap) + "}",
              r"\label{" + label + "}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def to_html(df: pd.DataFrame, cap: str, banner: str = "") -> str:
    """A self-contained HTML table for the Snakemake report."""
    import html

    def td(v):
        v = str(v)
        cls = ' class="below"' if BELOW in v else ""  # significantly below chance
        return f"<td{cls}>{html.escape(v)}</td>"

    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    body = "".join("<tr>" + "".join(td(r[c]) for c in df.columns) + "</tr>" for _, r in df.iterrows())
    style = ("<style>body{font-family:sans-serif;font-size:13px}table{border-collapse:collapse}"
             "td,th{border:1px solid #999;padding:3px 8px;text-align:right}"
             "td:first-child,th:first-child{text-align:left}.warn{background:#fdd;border:2px solid #c00;"
             "padding:8px;margin-bottom:8px;font-weight:bold}</style>")
    if BELOW in body:  # below-chance cells: a distinct style (only when there are any)
        style = style.replace("</style>", "td.below{color:#0b3d91;font-style:italic;background:#e8eef9}</style>")
    warn = f'<div class="warn">{html.escape(banner)}</div>' if banner else ""
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'>{style}</head><body>{warn}"
            f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
            f"<p>{html.escape(cap)}</p></body></html>\n")
