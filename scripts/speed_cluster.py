#!/usr/bin/env python3
"""Overheads of scaling out: GPU-slot claims and SLURM job turnaround.

    .venv/bin/python scripts/speed_cluster.py             # allocator only
    .venv/bin/python scripts/speed_cluster.py --slurm 4   # + 4 no-op jobs via the local SLURM

The SLURM part needs scripts/slurm/start.sh's cluster. It runs N no-op rules
(independent, then as one group job) locally and through `--executor slurm`
with the test settings (squeue polling, first check after 2 s) and prints the
wall time of each, so the per-job cost of the executor is visible.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow"))

from povstim.devices.slots import acquire_gpu  # noqa: E402


def bench_allocator(rounds: int = 2000) -> None:
    with tempfile.TemporaryDirectory() as d:
        slots = [str(i) for i in range(8)]
        held = [acquire_gpu(slots, Path(d)) for _ in range(7)]  # worst case: only the last slot is free
        t0 = time.perf_counter()
        for _ in range(rounds):
            acquire_gpu(slots, Path(d)).release()
        per = (time.perf_counter() - t0) / rounds
        for h in held:
            h.release()
    print(f"allocator: claim+release with 7 of 8 GPUs busy: {per * 1e6:.0f} us")


def bench_slurm(n: int) -> None:
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        (d / "Snakefile").write_text(textwrap.dedent(f"""
            rule all:
                input: expand("out/{{i}}.txt", i=range({n}))
            rule noop:
                output: "out/{{i}}.txt"
                shell: "hostname > {{output}}"
        """))
        base = [sys.executable, "-m", "snakemake", "--quiet", "all", "--forceall"]
        slurm = ["--executor", "slurm", "--jobs", str(n), "--slurm-status-command", "squeue",
                 "--slurm-init-seconds-before-status-checks", "2", "--slurm-no-account",
                 "--default-resources", "mem_mb=200", "runtime=5"]
        runs = {
            "local": ["--cores", "2"],
            f"slurm, {n} jobs": slurm,
            # --cores caps the group's parallel layer; unconstrained it would
            # ask for n CPUs and never fit a small node
            f"slurm, 1 group job of {n}": [*slurm, "--groups", "noop=g", "--group-components", f"g={n}",
                                           "--cores", "2"],
        }
        for name, extra in runs.items():
            t0 = time.perf_counter()
            proc = subprocess.run([*base, *extra], cwd=d, capture_output=True, text=True)
            took = time.perf_counter() - t0
            status = "ok" if proc.returncode == 0 else f"FAILED: {proc.stderr[-500:]}"
            print(f"{name:>28}: {took:6.1f} s  {status}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--slurm", type=int, metavar="N", default=0, help="also time N no-op jobs through SLURM")
    args = parser.parse_args()
    bench_allocator()
    if args.slurm:
        bench_slurm(args.slurm)


if __name__ == "__main__":
    main()
