"""A self-contained copy of the workflow for Snakemake integration tests (so a test may edit its code)."""

from __future__ import annotations

import shutil
from pathlib import Path

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
