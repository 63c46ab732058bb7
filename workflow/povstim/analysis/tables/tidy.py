"""One tidy table from many item-score files (or from a table of aggregated counts).

Two input formats are accepted (docs/analysis.md):

* item scores (``results/scores/.../{suite}.parquet``): one row per model x checkpoint x item
  with the columns in ``SCORE_COLUMNS``; ``correct`` is the item's outcome, whatever the task
  kind. Files of suites with multiple-choice or completion items (scoring/tasks.py) may be
  mixed with minimal-pair files: the table then gets ``task`` and ``chance`` (see
  :func:`with_chance`), and the chi-square tests use each item's own chance level.
* aggregated counts (CSV): one row per model x paradigm with ``n_correct`` and ``n_total``
  plus whichever descriptive columns the analysis needs (``condition, size, seed, paradigm,
  category`` …), so published accuracy tables can be analysed the same way.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd

from povstim.io import PovstimError, parse_size

log = logging.getLogger(__name__)

SCORE_COLUMNS = [
    "arch", "condition", "size", "seed", "step", "final", "suite", "paradigm", "category",
    "item_id", "logp_good", "logp_bad", "ntok_good", "ntok_bad", "correct",
]
# Optional (scoring.sensitivity): per-sentence sums and token counts with and without BOS,
# from which analysis.sensitivity recomputes every metric. = povstim.scoring.items.SENSITIVITY_COLUMNS
SENSITIVITY_COLUMNS = [
    "sum_bos_good", "sum_bos_bad", "ntok_bos_good", "ntok_bos_bad",
    "sum_nobos_good", "sum_nobos_bad", "ntok_nobos_good", "ntok_nobos_bad",
]
MODEL_KEYS = ["arch", "condition", "size", "seed"]
# Everything that identifies one model's result on one item.
ITEM_KEYS = ["suite", "arch", "condition", "size", "seed", "step", "paradigm", "item_id"]
COUNT_COLUMNS = ["n_correct", "n_total"]


def size_words(size) -> int:
    """Numeric word count of a size label ('50k' -> 50000) for ordering and z-scoring."""
    return parse_size(size if isinstance(size, (int, np.integer)) else str(size))


def read_frame(path: str | Path, what: str, **csv_kw) -> pd.DataFrame:
    """A parquet or CSV table, or an error naming the file (missing, unreadable)."""
    path = Path(path)
    if not path.exists():
        raise PovstimError(f"{path}: no such {what} file")
    kind = "parquet" if path.suffix == ".parquet" else "CSV"
    try:  # pyarrow and pandas raise many exception types for a corrupt file
        return pd.read_parquet(path) if kind == "parquet" else pd.read_csv(path, **csv_kw)
    except Exception as exc:
        raise PovstimError(f"{path}: cannot read as {kind} ({exc})") from None


def read_scores(paths: Iterable[str | Path]) -> pd.DataFrame:
    """Concatenate item-score parquet files, checking the columns of each one."""
    frames = []
    for path in paths:
        df = read_frame(path, "item-score")
        missing = [c for c in SCORE_COLUMNS if c not in df.columns]
        if missing:
            raise PovstimError(f"{path}: item-score file lacks column(s) {', '.join(missing)}")
        if df.empty:
            log.warning("%s: no rows", path)
            continue
        extra = [c for c in SENSITIVITY_COLUMNS if c in df.columns]
        if extra and len(extra) != len(SENSITIVITY_COLUMNS):
            raise PovstimError(f"{path}: item-score file has only some of the sensitivity columns "
                               f"(lacks {', '.join(c for c in SENSITIVITY_COLUMNS if c not in extra)})")
        frames.append(df[SCORE_COLUMNS + extra + [c for c in TASK_KEEP + WORDS_KEEP if c in df.columns]])
    if not frames:
        raise PovstimError("no item scores to analyse: every --scores file is empty")
    # Files without the sensitivity columns (baselines, older runs) get NaN sums and 0 tokens there.
    df = pd.concat(frames, ignore_index=True)
    if any(c in df.columns for c in SENSITIVITY_COLUMNS):
        for c in SENSITIVITY_COLUMNS:
            df[c] = df[c].fillna(0).astype("int64") if c.startswith("ntok") else df[c].astype("float64")
    if "task" in df.columns:
        df = with_chance(df)
    return normalise(df, "item scores")


# Score files of suites with other task kinds (scoring/tasks.py) also carry these.
TASK_KEEP = ["task", "n_options"]
# ... and those of models trained with training.checkpoint_words this (scoring/items.with_words_seen)
WORDS_KEEP = ["words_seen"]


def with_chance(df: pd.DataFrame) -> pd.DataFrame:
    """Mixed task kinds: ``task`` (minimal_pair where missing) and each item's ``chance`` of being correct
    by guessing: 1/2 for a minimal pair, 1/k for k options, none (NaN) for an open completion.

    Only a set with some non-minimal-pair file gets these columns, so a minimal-pair
    experiment's tables stay exactly as they were.
    """
    df = df.copy()
    df["task"] = df["task"].fillna("minimal_pair").astype(str)
    k = pd.to_numeric(df["n_options"], errors="coerce") if "n_options" in df.columns else np.nan
    df["chance"] = np.where(df["task"] == "minimal_pair", 0.5,
                            np.where(df["task"] == "multiple_choice", 1.0 / k, np.nan)).astype(float)
    return df.drop(columns=["n_options"], errors="ignore")


def normalise(df: pd.DataFrame, what: str) -> pd.DataFrame:
    """Fix dtypes and sort, so every downstream table is independent of file order."""
    df = df.copy()
    for col in ("arch", "condition", "suite", "paradigm", "category", "item_id"):
        if col in df.columns:
            df[col] = df[col].astype(str)
    if "size" in df.columns:
        df["size"] = df["size"].astype(str)
        bad = [s for s in df["size"].unique() if not _is_size(s)]
        if bad:
            raise PovstimError(f"{what}: cannot read size value(s) {bad[:3]}: use labels like 50k or 10M")
    if "seed" in df.columns:
        df["seed"] = pd.to_numeric(df["seed"], errors="raise").astype(int)
    if "step" in df.columns:
        df["step"] = pd.to_numeric(df["step"]).astype(int)
    if "final" in df.columns:
        df["final"] = df["final"].astype(bool)
    if "correct" in df.columns:
        df["correct"] = df["correct"].astype(bool)
    keys = [k for k in ITEM_KEYS + ["final"] if k in df.columns]
    if "size" in keys:
        df["_size_words"] = df["size"].map(size_words)
        keys = ["_size_words" if k == "size" else k for k in keys]
    df = df.sort_values(keys, kind="mergesort").reset_index(drop=True)
    return df.drop(columns=["_size_words"], errors="ignore")


def _is_size(s: str) -> bool:
    try:
        parse_size(s)
    except PovstimError:
        return False
    return True


def final_items(df: pd.DataFrame) -> pd.DataFrame:
    """The rows of the final (best-by-dev) models: what the tables and the model use."""
    out = df[df["final"]].drop_duplicates(subset=[k for k in ITEM_KEYS if k != "step"])
    if out.empty:
        raise PovstimError("item scores hold no rows with final == True (no final models scored)")
    return out.reset_index(drop=True)


def curve_items(df: pd.DataFrame) -> pd.DataFrame:
    """Checkpoint rows plus final rows, one row per model x step x item (learning curves)."""
    return df.drop_duplicates(subset=ITEM_KEYS).reset_index(drop=True)


def attach_conditions(df: pd.DataFrame, meta: dict | None) -> pd.DataFrame:
    """Add the condition-level predictors (``source``, ``filtered``) from povstim.plan.condition_meta."""
    if not meta:
        return df
    if "condition" not in df.columns:
        raise PovstimError("cannot attach --conditions: the data has no 'condition' column")
    unknown = sorted(set(df["condition"]) - set(meta))
    if unknown:
        raise PovstimError(
            f"condition(s) {', '.join(unknown)} in the data are not in --conditions "
            f"(known: {', '.join(sorted(meta))})"
        )
    df = df.copy()
    for key in ("source", "filtered"):
        values = {c: m.get(key) for c, m in meta.items()}
        if any(v is None for c, v in values.items() if c in set(df["condition"])):
            raise PovstimError(f"--conditions: every condition needs '{key}'")
        df[key] = df["condition"].map(values)
    df["filtered"] = df["filtered"].astype(bool)
    df["source"] = df["source"].astype(str)
    if any(m.get("placebo") for m in meta.values()):  # a placebo's own level of the three-level model (bayes.derive)
        df["placebo"] = df["condition"].map({c: f"PLACEBO{m['placebo']['draw']}" if m.get("placebo") else ""
                                             for c, m in meta.items()})
    return df


def read_counts(path: str | Path) -> pd.DataFrame:
    """Read an aggregated-count CSV (n_correct, n_total + descriptive columns)."""
    path = Path(path)
    df = read_frame(path, "counts")
    missing = [c for c in COUNT_COLUMNS if c not in df.columns]
    if missing:
        raise PovstimError(f"{path}: counts file lacks column(s) {', '.join(missing)} "
                           "(needs n_correct and n_total per row)")
    for col in COUNT_COLUMNS:
        vals = pd.to_numeric(df[col], errors="coerce")
        bad = vals.isna() | (vals < 0) | (vals != vals.round())
        if bad.any():
            line = int(np.flatnonzero(bad.to_numpy())[0]) + 2  # header is line 1
            raise PovstimError(f"{path}: line {line}: {col} must be a non-negative integer, "
                               f"got {df[col].iloc[line - 2]!r}")
        df[col] = vals.astype(int)
    over = df["n_correct"] > df["n_total"]
    if over.any():
        line = int(np.flatnonzero(over.to_numpy())[0]) + 2
        raise PovstimError(f"{path}: line {line}: n_correct > n_total")
    if "filtered" in df.columns:
        df["filtered"] = df["filtered"].map(_as_bool)
    if "paradigm" in df.columns and "phenomenon" not in df.columns:
        df["phenomenon"] = df["paradigm"].astype(str)
    return normalise(df, str(path))


def _as_bool(v) -> bool:
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    s = str(v).strip().lower()
    if s in ("true", "1", "yes", "y", "t"):
        return True
    if s in ("false", "0", "no", "n", "f"):
        return False
    raise PovstimError(f"cannot read filtered value {v!r} as true/false")
