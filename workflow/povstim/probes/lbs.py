"""The linguistic bias score (LBS) and the control gate (MSGS §2, §5).

LBS = the Matthews correlation between a classifier's predictions and the
labels of the disambiguating test set, whose labels follow the linguistic
feature and contradict the surface one: +1 = a systematic linguistic
generalisation, −1 = a systematic surface generalisation, 0 = neither.

A result only counts if the model can represent both features: MSGS drops
every result of a model checkpoint and learning rate whose control-task
Matthews correlation is below 0.7 for either feature of the task ("failed
control", grey in MSGS Fig. 4). Here the gate is per checkpoint × grid point
(learning rate, batch size, epochs), over the mean of the restarts.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

GRID_KEYS = ["arch", "condition", "size", "seed", "step", "lr", "batch_size", "epochs"]


def confusion(labels, preds) -> tuple[int, int, int, int]:
    """(TP, TN, FP, FN) of binary labels/predictions (1 = positive)."""
    y = np.asarray(labels).astype(bool)
    p = np.asarray(preds).astype(bool)
    if y.shape != p.shape:
        raise ValueError(f"labels and predictions differ in length ({y.shape} vs {p.shape})")
    return int((y & p).sum()), int((~y & ~p).sum()), int((~y & p).sum()), int((y & ~p).sum())


def mcc(labels, preds) -> float:
    """Matthews correlation coefficient (Matthews 1975); 0 when a marginal is empty (one class predicted)."""
    tp, tn, fp, fn = confusion(labels, preds)
    denom = math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    return (tp * tn - fp * fn) / denom if denom else 0.0


def accuracy(labels, preds) -> float:
    y, p = np.asarray(labels), np.asarray(preds)
    return float((y == p).mean()) if len(y) else float("nan")


def apply_gate(df: pd.DataFrame, metric: str, threshold: float) -> pd.DataFrame:
    """Add control_linguistic, control_surface, passed, lbs and status to a model's tidy rows.

    A control task passes for a checkpoint × grid point when the mean of its
    ``metric`` (``mcc`` = test MCC, ``accuracy`` = test accuracy) over restarts
    reaches ``threshold``; an ambiguous result is scored (``lbs`` = its test MCC)
    when the controls of both its features pass, else its status is
    ``failed_control`` and ``lbs`` is empty.
    """
    df = df.copy()
    column = {"mcc": "mcc", "accuracy": "accuracy"}[metric]
    controls = df[df["kind"] == "control"].copy()
    controls["feature"] = controls["linguistic"].fillna(controls["surface"])
    score = controls.groupby(GRID_KEYS + ["feature"], dropna=False)[column].mean().rename("control_score").reset_index()

    def lookup(feature_col: str) -> pd.Series:
        keyed = df[GRID_KEYS].copy()
        keyed["feature"] = df[feature_col]
        merged = keyed.merge(score, on=GRID_KEYS + ["feature"], how="left")
        return pd.Series(merged["control_score"].to_numpy(), index=df.index)

    amb = df["kind"] == "ambiguous"
    df["control_linguistic"] = lookup("linguistic").where(df["linguistic"].notna())
    df["control_surface"] = lookup("surface").where(df["surface"].notna())
    own = df["control_linguistic"].fillna(df["control_surface"])
    both = (df["control_linguistic"] >= threshold) & (df["control_surface"] >= threshold)
    df["passed"] = np.where(amb, both, own >= threshold)
    df["lbs"] = df["mcc"].where(amb & df["passed"])
    df["status"] = np.where(~amb, "control", np.where(df["passed"], "scored", "failed_control"))
    return df


def summarize(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(LBS table, control table) of the final models.

    LBS table: one row per arch × condition × size × inoculation × task, over
    seeds, grid points and restarts: runs, scored runs, mean/SD of the LBS of the
    scored runs, and the mean test MCC of all runs. Control table: one row per
    arch × condition × size × feature: mean test MCC and accuracy, share of
    checkpoint × grid points that pass the gate.
    """
    final = df[df["final"]]
    amb = final[final["kind"] == "ambiguous"]
    keys = ["arch", "condition", "size", "inoculation", "linguistic", "surface", "task"]
    if len(amb):
        lbs = amb.groupby(keys, sort=True, dropna=False).agg(
            runs=("mcc", "size"), scored=("passed", "sum"), lbs_mean=("lbs", "mean"),
            lbs_sd=("lbs", "std"), mcc_mean=("mcc", "mean"), aux_mcc_mean=("aux_mcc", "mean"),
        ).reset_index()
    else:
        lbs = pd.DataFrame(columns=keys + ["runs", "scored", "lbs_mean", "lbs_sd", "mcc_mean", "aux_mcc_mean"])
    ctrl = final[final["kind"] == "control"].copy()
    ctrl["feature"] = ctrl["linguistic"].fillna(ctrl["surface"])
    ckeys = ["arch", "condition", "size", "feature"]
    if len(ctrl):
        control = ctrl.groupby(ckeys, sort=True).agg(
            runs=("mcc", "size"), mcc_mean=("mcc", "mean"), accuracy_mean=("accuracy", "mean"),
            pass_rate=("passed", "mean"),
        ).reset_index()
    else:
        control = pd.DataFrame(columns=ckeys + ["runs", "mcc_mean", "accuracy_mean", "pass_rate"])
    return lbs, control
