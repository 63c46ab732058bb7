#!/usr/bin/env python
"""Cleaning throughput (lines/s) on the real data in ../shared/data.

    .venv/bin/python scripts/speed_clean.py [--repeat 3] [--data ../shared/data]

Times `povstim clean`'s library entry point (no process start-up) on the
AO-CHILDES childes-db CSVs and on the CHAT transcripts, and prints input
utterances per second, output lines per second and words per second (best of
--repeat runs).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    import sys

    sys.path.insert(0, str(REPO / "workflow"))
    from povstim.sources.clean import clean_source

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    cases = {
        "aochildes_csv (age-ordered)": {
            "kind": "local", "format": "childes_csv", "age_order": True,
            "path": str(args.data / "aochildes" / "original_transcripts_csv"),
        },
        "aochildes_csv (babyberta style)": {
            "kind": "local", "format": "childes_csv", "age_order": True, "style": "babyberta",
            "path": str(args.data / "aochildes" / "original_transcripts_csv"),
        },
        "chat (Eve + Bates + Bernstein)": {
            "kind": "local", "format": "chat", "include": ["pylangacq/*.cha", "aadah_childes/*.cha"],
            "path": str(args.data / "chat"),
        },
    }
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, spec in cases.items():
            best = best_cpu = None
            for _ in range(args.repeat):
                t0, c0 = time.perf_counter(), time.process_time()
                stats = clean_source("bench", spec, Path(tmp) / "out.txt", Path(tmp) / "out.json")
                dt, dc = time.perf_counter() - t0, time.process_time() - c0
                best = dt if best is None else min(best, dt)
                best_cpu = dc if best_cpu is None else min(best_cpu, dc)
            # On a shared machine wall time includes waiting for a core; CPU time does not.
            results[name] = {
                "seconds": round(best, 3),
                "cpu_seconds": round(best_cpu, 3),
                "lines_in_per_cpu_s": round(stats["lines_in"] / best_cpu),
                "lines_in": stats["lines_in"],
                "lines_out": stats["lines_out"],
                "words": stats["words"],
                "lines_in_per_s": round(stats["lines_in"] / best),
                "lines_out_per_s": round(stats["lines_out"] / best),
                "words_per_s": round(stats["words"] / best),
            }
            r = results[name]
            print(f"{name:34s} {r['lines_in']:>8,} lines in  {r['seconds']:6.2f}s wall {r['cpu_seconds']:6.2f}s cpu  "
                  f"{r['lines_in_per_cpu_s']:>9,} lines/cpu-s in  "
                  f"{r['lines_in_per_s']:>9,} lines/s in  {r['lines_out_per_s']:>8,} lines/s out  "
                  f"{r['words_per_s']:>9,} words/s")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
