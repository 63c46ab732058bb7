"""The compute forecast out of sample: `povstim plan --forecast` against real runs of configs unlike the one its
plateau rule was fitted on (gpt2 2 x 128, lr 4e-3, batch 8 x 64, synthetic English, 10k-30k words).

Each config below is shrunk to one seed and its smallest size (every other setting as shipped), run by Snakemake
with `warm_start: false` (so that each job's benchmark file holds the job's own CPU time), and then compared, as a
finished run, with the plan's forecast (`scripts/speed_forecast.py`'s comparison, povstim.preflight.forecast_check):
per job kind (training, scoring) measured / forecast for CPU and wall, and per model the epoch of its best dev loss
against the plateau rule. The 1-minute load average is sampled every 5 s during each run and recorded beside it.

    python scripts/forecast_benchmark.py run            # the five runs (heavy: wrap in flock on a shared machine)
    python scripts/forecast_benchmark.py compare        # forecast each finished run now, print the table
    python scripts/forecast_benchmark.py run --only lstm lr1e-3
    python scripts/forecast_benchmark.py table          # the table of the comparisons made so far
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow"))

from povstim import plan as dag_plan  # noqa: E402
from povstim.io import write_json  # noqa: E402

OUT = REPO / "results" / ".forecast-benchmark"
AOCHILDES = REPO.parent / "shared" / "data" / "aochildes" / "original_transcripts_csv" / "Sawyer.csv"


def _default() -> dict:
    return yaml.safe_load((REPO / "config.yaml").read_text())


def _shrink(c: dict, name: str, size: str = "10k") -> dict:
    c = dict(c)
    c["experiment"] = f"fb-{name}"
    c["seeds"] = [1]
    c["sizes"] = [size]
    c["warm_start"] = False
    c.pop("filter_validation", None)  # not a training or scoring job: untimed work the comparison does not need
    return c


def configs() -> dict[str, dict]:
    """The benchmark's configs: each unlike the plateau rule's in at least its arch, lr, language or text."""
    default = _default()
    lr = _default()
    lr["training"]["lr"] = 1.0e-3
    lstm = _default()
    lstm["archs"] = {"lstm-tiny": {"family": "lstm", "n_layer": 2, "n_embd": 128, "n_hidden": 256, "tie_weights": True}}
    french = yaml.safe_load((REPO / "configs" / "french-demo.yaml").read_text())
    own = yaml.safe_load((REPO / "configs" / "own-data-template.yaml").read_text())
    # a new user's English CSV: real child-directed speech (a childes-db export, children's rows dropped) against a
    # generated adult register
    own["sources"] = {
        "my_cds": {"kind": "local", "format": "csv", "path": str(AOCHILDES), "text_column": "gloss",
                   "speaker_column": "speaker_code", "drop_speakers": ["CHI"], "fix_questions": True, "min_words": 3},
        "my_wiki": {"kind": "synthetic", "register": "adult", "sentences": 3000, "seed": 12},
    }
    own["parser"]["shards"] = 1
    return {"default": _shrink(default, "default"), "lr1e-3": _shrink(lr, "lr1e-3"), "lstm": _shrink(lstm, "lstm"),
            "french": _shrink(french, "french"), "csv-en": _shrink(own, "csv-en")}


def config_path(name: str) -> Path:
    return OUT / f"{name}.yaml"


def write_configs(names) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, c in configs().items():
        if name in names:
            config_path(name).write_text(yaml.safe_dump(c, sort_keys=False))


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def snakemake(config: Path, cores: int, targets: list[str], *extra: str) -> dict:
    env = {**os.environ, "POVSTIM_YES": "1", "PYTHONPATH": str(REPO / "workflow"), "POVSTIM_NO_PROGRESS": "1"}
    loads, stop = [], threading.Event()

    def sample():
        while not stop.wait(5.0):
            loads.append(os.getloadavg()[0])

    t = threading.Thread(target=sample, daemon=True)
    before = os.getloadavg()[0]
    t.start()
    c0, w0 = _cpu(), time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "snakemake", "--cores", str(cores), "--configfile", str(config),
                           *extra, "--", *targets], cwd=REPO, env=env, capture_output=True, text=True)
    stop.set()
    t.join()
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
        raise SystemExit(f"snakemake failed: {config} {' '.join(extra)}")
    return {"wall_s": round(time.perf_counter() - w0, 2), "cpu_s": round(_cpu() - c0, 2),
            "load_before": round(before, 2), "load_after": round(os.getloadavg()[0], 2),
            "load_mean": round(sum(loads) / len(loads), 2) if loads else round(before, 2),
            "load_max": round(max(loads), 2) if loads else round(before, 2)}


def run(names, cores: int) -> None:
    from povstim import config as cfg

    write_configs(names)
    for name in names:
        path = config_path(name)
        config = cfg.load(path)
        exp = config["experiment"]
        for d in (REPO / "results" / exp, REPO / "benchmarks" / exp, REPO / "logs" / exp):
            shutil.rmtree(d, ignore_errors=True)
        targets = [f"results/{exp}/scores/{m.path}/{s}.parquet" for m in dag_plan.models(config)
                   for s in config["benchmarks"]]
        print(f"[{time.strftime('%H:%M:%S')}] {name}: upstream (untimed) ...", flush=True)
        snakemake(path, cores, targets, "--omit-from", "train")
        print(f"[{time.strftime('%H:%M:%S')}] {name}: training and scoring ...", flush=True)
        measured = snakemake(path, cores, targets)
        measured.update(config=name, cores=cores, date=time.strftime("%Y-%m-%d %H:%M:%S %Z"),
                        machine_cores=os.cpu_count())
        write_json(OUT / f"{name}.run.json", measured)
        print(json.dumps(measured), flush=True)


def compare(names, cores: int) -> None:
    from povstim import config as cfg
    from povstim.preflight import forecast_check

    rows = []
    for name in names:
        path = config_path(name)
        run_file = OUT / f"{name}.run.json"
        if not run_file.exists():
            print(f"{name}: not run yet ({run_file})")
            continue
        config = cfg.load(path)
        result = forecast_check.compare_finished(config, REPO, cores)
        result["run"] = json.loads(run_file.read_text())
        result["name"] = name
        write_json(OUT / f"{name}.compare.json", result)
        rows.append(result)
    print(forecast_check.render_table(rows))


def table(names, cores: int) -> None:
    from povstim.preflight import forecast_check

    rows = [json.loads((OUT / f"{n}.compare.json").read_text()) for n in names if (OUT / f"{n}.compare.json").exists()]
    print(forecast_check.render_table(rows))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=("run", "compare", "table"))
    ap.add_argument("--only", nargs="+", default=None, help="configs (default: all): " + ", ".join(configs()))
    ap.add_argument("--cores", type=int, default=2)
    args = ap.parse_args()
    names = args.only or list(configs())
    unknown = sorted(set(names) - set(configs()))
    if unknown:
        raise SystemExit(f"unknown config(s) {', '.join(unknown)}; known: {', '.join(configs())}")
    {"run": run, "compare": compare, "table": table}[args.what](names, args.cores)


if __name__ == "__main__":
    main()
