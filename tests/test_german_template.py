"""configs/german-template.yaml on a user's two CSVs (hand-written fixtures): check, and the DAG (dry run)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.project import copy_parts
from povstim.cli import main

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures" / "sources"


def _config(tmp_path: Path, clams_root: str = "../shared/data/clams") -> Path:
    text = (REPO / "configs" / "german-template.yaml").read_text(encoding="utf-8")
    text = text.replace("data/my_cds_de.csv", str(FIXTURES / "de_cds.csv"))
    text = text.replace("data/my_wiki_de.csv", str(FIXTURES / "de_wiki.csv"))
    text = text.replace("../shared/data/clams", clams_root)
    out = tmp_path / "german.yaml"
    out.write_text(text, encoding="utf-8")
    return out


def test_check_says_german_has_no_dpe_filter(tmp_path, capsys):
    assert main(["check", str(_config(tmp_path))]) == 0
    out = capsys.readouterr().out
    assert "OK: experiment 'german', 2 source(s), 2 corpora x 2 size(s), 2 condition(s), 12 model(s)" in out
    assert "suites clams-de, fit-clams-de" in out
    assert "note: German has no DPE filter here (filter.rules cover: en): no BABY-F can be built" in out
    assert "warning" not in out  # both CSVs exist and have the named column


@pytest.mark.slow
def test_dry_run_trains_baby_and_wiki_and_scores_clams_de(tmp_path, shared_data):
    project = copy_parts(tmp_path / "project", ["Snakefile", "rules", "workflow", "envs", "configs", "data"])
    config = _config(tmp_path, str(shared_data / "clams"))
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--workflow-profile", "none", "--cores", "2",
                           "--configfile", str(config), "-n", "-p", "--", "results/figures"],
                          cwd=project, capture_output=True, text=True, env=env)
    text = proc.stdout + proc.stderr
    assert proc.returncode == 0, text[-4000:]
    assert " parse " not in text and "povstim filter " not in text  # no German DPE rules: nothing parsed
    assert "povstim train" in text and text.count("povstim train") == 12  # 2 conditions x 2 sizes x 3 seeds
    assert "clams-de" in text and "fit-clams-de" in text
