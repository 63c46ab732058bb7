"""Architecture and training order as factors of an experiment's tables and Bayesian models.

An experiment may train several archs (``archs:``), and an arch may train on its corpus in order
(``training.ordered: true`` in the arch's own ``training:`` block: e.g. age-ordered CHILDES beside a
shuffled copy of the same arch). Pooling such models would average two learners into one number, so:

* the tidy tables (items.parquet, accuracy.csv, chisq.csv, accuracy_by_step.csv) carry an ``ordered``
  column beside ``arch`` whenever the experiment has more than one arch or any ordered one
  (:func:`with_ordered`); a one-arch shuffled experiment's tables are unchanged;
* the Bayesian models of our own runs get a main effect of ``ordered`` when both orders were trained
  and of ``arch`` when the archs differ in more than their order (:func:`model_terms`), unless the
  formula already names an arch-level variable (``arch``, ``ordered``, or Exp. 3's ``bias``). A
  one-arch experiment's formula, and so its outputs, stay as they were.

The arch facts come from ``povstim.biases.arch_meta`` (``--archs``): ``{arch: {bias, ordered?}}``, where
``ordered`` is present (true) only for archs that train in order, so that a config without ordered
training passes the same ``--archs`` as before.
"""

from __future__ import annotations

import pandas as pd

ARCH_VARIABLES = ("arch", "ordered", "bias")  # variables that are a property of the arch


def ordered_of(arch_meta: dict | None) -> dict[str, bool]:
    return {str(a): bool((m or {}).get("ordered")) for a, m in (arch_meta or {}).items()}  # absent: shuffled


def wanted(arch_meta: dict | None) -> bool:
    """Whether the tables get an ``ordered`` column: more than one arch, or any arch trained in order."""
    orders = ordered_of(arch_meta)
    return len(orders) > 1 or any(orders.values())


def with_ordered(df: pd.DataFrame, arch_meta: dict | None) -> pd.DataFrame:
    """``df`` with a boolean ``ordered`` column right after ``arch`` (when :func:`wanted`; else ``df``)."""
    if not wanted(arch_meta) or "arch" not in df.columns or "ordered" in df.columns:
        return df
    orders = ordered_of(arch_meta)
    out = df.copy()
    out.insert(out.columns.get_loc("arch") + 1, "ordered", out["arch"].astype(str).map(lambda a: bool(orders.get(a))))
    return out


def model_terms(df: pd.DataFrame, variables) -> list[str]:
    """The arch-level main effects a model of ``df`` needs beside its formula's ``variables``: ``ordered`` when
    both orders are in the data, ``arch`` when there are more archs than orders (``arch`` alone would then
    be aliased with ``ordered``); none when the formula names an arch-level variable itself."""
    if any(v in ARCH_VARIABLES for v in variables) or "arch" not in df.columns:
        return []
    terms = []
    n_orders = int(df["ordered"].nunique()) if "ordered" in df.columns else 1
    if n_orders > 1:
        terms.append("ordered")
    if int(df["arch"].nunique()) > n_orders:
        terms.append("arch")
    return terms


def label(arch: str, ordered: bool | None) -> str:
    """A legend/facet label: the arch, and how it was trained when the experiment has ordered training."""
    if ordered is None:
        return str(arch)
    return f"{arch} ({'ordered' if ordered else 'shuffled'})"


def figure_labels(df: pd.DataFrame) -> dict[str, str]:
    """arch -> label for the figures of an accuracy table (its ``ordered`` column, when any arch is ordered)."""
    archs = sorted(df["arch"].astype(str).unique())
    if "ordered" not in df.columns or not df["ordered"].astype(bool).any():
        return {a: a for a in archs}
    orders = df.groupby(df["arch"].astype(str))["ordered"].first().astype(bool)
    return {a: label(a, bool(orders[a])) for a in archs}
