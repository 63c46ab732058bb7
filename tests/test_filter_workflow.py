"""The parse -> filter -> condition rules under Snakemake: outputs, and what a config edit reruns."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml


def snakemake(repo: Path, workdir: Path, *targets, dry=False):
    cmd = [sys.executable, "-m", "snakemake", "-s", str(repo / "Snakefile"), "-d", str(workdir),
           "--configfile", str(workdir / "config.yaml"), "--cores", "2", *targets]
    if dry:
        cmd += ["-n", "--quiet", "rules"]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=repo)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return r.stdout + r.stderr


def scheduled(out: str) -> dict[str, int]:
    """Rule -> job count from a dry run's job stats table."""
    jobs = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit() and parts[0] != "total":
            jobs[parts[0]] = int(parts[1])
    return jobs


def tiny_config(repo: Path, workdir: Path, **changes) -> None:
    cfg = yaml.safe_load((repo / "config.yaml").read_text())
    cfg["sources"]["cds"]["sentences"] = 3000
    cfg["sources"]["adult"]["sentences"] = 1500
    cfg["sizes"] = ["8k"]
    for section, value in changes.items():
        cfg[section] = value
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))


@pytest.mark.slow
def test_filter_rules_build_conditions_and_rerun_only_what_changed(repo_root, tmp_path):
    cfg = yaml.safe_load((repo_root / "config.yaml").read_text())
    tiny_config(repo_root, tmp_path)
    target = "results/demo/corpus/conditions.tsv"
    snakemake(repo_root, tmp_path, target)
    table = (tmp_path / target).read_text().splitlines()
    rows = {r.split("\t")[0]: dict(zip(table[0].split("\t"), r.split("\t"))) for r in table[1:]}
    assert set(rows) == {"baby", "baby-f", "wiki"}
    assert rows["baby"]["n_sentences"] == rows["baby-f"]["n_sentences"]
    summary = json.loads((tmp_path / "results/demo/filter/baby/8k/summary.json").read_text())
    assert summary["prefilter"]["n_misses"] == 0 and summary["prefilter"]["n_spared"] > 0
    assert summary["gold"]["posh"]["any"]["recall"] == 1.0
    assert (tmp_path / "results/demo/filter/baby/8k/sanity_question_formation.tsv").exists()

    # A filter mode change reruns the filter and the filtered conditions, not the parse.
    tiny_config(repo_root, tmp_path, filter={**cfg["filter"], "mode": "strict"})
    jobs = scheduled(snakemake(repo_root, tmp_path, target, dry=True))
    assert jobs == {"filter": 1, "condition": 2, "condition_table": 1}, jobs
    # A parser change reruns the parse shards and what follows, nothing upstream.
    tiny_config(repo_root, tmp_path, parser={**cfg["parser"], "prefilter": False})
    jobs = scheduled(snakemake(repo_root, tmp_path, target, dry=True))
    assert jobs == {"parse": cfg["parser"]["shards"], "filter": 1, "condition": 2, "condition_table": 1}, jobs
