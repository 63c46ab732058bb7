"""Experiment 3 in the DAG (dry runs): the bias nodes, one shared Dyck checkpoint, config errors before any job."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from helpers.project import copy_parts

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "configs" / "exp3-demo.yaml"


def project(dst: Path, config: dict) -> Path:
    copy_parts(dst)
    (dst / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    return dst


def dry_run(folder: Path, *targets: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    cmd = [sys.executable, "-m", "snakemake", "-n", "-p", "--workflow-profile", "none", "--cores", "2", *targets]
    return subprocess.run(cmd, cwd=folder, capture_output=True, text=True, env=env)


def job_counts(stdout: str) -> dict[str, int]:
    table = stdout.split("Job stats:")[1].split("\n\n")[0]
    return {m[1]: int(m[2]) for m in re.finditer(r"^(\w+)\s+(\d+)$", table, re.M)}


@pytest.fixture
def demo_config():
    return yaml.safe_load(DEMO.read_text())


def test_demo_dag_has_every_bias_node_and_one_dyck_checkpoint(tmp_path, demo_config):
    proc = dry_run(project(tmp_path, demo_config), "results/figures")
    assert proc.returncode == 0, proc.stderr[-3000:]
    jobs = job_counts(proc.stdout)
    n_seeds = len(demo_config["seeds"])
    assert jobs["dyck_corpus"] == 1 and jobs["dyck_pretrain"] == 1  # shared by 2 archs x 2 seeds
    assert jobs["tpt_parse"] == 2  # train and dev of baby-f
    assert jobs["train_biased"] == 4 * n_seeds and jobs["train"] == n_seeds  # only the vanilla arch is plain
    assert jobs["score"] == 5 * n_seeds
    # the Dyck archs start from the checkpoint; the TPT arch reads the parses; the analysis gets 'bias'
    out = proc.stdout
    inits = re.findall(r"--init-from (results/exp3-demo/pretrain/dyck-models/k16-\S+)", out)
    assert len(inits) == 2 * n_seeds and len(set(inits)) == 1  # dyck and dyck+recency, every seed: one checkpoint
    assert "--parses results/exp3-demo/parse/tpt/gold/baby-f/40k/train.conllu results/exp3-demo/parse/tpt/gold/baby-f/40k/dev.conllu" in out
    assert '"gpt2-dyck-recency": {"bias": "dyck+recency"' in out  # plus the learner's family and scale (plan.analysis_archs)


@pytest.mark.parametrize("edit, key", [
    (lambda a: a["gpt2-recency"]["bias"]["recency"].update(r=1.2), "archs.gpt2-recency.bias.recency.r"),
    (lambda a: a["gpt2-dyck"]["bias"]["dyck"].update(k=0), "archs.gpt2-dyck.bias.dyck.k"),
    (lambda a: a["gpt2-tpt"]["bias"].update(attention={}), "archs.gpt2-tpt.bias.attention"),
])
def test_bad_bias_config_fails_before_any_job(tmp_path, demo_config, edit, key):
    edit(demo_config["archs"])
    proc = dry_run(project(tmp_path, demo_config), "results/figures")
    assert proc.returncode != 0
    assert key in proc.stdout + proc.stderr
    assert "Job stats" not in proc.stdout


def test_tpt_on_real_text_without_a_parser_fails_before_any_job(tmp_path, demo_config):
    demo_config["sources"]["books"] = {"kind": "local", "path": "resources/books.txt", "format": "lines"}
    demo_config["corpora"]["baby"]["mixture"] = {"cds": 0.5, "books": 0.5}
    proc = dry_run(project(tmp_path, demo_config), "results/figures")
    assert proc.returncode != 0
    msg = proc.stdout + proc.stderr
    assert "archs.gpt2-tpt.bias.tpt" in msg and "books" in msg and "Job stats" not in msg
