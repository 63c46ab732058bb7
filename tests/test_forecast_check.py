"""The forecast against a finished run (scripts/speed_forecast.py's default, povstim.preflight.forecast_check): the
run's Snakemake benchmark files and train summaries are read, nothing is trained. Gold values by hand from the
planted files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from povstim.io import PovstimError
from povstim.preflight import forecast_check as FC

HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def _bench(root: Path, job: str, wall: float, cpu: float) -> None:
    path = FC.bench_file(root / "benchmarks" / "exp", job)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + f"{wall}\t0:00:{int(wall):02d}\t100\t200\t90\t95\t0\t1\t80.5\t{cpu}\n")


def _forecast() -> dict:
    return {"wall": 100.0, "cpu": 150.0, "calibrations": {}, "coverage": ["arch a is 2 x 64"], "jobs": [
        {"job": "train a/baby/10k/seed1", "kind": "train", "seconds": 40.0, "expected_steps": 300,
         "batches_per_epoch": 50, "plateau_epochs": 4.0},
        {"job": "train a/wiki/10k/seed1", "kind": "train", "seconds": 60.0, "expected_steps": 400,
         "batches_per_epoch": 50, "plateau_epochs": 4.0},
        {"job": "score a/baby/10k/seed1/posh", "kind": "score", "seconds": 20.0},
        {"job": "score a/wiki/10k/seed1/posh", "kind": "score", "seconds": 30.0},
        {"job": "warm-start server", "kind": "server", "seconds": 3.0}]}


def _planted(tmp_path: Path) -> Path:
    _bench(tmp_path, "train a/baby/10k/seed1", 50.0, 45.0)
    _bench(tmp_path, "train a/wiki/10k/seed1", 70.0, 65.0)
    _bench(tmp_path, "score a/baby/10k/seed1/posh", 12.0, 11.0)
    # the wiki score job never ran: listed as missing, left out of the ratios
    for cond, steps, best, stop in (("baby", 330, 250, "plateau"), ("wiki", 600, 600, "max_steps"),
                                    ("cds", 320, 150, "max_steps")):
        d = tmp_path / "results" / "exp" / "models" / "a" / cond / "10k" / "seed1"
        d.mkdir(parents=True)
        (d / "train_summary.json").write_text(json.dumps({"steps": steps, "best_step": best, "stop_reason": stop,
                                                          "batches_per_epoch": 16 if cond == "cds" else 50}))
    return tmp_path


def test_a_finished_run_against_its_forecast_by_hand(tmp_path):
    root = _planted(tmp_path)
    config = {"experiment": "exp", "warm_start": False}
    out = FC.summarize(config, _forecast(), FC.measured(config, root, _forecast()))
    # train: forecast 40 + 60 = 100 s; CPU 45 + 65 = 110 (1.1); wall 50 + 70 = 120 (1.2)
    assert out["kinds"]["train"] == {"jobs": 2, "forecast_s": 100.0, "cpu_s": 110.0, "wall_s": 120.0,
                                     "cpu_ratio": 1.1, "wall_ratio": 1.2}
    # score: only the job that ran: forecast 20, CPU 11 (0.55), wall 12 (0.6)
    assert out["kinds"]["score"] == {"jobs": 1, "forecast_s": 20.0, "cpu_s": 11.0, "wall_s": 12.0,
                                     "cpu_ratio": 0.55, "wall_ratio": 0.6}
    assert out["missing"] == ["score a/wiki/10k/seed1/posh"]
    baby, wiki = out["models"]  # no forecast row for the cds model: not compared
    # best epoch 250 / 50 = 5.0 against the rule's 4.0: 1.25; steps 330 / 300 = 1.1
    assert (baby["best_epoch"], baby["best_over_rule"], baby["steps_ratio"], baby["plateau_found"]) == \
        (5.0, 1.25, 1.1, True)
    # ended on its budget: no plateau found, its best epoch (12.0, 3x the rule) is a lower bound
    assert (wiki["best_epoch"], wiki["best_over_rule"], wiki["plateau_found"]) == (12.0, 3.0, False)
    text = FC.render({**out, "experiment": "exp"})
    assert "train    2 jobs: forecast 100.0 s; CPU 110.0 s (1.1); wall 120.0 s (1.2)" in text
    assert "(no best found before the last 20% of the steps: a lower bound)" in text
    table = FC.render_table([{**out, "name": "default", "run": {"wall_s": 130.0, "load_mean": 6.1, "load_max": 9.0}}])
    assert "| default | arch a is 2 x 64 | train | 2 | 100.0 | 110.0 | 1.1 | 120.0 | 1.2 | 1.3 | 6.1, 9.0 |" in table


def test_with_the_warm_start_server_the_cpu_is_not_read(tmp_path):
    """Jobs forked by the warm-start server are not the benchmark file's process: its cpu_time is not the job's."""
    root = _planted(tmp_path)
    config = {"experiment": "exp", "warm_start": True}
    out = FC.summarize(config, _forecast(), FC.measured(config, root, _forecast()))
    assert out["kinds"]["train"]["cpu_s"] is None and out["kinds"]["train"]["wall_ratio"] == 1.2
    assert "wall time only" in FC.render({**out, "experiment": "exp"})


def test_a_run_that_has_not_run_is_one_line(tmp_path):
    with pytest.raises(PovstimError, match=r"benchmarks/exp: no benchmark file .* run it first .* --retrain"):
        FC.measured({"experiment": "exp"}, tmp_path, _forecast())


def test_a_best_long_before_the_budget_ends_is_a_found_best(tmp_path):
    """Stopped on max_steps, but its best step (150 of 320) came before the last 20% of its steps: the dev loss rose
    after it, so the best epoch (150 / 16 = 9.38) is measured, not a lower bound."""
    root = _planted(tmp_path)
    _bench(root, "train a/cds/10k/seed1", 30.0, 28.0)
    fc = {**_forecast(), "jobs": [{"job": "train a/cds/10k/seed1", "kind": "train", "seconds": 30.0,
                                   "expected_steps": 200, "batches_per_epoch": 16, "plateau_epochs": 4.75}]}
    config = {"experiment": "exp", "warm_start": False}
    (m,) = FC.summarize(config, fc, FC.measured(config, root, fc))["models"]
    assert m["plateau_found"] and m["best_epoch"] == 9.38 and m["best_over_rule"] == round(150 / 16 / 4.75, 3)
