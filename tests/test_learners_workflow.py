"""An LSTM and an n-gram learner in the grid: one archs: entry each in a copy of a config.

The dry run checks the DAG (an LSTM trains like GPT-2; an n-gram arch has no training job and one score job per
condition x size, not per seed); the slow test runs the tiny config end to end and finds both learners' rows in
the accuracy table, Tables 3/8 and the figures beside GPT-2's.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
LSTM = {"family": "lstm", "n_layer": 1, "n_embd": 32, "n_hidden": 48, "tie_weights": True}
NGRAM = {"family": "kneser-ney", "order": 3}


def _config(base: str, **edits) -> dict:
    cfg = yaml.safe_load((REPO / base).read_text())
    cfg["archs"] = {**cfg["archs"], "lstm-nano": LSTM, "ngram3": NGRAM}
    cfg.update(edits)
    return cfg


def _snakemake(work: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["POVSTIM_NO_PROGRESS"] = "1"
    cmd = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(work), "--configfile",
           str(work / "config.yaml"), "--workflow-profile", "none", "--cores", "2", *args]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, env=env, timeout=1800)


def _job_counts(stdout: str) -> dict[str, int]:
    table = stdout.split("Job stats:")[1].split("\n\n")[0]
    return {m[1]: int(m[2]) for m in re.finditer(r"^(\w+)\s+(\d+)$", table, re.M)}


def test_the_default_config_plans_an_lstm_and_an_ngram_from_one_entry_each(tmp_path):
    cfg = _config("config.yaml")
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    r = _snakemake(tmp_path, "-n", "results/figures")
    assert r.returncode == 0, r.stderr[-3000:]
    counts = _job_counts(r.stdout)
    grid = sum(1 for c in cfg["conditions"] for _ in cfg["sizes"])  # 3 conditions x 2 sizes
    seeds = len(cfg["seeds"])
    assert counts["train"] == 2 * grid * seeds  # gpt2-tiny and lstm-nano; nothing trains the n-gram
    assert counts["score_corpus_model"] == grid  # one per condition x size: a deterministic model, one "seed"
    size = cfg["sizes"][0]
    assert f"scores/ngram3/baby/{size}/seed{cfg['seeds'][0]}/posh.parquet" in r.stdout
    assert f"scores/ngram3/baby/{size}/seed{cfg['seeds'][1]}/" not in r.stdout and "models/ngram3" not in r.stdout


@pytest.mark.slow
@pytest.mark.heavy  # ~200 s on 2 cores; the LSTM and n-gram stages run on their own in test_lstm / test_ngram_learner
def test_tiny_config_end_to_end_with_lstm_and_ngram_rows(tmp_path):
    cfg = _config("tests/configs/tiny.yaml", seeds=[1, 2])
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    r = _snakemake(tmp_path, "results/figures")
    assert r.returncode == 0, r.stderr[-4000:]
    results = tmp_path / "results" / cfg["experiment"]
    acc = pd.read_csv(results / "analysis" / "accuracy.csv")
    assert {"gpt2-nano", "lstm-nano", "ngram3"} <= set(acc["arch"])
    assert sorted(acc.loc[acc["arch"] == "ngram3", "seed"].unique()) == [1]
    assert sorted(acc.loc[acc["arch"] == "lstm-nano", "seed"].unique()) == [1, 2]
    chisq = pd.read_csv(results / "analysis" / "chisq.csv")
    assert {"gpt2-nano", "lstm-nano", "ngram3"} <= set(chisq["arch"])
    table3 = (results / "analysis" / "tables" / "table3_posh.md").read_text()
    assert "lstm-nano" in table3 and "ngram3" in table3 and "gpt2-nano" in table3
    assert (results / "models" / "lstm-nano" / "baby" / "8k" / "seed1" / "model.safetensors").is_file()
    assert not (results / "models" / "ngram3").exists()
    assert (results / "figures" / "fig2_accuracy.png").is_file()
