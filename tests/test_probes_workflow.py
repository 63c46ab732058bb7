"""rules/probe.smk in the DAG: a config with probes.msgs plans the probe jobs under results/figures."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))


def dry_run(workdir: Path, configfile: Path, *targets: str) -> subprocess.CompletedProcess:
    cmd = [SNAKEMAKE, "-n", "-s", str(REPO / "Snakefile"), "-d", str(workdir), "--workflow-profile", "none",
           "--cores", "2", "--configfile", str(configfile), "--", *targets]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=300)


def job_counts(proc) -> dict[str, int]:
    out, counts, table = proc.stdout + proc.stderr, {}, False
    for line in out.splitlines():
        if line.startswith("Job stats"):
            table = True
        elif table:
            m = re.match(r"^(\S+)\s+(\d+)$", line.strip())
            if m and m.group(1) != "total":
                counts[m.group(1)] = int(m.group(2))
            elif line.strip().startswith("total"):
                break
    return counts


def test_demo_config_plans_the_probe_jobs(tmp_path):
    proc = dry_run(tmp_path, REPO / "configs" / "msgs-demo.yaml", "results/figures")
    assert proc.returncode == 0, proc.stderr[-3000:]
    jobs = job_counts(proc)
    # one data job, one probe job per trained model (2 conditions x 2 sizes x 1 seed), one summary
    assert jobs["train"] == 4
    assert jobs["probe_data"] == 1 and jobs["probe"] == 4 and jobs["probe_summary"] == 1 and jobs["figures"] == 1
    out = proc.stdout
    for model in ("baby/30k", "baby/90k", "wiki/30k", "wiki/90k"):
        assert f"results/msgs-demo/probes/msgs/gpt2-mini/{model}/seed1/lbs.parquet" in out
    assert "results/msgs-demo/probes/msgs/figures" in out


def test_no_probes_section_no_probe_jobs(tmp_path):
    proc = dry_run(tmp_path, REPO / "tests" / "configs" / "tiny.yaml", "results/figures")
    assert proc.returncode == 0, proc.stderr[-3000:]
    jobs = job_counts(proc)
    assert jobs["figures"] == 1 and not {"probe_data", "probe", "probe_summary"} & set(jobs)


def test_bad_probe_config_stops_the_workflow_before_any_job(tmp_path):
    cfg = yaml.safe_load((REPO / "configs" / "msgs-demo.yaml").read_text())
    cfg["probes"]["msgs"]["tasks"] = ["main_verb_control", "main_verb_colour"]
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(cfg))
    proc = dry_run(tmp_path, path, "results/figures")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "probes.msgs.tasks[1]" in out and "unknown surface feature 'colour'" in out
    assert "Job stats" not in out
