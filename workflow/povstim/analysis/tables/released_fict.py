"""FiCT's released results (Patil et al. 2024, "Filtered Corpus Training"; CLMBRs/corpus-filtering
``results/data/``) as an analysis input (``povstim release``, layout ``fict``).

The authors release one tidy CSV, ``tidy_results.csv``: one row per model (corpus = ``full`` or one of 15
filters, arch = lstm / transformer, seed 0-4) x BLiMP paradigm, with the model's BLiMP accuracy, its
perplexities, ``filter_target`` (the paradigm is one its corpus's filter targets) and the authors' own
deltas: ``blimp_delta_same_seed`` (accuracy minus the full-corpus model's of the same arch and seed) and
``blimp_delta_all_seed_avg`` (minus the full-corpus models' mean over seeds); ``corpus_tokens.csv`` gives
each corpus's size in tokens (tidy_results.csv repeats it per row, as ``corpus_tokens``).

This module recomputes both deltas from the accuracies alone and compares them with the authors' columns,
cell by cell (:func:`delta_check`), and builds the tables ``povstim release`` writes: Δ per corpus x arch x
paradigm, perplexities per corpus x arch, corpus sizes, and the binomial counts povstim's Δ model is fitted
on (``n_correct = round(accuracy x items)``, BLiMP: 1000 pairs per paradigm).

Bad input stops with one line naming the file: a missing file, a missing column, a non-numeric or
out-of-range accuracy, a model x paradigm given twice.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from povstim.io import PovstimError

TIDY = "tidy_results.csv"
TOKENS = "corpus_tokens.csv"
FULL = "full"
# what povstim reads from tidy_results.csv (the other columns -- z-scores, the BLiMP field -- are not used)
TIDY_COLUMNS = ("corpus", "arch", "seed", "blimp_benchmark", "blimp_acc", "filter_target", "validation_ppl",
                "test_ppl", "full_same_seed_acc", "blimp_delta_same_seed", "full_all_seed_avg_acc",
                "blimp_delta_all_seed_avg", "corpus_tokens")
TOKENS_COLUMNS = ("tokens",)
MODEL = ["corpus", "arch", "seed"]
# the authors' delta column -> (their reference-accuracy column, how povstim's reference is formed)
DELTAS = {"blimp_delta_same_seed": ("full_same_seed_acc", "the full-corpus model of the same arch and seed"),
          "blimp_delta_all_seed_avg": ("full_all_seed_avg_acc", "the mean over seeds of the full-corpus models "
                                                                "of the same arch")}
TOLERANCE = 1e-9


def _read_csv(path: Path, columns: tuple, what: str) -> pd.DataFrame:
    if not path.is_file():
        raise PovstimError(f"{path}: no such file (the FiCT release's {what})")
    try:
        df = pd.read_csv(path)
    except Exception as exc:  # pandas raises many types for a malformed file
        raise PovstimError(f"{path}: cannot read as CSV ({exc})") from None
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise PovstimError(f"{path}: missing column(s) {', '.join(missing)} (expected {', '.join(columns)})")
    return df


def read_tidy(folder: str | Path) -> pd.DataFrame:
    """tidy_results.csv, checked: the columns povstim uses, numeric accuracies in [0, 1], each model x paradigm
    once, a boolean ``filter_target``."""
    path = Path(folder) / TIDY
    df = _read_csv(path, TIDY_COLUMNS, "per model x paradigm results")
    for col in ("blimp_acc", "validation_ppl", "test_ppl", "full_same_seed_acc", "blimp_delta_same_seed",
                "full_all_seed_avg_acc", "blimp_delta_all_seed_avg", "seed", "corpus_tokens"):
        num = pd.to_numeric(df[col], errors="coerce")
        bad = df.index[num.isna()]
        if len(bad):
            raise PovstimError(f"{path}: column {col}: {df.at[bad[0], col]!r} (data row {bad[0] + 1}) is not a "
                               f"number ({len(bad)} such row(s))")
        df[col] = num
    out = df.index[(df["blimp_acc"] < 0) | (df["blimp_acc"] > 1)]
    if len(out):
        raise PovstimError(f"{path}: blimp_acc {df.at[out[0], 'blimp_acc']!r} (data row {out[0] + 1}) is outside "
                           "[0, 1]")
    flag = df["filter_target"].astype(str).str.strip().str.lower()
    if not flag.isin(["true", "false"]).all():
        i = df.index[~flag.isin(["true", "false"])][0]
        raise PovstimError(f"{path}: filter_target {df.at[i, 'filter_target']!r} (data row {i + 1}) is not "
                           "TRUE/FALSE")
    df["filter_target"] = flag == "true"
    df["seed"] = df["seed"].astype(int)
    dup = df.duplicated(MODEL + ["blimp_benchmark"])
    if dup.any():
        r = df[dup].iloc[0]
        raise PovstimError(f"{path}: {r['corpus']} {r['arch']} seed {r['seed']} {r['blimp_benchmark']} is given "
                           "twice")
    if FULL not in set(df["corpus"]):
        raise PovstimError(f"{path}: no corpus {FULL!r} (the unfiltered corpus every delta is taken against)")
    return df.reset_index(drop=True)


def corpus_sizes(df: pd.DataFrame, folder: str | Path) -> pd.DataFrame:
    """One row per corpus: its tokens (tidy_results.csv's corpus_tokens), share of the full corpus, tokens removed,
    and the name corpus_tokens.csv gives the same count under (the two files name some filters differently:
    agr-pp-mod there is pp-mod-subj here); "" where corpus_tokens.csv is absent or has no such count."""
    sizes = df.drop_duplicates("corpus")[["corpus", "corpus_tokens"]].rename(columns={"corpus_tokens": "tokens"})
    per = df.groupby("corpus")["corpus_tokens"].nunique()
    if (per > 1).any():
        raise PovstimError(f"{Path(folder) / TIDY}: corpus {per[per > 1].index[0]} has several corpus_tokens values")
    full = float(sizes.loc[sizes["corpus"] == FULL, "tokens"].iloc[0])
    sizes = sizes.assign(share_of_full=sizes["tokens"] / full, removed_tokens=(full - sizes["tokens"]).astype(int))
    path = Path(folder) / TOKENS
    names = {}
    if path.is_file():
        tok = _read_csv(path, TOKENS_COLUMNS, "tokens per corpus")
        names = {int(t): str(n) for n, t in zip(tok[tok.columns[0]], tok["tokens"])}
    sizes["name_in_corpus_tokens"] = [names.get(int(t), "") for t in sizes["tokens"]]
    return sizes.reset_index(drop=True)


# ------------------------------------------------------------------ the authors' deltas, recomputed
def references(df: pd.DataFrame) -> dict[str, np.ndarray]:
    """Per row, povstim's reference accuracy for each delta (NaN where the full-corpus model is missing)."""
    full = df[df["corpus"] == FULL]
    same = full.set_index(["arch", "seed", "blimp_benchmark"])["blimp_acc"]
    avg = full.groupby(["arch", "blimp_benchmark"])["blimp_acc"].mean()
    key_same = pd.MultiIndex.from_frame(df[["arch", "seed", "blimp_benchmark"]])
    key_avg = pd.MultiIndex.from_frame(df[["arch", "blimp_benchmark"]])
    return {"blimp_delta_same_seed": same.reindex(key_same).to_numpy(float),
            "blimp_delta_all_seed_avg": avg.reindex(key_avg).to_numpy(float)}


def delta_check(df: pd.DataFrame, tol: float = TOLERANCE) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(one row per delta column: cells, matching within ``tol``, differing; every differing cell with its cause).

    A cell's cause is the first of: no full-corpus model to take the delta against; the authors' reference
    accuracy (full_same_seed_acc / full_all_seed_avg_acc) is not the full-corpus accuracy povstim takes; their
    delta is not their own accuracy minus their own reference (arithmetic)."""
    refs = references(df)
    summary, cells = [], []
    for col, (ref_col, how) in DELTAS.items():
        ref = refs[col]
        ours = df["blimp_acc"].to_numpy(float) - ref
        theirs = df[col].to_numpy(float)
        ok = np.abs(ours - theirs) <= tol
        summary.append({"column": col, "reference": how, "cells": len(df), "match": int(ok.sum()),
                        "differ": int((~ok).sum()), "max_abs_difference": float(np.nanmax(np.abs(ours - theirs)))
                        if np.isfinite(ours).any() else float("nan"), "tolerance": tol})
        for i in np.flatnonzero(~ok):
            r = df.iloc[i]
            if np.isnan(ref[i]):
                kind, cause = "no full model", f"no {FULL} model for {r['arch']} seed {r['seed']} {r['blimp_benchmark']}"
            elif abs(r[ref_col] - ref[i]) > tol:
                kind, cause = "reference", f"their reference {ref_col} = {r[ref_col]!r} is not {how} ({ref[i]!r})"
            else:
                kind, cause = "arithmetic", (f"their delta is not blimp_acc - {ref_col} ({r['blimp_acc']!r} - "
                                             f"{r[ref_col]!r} = {r['blimp_acc'] - r[ref_col]!r})")
            cells.append({"row": int(i), "column": col, **{k: r[k] for k in MODEL + ["blimp_benchmark"]},
                          "blimp_acc": r["blimp_acc"], "theirs": theirs[i], "povstim": ours[i], "kind": kind,
                          "cause": cause})
    cols = ["row", "column", *MODEL, "blimp_benchmark", "blimp_acc", "theirs", "povstim", "kind", "cause"]
    return pd.DataFrame(summary), pd.DataFrame(cells, columns=cols)


# ------------------------------------------------------------------ tables
def delta_table(df: pd.DataFrame) -> pd.DataFrame:
    """One row per filtered corpus x arch x paradigm: mean accuracy over seeds, the full-corpus mean, and the mean
    (and SD over seeds) of each delta recomputed by povstim; ``target``: a paradigm of the corpus's filter."""
    refs = references(df)
    d = df.assign(delta_same_seed=df["blimp_acc"] - refs["blimp_delta_same_seed"],
                  delta_all_seed_avg=df["blimp_acc"] - refs["blimp_delta_all_seed_avg"],
                  full_acc=refs["blimp_delta_same_seed"])
    d = d[d["corpus"] != FULL]
    g = d.groupby(["corpus", "arch", "blimp_benchmark"], sort=False)
    out = g.agg(target=("filter_target", "any"), seeds=("seed", "nunique"), acc=("blimp_acc", "mean"),
                full_acc=("full_acc", "mean"), delta_same_seed=("delta_same_seed", "mean"),
                delta_same_seed_sd=("delta_same_seed", "std"), delta_all_seed_avg=("delta_all_seed_avg", "mean"))
    return out.reset_index().rename(columns={"blimp_benchmark": "paradigm"})


def target_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per filtered corpus x arch: the mean Δ (all-seed average) on its target paradigms and on the others."""
    rows = []
    for (corpus, arch), g in table.groupby(["corpus", "arch"], sort=False):
        t, c = g[g["target"]], g[~g["target"]]
        rows.append({"corpus": corpus, "arch": arch, "targets": ", ".join(t["paradigm"]),
                     "delta_target": t["delta_all_seed_avg"].mean(), "delta_control": c["delta_all_seed_avg"].mean(),
                     "difference": t["delta_all_seed_avg"].mean() - c["delta_all_seed_avg"].mean()})
    return pd.DataFrame(rows)


def perplexity_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per corpus x arch: validation and test perplexity, mean and SD over seeds (one value per model), and the
    corpus's tokens and share of the full corpus."""
    models = df.drop_duplicates(MODEL)
    g = models.groupby(["corpus", "arch"], sort=False)
    out = g.agg(seeds=("seed", "nunique"), validation_ppl=("validation_ppl", "mean"),
                validation_ppl_sd=("validation_ppl", "std"), test_ppl=("test_ppl", "mean"),
                test_ppl_sd=("test_ppl", "std"), tokens=("corpus_tokens", "first")).reset_index()
    full = out.loc[out["corpus"] == FULL, "tokens"].iloc[0]
    return out.assign(share_of_full=out["tokens"] / full)


def counts(df: pd.DataFrame, items: int, where: str) -> pd.DataFrame:
    """Binomial counts per model x paradigm for the Δ model: n_correct = round(accuracy x items)."""
    k = (df["blimp_acc"] * items).round()
    off = (df["blimp_acc"] * items - k).abs() > 0.01
    if off.any():
        r = df[off].iloc[0]
        raise PovstimError(f"{where}: {r['corpus']} {r['arch']} seed {r['seed']} {r['blimp_benchmark']}: accuracy "
                           f"{r['blimp_acc']!r} is not a whole number of {items} items (release.items_per_paradigm)")
    return pd.DataFrame({"condition": df["corpus"], "arch": df["arch"], "seed": df["seed"],
                         "paradigm": df["blimp_benchmark"], "target": df["filter_target"],
                         "n_correct": k.astype(int), "n_total": items})
