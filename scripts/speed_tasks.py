#!/usr/bin/env python
"""Benchmark multiple-choice scoring: every option of many items batched vs one call per option (CPU).

    PYTHONPATH=workflow .venv/bin/python scripts/speed_tasks.py [--items 200] [--threads 1]

Items are 4-option BaBIEs-style items ("stimulus cioè option") built from the Italian demo
text (data/demo/it, cleaned with the Italian profile): the stimulus is one utterance, the
options four others, so every string is distinct (the scorer deduplicates repeated strings,
which would flatter the batched path). Two models, random weights (speed does not depend
on training): a small GPT-2 (4 layers, 256 wide) and a BabyBERTa-size RoBERTa scored by
PLL. Reports items/s for

* batched: ``scoring.tasks.multiple_choice_rows`` — all options of all items in one scorer
  call, length-sorted batches of 64 sentences (64 masked rows for PLL) per forward pass;
* per option: ``Scorer.score([string])`` once per option (what a loop over
  ``minicons``-style calls does), the same numbers;

and the largest difference between the two sets of perplexities.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]


def sentences() -> list[str]:
    from povstim.sources.clean import clean_source

    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, spec in {
            "cds": {"kind": "local", "format": "lines", "path": "data/demo/it/cds.txt", "language": "it"},
            "adulti": {"kind": "local", "format": "plain", "path": "data/demo/it/adulti.txt", "language": "it"},
        }.items():
            txt = Path(tmp) / f"{name}.txt"
            clean_source(name, spec, txt, Path(tmp) / f"{name}.json", base_dir=REPO)
            out += txt.read_text(encoding="utf-8").splitlines()
    return out


def make_items(lines: list[str], n: int, seed: int = 1) -> list[dict]:
    rng = random.Random(seed)
    items = []
    for i in range(n):
        picks = rng.sample(lines, 5)
        stim, opts = picks[0].rstrip(".?!"), [p[0].lower() + p[1:].rstrip(".?!") for p in picks[1:]]
        items.append({"suite": "bench", "paradigm": "p", "category": "c", "item_id": str(i),
                      "task": "multiple_choice", "stimulus": stim, "connective": "cioè", "options": opts,
                      "answer": opts[0]})
    return items


def run(kind: str, model_dir: str, items: list[dict], batch: int) -> dict:
    from povstim.scoring.scorer import Scorer, Scores, load
    from povstim.scoring.tasks import MultipleChoiceSettings, multiple_choice_rows

    lm, tok, k = load(model_dir)
    mc = MultipleChoiceSettings("sentence")
    batched = Scorer(lm, tok, k, batch_size=batch, method="pll")
    multiple_choice_rows(items[:4], batched.score, "sum", mc)  # warm-up
    t0 = time.perf_counter()
    a = multiple_choice_rows(items, batched.score, "sum", mc)
    t_batched = time.perf_counter() - t0

    single = Scorer(lm, tok, k, batch_size=batch, method="pll")

    def one_call_per_option(strings):
        res = [single.score([s]) for s in strings]
        return Scores(np.concatenate([r.logp for r in res]), np.concatenate([r.ntok for r in res]))

    t0 = time.perf_counter()
    b = multiple_choice_rows(items, one_call_per_option, "sum", mc)
    t_single = time.perf_counter() - t0
    diff = max(abs(x - y) / y for ra, rb in zip(a, b)
               for x, y in zip(json.loads(ra["option_ppl"]), json.loads(rb["option_ppl"])))
    return {"model": kind, "items": len(items), "options": sum(len(it["options"]) for it in items),
            "batched_items_per_s": round(len(items) / t_batched, 1),
            "per_option_items_per_s": round(len(items) / t_single, 1),
            "speedup": round(t_single / t_batched, 2), "max_rel_ppl_diff": float(f"{diff:.2e}"),
            "same_choices": all(ra["choice"] == rb["choice"] for ra, rb in zip(a, b))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--items", type=int, default=200)
    ap.add_argument("--pll-items", type=int, default=40)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch-size", type=int, default=64)
    args = ap.parse_args()

    import torch

    from povstim.scoring import tiny

    torch.set_num_threads(args.threads)
    lines = sentences()
    items = make_items(lines, args.items)
    with tempfile.TemporaryDirectory() as tmp:
        causal = tiny.build(Path(tmp) / "gpt2", lines, "causal", vocab_size=2048, layers=4, hidden=256, heads=4,
                            ffn=1024, positions=256, seed=0)
        masked = tiny.build(Path(tmp) / "babyberta", lines, "masked", vocab_size=2048, layers=8, hidden=256,
                            heads=8, ffn=1024, positions=256, seed=0)
        for kind, path, n in (("gpt2 4x256 (causal)", causal, args.items),
                              ("babyberta 8x256 (PLL)", masked, args.pll_items)):
            print(json.dumps(run(kind, str(path), items[:n], args.batch_size), ensure_ascii=False))


if __name__ == "__main__":
    main()
