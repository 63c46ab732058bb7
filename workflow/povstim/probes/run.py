"""Probe one model (and optionally its checkpoints) with every MSGS task: the tidy LBS rows.

One row per checkpoint × task × inoculation rate × grid point × restart:

    arch condition size seed step final task kind linguistic surface inoculation
    lr batch_size epochs restart ft_seed n_train n_inoculating n_test
    mcc accuracy aux_mcc aux_accuracy train_loss
    control_linguistic control_surface passed lbs status

``mcc`` is the test (out-of-domain) Matthews correlation; for an ambiguous task
it is the LBS when the controls pass (``lbs``, ``status = scored``), and it is
kept but not scored when they do not (``status = failed_control``).
``inoculation`` is empty for control tasks. Wall-clock numbers (fine-tuning
examples/s) are returned separately, so the table is byte-identical between
runs on the same CPU and thread count.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ..io import PovstimError
from ..scoring.items import final_step, holds_final_model, write_parquet
from ..scoring.items import checkpoints as find_checkpoints
from . import lbs as L
from .finetune import HyperParams, finetune, load, predict
from .msgs.features import resolve_tasks
from .msgs.generate import SPLITS, read_jsonl, read_manifest, training_set
from .settings import MsgsSettings

log = logging.getLogger("povstim.probe")

COLUMNS = [
    "arch", "condition", "size", "seed", "step", "final", "task", "kind", "linguistic", "surface", "inoculation",
    "lr", "batch_size", "epochs", "restart", "ft_seed", "n_train", "n_inoculating", "n_test",
    "mcc", "accuracy", "aux_mcc", "aux_accuracy", "train_loss",
    "control_linguistic", "control_surface", "passed", "lbs", "status",
]


def run_seed(seed: int, task: str, restart: int) -> int:
    """The fine-tuning seed of a run: the same for every model, inoculation rate and grid point (paired runs)."""
    digest = hashlib.sha256(f"povstim-msgs-ft:{seed}:{task}:{restart}".encode()).digest()
    return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF


def check_data(manifest: dict, s: MsgsSettings, data_dir) -> None:
    """The data folder must come from the same generator settings (seed, counts, rates, tasks)."""
    items = {"train": s.items.train, "test": s.items.test, "control_train": s.items.control_train,
             "control_test": s.items.control_test}
    problems = []
    if manifest.get("seed") != s.seed:
        problems.append(f"seed {manifest.get('seed')} (settings: {s.seed})")
    if manifest.get("items") != items:
        problems.append(f"items {manifest.get('items')} (settings: {items})")
    missing = [r for r in s.inoculation if r not in manifest.get("inoculation", [])]
    if missing:
        problems.append(f"no inoculating data for rate(s) {missing}")
    absent = [t.name for t in resolve_tasks(s.tasks) if t.name not in manifest.get("tasks", {})]
    if absent:
        problems.append(f"no task(s) {', '.join(absent)}")
    if problems:
        raise PovstimError(f"{data_dir}: probe data does not match the settings: " + "; ".join(problems)
                           + " (regenerate it with `povstim probe generate` and the same --params)")


def model_targets(model_dir: Path, checkpoints: bool) -> list[tuple[int, Path, bool]]:
    """(step, folder, final) of the final model and, when asked, of every checkpoints/step{N}/."""
    out = [(final_step(model_dir), model_dir, True)]
    if checkpoints:
        out += [(step, d, False) for step, d in find_checkpoints(model_dir)]
    return out


def probe_model(model_dir: str | Path, data_dir: str | Path, s: MsgsSettings, meta: dict, device: str = "cpu"):
    """Fine-tune and test every task on the model (and checkpoints); return (tidy rows, timing summary)."""
    model_dir, data_dir = Path(model_dir), Path(data_dir)
    manifest = read_manifest(data_dir)
    check_data(manifest, s, data_dir)
    tasks = resolve_tasks(s.tasks)
    data = {t.name: {split: read_jsonl(data_dir / t.name / f"{split}.jsonl") for split in SPLITS[t.kind]}
            for t in tasks}
    grid = list(itertools.product(s.grid.lr, s.grid.batch_size, s.grid.epochs))
    rows = []
    t_start = time.perf_counter()
    seen_examples, train_seconds = 0, 0.0
    targets = model_targets(model_dir, s.checkpoints)
    final_rows, reused = None, 0  # the final model's rows, for a checkpoint holding the same model
    for step, folder, final in targets:
        if final_rows is not None and holds_final_model(model_dir, step, folder):
            # the checkpoint saved at the final model's step: the same files, so the same fine-tunings (each
            # run's seed depends on the task and restart only, run_seed); its rows, not the grid again
            rows += [{**r, "step": int(step), "final": False} for r in final_rows]
            reused += len(final_rows)
            log.info("%s step %d: the final model's files: its %d runs' rows, not fine-tuned again", folder, step,
                     len(final_rows))
            continue
        first = len(rows)
        clf = load(folder, device)
        # Encode every sentence first, so a sentence too long for the model fails before any fine-tuning.
        everything = sorted({r["sentence"] for t in tasks for recs in data[t.name].values() for r in recs})
        cache = dict(zip(everything, clf.encode(everything)))

        def encode(records):
            return [cache[r["sentence"]] for r in records]

        for task in tasks:
            splits = data[task.name]
            test_ids, test_y = encode(splits["test"]), np.array([r["label"] for r in splits["test"]])
            aux = splits.get("aux")
            aux_ids = encode(aux) if aux else None
            rates = list(s.inoculation) if task.kind == "ambiguous" else [None]
            for rate in rates:
                train = training_set(splits["train"], splits["inoculating"], rate) if rate is not None \
                    else splits["train"]
                train_ids, train_y = encode(train), np.array([r["label"] for r in train])
                n_inoc = sum(r["split"] == "inoculating" for r in train)
                for (lr, bs, epochs), restart in itertools.product(grid, range(s.restarts)):
                    hp = HyperParams(lr=float(lr), batch_size=int(bs), epochs=int(epochs),
                                     warmup_ratio=s.warmup_ratio, weight_decay=s.weight_decay,
                                     adam_beta1=s.adam_beta1, adam_beta2=s.adam_beta2, adam_eps=s.adam_eps,
                                     grad_clip=s.grad_clip)
                    seed = run_seed(s.seed, task.name, restart)
                    model, stats = finetune(clf, train_ids, train_y, hp, seed)
                    pred = predict(model, test_ids, clf.pad_id, clf.device, s.eval_batch_size)
                    row = {
                        **{k: meta[k] for k in ("arch", "condition", "size")}, "seed": int(meta["seed"]),
                        "step": int(step), "final": bool(final), "task": task.name, "kind": task.kind,
                        "linguistic": task.linguistic, "surface": task.surface,
                        "inoculation": float(rate) if rate is not None else float("nan"),
                        "lr": float(lr), "batch_size": int(bs), "epochs": int(epochs), "restart": restart,
                        "ft_seed": seed, "n_train": len(train), "n_inoculating": int(n_inoc),
                        "n_test": len(test_ids), "mcc": L.mcc(test_y, pred), "accuracy": L.accuracy(test_y, pred),
                        "aux_mcc": float("nan"), "aux_accuracy": float("nan"), "train_loss": stats.final_loss,
                    }
                    if aux_ids is not None:
                        aux_y = np.array([r["label"] for r in aux])
                        aux_pred = predict(model, aux_ids, clf.pad_id, clf.device, s.eval_batch_size)
                        row["aux_mcc"], row["aux_accuracy"] = L.mcc(aux_y, aux_pred), L.accuracy(aux_y, aux_pred)
                    rows.append(row)
                    seen_examples += stats.examples
                    train_seconds += stats.seconds
                    del model
            log.info("%s step %d: %s done (%d runs so far)", model_dir, step, task.name, len(rows))
        if final:
            final_rows = rows[first:]
    df = pd.DataFrame(rows)
    df = L.apply_gate(df, s.gate.metric, s.gate.threshold)
    df = df[COLUMNS].sort_values(["step", "task", "inoculation", "lr", "batch_size", "epochs", "restart"],
                                 na_position="first", kind="stable").reset_index(drop=True)
    wall = time.perf_counter() - t_start
    timing = {"runs": len(rows) - reused, "reused_rows": reused, "wall_seconds": round(wall, 3),
              "train_seconds": round(train_seconds, 3), "train_examples": seen_examples,
              "train_examples_per_s": round(seen_examples / train_seconds, 1) if train_seconds else None}
    return df, timing


def write_rows(df: pd.DataFrame, out: str | Path) -> None:
    """Atomic, byte-stable parquet (no pandas index, no schema metadata)."""
    write_parquet(df, out)
