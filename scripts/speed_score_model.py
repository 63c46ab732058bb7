#!/usr/bin/env python
"""Benchmark `povstim score-model` (every checkpoint of a BabyLM-layout folder in one process) against its peers.

    PYTHONPATH=workflow .venv/bin/python scripts/speed_score_model.py [--pairs 600] [--revisions 4] [--rounds 2]

A folder in BabyLM's layout (chck_1M ... chck_{R}M and the final model), random-weight GPT-2s (2 x 128, a
2,048-token BPE tokenizer trained on the suite; speed does not depend on training), scored on generated POSH-BENCH
pairs with BOS, sums, no sensitivity pass. Each run is a fresh process, wall seconds from its start to its exit
(imports and model loading included, as a user pays them), the methods alternating ``--rounds`` times:

* ``score-model``: ``povstim score-model FOLDER --suite ... --out-dir ...`` (one process, the suite encoded once);
* ``score per revision``: one ``povstim score --model FOLDER/chck_xM`` process per revision (and the final model),
  what a shell loop over the revisions does;
* ``minicons``: one process looping over the revisions, ``IncrementalLMScorer`` per revision, ``sequence_score``
  in batches of 64 sentences with ``bos_token=True`` (what a BabyLM user scoring revisions with minicons writes).

Prints the wall times, the ratios against score-model in the same run, and the largest difference between
score-model's sentence sums and minicons' (every revision).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))


def build(root: Path, pairs: list[dict], revisions: int) -> list[Path]:
    from helpers import tiny_models as tiny

    sents = [p["good"] for p in pairs] + [p["bad"] for p in pairs]
    folders = []
    for k in range(1, revisions + 1):
        folders.append(tiny.build(root / f"chck_{k}M", sents, "causal", vocab_size=2048, layers=2, hidden=128,
                                  heads=4, seed=k))
    for f in folders[-1].iterdir():  # the final model: the last checkpoint's files, as BabyLM's main usually is
        (root / f.name).write_bytes(f.read_bytes())
    return folders + [root]


def minicons_worker(folders: list[str], suite: str, out: str) -> None:
    import torch
    from minicons import scorer as mc

    torch.set_num_threads(1)
    pairs = [json.loads(line) for line in Path(suite).read_text().splitlines()]
    sents = [p["good"] for p in pairs] + [p["bad"] for p in pairs]
    res = []
    for folder in folders:
        m = mc.IncrementalLMScorer(folder, "cpu")
        scores = []
        for i in range(0, len(sents), 64):
            scores += m.sequence_score(sents[i:i + 64], reduction=lambda x: x.sum(0).item(), bos_token=True)
        res.append(scores)
    np.save(out, np.asarray(res, dtype=np.float64))


def timed(cmd: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": str(REPO / "workflow"), "TOKENIZERS_PARALLELISM": "false",
           "OMP_NUM_THREADS": "1"}
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    dt = time.perf_counter() - t0
    if r.returncode:
        sys.exit(f"{cmd[:4]} failed:\n{r.stderr[-3000:]}")
    return dt


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=600)
    ap.add_argument("--revisions", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--minicons-worker", nargs=3, metavar=("FOLDERS_JSON", "SUITE", "OUT"))
    args = ap.parse_args()
    if args.minicons_worker:
        folders, suite, out = args.minicons_worker
        minicons_worker(json.loads(folders), suite, out)
        return
    sys.path.insert(0, str(REPO / "workflow"))
    from povstim.benchmarks import posh
    from povstim.benchmarks import words as lexicon

    pairs = [{"suite": "posh", "paradigm": p.paradigm, "category": p.category, "item_id": str(i), "good": p.good,
              "bad": p.bad} for i, p in enumerate(posh.generate(lexicon.default_lexicon(), args.pairs // 9 + 1,
                                                                 seed=1))][:args.pairs]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        suite = tmp / "posh.jsonl"
        suite.write_text("".join(json.dumps(p) + "\n" for p in pairs))
        folders = build(tmp / "bm", pairs, args.revisions)
        params = json.dumps({"sensitivity": False, "device": "cpu", "checkpoints": False})
        py = [sys.executable, "-m", "povstim"]
        runs = {"score-model": [], "score per revision": [], "minicons": []}
        for _ in range(args.rounds):
            runs["score-model"].append(timed(py + ["score-model", str(tmp / "bm"), "--suite", str(suite), "--out-dir",
                                                   str(tmp / "sm"), "--params", params, "--threads", "1",
                                                   "--no-figure"]))
            runs["score per revision"].append(sum(
                timed(py + ["score", "--model", str(f), "--suite", str(suite), "--out", str(tmp / f"s{k}.parquet"),
                            "--params", params, "--threads", "1"]) for k, f in enumerate(folders)))
            runs["minicons"].append(timed([sys.executable, __file__, "--minicons-worker",
                                           json.dumps([str(f) for f in folders]), str(suite), str(tmp / "mc.npy")]))
        import pandas as pd

        ours = pd.read_parquet(tmp / "sm" / "posh.parquet")
        ref = np.load(tmp / "mc.npy")
        n = len(pairs)
        diff = 0.0
        for k, f in enumerate(folders):
            name = "main" if f == tmp / "bm" else f.name
            rows = ours[ours["revision"] == name]
            got = np.concatenate([rows["logp_good"].to_numpy(), rows["logp_bad"].to_numpy()])
            diff = max(diff, float(np.abs(got - ref[k][: 2 * n]).max()))
        base = min(runs["score-model"])
        print(f"{n} pairs x {len(folders)} revisions (chck_1M..chck_{args.revisions}M + main), 1 thread, "
              f"{args.rounds} alternating rounds, fresh processes")
        print("| method | wall s (each round) | best | vs score-model |")
        print("|---|---|---|---|")
        for name, times in runs.items():
            print(f"| {name} | {', '.join(f'{t:.1f}' for t in times)} | {min(times):.1f} | "
                  f"{min(times) / base:.2f}x |")
        print(f"max |score-model - minicons| over every sentence and revision: {diff:.2e}")


if __name__ == "__main__":
    main()
