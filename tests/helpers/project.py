"""A self-contained copy of the workflow for Snakemake integration tests (so a test may edit its code)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
WORKFLOW_PARTS = ("Snakefile", "rules", "workflow", "envs")


def copy_parts(dst: Path, parts=WORKFLOW_PARTS) -> Path:
    """Copy ``parts`` of the checkout (files or folders, without caches) into ``dst``; return ``dst``."""
    dst.mkdir(parents=True, exist_ok=True)
    for part in parts:
        src = REPO / part
        if src.is_dir():
            shutil.copytree(src, dst / part, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(src, dst / part)
    return dst


def run_snakemake(project: Path, configfile: str, *args: str):
    """Snakemake on a copied project with ``configfile`` (the copy's own package, not this checkout's:
    PYTHONPATH dropped); a failure raises with the output's tail and every job log's."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, POVSTIM_YES="1")
    env.pop("PYTHONPATH", None)
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--workflow-profile", "none", "--cores", "2",
                           "--configfile", configfile, *args], cwd=project, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        logs = "\n".join(f"--- {p}\n{p.read_text()[-2000:]}" for p in sorted((project / "logs").rglob("*.log"))) \
            if (project / "logs").exists() else ""
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}\n"
                             f"{logs[-8000:]}")
    return proc


def job_counts(out: str) -> dict[str, int]:
    """Snakemake's 'Job stats' table (rule -> jobs) from its output."""
    counts, on = {}, False
    for line in out.splitlines():
        if line.startswith("Job stats"):
            on = True
        elif on and line.strip().startswith("total"):
            break
        elif on and len(parts := line.split()) == 2 and parts[1].isdigit():
            counts[parts[0]] = int(parts[1])
    return counts


def dry_run(project: Path, config: dict) -> subprocess.CompletedProcess:
    """``snakemake -n -p`` of ``config`` in a copy of the workflow at ``project`` (the checkout's own package, not
    PYTHONPATH's): the DAG build's console is in stderr, the jobs in stdout. Fails the test on a non-zero exit."""
    copy_parts(project)
    (project / "config.yaml").write_text(yaml.safe_dump(config))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([sys.executable, "-m", "snakemake", "-n", "-p", "--workflow-profile", "none", "--cores", "2"],
                       cwd=project, capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    return r
