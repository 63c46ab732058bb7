#!/usr/bin/env python
"""Training throughput of each Experiment 3 inductive bias against the plain model (docs/exp3.md).

Trains the same GPT-2 on the same sentences, one sentence per sequence, with each bias
(none, dyck, tpt, recency, dyck+recency) and prints tokens/s (non-pad input tokens per
second of training, from train_log.jsonl after the first, warm-up, window) and the ratio
to the plain model. Runs alternate between the conditions and the median of --repeats
runs is reported, which keeps the comparison fair on a shared machine. The Dyck
pre-pretraining itself is timed too (tokens/s on Dyck symbols).

The corpus is synthetic English with gold parses (the TPT supervision needs a parse of
every sentence), as in configs/exp3-demo.yaml.

    .venv/bin/python scripts/speed_biases.py [--arch tiny|mini] [--steps 120] [--threads 1] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))

ARCHS = {
    "tiny": {"family": "gpt2", "n_layer": 2, "n_embd": 128, "n_head": 4, "n_inner": 512},
    "mini": {"family": "gpt2", "n_layer": 4, "n_embd": 512, "n_head": 8, "n_inner": 2048},  # POSH Table 5
}
BIASES = {
    "vanilla": {},
    "dyck": {"dyck": {"k": 16, "steps": 20}},
    "tpt": {"tpt": {"layers": [-1], "heads": [0], "weight": 0.5}},
    "recency": {"recency": {"r": 0.6}},
    "dyck+recency": {"dyck": {"k": 16, "steps": 20}, "recency": {"r": 0.6}},
}


def prepare(folder: Path, sentences: int) -> dict:
    from povstim import cli

    def run(*args):
        assert cli.main(list(args)) == 0, args

    run("synth", "--register", "child", "--sentences", str(sentences), "--seed", "1",
        "--out-text", str(folder / "all.txt"), "--out-conllu", str(folder / "all.conllu"))
    lines = (folder / "all.txt").read_text().splitlines()
    n_dev = max(50, len(lines) // 50)
    (folder / "train.txt").write_text("\n".join(lines[n_dev:]) + "\n")
    (folder / "dev.txt").write_text("\n".join(lines[:n_dev]) + "\n")
    for split in ("train", "dev"):
        run("parse", "--input", str(folder / f"{split}.txt"), "--gold", str(folder / "all.conllu"),
            "--no-prefilter", "--no-cache", "--out", str(folder / f"{split}.conllu"))
    run("tokenize", "--train", str(folder / "train.txt"), "--params", json.dumps({"vocab_size": 1024}),
        "--out", str(folder / "tok.json"))
    return {"train": str(folder / "train.txt"), "dev": str(folder / "dev.txt"), "tok": str(folder / "tok.json"),
            "parses": [str(folder / "train.conllu"), str(folder / "dev.conllu")]}


def training(args, steps):
    return {"lr": 1e-3, "batch_size": args.batch_size, "context": 32, "warmup": 0, "max_steps": steps,
            "patience": 10**6, "eval_every": steps, "save_every": steps, "log_every": max(1, steps // 6),
            "packing": False, "dropout": 0.1, "weight_decay": 0.1, "device": "cpu"}


def dyck_checkpoint(args, folder: Path, arch: dict) -> tuple[str, float]:
    """A pre-pretrained checkpoint (and the Dyck phase's own tokens/s)."""
    from types import SimpleNamespace

    from povstim.formal import cli as dyck_cli, pretrain

    spec = {"k": 16, "length": 32, "p_open": 0.5, "max_depth": 8, "complete": False,
            "sequences": args.steps * args.batch_size, "dev_sequences": 50, "seed": 1}
    dyck_cli.generate(SimpleNamespace(params=json.dumps(spec), out_train=str(folder / "d_train.txt"),
                                      out_dev=str(folder / "d_dev.txt"), stats=None))
    out = folder / "dyck"
    pretrain.run_pretrain(SimpleNamespace(
        dyck=json.dumps({"k": 16, "steps": args.steps}), arch=json.dumps(arch),
        params=json.dumps(training(args, args.steps)), device="cpu", vocab_size=1024, train=str(folder / "d_train.txt"),
        dev=str(folder / "d_dev.txt"), seed=1, out_dir=str(out), threads=args.threads, no_progress=True))
    return str(out), rate(out)


def rate(out: Path) -> float:
    log = [json.loads(x) for x in (Path(out) / "train_log.jsonl").read_text().splitlines()]
    return statistics.fmean(e["tokens_per_s"] for e in log[1:])  # the first window holds warm-up


def one_run(args, paths, arch, bias: dict, init: str) -> float:
    from povstim.train.loop import Trainer
    from povstim.train.params import resolve

    a, t = resolve({**arch, **({"bias": bias} if bias else {})}, training(args, args.steps))
    with tempfile.TemporaryDirectory() as out:
        tr = Trainer(train=paths["train"], dev=paths["dev"], tokenizer=paths["tok"], arch=a, training=t, seed=1,
                     out_dir=out, threads=args.threads, progress=False,
                     init_from=init if "dyck" in bias else None, parses=paths["parses"] if "tpt" in bias else None)
        tr.run()
        return rate(Path(out))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--arch", choices=sorted(ARCHS), default="tiny")
    p.add_argument("--steps", type=int, default=120)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--sentences", type=int, default=6000)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args()

    import logging

    import torch

    logging.disable(logging.WARNING)
    torch.set_num_threads(args.threads)
    arch = ARCHS[args.arch]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        paths = prepare(folder, args.sentences)
        init, dyck_rate = dyck_checkpoint(args, folder, arch)
        rates = {name: [] for name in BIASES}
        for _ in range(args.repeats):
            for name, bias in BIASES.items():
                rates[name].append(one_run(args, paths, arch, bias, init))
    base = statistics.median(rates["vanilla"])
    rows = {name: {"tokens_per_s": round(statistics.median(r)), "ratio": round(statistics.median(r) / base, 3)}
            for name, r in rates.items()}
    rows["dyck pre-pretraining (Dyck symbols)"] = {"tokens_per_s": round(dyck_rate), "ratio": round(dyck_rate / base, 3)}
    print(json.dumps({"arch": args.arch, "steps": args.steps, "batch_size": args.batch_size, "context": 32,
                      "threads": args.threads, "repeats": args.repeats, "device": "cpu", "results": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
