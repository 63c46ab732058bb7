"""``povstim probe``: MSGS fine-tuning probes (docs/probes.md).

Three steps, each one rule of rules/probe.smk:

    povstim probe generate --params MSGS_JSON --out-dir results/probes/msgs/data
    povstim probe run --model results/models/gpt2-tiny/baby/50k/seed1 --data results/probes/msgs/data
        --params MSGS_JSON --meta '{"arch": "gpt2-tiny", "condition": "baby", "size": "50k", "seed": 1}'
        --out results/probes/msgs/gpt2-tiny/baby/50k/seed1/lbs.parquet
    povstim probe summarize --lbs results/probes/msgs/*/*/*/*/lbs.parquet --params MSGS_JSON
        --out-dir results/probes/msgs --figures results/probes/msgs/figures

MSGS_JSON is the config's ``probes.msgs`` section (partial is fine: the schema
fills the rest, and its defaults are the MSGS paper's values).
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from pathlib import Path

from ..io import PovstimError, atomic_write, json_object_arg, write_json
from .msgs.features import resolve_tasks
from .msgs.generate import Counts, write_data
from .settings import msgs_settings

log = logging.getLogger("povstim.probe")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = __doc__.split("\n\n", 1)[1]
    sub = p.add_subparsers(dest="step", metavar="STEP", required=True)
    g = sub.add_parser("generate", help="generate the MSGS-style data (control + ambiguous tasks)")
    g.add_argument("--params", help="the config's probes.msgs section as JSON")
    g.add_argument("--out-dir", required=True, help="data folder: <task>/<split>.jsonl + manifest.json")
    r = sub.add_parser("run", help="fine-tune one model (and its checkpoints) on every task: tidy LBS rows")
    r.add_argument("--model", required=True, help="model folder (HF save_pretrained with tokenizer)")
    r.add_argument("--data", required=True, help="data folder written by `povstim probe generate`")
    r.add_argument("--params", help="the config's probes.msgs section as JSON")
    r.add_argument("--meta", help="JSON {arch, condition, size, seed} written into every row")
    r.add_argument("--device", help="auto (default), cpu, cuda or cuda:N (overrides --params)")
    r.add_argument("--threads", type=int, help="CPU threads for torch (default: probes.msgs.threads)")
    r.add_argument("--timing", help="also write fine-tuning throughput and wall time to this JSON file")
    r.add_argument("--out", required=True, help="output .parquet")
    s = sub.add_parser("summarize", help="aggregate the LBS rows of every model: tables + MSGS-style figures")
    s.add_argument("--lbs", nargs="+", required=True, help="lbs.parquet files of `povstim probe run`")
    s.add_argument("--params", help="the config's probes.msgs section as JSON (the gate threshold)")
    s.add_argument("--out-dir", required=True, help="folder for lbs.parquet, lbs_summary.csv, controls.csv")
    s.add_argument("--figures", required=True, help="folder for the figures (PNG + PDF)")


def _settings(args):
    return msgs_settings(json_object_arg(args.params, "--params"), device=getattr(args, "device", None),
                         threads=getattr(args, "threads", None))


def _meta(args) -> dict:
    meta = json_object_arg(args.meta, "--meta")
    meta.setdefault("arch", Path(str(args.model).rstrip("/")).name)
    meta.setdefault("condition", "")
    meta.setdefault("size", "")
    meta.setdefault("seed", 0)
    return meta


def run(args) -> int:
    return {"generate": _generate, "run": _run, "summarize": _summarize}[args.step](args)


def _generate(args) -> int:
    s = _settings(args)
    counts = Counts(s.items.train, s.items.test, s.items.control_train, s.items.control_test)
    t0 = time.perf_counter()
    manifest = write_data(args.out_dir, resolve_tasks(s.tasks), counts, list(s.inoculation), s.seed)
    dt = time.perf_counter() - t0
    log.info("generated %d sentences for %d tasks in %.2fs (%.0f sentences/s) -> %s", manifest["sentences"],
             len(manifest["tasks"]), dt, manifest["sentences"] / dt if dt else 0, args.out_dir)
    return 0


def _run(args) -> int:
    import torch

    # deferred: devices (jsonschema), pandas and torch, only when a model is probed
    from ..devices.slots import resolve_device
    from .run import probe_model, write_rows

    s = _settings(args)
    torch.set_num_threads(s.threads)
    device = resolve_device(s.device)
    df, timing = probe_model(args.model, args.data, s, _meta(args), device)
    write_rows(df, args.out)
    timing.update(device=str(device), threads=s.threads, model=str(args.model))
    log.info("probe timing: %s", json.dumps(timing, sort_keys=True))
    if args.timing:
        write_json(args.timing, timing)
    scored = df[df["status"] == "scored"]
    log.info("%d runs (%d scored, %d failed control) -> %s; mean LBS %s", len(df), len(scored),
             int((df["status"] == "failed_control").sum()), args.out,
             f"{scored['lbs'].mean():.3f}" if len(scored) else "n/a")
    return 0


def _summarize(args) -> int:
    import pandas as pd

    # deferred: matplotlib and pandas, only when the summary is drawn
    from .figures import draw_all
    from .lbs import summarize
    from .run import COLUMNS, write_rows

    s = _settings(args)
    frames = []
    for path in args.lbs:
        if not Path(path).is_file():
            raise PovstimError(f"{path}: no such LBS file")
        df = pd.read_parquet(path)
        missing = [c for c in COLUMNS if c not in df.columns]
        if missing:
            raise PovstimError(f"{path}: not an LBS table of `povstim probe run` (missing {', '.join(missing)})")
        frames.append(df[COLUMNS])
    df = pd.concat(frames, ignore_index=True)
    df = df.sort_values(["arch", "condition", "size", "seed", "step", "task", "inoculation", "lr", "batch_size",
                         "epochs", "restart"], na_position="first", kind="stable").reset_index(drop=True)
    out = Path(args.out_dir)
    write_rows(df, out / "lbs.parquet")
    table, controls = summarize(df)
    for name, frame in (("lbs_summary.csv", table), ("controls.csv", controls)):
        with atomic_write(out / name) as fh:
            frame.to_csv(fh, index=False, float_format="%.6g")
    written = draw_all(df, args.figures, s.gate.threshold if s.gate.metric == "mcc" else None)
    Path(args.figures).mkdir(parents=True, exist_ok=True)
    log.info("%d rows from %d models -> %s; figures: %s", len(df), len(frames), out, ", ".join(written) or "none")
    return 0
