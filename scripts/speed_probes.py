#!/usr/bin/env python
"""Benchmark the MSGS probe stage on CPU: data generation and fine-tuning throughput.

    .venv/bin/python scripts/speed_probes.py [--model DIR] [--threads 1] [--train 1000] [--epochs 1]

Generation: all 29 tasks at 1000 / 200 / 500 / 200 examples (train / test / control
train / control test), written to a temporary folder: sentences per second.
Fine-tuning: one ambiguous task (main_verb_title_case, `--train` examples, batch 16)
on ``--model`` (a save_pretrained folder, e.g. results/models/gpt2-mini/baby/30k/seed1)
or, without it, on a freshly built 2-layer 64-wide GPT-2 and RoBERTa (random weights:
speed does not depend on training): training examples per second and test
predictions per second. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow"))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", action="append", help="model folder (repeatable); default: built tiny models")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--train", type=int, default=1000)
    p.add_argument("--epochs", type=int, default=1)
    args = p.parse_args()

    import torch

    from povstim.probes.finetune import HyperParams, finetune, load, predict
    from povstim.probes.msgs.features import parse_task, resolve_tasks
    from povstim.probes.msgs.generate import Counts, generate_task, training_set, write_data

    torch.set_num_threads(args.threads)
    out = {"threads": args.threads}
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        manifest = write_data(Path(tmp) / "data", resolve_tasks("all"), Counts(1000, 200, 500, 200),
                              [0.0, 0.001, 0.003, 0.01], seed=1)
        dt = time.perf_counter() - t0
        out["generation"] = {"sentences": manifest["sentences"], "seconds": round(dt, 2),
                             "sentences_per_s": round(manifest["sentences"] / dt)}
        models = args.model
        if not models:
            from povstim.scoring import tiny
            from povstim.synth.generator import generate

            corpus = [t for t, _, _ in generate("adult", 2000, 1)]
            models = [str(tiny.build(Path(tmp) / k, corpus, k, vocab_size=2048, layers=2, hidden=64, heads=2,
                                     positions=128)) for k in ("causal", "masked")]
        task = parse_task("main_verb_title_case")
        data = generate_task(task, Counts(args.train, 500, 2, 2), [0.01], seed=1)
        train = training_set(data["train"], data["inoculating"], 0.01)
        hp = HyperParams(lr=1e-3, batch_size=16, epochs=args.epochs, warmup_ratio=0.06, weight_decay=0.1,
                         adam_beta1=0.9, adam_beta2=0.98, adam_eps=1e-6, grad_clip=0.0)
        out["finetune"] = []
        for model in models:
            clf = load(model)
            x = clf.encode([r["sentence"] for r in train])
            y = np.array([r["label"] for r in train])
            tx = clf.encode([r["sentence"] for r in data["test"]])
            ft, stats = finetune(clf, x, y, hp, seed=1)
            t0 = time.perf_counter()
            predict(ft, tx, clf.pad_id, "cpu")
            pred_s = time.perf_counter() - t0
            out["finetune"].append({
                "model": Path(model).name if args.model is None else model, "kind": clf.kind,
                "mean_tokens": round(float(np.mean([len(v) for v in x])), 1),
                "train_examples_per_s": round(stats.examples_per_s, 1),
                "predict_examples_per_s": round(len(tx) / pred_s, 1),
            })
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
