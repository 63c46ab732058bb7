#!/usr/bin/env python
"""Benchmark parsing speed: the parser adapted to child-directed speech against en_core_web_sm.

Both parsers parse the same fixed, seeded sample of AO-CHILDES adult utterances (``--n``, 20,000 by
default), on the same povstim tokens, through the parse stage's own functions
(``backends.parse_childes`` / ``backends.parse_spacy``), in interleaved rounds (``--repeats``; best
round kept: the machine is shared). The ratio is of timings of this one run; ``--clock cpu`` times
this process's CPU time (other jobs' load left out). The issue's target: the adapted parser at
>= 0.5x en_core_web_sm's speed.

    python scripts/speed_parse_childes.py --model results/parser_cv/full/model [--n 20000] [--repeats 2]
        [--clock cpu] [--out bench.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow"))
sys.path.insert(0, str(REPO / "scripts"))

from povstim.parse import adapted, backends  # noqa: E402
from speed_filter import childes_adult_utterances  # noqa: E402

CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help="a parser folder written by povstim train-parser")
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--clock", choices=sorted(CLOCKS), default="wall")
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    clock = CLOCKS[args.clock]
    texts = childes_adult_utterances(Path(args.data))
    texts = random.Random(args.seed).sample(texts, min(args.n, len(texts)))
    n_tokens = sum(len(backends.tokenize(t)[0]) for t in texts)
    nlps = {"en_core_web_sm": backends.load_spacy(), "childes": adapted.load(args.model)}
    parse = {"en_core_web_sm": lambda: backends.parse_spacy(texts, nlp=nlps["en_core_web_sm"]),
             "childes": lambda: backends.parse_childes(texts, nlp=nlps["childes"])}
    for name, nlp in nlps.items():  # warm-up on a few sentences: first-call allocations out of the timings
        (backends.parse_childes if name == "childes" else backends.parse_spacy)(texts[:200], nlp=nlp)
    best = {name: float("inf") for name in parse}
    for _ in range(args.repeats):
        for name, fn in parse.items():
            t0 = clock()
            fn()
            best[name] = min(best[name], clock() - t0)
    out = {
        "n_sentences": len(texts), "n_tokens": n_tokens, "clock": args.clock, "repeats": args.repeats,
        "seconds": {k: round(v, 2) for k, v in best.items()},
        "sentences_per_s": {k: round(len(texts) / v, 1) for k, v in best.items()},
        "speed_ratio_childes_vs_en_core_web_sm": round(best["en_core_web_sm"] / best["childes"], 3),
        "pipelines": {k: nlp.pipe_names for k, nlp in nlps.items()},
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "load_average": os.getloadavg()},
    }
    print(json.dumps(out, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
