"""Forecast vs measured: `povstim plan --forecast` against a run.

By default, a FINISHED run: the plan's forecast of CONFIG is made now (calibrations from resources/forecast/ when
one was measured on this CPU under a comparable load, else measured again) and compared with the run that config
made, read from its Snakemake benchmark files (benchmarks/<exp>/train/..., .../score/...: each job's wall seconds,
and its own CPU when the run had `warm_start: false`) and its models' train_summary.json (steps taken, the epoch of
the best dev loss): per job kind measured / forecast, per model the plateau rule's epoch against the best one
(povstim.preflight.forecast_check). Nothing is trained.

With --retrain, the old way: everything upstream of training is built (untimed), then the training and score jobs
run again with Snakemake at --cores N under `warm_start: false` (experiment --experiment, its results removed first),
timed (wall clock, and the CPU of the whole process tree), and then compared as above. On a busy shared machine the
wall clock says little; the CPU ratio is the one to read.

    .venv/bin/python scripts/speed_forecast.py config.yaml                    # the finished default run
    .venv/bin/python scripts/speed_forecast.py results/mine/config.yaml       # the config a run recorded
    .venv/bin/python scripts/speed_forecast.py tests/configs/tiny.yaml --retrain --cores 2
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


def retrain(args) -> tuple[dict, Path]:
    """Run CONFIG's training and score jobs again (warm_start false) as experiment ``args.experiment``: the timed
    run's wall and process-tree CPU, and the config that ran."""
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
    res = f"results/{args.experiment}"
    targets = [f"{res}/scores/{m.path}/{suite}.parquet" for m in dag_plan.models(config) for suite in config["benchmarks"]]
    snakemake(work, args.cores, targets, "--omit-from", "train")  # corpora, tokenizers, benchmarks: untimed
    dry_wall, dry_cpu = snakemake(work, args.cores, targets, "-n")
    load0 = os.getloadavg()[0]
    wall, cpu = snakemake(work, args.cores, targets)
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "dry_run_cpu_s": round(dry_cpu, 2),
            "load_before": round(load0, 2), "load_after": round(os.getloadavg()[0], 2)}, work


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("config", type=Path, nargs="?", default=REPO / "config.yaml",
                    help="the config of the run (default: the embedded default, config.yaml)")
    ap.add_argument("--config", dest="config_opt", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--retrain", action="store_true", help="train and score again (timed) instead of reading the "
                    "finished run")
    ap.add_argument("--experiment", default="speed-forecast",
                    help="with --retrain: the run's experiment name (its results are removed first)")
    ap.add_argument("--recalibrate", action="store_true")
    args = ap.parse_args()
    args.config = args.config_opt or args.config
    from povstim.preflight import forecast_check

    run = None
    path = args.config
    if args.retrain:
        run, path = retrain(args)
    config = cfg.load(path)
    result = forecast_check.compare_finished(config, REPO, args.cores, args.recalibrate)
    if run is not None:
        result["run"] = run
        result["run_ratios"] = {"cpu": round(run["cpu_s"] / result["forecast_cpu_s"], 3),
                                "cpu_less_dag_build": round((run["cpu_s"] - run["dry_run_cpu_s"])
                                                            / result["forecast_cpu_s"], 3),
                                "wall": round(run["wall_s"] / result["forecast_wall_s"], 3)}
    result["load_1min_now"] = round(os.getloadavg()[0], 2)
    print(forecast_check.render(result))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
