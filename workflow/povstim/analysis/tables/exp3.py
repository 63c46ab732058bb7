"""Experiment 3 (POSH §7): accuracy by inductive bias.

The arch-level predictor ``bias`` ('vanilla', 'dyck', 'tpt', 'recency', 'dyck+recency', …)
comes from the config's arch entries (:func:`povstim.biases.arch_meta`, passed to
``povstim analyze --archs``). With it the Bayesian model can take bias as a factor
(``category * bias + (1|seed) + (1|phenomenon)``), and this module writes

* ``tables/exp3_{suite}.{csv,md,tex,html}`` — the Exp. 3 table: accuracy (%) per phenomenon
  (paradigms, their categories and Overall) × bias, mean (SD) over seeds, with the same
  chi-square stars as POSH Tables 3/8;
* ``tables/exp3_accuracy.csv`` and ``tables/exp3_curves.csv`` — accuracy.csv and
  accuracy_by_step.csv with the ``bias`` column, which ``povstim figures`` draws as
  Figures 4 and 5 (:mod:`povstim.figures.exp3`).
"""

from __future__ import annotations

import pandas as pd

from povstim.io import PovstimError
from povstim.analysis.tables import tables

NONE = "vanilla"  # povstim.biases.NONE
ORDER = ["vanilla", "dyck", "tpt", "recency", "dyck+recency"]  # POSH Fig. 4's conditions first


def bias_order(labels) -> list[str]:
    labels = list(dict.fromkeys(str(x) for x in labels))
    return [b for b in ORDER if b in labels] + sorted(b for b in labels if b not in ORDER)


def has_biases(arch_meta: dict | None) -> bool:
    return bool(arch_meta) and any((m or {}).get("bias", NONE) != NONE for m in arch_meta.values())


def attach_archs(df: pd.DataFrame, arch_meta: dict | None) -> pd.DataFrame:
    """Add the arch-level predictor ``bias`` (from ``--archs``)."""
    if not arch_meta:
        return df
    if "arch" not in df.columns:
        raise PovstimError("cannot attach --archs: the data has no 'arch' column")
    unknown = sorted(set(df["arch"].astype(str)) - set(arch_meta))
    if unknown:
        raise PovstimError(f"arch(s) {', '.join(unknown)} in the data are not in --archs "
                           f"(known: {', '.join(sorted(arch_meta))})")
    df = df.copy()
    df["bias"] = df["arch"].astype(str).map({a: str((m or {}).get("bias", NONE)) for a, m in arch_meta.items()})
    return df


def _column_keys(d: pd.DataFrame) -> pd.Series:
    """The bias, or 'bias: arch' where several archs of one condition x size share a bias."""
    shared = d.groupby(["condition", "size", "bias"])["arch"].transform("nunique") > 1
    return d["bias"].where(~shared, d["bias"] + ": " + d["arch"])


def exp3_table(chisq: pd.DataFrame, arch_meta: dict, suite: str) -> pd.DataFrame:
    """Rows: condition x size (when several) x category x phenomenon; columns: biases."""
    d = attach_archs(chisq[chisq["suite"] == suite], arch_meta)
    if d.empty:
        raise PovstimError(f"no accuracy rows for suite {suite!r}")
    d["col"] = _column_keys(d)
    d["cell"] = d.apply(tables._cell, axis=1)
    order = bias_order(d["bias"])
    cols = sorted(d["col"].unique(), key=lambda c: (order.index(c.split(": ")[0]), c))
    several = d.groupby(["condition", "size"]).ngroups > 1
    level_rank = {lvl: i for i, lvl in enumerate(tables.LEVELS)}
    rows = []
    keys = ["condition", "size", "level", "category", "paradigm"]
    for key, sub in d.groupby(keys, sort=False):
        cond, size, level, cat, par = key
        row = {"Condition": cond.upper(), "Size": size} if several else {}
        row.update({"Category": cat, "Phenomenon": par if level == "paradigm" else
                    ("(mean)" if level == "category" else "")})
        cells = dict(zip(sub["col"], sub["cell"]))
        row.update({c: cells.get(c, "") for c in cols})
        # each category's paradigms, then its mean; Overall last
        row["_sort"] = (cond, tables.size_words(size), cat == tables.OVERALL, cat, level_rank[level], par)
        rows.append(row)
    out = pd.DataFrame(rows).sort_values("_sort", kind="mergesort").drop(columns="_sort").reset_index(drop=True)
    return out


def caption(suite: str, correction: str, n_seeds: int) -> str:
    return (f"Experiment 3: accuracy (%) on {suite} by inductive bias (vanilla = the plain model; dyck = shuffled "
            f"Dyck pre-pretraining; tpt = Tree-Planted Transformer; recency = dynamic recency bias). Phenomena "
            f"are paradigms, (mean) rows their category (mean over its paradigms) and Overall the mean over "
            f"categories. Mean over {n_seeds} seed(s), SD over seeds in parentheses; stars: two-sided "
            f"chi-square test against chance of the items pooled over seeds, {tables.CORRECTIONS[correction]} "
            f"within the suite and level: * p < 0.05, ** p < 0.01, *** p < 0.001.")


def write_outputs(acc: pd.DataFrame, chisq: pd.DataFrame, curves: pd.DataFrame, arch_meta: dict, out,
                  correction: str, write_csv, write_table) -> list[str]:
    """The Exp. 3 table per suite and the bias-annotated data of Figures 4/5 under ``out/tables``."""
    if not has_biases(arch_meta):
        return []
    tdir = out / "tables"
    write_csv(attach_archs(acc, arch_meta), tdir / "exp3_accuracy.csv")
    write_csv(attach_archs(curves, arch_meta), tdir / "exp3_curves.csv")
    n_seeds = int(acc["seed"].nunique()) if "seed" in acc.columns else 1
    made = []
    for suite in sorted(acc["suite"].unique()):
        t = exp3_table(chisq, arch_meta, suite)
        write_table(t, tdir / f"exp3_{suite}", caption(suite, correction, n_seeds), f"tab:exp3-{suite}")
        made.append(f"exp3_{suite}")
    return made
