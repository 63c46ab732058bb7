"""Forecast against a finished run (``scripts/speed_forecast.py``, ``scripts/forecast_benchmark.py``).

The plan's forecast (:mod:`povstim.preflight.forecast`) of a config is compared with the run that config made:
each training and score job's Snakemake benchmark file (``benchmarks/<exp>/train/...``, ``.../score/...``: wall
seconds ``s``, and ``cpu_time``, the job's own CPU only when the run had ``warm_start: false``; with the warm-start
server the jobs run in its children, which the file does not see) and each model's ``train_summary.json`` (steps,
best step, batches per epoch, stop reason). Per job kind: forecast seconds, measured CPU and wall, their ratios; per
model: the steps forecast and taken, and the epoch of the best dev loss against the plateau rule's.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from ..io import PovstimError


def _bench_row(path: Path) -> dict | None:
    if not path.exists():
        return None
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    if not rows or "s" not in rows[-1]:
        raise PovstimError(f"{path}: not a Snakemake benchmark file (no column s)")
    row = rows[-1]

    def num(key):
        try:
            return float(row[key])
        except (KeyError, TypeError, ValueError):
            return None

    return {"wall_s": num("s"), "cpu_s": num("cpu_time")}


def bench_file(bench: Path, job: str) -> Path:
    """The benchmark file of a forecast row's job ("train ARCH/COND/SIZE/seedN", "score ARCH/COND/SIZE/seedN/SUITE")."""
    kind, path = job.split(" ", 1)
    return bench / kind / f"{path}.tsv"


def measured(config: dict, repo: Path, forecast: dict) -> dict:
    """{job: {"wall_s", "cpu_s"}} from the run's benchmark files, and {train job: the model's summary}."""
    exp = config["experiment"]
    bench, models = repo / "benchmarks" / exp, repo / "results" / exp / "models"
    jobs, summaries, missing = {}, {}, []
    for row in forecast["jobs"]:
        if row["kind"] not in ("train", "score"):
            continue
        got = _bench_row(bench_file(bench, row["job"]))
        if got is None:
            missing.append(row["job"])
            continue
        jobs[row["job"]] = got
        if row["kind"] == "train":
            summary = models / row["job"].split(" ", 1)[1] / "train_summary.json"
            if summary.exists():
                summaries[row["job"]] = json.loads(summary.read_text())
    if not jobs:
        raise PovstimError(f"{bench}: no benchmark file of a training or score job of experiment {exp}: run it first "
                           "(snakemake ... --configfile CONFIG), or pass --retrain")
    return {"jobs": jobs, "summaries": summaries, "missing": missing}


def _ratio(a, b):
    return round(a / b, 3) if a is not None and b else None


def summarize(config: dict, forecast: dict, got: dict) -> dict:
    """Per kind (train, score): jobs, forecast seconds, measured CPU and wall, ratios (measured / forecast); per
    model: steps forecast and taken, the plateau rule's epoch and the best dev loss's."""
    warm = bool(config["warm_start"])  # the validated config: the schema filled it
    kinds = {}
    for kind in ("train", "score"):
        rows = [r for r in forecast["jobs"] if r["kind"] == kind and r["job"] in got["jobs"]]
        if not rows:
            continue
        fc = sum(r["seconds"] for r in rows)
        wall = sum(got["jobs"][r["job"]]["wall_s"] or 0.0 for r in rows)
        cpu = None if warm else sum(got["jobs"][r["job"]]["cpu_s"] or 0.0 for r in rows)
        kinds[kind] = {"jobs": len(rows), "forecast_s": round(fc, 1), "cpu_s": None if cpu is None else round(cpu, 1),
                       "wall_s": round(wall, 1), "cpu_ratio": _ratio(cpu, fc), "wall_ratio": _ratio(wall, fc)}
    models = []
    for r in forecast["jobs"]:
        s = got["summaries"].get(r["job"])
        if r["kind"] != "train" or s is None:
            continue
        per_epoch = s.get("batches_per_epoch") or r["batches_per_epoch"]
        best_epoch = s["best_step"] / per_epoch if per_epoch else None
        models.append({"job": r["job"], "forecast_steps": r["expected_steps"], "steps": s["steps"],
                       "steps_ratio": _ratio(s["steps"], r["expected_steps"]), "stop_reason": s.get("stop_reason"),
                       "rule_epochs": r["plateau_epochs"], "best_epoch": None if best_epoch is None else round(best_epoch, 2),
                       "best_over_rule": _ratio(best_epoch, r["plateau_epochs"]),
                       # a best found: the run stopped on its plateau, or its best step came before the last 20% of
                       # its steps (the dev loss then rose: overfitting); otherwise its best epoch is a lower bound
                       "plateau_found": s.get("stop_reason") in ("plateau", "early_stopping")
                       or s["best_step"] <= 0.8 * s["steps"]})
    return {"experiment": config["experiment"], "warm_start": warm, "kinds": kinds, "models": models,
            "missing": got["missing"], "forecast_wall_s": round(forecast["wall"], 1),
            "forecast_cpu_s": round(forecast["cpu"], 1), "coverage": forecast.get("coverage", []),
            "calibrations": {a: {"train_tokens_per_s": round(c["train_tokens_per_s"]), "cached": c.get("cached"),
                                 "load": c.get("load"), "cost": c.get("cost")}
                             for a, c in forecast["calibrations"].items()},
            "load_at_forecast": forecast.get("load")}


def compare_finished(config: dict, repo: Path, cores: int, recalibrate: bool = False) -> dict:
    """The plan's forecast of ``config`` now, against the run it made (its benchmark files and models)."""
    from .forecast import cache_dir
    from .plan import make_plan

    plan = make_plan(config, repo, repo / "resources" / "downloads", filter_sample=0, forecast_cores=cores,
                     forecast_cache=cache_dir(repo), recalibrate=recalibrate)
    fc = plan["forecast"]
    if not fc.get("jobs"):
        raise PovstimError("nothing forecast: " + "; ".join(fc.get("notes") or ["no models"]))
    out = summarize(config, fc, measured(config, repo, fc))
    out["notes"] = fc.get("notes", [])
    return out


def render(result: dict) -> str:
    lines = [f"Experiment {result['experiment']}: forecast against its finished run (measured / forecast)"]
    if result["warm_start"]:
        lines.append("  (warm_start: true: the benchmark files do not see the jobs' CPU; wall time only)")
    for kind, k in result["kinds"].items():
        cpu = f"CPU {k['cpu_s']:,.1f} s ({k['cpu_ratio']})" if k["cpu_s"] is not None else "CPU not recorded"
        lines.append(f"  {kind:<6} {k['jobs']:>3} jobs: forecast {k['forecast_s']:,.1f} s; {cpu}; "
                     f"wall {k['wall_s']:,.1f} s ({k['wall_ratio']})")
    for m in result["models"]:
        found = "" if m["plateau_found"] else " (no best found before the last 20% of the steps: a lower bound)"
        lines.append(f"  {m['job']:<44} steps {m['steps']:>6,} / {m['forecast_steps']:,} forecast; best epoch "
                     f"{m['best_epoch']} / rule {m['rule_epochs']} = {m['best_over_rule']}{found} [{m['stop_reason']}]")
    if result["missing"]:
        lines.append(f"  no benchmark file for {len(result['missing'])} job(s): {', '.join(result['missing'][:4])}")
    return "\n".join(lines)


def render_table(results: list[dict]) -> str:
    """The benchmark's table: per config and job kind, measured / forecast for CPU and wall, with the load."""
    lines = ["| config | outside the plateau rule's fit | kind | jobs | forecast CPU-s | measured CPU-s | CPU ratio | "
             "measured wall-s | wall ratio | run wall / forecast wall | load (mean, max) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        run = r.get("run") or {}
        whole = _ratio(run.get("wall_s"), r["forecast_wall_s"])
        for kind, k in r["kinds"].items():
            lines.append(f"| {r['name']} | {'; '.join(r['coverage']) or 'inside'} | {kind} | {k['jobs']} | "
                         f"{k['forecast_s']:,.1f} | {k['cpu_s'] if k['cpu_s'] is not None else '-'} | "
                         f"{k['cpu_ratio'] if k['cpu_ratio'] is not None else '-'} | {k['wall_s']:,.1f} | "
                         f"{k['wall_ratio']} | {whole} | {run.get('load_mean', '-')}, {run.get('load_max', '-')} |")
    lines += ["", "| config | model | stop | steps taken / forecast | best epoch | rule's epoch | best / rule |",
              "|---|---|---|---|---|---|---|"]
    for r in results:
        for m in r["models"]:
            lines.append(f"| {r['name']} | {m['job'].split(' ', 1)[1]} | {m['stop_reason']} | {m['steps']} / "
                         f"{m['forecast_steps']} | {m['best_epoch']} | {m['rule_epochs']} | {m['best_over_rule']}"
                         f"{'' if m['plateau_found'] else ' (lower bound)'} |")
    return "\n".join(lines)
