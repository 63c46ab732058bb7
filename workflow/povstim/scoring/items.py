"""Item scores: pairs x scores -> the item-score table of CONVENTIONS.md.

One row per model x checkpoint x item with columns ``arch, condition, size,
seed, step, final, suite, paradigm, category, item_id, logp_good, logp_bad,
ntok_good, ntok_bad, correct``. ``correct`` is a strict ``logp_good >
logp_bad``: a tie is not correct (a model that gives both sentences the same
score has not told them apart).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from ..io import PovstimError, atomic_path

COLUMNS = [
    "arch", "condition", "size", "seed", "step", "final", "suite", "paradigm", "category", "item_id",
    "logp_good", "logp_bad", "ntok_good", "ntok_bad", "correct",
]
_STEP_RE = re.compile(r"^step(\d+)$")


def item_frame(pairs: list[dict], score_fn, meta: dict, step: int, final: bool):
    """Score every pair's sentences in one call (so batching spans pairs) and build rows."""
    import pandas as pd

    sentences = [p["good"] for p in pairs] + [p["bad"] for p in pairs]
    scores = score_fn(sentences)
    n = len(pairs)
    good, bad = scores.logp[:n], scores.logp[n:]
    return pd.DataFrame(
        {
            "arch": str(meta.get("arch", "")),
            "condition": str(meta.get("condition", "")),
            "size": str(meta.get("size", "")),
            "seed": np.full(n, int(meta.get("seed", 0)), dtype=np.int64),
            "step": np.full(n, int(step), dtype=np.int64),
            "final": np.full(n, bool(final)),
            "suite": [str(p["suite"]) for p in pairs],
            "paradigm": [str(p["paradigm"]) for p in pairs],
            "category": [str(p["category"]) for p in pairs],
            "item_id": [str(p["item_id"]) for p in pairs],
            "logp_good": good.astype(np.float64),
            "logp_bad": bad.astype(np.float64),
            "ntok_good": scores.ntok[:n].astype(np.int64),
            "ntok_bad": scores.ntok[n:].astype(np.int64),
            "correct": good > bad,
        },
        columns=COLUMNS,
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
    """``DIR/checkpoints/step{N}/`` folders holding weights, by step."""
    root = model_dir / "checkpoints"
    out = []
    if root.is_dir():
        for d in root.iterdir():
            m = _STEP_RE.match(d.name)
            if m and d.is_dir() and any((d / f).exists() for f in ("model.safetensors", "pytorch_model.bin")):
                out.append((int(m.group(1)), d))
    return sorted(out)
