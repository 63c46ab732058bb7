"""Forecast vs measured: `povstim plan --forecast` for a small config, then the real training and scoring jobs.

1. the plan's forecast (preflight/forecast.py) at --cores N: CPU-seconds of every training and score job and the
   list-scheduled wall time (calibrations cached in resources/forecast/ unless --recalibrate);
2. everything upstream of training built by Snakemake first (`--omit-from train`), untimed;
3. the training and score jobs run by Snakemake at --cores N, timed: wall clock, and the CPU time of the whole
   process tree (getrusage of the children: Snakemake and its jobs). The run has warm_start false, so that
   every job is a child Snakemake reaps (a job forked by the warm-start server is not), and the forecast
   counts each job's own imports instead of the server's.

Prints the forecast, the measured and their ratios (measured / forecast) as one JSON line: the jobs' own CPU
(Snakemake's benchmark cpu_time of each job, per kind) is what the forecast estimates; the whole run's CPU also
holds Snakemake's own work (its DAG build: a dry run `-n` is timed too; its per-job bookkeeping). On a busy shared machine the wall clock
says little; the CPU ratio is the one to read.

    .venv/bin/python scripts/speed_forecast.py                         # tests/configs/tiny.yaml, 2 cores
    .venv/bin/python scripts/speed_forecast.py --config config.yaml --cores 2
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow"))

from povstim import config as cfg  # noqa: E402
from povstim import plan as dag_plan  # noqa: E402
from povstim.preflight.plan import make_plan  # noqa: E402


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def snakemake(config: Path, cores: int, targets: list[str], *extra: str) -> tuple[float, float]:
    """(wall s, CPU s of the process tree) of one Snakemake run."""
    env = {**os.environ, "POVSTIM_YES": "1", "PYTHONPATH": str(REPO / "workflow")}
    c0, w0 = children_cpu(), time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "snakemake", "--cores", str(cores), "--configfile", str(config),
                           *extra, "--", *targets], cwd=REPO, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
        raise SystemExit(f"snakemake failed ({' '.join(extra)})")
    return time.perf_counter() - w0, children_cpu() - c0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", type=Path, default=REPO / "tests" / "configs" / "tiny.yaml")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--experiment", default="speed-forecast", help="the run's experiment name (its results are removed first)")
    ap.add_argument("--recalibrate", action="store_true")
    args = ap.parse_args()

    raw = yaml.safe_load(args.config.read_text())
    raw["experiment"] = args.experiment
    # every job its own process, reaped by Snakemake: getrusage then counts each job's CPU time (jobs forked by
    # the warm-start server are not Snakemake's children); the forecast then adds each job's own imports
    raw["warm_start"] = False
    work = REPO / "results" / f".{args.experiment}.yaml"
    work.parent.mkdir(parents=True, exist_ok=True)
    work.write_text(yaml.safe_dump(raw))
    for d in (REPO / "results" / args.experiment, REPO / "benchmarks" / args.experiment, REPO / "logs" / args.experiment):
        shutil.rmtree(d, ignore_errors=True)
    config = cfg.load(work)

    c0, w0 = time.process_time(), time.perf_counter()
    plan = make_plan(config, REPO, REPO / "resources" / "downloads", filter_sample=0, forecast_cores=args.cores,
                     recalibrate=args.recalibrate)
    plan_wall, plan_cpu = time.perf_counter() - w0, time.process_time() - c0
    fc = plan["forecast"]
    res = f"results/{args.experiment}"
    targets = [f"{res}/scores/{m.path}/{suite}.parquet" for m in dag_plan.models(config) for suite in config["benchmarks"]]

    snakemake(work, args.cores, targets, "--omit-from", "train")  # corpora, tokenizers, benchmarks: untimed
    dry_wall, dry_cpu = snakemake(work, args.cores, targets, "-n")
    wall, cpu = snakemake(work, args.cores, targets)
    jobs = {"train": [0.0, 0.0], "score": [0.0, 0.0]}  # (wall s, CPU s) of each kind's jobs, Snakemake's benchmark
    for kind in jobs:
        for f in sorted((REPO / "benchmarks" / args.experiment / kind).rglob("*.tsv")):
            row = f.read_text().splitlines()[1].split("\t")
            jobs[kind][0] += float(row[0])
            jobs[kind][1] += float(row[9])  # cpu_time: the job's own process (warm_start false)
    forecast_train = sum(r["seconds"] for r in fc["jobs"] if r["kind"] == "train")
    forecast_score = sum(r["seconds"] for r in fc["jobs"] if r["kind"] == "score")
    jobs_cpu = jobs["train"][1] + jobs["score"][1]
    out = {
        "config": str(args.config), "cores": args.cores, "models": len(dag_plan.models(config)),
        "calibrations": {a: {k: c[k] for k in ("train_tokens_per_s", "cached", "cpu_per_wall") if k in c}
                         for a, c in fc["calibrations"].items()},
        "plan_s": {"wall": round(plan_wall, 2), "cpu": round(plan_cpu, 2)},
        "forecast": {"train_cpu_s": round(forecast_train, 2), "score_cpu_s": round(forecast_score, 2),
                     "cpu_s": round(fc["cpu"], 2), "wall_s": round(fc["wall"], 2)},
        "measured": {"cpu_s": round(cpu, 2), "wall_s": round(wall, 2), "dry_run_cpu_s": round(dry_cpu, 2),
                     "train_jobs_cpu_s": round(jobs["train"][1], 2), "score_jobs_cpu_s": round(jobs["score"][1], 2),
                     "job_wall_s": round(jobs["train"][0] + jobs["score"][0], 2)},
        "ratio_measured_over_forecast": {
            "jobs_cpu": round(jobs_cpu / fc["cpu"], 3), "train_jobs_cpu": round(jobs["train"][1] / forecast_train, 3),
            "score_jobs_cpu": round(jobs["score"][1] / forecast_score, 3) if forecast_score else None,
            "run_cpu": round(cpu / fc["cpu"], 3), "run_cpu_less_dag_build": round((cpu - dry_cpu) / fc["cpu"], 3),
            "wall": round(wall / fc["wall"], 3)},
        "load_1min": round(os.getloadavg()[0], 2),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
