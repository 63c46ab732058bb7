"""profiles/slurm on the paper-scale DAG, as a dry run (no cluster needed):
every option is one Snakemake 9 / plugin 2.8 knows, GPU rules request GPUs,
and scoring jobs are batched into group jobs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
PROFILE = REPO / "profiles" / "slurm"


def paper_config() -> Path:
    posh = REPO / "configs" / "posh.yaml"
    return posh if posh.exists() else REPO / "config.yaml"


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("slurm-dry")
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(workdir),
         "--profile", str(PROFILE), "--configfile", str(paper_config()), "-n", "results/figures"],
        capture_output=True, text=True, timeout=600, cwd=workdir,
    )
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-5000:]
    return proc.stdout + proc.stderr


def job_blocks(text: str, rule: str) -> list[str]:
    """The dry run's printed block of every job of `rule`."""
    return re.findall(rf"^\s*(?:local)?rule {rule}:\n(.*?)(?=^\s*Shell command:|^\s*\[|\Z)", text, re.M | re.S)


def resources(block: str) -> dict[str, str]:
    m = re.search(r"resources: (.*)", block)
    assert m, block
    return dict(part.split("=", 1) for part in m.group(1).split(", "))


def test_training_and_scoring_request_a_gpu(dry_run):
    for rule in ("train", "score"):
        blocks = job_blocks(dry_run, rule)
        assert blocks, f"the dry run schedules no {rule} job"
        for block in blocks:
            res = resources(block)
            assert res.get("gpu") == "1", (rule, res)
            assert int(res["runtime"]) >= 30 and int(res["mem_mb"]) >= 4000, (rule, res)


def test_train_gets_the_long_runtime_and_memory(dry_run):
    profile = yaml.safe_load((PROFILE / "config.yaml").read_text())
    want = profile["set-resources"]["train"]
    res = resources(job_blocks(dry_run, "train")[0])
    assert int(res["runtime"]) == want["runtime"] and int(res["mem_mb"]) == want["mem_mb"]


def test_scoring_jobs_are_batched_into_group_jobs(dry_run):
    assert "Group job scoring" in dry_run


def test_profile_sends_gpus_through_plugin_resources_not_slurm_extra():
    """Plugin >= 2 rejects --gres/--gpus inside slurm_extra: GPUs go through
    the `gpu`/`gpu_model`/`gres` resources."""
    profile = yaml.safe_load((PROFILE / "config.yaml").read_text())
    assert profile["executor"] == "slurm"
    for rule, res in {"*": profile.get("default-resources", {}), **profile.get("set-resources", {})}.items():
        extra = str(res.get("slurm_extra", ""))
        assert "--gres" not in extra and "--gpus" not in extra, rule
    assert profile["set-resource-scopes"]["gpu"] == "local"


def test_stop_script_stops_exactly_the_recorded_pids(tmp_path):
    """scripts/slurm/stop.sh ends the daemons by the PIDs start.sh recorded,
    and nothing else (CI must never kill processes by name)."""
    daemon = subprocess.Popen(["sleep", "120"])
    bystander = subprocess.Popen(["sleep", "120"])
    try:
        (tmp_path / "slurmd.pid").write_text(f"{daemon.pid}\n")
        (tmp_path / "munged.pid").write_text("999999999\n")  # stale: already gone
        proc = subprocess.run([str(REPO / "scripts" / "slurm" / "stop.sh")], capture_output=True, text=True,
                              timeout=60, env={"PATH": "/usr/bin:/bin", "POVSTIM_SLURM_DIR": str(tmp_path)})
        assert proc.returncode == 0, proc.stderr
        assert daemon.wait(timeout=10) is not None
        assert f"stopped slurmd (pid {daemon.pid})" in proc.stdout
        assert bystander.poll() is None
        assert not (tmp_path / "slurmd.pid").exists() and not (tmp_path / "munged.pid").exists()
    finally:
        for p in (daemon, bystander):
            if p.poll() is None:
                p.kill()
                p.wait()
