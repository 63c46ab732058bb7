#!/usr/bin/env python
"""Benchmark `povstim score` against minicons on the same model and pairs (CPU).

    .venv/bin/python scripts/speed_scoring.py [--pairs 1000] [--pll-pairs 300] [--threads 1]

Measures, each in a fresh subprocess (so peak RSS is per method):
  causal  ours (batched across pairs, BOS prepended)  vs  minicons
          `IncrementalLMScorer.sequence_score([good, bad], bos_token=True)` one call
          per pair (the way POSH used it, plus BOS), and minicons batched (64);
  PLL     ours (chunked masked copies)  vs  minicons `MaskedLMScorer` one call per
          pair, on a BabyBERTa-size RoBERTa (8 layers, 256 wide, 8 heads, 1024 FFN,
          vocab 8192).
Pairs are BLiMP pairs (all 67 files, round-robin) from ../shared/data. Reports
pairs/s, speed-up, max |score difference|, verdict agreement and peak RSS.
Models are built locally (tokenizer trained on BLiMP sentences, random weights:
speed and exactness do not depend on training).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow"))
sys.path.insert(0, str(REPO / "tests"))  # helpers: tiny models
DATA = Path(os.environ.get("POVSTIM_SHARED_DATA", REPO.parent / "shared" / "data"))


def blimp_pairs(n: int) -> list[tuple[str, str]]:
    files = sorted((DATA / "blimp" / "data").glob("*.jsonl"))
    rows = [[json.loads(line) for line in f.read_text().splitlines() if line.strip()] for f in files]
    out, i = [], 0
    while len(out) < n:
        r = rows[len(out) % len(rows)][i // len(rows)]
        out.append((r["sentence_good"], r["sentence_bad"]))
        i += 1
    return out


def long_pairs(model: str, pairs: list, n: int) -> list[tuple[str, str]]:
    """Pairs of ~120-token sentences: a BLiMP pair prefixed with other good sentences."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model)
    out, k = [], 0
    for g, b in pairs[:n]:
        prefix = ""
        while True:
            cand = (prefix + " " + pairs[(k + 7) % len(pairs)][0]).strip()
            k += 1
            if max(len(tok(cand + " " + x)["input_ids"]) for x in (g, b)) > 120:
                break
            prefix = cand
        out.append(((prefix + " " + g).strip(), (prefix + " " + b).strip()))
    return out


def build_models(root: Path, sentences: list[str]) -> dict:
    from helpers import tiny_models as tiny

    causal = tiny.build(root / "gpt2", sentences, "causal", vocab_size=8192, layers=2, hidden=128, heads=4,
                        ffn=512, positions=128, seed=0)
    masked = tiny.build(root / "babyberta", sentences, "masked", vocab_size=8192, layers=8, hidden=256, heads=8,
                        ffn=1024, positions=128, seed=0)
    return {"causal": str(causal), "masked": str(masked)}


def worker(mode: str, model: str, pairs_file: str, out: str, threads: int, batch: int) -> None:
    import torch

    torch.set_num_threads(threads)
    pairs = json.loads(Path(pairs_file).read_text())
    sents = [s for p in pairs for s in p]
    t0 = time.perf_counter()
    if mode.startswith("ours"):
        from povstim.scoring.scorer import Scorer, load

        lm, tok, kind = load(model)
        scorer = Scorer(lm, tok, kind, method="pll", batch_size=batch)
        t0 = time.perf_counter()
        scores = scorer.score(sents).logp
    else:
        from minicons import scorer as mc

        if mode.startswith("minicons-causal"):
            m = mc.IncrementalLMScorer(model, "cpu")
            kw = {"bos_token": True}
        else:
            m = mc.MaskedLMScorer(model, "cpu")
            # minicons 0.3.39 calls the batch_encode_plus that transformers 5 removed
            object.__setattr__(m.tokenizer, "batch_encode_plus", m.tokenizer.__call__)
            kw = {}
        red = lambda x: x.sum(0).item()  # noqa: E731
        t0 = time.perf_counter()
        if mode.endswith("batched"):
            scores = []
            for i in range(0, len(sents), batch):
                scores += m.sequence_score(sents[i : i + batch], reduction=red, **kw)
        else:
            scores = []
            for g, b in pairs:  # one call per pair
                scores += m.sequence_score([g, b], reduction=red, **kw)
        scores = np.array(scores)
    dt = time.perf_counter() - t0
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    np.save(out, np.asarray(scores, dtype=np.float64))
    print(json.dumps({"seconds": dt, "peak_rss_mb": peak_mb}))


def run_worker(mode, model, pairs, tmp: Path, threads, batch):
    pf = tmp / f"pairs_{len(pairs)}.json"
    pf.write_text(json.dumps(pairs))
    out = tmp / f"{mode}.npy"
    cmd = [sys.executable, __file__, "--worker", mode, "--model", model, "--pairs-file", str(pf), "--out", str(out),
           "--threads", str(threads), "--batch", str(batch)]
    res = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "TOKENIZERS_PARALLELISM": "false"})
    if res.returncode:
        sys.exit(f"{mode} failed:\n{res.stderr[-3000:]}")
    info = json.loads(res.stdout.strip().splitlines()[-1])
    info["scores"] = np.load(out)
    info["pairs_per_s"] = len(pairs) / info["seconds"]
    return info


def compare(name, ours, ref, n_pairs):
    diff = float(np.abs(ours["scores"] - ref["scores"]).max())
    v1 = ours["scores"][0::2] > ours["scores"][1::2]
    v2 = ref["scores"][0::2] > ref["scores"][1::2]
    print(f"| {name} | {ref['pairs_per_s']:.2f} | {ours['pairs_per_s']:.2f} | "
          f"{ours['pairs_per_s'] / ref['pairs_per_s']:.1f}x | {diff:.1e} | {int((v1 == v2).sum())}/{n_pairs} | "
          f"{ref['peak_rss_mb']:.0f} / {ours['peak_rss_mb']:.0f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=1000, help="BLiMP pairs for the causal comparison")
    ap.add_argument("--pll-pairs", type=int, default=300, help="BLiMP pairs for the PLL comparison")
    ap.add_argument("--long-pairs", type=int, default=20, help="pairs of ~120-token sentences for the PLL memory check")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch", type=int, default=64, help="our batch size (sentences / masked rows)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--model", help=argparse.SUPPRESS)
    ap.add_argument("--pairs-file", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker, args.model, args.pairs_file, args.out, args.threads, args.batch)
        return
    pairs = blimp_pairs(max(args.pairs, args.pll_pairs))
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        models = build_models(tmp, [s for p in blimp_pairs(5000) for s in p])
        print(f"CPU, {args.threads} thread(s); BLiMP pairs; scores are sums of log-probs\n")
        print("| method | minicons pairs/s | povstim pairs/s | speed-up | max abs diff | same verdicts | "
              "peak RSS MB (minicons / povstim) |")
        print("|---|---|---|---|---|---|---|")
        cp = pairs[: args.pairs]
        ours = run_worker("ours-causal", models["causal"], cp, tmp, args.threads, args.batch)
        ref = run_worker("minicons-causal", models["causal"], cp, tmp, args.threads, args.batch)
        compare("causal GPT-2 (2x128), one call per pair", ours, ref, len(cp))
        refb = run_worker("minicons-causal-batched", models["causal"], cp, tmp, args.threads, args.batch)
        compare("causal GPT-2 (2x128), minicons batched 64", ours, refb, len(cp))
        pp = pairs[: args.pll_pairs]
        ours = run_worker("ours-pll", models["masked"], pp, tmp, args.threads, args.batch)
        ref = run_worker("minicons-pll", models["masked"], pp, tmp, args.threads, args.batch)
        compare("PLL BabyBERTa-size (8x256), one call per pair", ours, ref, len(pp))
        refb = run_worker("minicons-pll-batched", models["masked"], pp, tmp, args.threads, args.batch)
        compare("PLL BabyBERTa-size (8x256), minicons batched 64", ours, refb, len(pp))
        if args.long_pairs:
            lp = long_pairs(models["masked"], pairs, args.long_pairs)
            ours = run_worker("ours-pll", models["masked"], lp, tmp, args.threads, args.batch)
            ref = run_worker("minicons-pll", models["masked"], lp, tmp, args.threads, args.batch)
            n_tok = np.mean([len(s.split()) for p in lp for s in p])
            compare(f"PLL, long sentences (~{n_tok:.0f} words), one call per pair", ours, ref, len(lp))


if __name__ == "__main__":
    main()
