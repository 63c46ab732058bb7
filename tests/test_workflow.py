"""Integration tests: the real Snakemake DAG on a tiny config.

One project copy runs the whole DAG once (module-scoped fixture); the other
tests dry-run against that finished copy to check what an edit reruns, and a
second copy reruns up to the item scores to check byte-identical outputs.
"""

from __future__ import annotations

import filecmp
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from helpers.project import copy_parts

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "tests" / "configs" / "tiny.yaml"
PROJECT_PARTS = ["Snakefile", "rules", "workflow", "envs"]


def copy_project(dst: Path, config: dict | Path = TINY) -> Path:
    """A self-contained copy of the workflow (so editing its code is safe)."""
    copy_parts(dst, PROJECT_PARTS)
    if isinstance(config, Path):
        shutil.copy2(config, dst / "config.yaml")
    else:
        (dst / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    return dst


def snakemake(project: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)  # the Snakefile puts the copy's own workflow/ first
    # Targets must not follow --resources/--configfile: those options take
    # several values and would swallow them.
    cmd = [sys.executable, "-m", "snakemake", "--workflow-profile", "none", "--cores", "2",
           *args, "--resources", "gpu=1"]
    proc = subprocess.run(cmd, cwd=project, capture_output=True, text=True, env=env)
    if check and proc.returncode != 0:
        logs = "\n".join(
            f"--- {p}\n{p.read_text()[-3000:]}" for p in sorted((project / "logs").rglob("*.log"))
            if p.stat().st_size
        ) if (project / "logs").exists() else ""
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-6000:]}\n{logs}")
    return proc


def scheduled_rules(proc: subprocess.CompletedProcess) -> dict[str, int]:
    """Parse the 'Job stats' table of a dry run into {rule: count}."""
    out = proc.stdout + proc.stderr
    counts: dict[str, int] = {}
    in_table = False
    for line in out.splitlines():
        if line.startswith("Job stats"):
            in_table = True
            continue
        if in_table:
            m = re.match(r"^(\S+)\s+(\d+)$", line.strip())
            if m and m.group(1) != "total":
                counts[m.group(1)] = int(m.group(2))
            elif line.strip().startswith("total"):
                break
    return counts


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    project = copy_project(tmp_path_factory.mktemp("run_a"))
    snakemake(project, "results/figures")
    return project


def test_dry_run_lists_the_whole_dag(tmp_path):
    project = copy_project(tmp_path / "p")
    jobs = scheduled_rules(snakemake(project, "-n", "results/figures"))
    for rule in ["synth", "assemble", "parse", "filter", "condition", "tokenizer", "train",
                 "benchmark", "score", "analyze", "figures",
                 # the conditions table (report page) and the guardrails are products of every run
                 "condition_table", "guardrails", "figures_index"]:
        assert jobs.get(rule, 0) >= 1, f"rule {rule} missing from the DAG: {jobs}"
    # tiny.yaml: 3 conditions x 2 sizes x 1 seed x 1 arch
    assert jobs["train"] == 6
    assert jobs["parse"] == 2 * 2  # baby at 2 sizes, 2 shards each


def test_full_run_makes_figures(finished):
    figures = list((finished / "results" / "tiny" / "figures").glob("*.png"))
    assert len(figures) >= 2
    assert list((finished / "results" / "tiny" / "figures").glob("*.pdf"))
    acc = (finished / "results" / "tiny" / "analysis" / "accuracy.csv").read_text()
    assert "baby-f" in acc and "wiki" in acc
    # results/figures indexes the experiment run last: links into its own folder
    index = finished / "results" / "figures"
    assert (index / "EXPERIMENT").read_text().strip() == "tiny"
    linked = sorted(p.name for p in index.glob("*.png"))
    assert linked == sorted(p.name for p in figures) and all((index / n).is_symlink() for n in linked)
    assert (index / linked[0]).read_bytes() == (finished / "results" / "tiny" / "figures" / linked[0]).read_bytes()


def test_full_run_builds_the_conditions_table_and_checks_babys_evidence(finished):
    """results/figures builds conditions.tsv and its report page, and the guardrails read BABY's
    measured vs configured rates."""
    corpus = finished / "results" / "tiny" / "corpus"
    assert (corpus / "conditions.tsv").read_text().startswith("condition\tsize\t")
    assert "<table>" in (finished / "results" / "tiny" / "analysis" / "conditions.html").read_text()
    guard = json.loads((finished / "results" / "tiny" / "analysis" / "guardrails" / "guardrails.json").read_text())
    assert "reinsert_shortfall" in guard["checks"]
    # fired exactly when a phenomenon's measured targeted rate is below 80% of its configured rate
    low = []
    for size in ("8k", "16k"):
        c = json.loads((corpus / "baby" / size / "condition.json").read_text())
        low += [p for p, r in c["reinsert_config"].items() if c["dpe_rate_targeted"].get(p, 0) < 0.8 * r]
    assert guard["checks"]["reinsert_shortfall"]["fired"] == bool(low)
    assert len(guard["checks"]["reinsert_shortfall"]["findings"]) == len(low)


def test_nothing_to_do_after_a_full_run(finished):
    jobs = scheduled_rules(snakemake(finished, "-n", "results/figures"))
    assert jobs == {}, jobs


def test_a_deleted_model_folder_is_named_with_the_command_that_rebuilds_it(finished, tmp_path):
    """Snakemake keeps up-to-date results whose intermediates were deleted ("Nothing to be done"); the
    Snakefile names the deleted model from Snakemake's job records, and the command it gives rebuilds it and
    what was made from it."""
    project = tmp_path / "p"
    shutil.copytree(finished, project, symlinks=True)
    shutil.rmtree(project / "results" / "tiny" / "models" / "gpt2-nano" / "baby" / "8k" / "seed1")
    proc = snakemake(project, "-n", "results/figures")
    out = proc.stdout + proc.stderr
    assert scheduled_rules(proc) == {}  # Snakemake alone would leave it at that
    assert ("povstim: MISSING results/tiny/models/gpt2-nano/baby/8k/seed1/ (model.safetensors; rule train): "
            "results were built from it (results/tiny/scores/gpt2-nano/baby/8k/seed1/posh.parquet") in out, out
    assert out.count("povstim: MISSING ") == 1  # nothing else is missing
    command = shlex.split(re.search(r"`(snakemake --cores all --forcerun [^`]+)`", out).group(1))
    forced = command[command.index("--forcerun") + 1:]
    assert forced == ["results/tiny/models/gpt2-nano/baby/8k/seed1/model.safetensors"]
    jobs = scheduled_rules(snakemake(project, "-n", "results/figures", "--forcerun", *forced))
    assert jobs.get("train") == 1 and jobs.get("score", 0) + jobs.get("score_group", 0) >= 1, jobs
    assert {"analyze", "figures"} <= set(jobs) and "tokenizer" not in jobs, jobs


def test_changing_a_training_parameter_reruns_only_training_and_downstream(finished, tmp_path):
    config = yaml.safe_load((finished / "config.yaml").read_text())
    config["training"]["lr"] = config["training"]["lr"] * 2
    alt = tmp_path / "alt.yaml"
    alt.write_text(yaml.safe_dump(config))
    jobs = scheduled_rules(snakemake(finished, "-n", "results/figures", "--configfile", str(alt)))
    assert set(jobs) == {"train", "score", "analyze", "guardrails", "figures", "figures_index"}, jobs
    assert jobs["train"] == 6


def test_editing_a_stage_module_reruns_that_stage_and_downstream_only(finished):
    # the filter's gold evaluation: only the filter rule runs it
    target = finished / "workflow" / "povstim" / "filter" / "evaluate.py"
    original = target.read_text()
    try:
        target.write_text(original + "\n# an edit\n")
        jobs = scheduled_rules(snakemake(finished, "-n", "results/figures"))
    finally:
        target.write_text(original)
    assert "filter" in jobs and "condition" in jobs and "train" in jobs
    assert not {"synth", "assemble", "parse"} & set(jobs), jobs
    # wiki is not filtered: its condition, tokenizer and models are untouched
    assert jobs["condition"] == 2 * 2  # baby-f and baby at 2 sizes


@pytest.mark.heavy  # a second whole run; in CI test_slurm compares two whole runs byte for byte
def test_same_config_gives_byte_identical_outputs(finished, tmp_path):
    """A second run of the same config, up to the item scores of every condition at the larger size, writes
    the same bytes. The first run forked its training and scoring jobs from the warm-start server; this one
    runs every job in its own process (warm_start=False): warm start changes nothing either."""
    project = copy_project(tmp_path / "run_b")
    scores = sorted(p.relative_to(finished) for p in (finished / "results" / "tiny" / "scores").rglob("16k/**/*.parquet"))
    assert len(scores) == 3
    snakemake(project, *map(str, scores), "--config", "warm_start=False")
    assert not (project / "logs" / "tiny" / "warm_start.log").exists()
    compared = 0
    for pattern in ["results/tiny/corpus/**/*.txt", "results/tiny/tokenizers/**/tokenizer.json",
                    "results/tiny/benchmarks/**/*.jsonl", "results/tiny/scores/**/*.parquet",
                    "results/tiny/models/**/model.safetensors", "results/tiny/filter/**/dpe.tsv"]:
        for b in project.glob(pattern):
            a = finished / b.relative_to(project)
            assert filecmp.cmp(a, b, shallow=False), f"{a.relative_to(finished)} differs between runs"
            compared += 1
    assert compared >= 20
    # the first run's training, scoring, analysis and figures jobs did run in forked children of its server
    forked = (finished / "logs" / "tiny" / "warm_start.log").read_text()
    assert forked.count(": povstim train ") == 6 and forked.count(": povstim score-group ") == 6
    assert forked.count(": povstim analyze ") == 1 and forked.count(": povstim figures ") == 2  # + the index
    # and the Bayesian model's prewarm (povstim/analysis/models/prewarm.py), started with the run, ended by analyze or
    # done before it (which of the two depends on how long the score jobs take: a slow machine's CI run once
    # saw the prewarm compile everything first)
    assert forked.count(": povstim analyze-prewarm ") == 1
    assert forked.count(": exit 0") == 16 and "refused" not in forked
    prewarmed = (finished / "logs" / "tiny" / "analyze" / "prewarm.log").read_text()
    assert "priority lowered: nice 19" in prewarmed
    assert "analyze started after" in prewarmed or "povstim.analyze-prewarm INFO: done in" in prewarmed, prewarmed
    # every job shares the cores politely: idle torch threads sleep (povstim.devices.job_environment), in the
    # forked children as in the server they come from
    train_logs = list((finished / "logs" / "tiny" / "train").rglob("*.log"))
    assert train_logs and all("(OMP_WAIT_POLICY=PASSIVE)" in p.read_text() for p in train_logs)


def test_size_larger_than_corpus_is_a_clear_error(tmp_path):
    config = yaml.safe_load(TINY.read_text())
    config["sizes"] = ["8k", "5M"]
    project = copy_project(tmp_path / "p", config)
    proc = snakemake(project, "results/tiny/corpus/baby/5M/base.txt", check=False)
    assert proc.returncode != 0
    log = (project / "logs" / "tiny" / "assemble" / "baby" / "5M.log").read_text()
    # names the source, what it has and what the size needs
    assert re.search(r"'cds' has [\d,]+ words", log) and "5,000,000" in log
    assert "Traceback" not in log
    assert not (project / "results" / "tiny" / "corpus" / "baby" / "5M" / "base.txt").exists()


def test_empty_corpus_after_filtering_is_a_clear_error(tmp_path):
    config = yaml.safe_load(TINY.read_text())
    config["sources"]["cds"]["dpe_rate"] = {"question_formation": 0.6, "binding": 0.4}
    config["filter"] = {"mode": "posh", "rules": ["question_formation", "binding"]}
    project = copy_project(tmp_path / "p", config)
    proc = snakemake(project, "results/tiny/corpus/baby-f/8k/train.txt", check=False)
    assert proc.returncode != 0
    log = (project / "logs" / "tiny" / "condition" / "baby-f" / "8k.log").read_text()
    assert "empty" in log.lower()
    assert "Traceback" not in log


def test_unknown_arch_family_stops_before_any_job(tmp_path):
    config = yaml.safe_load(TINY.read_text())
    config["archs"]["gpt2-nano"]["family"] = "gpt5"
    project = copy_project(tmp_path / "p", config)
    proc = snakemake(project, "-n", "results/figures", check=False)
    assert proc.returncode != 0
    assert "archs.gpt2-nano.family" in proc.stdout + proc.stderr
