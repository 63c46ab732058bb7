"""One rule for where a config's relative paths resolve: the project folder (the one holding the Snakefile you
run), for `povstim` commands as for the Snakemake run -- never the checkout povstim was installed from."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from povstim.io import project_dir, project_path

REPO = Path(__file__).resolve().parents[1]


def _povstim(args, cwd):
    env = {**os.environ, "PYTHONPATH": str(REPO / "workflow")}
    return subprocess.run([sys.executable, "-m", "povstim", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def test_project_dir_is_the_nearest_folder_with_a_snakefile(tmp_path, monkeypatch):
    (tmp_path / "Snakefile").write_text("")
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "sub" / "deeper")
    assert project_dir() == tmp_path
    assert project_path("data/x.csv") == tmp_path / "data" / "x.csv"
    assert project_path("/abs/x.csv") == Path("/abs/x.csv")
    assert project_path("x.csv", base="/b") == Path("/b/x.csv")
    other = tmp_path.parent / (tmp_path.name + "-nosnake")
    other.mkdir()
    monkeypatch.chdir(other)
    assert project_dir() == other


def test_check_from_a_second_checkout_reads_its_own_files(tmp_path):
    """A second project folder whose CSVs exist only there: `povstim check` run in it finds them (it used to
    look in the checkout povstim was installed from and warn that they did not exist)."""
    cfg = yaml.safe_load((REPO / "configs" / "german-example.yaml").read_text())
    for name in ("cds_de", "wiki_de"):
        assert cfg["sources"][name]["path"].startswith("data/")
        csv = tmp_path / cfg["sources"][name]["path"]
        csv.parent.mkdir(parents=True, exist_ok=True)
        rows = ["text,speaker_role"] + [f"das ist ein satz nummer {i} .,Mother" for i in range(5)]
        csv.write_text("\n".join(rows) + "\n")
    shutil.copy(REPO / "configs" / "german-example.yaml", tmp_path / "exp.yaml")
    (tmp_path / "Snakefile").write_text("")
    (tmp_path / "sub").mkdir()
    got = _povstim(["check", "../exp.yaml"], cwd=tmp_path / "sub")
    assert got.returncode == 0, got.stderr
    assert "does not exist" not in got.stdout, got.stdout
    # and a missing file is looked for there, and named with that folder
    (tmp_path / "data" / "german-example" / "wiki_de.csv").unlink()
    got = _povstim(["check", "../exp.yaml"], cwd=tmp_path / "sub")
    assert f"does not exist yet ({tmp_path}/data/german-example/wiki_de.csv)" in got.stdout, got.stdout


def test_guardrails_waits_for_this_runs_filter_validation():
    """The conditions page reads filter/validation.json: it is an input of the guardrails job (not a param), so
    the job runs after the validation and reruns when it changes."""
    got = subprocess.run([sys.executable, "-m", "snakemake", "-n", "-p", "--configfile", "configs/french-demo.yaml",
                          "--", "results/figures"], cwd=REPO, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(REPO / "workflow")})
    assert got.returncode == 0, got.stderr[-2000:]
    out = got.stdout + got.stderr
    block = out[out.index("rule guardrails:"):]
    block = block[:block.index("\n\n")]
    inputs = next(line for line in block.splitlines() if line.strip().startswith("input:"))
    assert "results/french-demo/filter/validation.json" in inputs
