"""The metric sensitivity table: accuracy under every scoring metric, and how many verdicts flip.

A minimal pair can be judged by the sum or the mean of its sentences' token log-probabilities,
with or without a BOS token in front (without one, the first token is not scored: minicons'
default, which POSH-BENCH used with the mean). The four metrics disagree exactly where the
benchmark's design makes them: pairs that differ in their first word (*wanna*: who/what vs
when/how/why/where; question formation: which auxiliary is fronted) are decided by that word
only when it is scored, and pairs whose sentences differ in token count (whether/that,
himself/herself under some tokenizers) are judged differently by a sum (which penalises every
extra token) and a mean.

The item scores carry, with ``scoring.sensitivity``, each sentence's float64 sum and token
count with and without BOS (``tidy.SENSITIVITY_COLUMNS``); every metric's verdict is
recomputed here from them exactly as the scorer computes it (mean = sum / ntok; a tie is not
correct), so the metric the run scored with reproduces its ``correct`` column bit for bit.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from povstim.conditions.order import condition_order
from povstim.analysis.tables.tidy import SENSITIVITY_COLUMNS

# key -> (reduction, bos, label)
METRICS = {
    "sum_bos": ("sum", True, "sum, BOS"),
    "mean_bos": ("mean", True, "mean, BOS"),
    "sum_nobos": ("sum", False, "sum, no BOS"),
    "mean_nobos": ("mean", False, "mean, no BOS (POSH)"),
}
ALL = "all"


def available(items: pd.DataFrame) -> bool:
    """Whether any final row carries the sensitivity columns."""
    return all(c in items.columns for c in SENSITIVITY_COLUMNS) and bool(items["ntok_bos_good"].gt(0).any())


def verdicts(items: pd.DataFrame, key: str) -> pd.Series:
    """Each row's verdict under metric ``key`` (nullable boolean: NA where the row lacks it)."""
    reduction, bos, _ = METRICS[key]
    tag = "bos" if bos else "nobos"
    good, bad = items[f"sum_{tag}_good"].to_numpy(float), items[f"sum_{tag}_bad"].to_numpy(float)
    ng, nb = items[f"ntok_{tag}_good"].to_numpy(), items[f"ntok_{tag}_bad"].to_numpy()
    ok = (ng > 0) & (nb > 0) & ~np.isnan(good) & ~np.isnan(bad)
    with np.errstate(divide="ignore", invalid="ignore"):
        if reduction == "mean":
            good, bad = good / ng, bad / nb
    out = pd.array(good > bad, dtype="boolean")
    out[~ok] = pd.NA
    return pd.Series(out, index=items.index)


def primary_metric(items: pd.DataFrame) -> str | None:
    """The metric whose verdicts are the run's ``correct`` column on every row that has it."""
    for key in METRICS:
        v = verdicts(items, key)
        have = v.notna().to_numpy()
        if have.any() and (v[have].astype(bool).to_numpy() == items["correct"].to_numpy()[have]).all():
            return key
    return None


def sensitivity_table(items: pd.DataFrame) -> pd.DataFrame:
    """Per suite x condition (and all conditions) x paradigm / category / overall: verdicts, accuracy
    under each metric, verdicts that differ from ``correct`` (flips) and the share of pairs whose
    sentences differ in token count. Pooled over models (arch, size, seed) and items."""
    d = items[items["ntok_bos_good"].gt(0)].copy()
    for key in METRICS:
        d[f"v_{key}"] = verdicts(d, key)
        d[f"f_{key}"] = (d[f"v_{key}"] != d["correct"].astype("boolean"))
    d["len_differs"] = d["ntok_bos_good"] != d["ntok_bos_bad"]
    d[ALL] = ALL
    rows = []
    for cond_col in ("condition", ALL):
        for level, keys in (("paradigm", ["category", "paradigm"]), ("category", ["category"]), ("overall", [])):
            for vals, sub in d.groupby(["suite", cond_col] + keys, sort=True):
                vals = dict(zip(["suite", "condition"] + keys, vals))
                row = {"suite": vals["suite"], "condition": vals["condition"], "level": level,
                       "category": vals.get("category", "Overall"), "paradigm": vals.get("paradigm", ""),
                       "n": len(sub), "accuracy": float(sub["correct"].mean())}
                for key in METRICS:
                    v = sub[f"v_{key}"]
                    row[f"acc_{key}"] = float(v.dropna().astype(bool).mean()) if v.notna().any() else np.nan
                    row[f"n_{key}"] = int(v.notna().sum())
                    row[f"flips_{key}"] = int(sub[f"f_{key}"].fillna(False).sum())
                row["len_differs"] = float(sub["len_differs"].mean())
                rows.append(row)
    out = pd.DataFrame(rows)
    order = {c: i for i, c in enumerate(condition_order(out["condition"].unique()) + [ALL])}
    lvl = {"paradigm": 0, "category": 1, "overall": 2}
    out["_c"] = out["condition"].map(order)
    out["_l"] = out["level"].map(lvl)
    out = out.sort_values(["suite", "_c", "_l", "category", "paradigm"], kind="mergesort")
    return out.drop(columns=["_c", "_l"]).reset_index(drop=True)


def formatted(table: pd.DataFrame, suite: str, primary: str | None) -> pd.DataFrame:
    """The report's view: all conditions pooled, rows paradigms then categories then Overall,
    one column per metric with ``accuracy% (flips)``."""
    d = table[(table["suite"] == suite) & (table["condition"] == ALL)]
    rows = []
    for _, r in d.iterrows():
        name = r["paradigm"] if r["level"] == "paradigm" else (
            "Overall" if r["level"] == "overall" else f"{r['category']} (category)")
        row = {"Category": r["category"] if r["level"] != "overall" else "", "Paradigm": name, "Verdicts": int(r["n"])}
        for key, (_, _, label) in METRICS.items():
            head = label + (" [tables]" if key == primary else "")
            if r[f"n_{key}"] == 0:
                row[head] = "n/a"
            else:
                row[head] = f"{100 * r[f'acc_{key}']:.1f} ({int(r[f'flips_{key}'])})"
        row["Token counts differ (%)"] = f"{100 * r['len_differs']:.0f}"
        rows.append(row)
    return pd.DataFrame(rows)


def caption(suite: str, primary: str | None, n_models: int) -> str:
    which = (f"the run scored with {METRICS[primary][2]} (column marked [tables]), which Tables 3/8 use"
             if primary else "no metric reproduces the run's verdicts exactly (mixed scoring settings?)")
    return (f"Metric sensitivity on {suite}: accuracy (%) of the {n_models} final model(s), pooled over models and "
            f"items, when a pair is judged by the sum or the mean of token log-probabilities, with a BOS token "
            f"(every token scored) or without (the first token only conditions the rest, minicons' default; "
            f"POSH-BENCH used the mean without BOS). In parentheses: verdicts that differ from {which}. "
            f"Pairs that differ in their first word (wanna, question formation) depend on whether that word is "
            f"scored; pairs whose sentences differ in token count (last column) on sum vs. mean. "
            f"n/a: the models' item scores lack that metric (masked LMs have no BOS setting).")
