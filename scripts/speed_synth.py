#!/usr/bin/env python
"""Throughput of the synthetic generator (sentences/s) and of corpus assembly (words/s).

    .venv/bin/python scripts/speed_synth.py [--sentences 40000] [--repeat 3]

Times are best-of-N CPU seconds of this process. Generation is timed writing both outputs (text + gold CoNLL-U) to a temp dir,
as `povstim synth` does; assembly is timed in memory on the generated text
(reading and writing excluded) for a few budgets.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))

from povstim.corpus.assemble import assemble  # noqa: E402
from povstim.synth.generator import write_corpus  # noqa: E402


def best_of(repeat, fn):
    """Best CPU time (process_time: robust on a shared, loaded machine) and best wall time."""
    cpu, wall = [], []
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        result = fn()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - t0)
    print(f"  (best wall {min(wall):.2f} s, best cpu {min(cpu):.2f} s)")
    return min(cpu), result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sentences", type=int, default=40000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rates = {"question_formation": 0.01, "binding": 0.005}
    with tempfile.TemporaryDirectory() as d:
        texts = {}
        for reg in ("child", "adult"):
            t, c = Path(d) / f"{reg}.txt", Path(d) / f"{reg}.conllu"
            secs, summary = best_of(args.repeat, lambda: write_corpus(reg, args.sentences, 1, rates, t, c))
            texts[reg] = t.read_text(encoding="utf-8").splitlines()
            print(f"synth {reg:5s}: {args.sentences} sentences, {summary['words']} words in {secs:.2f} s "
                  f"= {args.sentences / secs:,.0f} sentences/s ({summary['words'] / secs:,.0f} words/s); "
                  f"conllu {c.stat().st_size / 1e6:.1f} MB")
        lines = texts["child"] + texts["adult"]
        total = sum(len(x.split()) for x in lines)
        src = {"child": texts["child"], "adult": texts["adult"]}
        cap = 2 * min(sum(len(x.split()) for x in ls) for ls in src.values())  # a 50/50 mix must fit
        for frac in (0.1, 0.5, 0.95):
            budget = int(cap * frac)
            secs, (out, _) = best_of(args.repeat, lambda: assemble(src, {"child": 0.5, "adult": 0.5}, budget, 1))
            print(f"assemble {budget:>9,} words from {total:,}: {secs:.3f} s = {total / secs:,.0f} source words/s "
                  f"({budget / secs:,.0f} corpus words/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
