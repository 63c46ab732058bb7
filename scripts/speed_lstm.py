#!/usr/bin/env python
"""Training throughput of povstim's LSTM (the loop, LSTMLearner, povstim/lstm.py) vs a plain-PyTorch loop.

Both train the same model -- nn.Embedding, ``n_layer`` one-layer LSTMs, (tied: a bias-free projection), a
Linear output layer -- on the same packed blocks of the same tokenized corpus, with AdamW, gradient
clipping at 1.0 and the same batch size, context and thread count. The plain loop is what one would write by
hand: random batches of the encoded blocks, forward, cross-entropy, backward, clip, step. povstim's run
includes what the loop does besides (the schedule, a log line, the learning-rate schedule, token counts); its
set-up, one-batch evaluations and saving cancel out of the CPU rate, which is the difference between a run of
--steps and one of --steps/4. CPU seconds (time.process_time) rather than wall time: the development machine is
shared, and wall-clock rates there swing 3x between runs of the same loop.

    .venv/bin/python scripts/speed_lstm.py                        # lstm-tiny of the docs, 1 thread
    .venv/bin/python scripts/speed_lstm.py --n-embd 512 --n-hidden 1024 --steps 60 --threads 2

Prints one JSON line: tokens per CPU second of each (median of the alternating runs; robust to other jobs on
the machine) and their ratio povstim / plain (1.0 = no overhead), and the best wall-clock tokens/s of each.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow"))
sys.path.insert(0, str(ROOT / "tests"))  # test_tokenizer.write_corpus: the synthetic test corpus

import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402

from povstim.tokenizer import bpe  # noqa: E402
from povstim.train.loop import Trainer  # noqa: E402
from povstim.train.params import resolve  # noqa: E402


class Plain(nn.Module):
    def __init__(self, vocab, e, h, layers, tie):
        super().__init__()
        self.embed = nn.Embedding(vocab, e)
        self.lstm = nn.LSTM(e, h, num_layers=layers, batch_first=True)
        self.proj = nn.Linear(h, e, bias=False) if tie and h != e else None
        self.out = nn.Linear(e if tie else h, vocab)
        if tie:
            self.out.weight = self.embed.weight

    def forward(self, x):
        h, _ = self.lstm(self.embed(x))
        return self.out(self.proj(h) if self.proj is not None else h)


def plain_run(blocks: np.ndarray, vocab: int, a, steps: int, warm: int) -> tuple[float, float]:
    """(tokens per wall second, tokens per CPU second) of ``steps`` updates after ``warm`` untimed ones."""
    torch.manual_seed(1)
    model = Plain(vocab, a.n_embd, a.n_hidden, a.n_layer, True)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.1)
    rng = np.random.default_rng(1)
    t0 = c0 = None
    for s in range(warm + steps):
        if s == warm:
            t0, c0 = time.perf_counter(), time.process_time()
        x = torch.from_numpy(blocks[rng.integers(0, len(blocks), a.batch_size)])
        logits = model(x)
        loss = nn.functional.cross_entropy(logits[:, :-1].reshape(-1, vocab), x[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
    tokens = steps * a.batch_size * a.context
    return tokens / (time.perf_counter() - t0), tokens / (time.process_time() - c0)


def povstim_run(corpus: dict, a, steps: int, out: Path) -> tuple[float, float]:
    """(tokens per wall second of the loop's steps, tokens per CPU second): the CPU rate is the difference of a
    run of ``steps`` and one of ``steps // 4`` (set-up, evaluation and saving cancel out), robust to other jobs
    sharing the machine, as the plain loop's CPU rate is."""
    wall, cpu_long, tokens_long = _povstim_once(corpus, a, steps, out / "long")
    _, cpu_short, tokens_short = _povstim_once(corpus, a, steps // 4, out / "short")
    return wall, (tokens_long - tokens_short) / (cpu_long - cpu_short)


def _povstim_once(corpus: dict, a, steps: int, out: Path) -> tuple[float, float, int]:
    arch = {"family": "lstm", "n_layer": a.n_layer, "n_embd": a.n_embd, "n_hidden": a.n_hidden, "tie_weights": True}
    training = {"lr": 1e-3, "batch_size": a.batch_size, "context": a.context, "warmup": 1, "max_steps": steps,
                "patience": 10 * steps, "eval_every": 10 * steps, "save_every": 10 * steps, "log_every": steps,
                "dropout": 0.0, "device": "cpu", "eval_batches": 1}
    ar, tr = resolve(arch, training)
    c0 = time.process_time()
    t = Trainer(arch=ar, training=tr, seed=1, out_dir=str(out), threads=a.threads, progress=False, **corpus)
    summary = t.run()
    return summary["tokens_seen"] / t.times["steps"], time.process_time() - c0, summary["tokens_seen"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n-layer", type=int, default=2)
    ap.add_argument("--n-embd", type=int, default=128)
    ap.add_argument("--n-hidden", type=int, default=256)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--context", type=int, default=64)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3, help="alternating runs of each (medians and bests reported)")
    a = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    torch.set_num_threads(a.threads)
    from test_tokenizer import write_corpus

    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        train = write_corpus(d / "train.txt", 6000, seed=1)
        dev = write_corpus(d / "dev.txt", 50, seed=2)
        bpe.save(bpe.train_file(train, {"vocab_size": 2048}), d / "tokenizer.json")
        corpus = {"train": str(train), "dev": str(dev), "tokenizer": str(d / "tokenizer.json")}
        tok = bpe.load(d / "tokenizer.json")
        ids = np.concatenate([np.array(tok.encode(s).ids + [bpe.special_ids(tok)["eos"]], dtype=np.int64)
                              for s in train.read_text().splitlines()])
        n = len(ids) // a.context
        blocks = ids[: n * a.context].reshape(n, a.context)
        vocab = tok.get_vocab_size()
        plain, ours = [], []
        for r in range(a.repeats):
            plain.append(plain_run(blocks, vocab, a, a.steps, warm=5))
            ours.append(povstim_run(corpus, a, a.steps, d / f"m{r}"))
    med = lambda xs: float(np.median(xs))  # noqa: E731
    wall_p, cpu_p = [w for w, _ in plain], [c for _, c in plain]
    wall_o, cpu_o = [w for w, _ in ours], [c for _, c in ours]
    print(json.dumps({"arch": {"n_layer": a.n_layer, "n_embd": a.n_embd, "n_hidden": a.n_hidden},
                      "batch_size": a.batch_size, "context": a.context, "steps": a.steps, "threads": a.threads,
                      "plain_tokens_per_cpu_s": round(med(cpu_p)), "povstim_tokens_per_cpu_s": round(med(cpu_o)),
                      "ratio_cpu": round(med(cpu_o) / med(cpu_p), 3),
                      "plain_tokens_per_s": round(max(wall_p)), "povstim_tokens_per_s": round(max(wall_o)),
                      "ratio_wall_best": round(max(wall_o) / max(wall_p), 3),
                      "runs": {"plain_cpu": [round(x) for x in cpu_p], "povstim_cpu": [round(x) for x in cpu_o],
                               "plain_wall": [round(x) for x in wall_p], "povstim_wall": [round(x) for x in wall_o]}}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
