"""Item scores: pairs x scores -> the item-score table of CONVENTIONS.md.

One row per model x checkpoint x item with columns ``arch, condition, size,
seed, step, final, suite, paradigm, category, item_id, logp_good, logp_bad,
ntok_good, ntok_bad, correct``. ``correct`` is a strict ``logp_good >
logp_bad``: a tie is not correct (a model that gives both sentences the same
score has not told them apart).

With ``scoring.sensitivity`` the rows of a model also carry the raw material of
every other metric (``SENSITIVITY_COLUMNS``): the float64 sum of token
log-probabilities and the number of scored tokens of each sentence, once with a
BOS token prepended (every token scored) and once without (the first token only
conditions the rest, minicons' default). Sum and mean under either setting are
then exact functions of these columns (mean = sum / ntok, as the scorer computes
it), so ``analysis.sensitivity`` recomputes each metric's verdicts without
rescoring. Masked LMs score every token whatever ``bos`` says: their ``*_bos``
columns hold the sums and ``*_nobos`` stay empty (NaN sums, 0 tokens); so do the
``*_nobos`` columns of checkpoint rows, since the second pass is run for the
final model only.
"""

from __future__ import annotations

import filecmp
import json
import re
from pathlib import Path

import numpy as np

from ..io import PovstimError, atomic_path

COLUMNS = [
    "arch", "condition", "size", "seed", "step", "final", "suite", "paradigm", "category", "item_id",
    "logp_good", "logp_bad", "ntok_good", "ntok_bad", "correct",
]
SENSITIVITY_COLUMNS = [
    "sum_bos_good", "sum_bos_bad", "ntok_bos_good", "ntok_bos_bad",
    "sum_nobos_good", "sum_nobos_bad", "ntok_nobos_good", "ntok_nobos_bad",
]
_STEP_RE = re.compile(r"^step(\d+)$")


def pair_sentences(pairs: list[dict]) -> list[str]:
    """Every pair's good sentence, then every bad one: the order item_frame expects scores in."""
    return [p["good"] for p in pairs] + [p["bad"] for p in pairs]


def sensitivity_columns(n: int, with_bos, without_bos) -> dict:
    """The SENSITIVITY_COLUMNS of ``n`` pairs from the Scores of pair_sentences() with and without
    BOS (either may be None: not computed -> NaN sums and 0 tokens)."""
    out = {}
    for tag, sc in (("bos", with_bos), ("nobos", without_bos)):
        if sc is None:
            total, ntok = np.full(2 * n, np.nan), np.zeros(2 * n, dtype=np.int64)
        else:
            total, ntok = sc.total.astype(np.float64), sc.ntok.astype(np.int64)
        out[f"sum_{tag}_good"], out[f"sum_{tag}_bad"] = total[:n], total[n:]
        out[f"ntok_{tag}_good"], out[f"ntok_{tag}_bad"] = ntok[:n], ntok[n:]
    return {c: out[c] for c in SENSITIVITY_COLUMNS}


def identity_columns(items: list[dict], meta: dict, step: int, final: bool) -> dict:
    """The columns that say which model, checkpoint and item a score row belongs to (any task kind)."""
    n = len(items)
    return {
        "arch": str(meta.get("arch", "")),
        "condition": str(meta.get("condition", "")),
        "size": str(meta.get("size", "")),
        "seed": np.full(n, int(meta.get("seed", 0)), dtype=np.int64),
        "step": np.full(n, int(step), dtype=np.int64),
        "final": np.full(n, bool(final)),
        "suite": [str(it["suite"]) for it in items],
        "paradigm": [str(it["paradigm"]) for it in items],
        "category": [str(it["category"]) for it in items],
        "item_id": [str(it["item_id"]) for it in items],
    }


def item_frame(pairs: list[dict], score_fn, meta: dict, step: int, final: bool, sensitivity=None, metric=None,
               words=None):
    """Score every pair's sentences in one call (so batching spans pairs) and build rows.

    ``score_fn`` is a function of the sentences or their Scores already computed.
    ``sensitivity``: None (no extra columns) or a function of (n, primary Scores) returning
    the SENSITIVITY_COLUMNS. ``metric``: None (the sentence scores) or (logp, ntok) of pair_sentences() under
    ``scoring.metric`` (region or SLOR scores, scoring/words.py), which the logp/ntok columns and the verdict then
    hold; the sensitivity columns stay the sentences'. ``words``: the word columns (words.word_columns), last.
    """
    import pandas as pd

    sentences = pair_sentences(pairs)
    scores = score_fn(sentences) if callable(score_fn) else score_fn
    n = len(pairs)
    logp, ntok = (scores.logp, scores.ntok) if metric is None else metric
    good, bad = logp[:n], logp[n:]
    extra = sensitivity(n, scores) if sensitivity is not None else {}
    extra.update(words or {})
    return pd.DataFrame(
        {
            **identity_columns(pairs, meta, step, final),
            "logp_good": good.astype(np.float64),
            "logp_bad": bad.astype(np.float64),
            "ntok_good": ntok[:n].astype(np.int64),
            "ntok_bad": ntok[n:].astype(np.int64),
            "correct": good > bad,
            **extra,
        },
        columns=COLUMNS + list(extra),
    )


def write_parquet(df, out: str | Path) -> None:
    """Write atomically, deterministic bytes for equal frames (no pandas index, fixed schema)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(df.reset_index(drop=True), preserve_index=False)
    table = table.replace_schema_metadata(None)
    with atomic_path(out) as tmp:
        pq.write_table(table, tmp, compression="zstd")


def final_step(model_dir: Path) -> int:
    """The training step of the final (best-by-dev) weights; -1 when nothing says.

    Reads ``train_summary.json`` (best_step) as written by ``povstim train``,
    then an HF Trainer ``trainer_state.json``, then the last step in
    ``train_log.jsonl``.
    """
    summary = model_dir / "train_summary.json"
    if summary.exists():
        try:
            data = json.loads(summary.read_text())
            if "best_step" in data:
                return int(data["best_step"])
        except (ValueError, TypeError):
            raise PovstimError(f"{summary} is not valid JSON") from None
    state = model_dir / "trainer_state.json"
    if state.exists():
        try:
            data = json.loads(state.read_text())
        except ValueError:
            raise PovstimError(f"{state} is not valid JSON") from None
        best = data.get("best_model_checkpoint") or ""
        m = re.search(r"checkpoint-(\d+)", best)
        if m:
            return int(m.group(1))
        if "global_step" in data:
            return int(data["global_step"])
    train_log = model_dir / "train_log.jsonl"
    if train_log.exists():
        steps = []
        for line in train_log.read_text().splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if isinstance(rec, dict) and isinstance(rec.get("step"), int):
                steps.append(rec["step"])
        if steps:
            return max(steps)
    return -1


def checkpoints(model_dir: Path) -> list[tuple[int, Path]]:
    """``DIR/checkpoints/step{N}/`` folders holding weights, by step; when the run saved checkpoints by words
    seen (``training.checkpoint_words``: ``DIR/checkpoints/chck_{budget}/``), those instead, by the step each
    manifest names (the step checkpoints are then resume points, not learning-curve points)."""
    root = model_dir / "checkpoints"
    out = []
    words = word_checkpoints(model_dir)
    if words:
        return words
    if root.is_dir():
        for d in root.iterdir():
            m = _STEP_RE.match(d.name)
            if m and d.is_dir() and any((d / f).exists() for f in ("model.safetensors", "pytorch_model.bin")):
                out.append((int(m.group(1)), d))
    return sorted(out)


def word_checkpoints(model_dir: Path) -> list[tuple[int, Path]]:
    """(step, folder) of each ``DIR/checkpoints/chck_{budget}/`` holding weights, by step (train/checkpoints.py)."""
    root = model_dir / "checkpoints"
    out = []
    if root.is_dir():
        for d in sorted(root.glob("chck_*")):
            if d.is_dir() and any((d / f).exists() for f in ("model.safetensors", "pytorch_model.bin")):
                try:
                    out.append((int(json.loads((d / "manifest.json").read_text())["step"]), d))
                except (OSError, ValueError, KeyError, TypeError):
                    raise PovstimError(f"{d / 'manifest.json'} is missing or does not name the checkpoint's "
                                       "step") from None
    return sorted(out)


def words_seen(model_dir: Path) -> dict[int, int] | None:
    """step -> words of training text seen, for the final model and its word checkpoints, from the
    train_summary.json of a run with ``training.checkpoint_words``; None for any other model."""
    summary = model_dir / "train_summary.json"
    if not summary.exists():
        return None
    try:
        data = json.loads(summary.read_text())
    except ValueError:
        raise PovstimError(f"{summary} is not valid JSON") from None
    if "best_words" not in data:
        return None
    out = {int(v["step"]): int(v["words"]) for v in data.get("checkpoint_words", {}).values()}
    out[int(data["best_step"])] = int(data["best_words"])
    return out


def with_words_seen(frame, model_dir: Path):
    """The item scores with a ``words_seen`` column (words seen at each row's step) when the model was trained
    with word checkpoints; unchanged otherwise."""
    seen = words_seen(model_dir) if model_dir.is_dir() else None
    if seen is None:
        return frame
    missing = sorted({int(s) for s in frame["step"].unique()} - set(seen))
    if missing:
        raise PovstimError(f"{model_dir / 'train_summary.json'}: no words seen recorded for step(s) "
                           f"{', '.join(map(str, missing))}")
    return frame.assign(words_seen=frame["step"].map(seen).astype("int64"))


# Files a model folder holds besides the model: what training recorded. They do not change a score.
TRAINING_RECORDS = frozenset({"train_log.jsonl", "train_summary.json", "trainer_state.pt", "trainer_state.json",
                              "training_args.bin", "optimizer.pt", "scheduler.pt", "rng_state.pth"})


def same_model(a: Path, b: Path) -> bool:
    """Whether two model folders hold the same model: the same files, byte for byte, training records aside
    (config, weights, tokenizer and any file not known to be a record), so they give the same scores and
    probe results. A checkpoint saved at the final model's step is such a folder."""
    def files(folder: Path) -> dict[str, Path]:
        return {p.name: p for p in folder.iterdir() if p.is_file() and p.name not in TRAINING_RECORDS}

    mine, theirs = files(a), files(b)
    # shallow=False: sizes, then contents (never only the stat signatures); filecmp's cache is keyed on
    # size and mtime, so a file rewritten in place within one mtime tick could be answered from it: clear it
    filecmp.clear_cache()
    return mine.keys() == theirs.keys() and all(filecmp.cmp(mine[n], theirs[n], shallow=False) for n in mine)


def holds_final_model(model_dir: Path, step: int, folder: Path) -> bool:
    """Whether the checkpoint ``folder`` (saved at ``step``) holds ``model_dir``'s final model: saved at its step,
    with the same files. Scoring and probing give such a checkpoint the final model's rows."""
    return step == final_step(model_dir) and same_model(folder, model_dir)


_SEED_DIR_RE = re.compile(r"^seed(\d+)$")


def model_meta(model: Path) -> tuple[dict, str]:
    """(arch/condition/size/seed, where they came from) of a model folder, for labelling its rows."""
    summary = model / "train_summary.json"
    if summary.is_file():
        try:
            record = json.loads(summary.read_text()).get("model") or {}
        except (OSError, ValueError):
            record = {}
        if record.get("arch"):
            return {k: record[k] for k in ("arch", "condition", "size", "seed") if k in record}, str(summary)
    parts = model.resolve().parts if model.exists() else model.parts
    m = _SEED_DIR_RE.match(parts[-1]) if parts else None
    if m and len(parts) >= 5 and parts[-5] == "models":
        return {"arch": parts[-4], "condition": parts[-3], "size": parts[-2], "seed": int(m.group(1))}, \
            "its models/{arch}/{condition}/{size}/seed{N} path"
    name = parts[-1] if parts else str(model)
    return {"arch": name}, "the folder's name"
