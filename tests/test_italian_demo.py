"""configs/italian-demo.yaml through Snakemake: the DAG (dry run) and its corpus stages for real.

The whole demo takes ~1-4 minutes of wall time on a shared 2-core machine (docs/italian.md), too
long for the test suite; its later stages are tested on their own (test_tasks_scoring.py: scoring
the built-in suites; test_tasks_age.py: the analysis with norms).
"""

from __future__ import annotations

import json
import subprocess
import unicodedata
from pathlib import Path

import pytest

from helpers.project import copy_parts, job_counts, run_snakemake

REPO = Path(__file__).resolve().parents[1]
PARTS = ["Snakefile", "rules", "workflow", "envs", "configs", "data"]


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    return copy_parts(tmp_path_factory.mktemp("italian"), PARTS)


def snakemake(project: Path, *args: str) -> subprocess.CompletedProcess:
    return run_snakemake(project, "configs/italian-demo.yaml", *args)


def test_dry_run_has_no_parse_or_filter_jobs(project):
    proc = snakemake(project, "-n", "-p", "--", "results/figures")
    counts = job_counts(proc.stdout + proc.stderr)
    assert "parse" not in counts and "filter" not in counts  # no Italian DPE rules: nothing to parse
    assert counts["clean"] == 2 and counts["benchmark"] == 1 and counts["analyze"] == 1
    assert counts["train"] == counts["score"] == 4  # 2 conditions x 2 sizes x 1 seed
    text = proc.stdout + proc.stderr
    assert "--not-filtered='not filtered: no DPE rules for language it'" in text
    assert "--suite-dirs results/italian-demo/benchmarks/babies-it" in text


@pytest.mark.slow
@pytest.mark.heavy
def test_corpus_stages_run_in_italian(project):
    snakemake(project, "--", "results/italian-demo/corpus/conditions.tsv", "results/italian-demo/benchmarks/babies-it")
    cds = (project / "results/italian-demo/corpus/clean/cds.txt").read_text(encoding="utf-8").splitlines()
    assert len(cds) > 400 and all(unicodedata.is_normalized("NFC", s) for s in cds)
    assert "Dov'è il gatto?" in cds and not any("&-" in s or "[/]" in s for s in cds)
    adult = (project / "results/italian-demo/corpus/clean/adulti.txt").read_text(encoding="utf-8").splitlines()
    assert any(s.startswith("Il proprietario, il sig. Bianchi,") for s in adult)  # sig. does not end a sentence
    stats = json.loads((project / "results/italian-demo/corpus/baby-f/800/condition.json").read_text())
    assert stats["not_filtered"] == "not filtered: no DPE rules for language it" and not stats["filtered"]
    log = (project / "logs/italian-demo/condition/baby-f/800.log").read_text()
    assert "not filtered: no DPE rules for language it" in log
    assert "not_filtered" not in json.loads((project / "results/italian-demo/corpus/wiki/800/condition.json").read_text())
    manifest = json.loads((project / "results/italian-demo/benchmarks/babies-it/manifest.json").read_text())
    assert manifest["tasks"] == {"completion": 9, "minimal_pair": 9, "multiple_choice": 33}
    assert manifest["norms"] == ["norms.json"]


@pytest.mark.slow
@pytest.mark.heavy
def test_one_model_trains_and_scores_in_italian(project):
    """Tokenizer, training and scoring of the DAG on Italian text: one model, every task kind."""
    import pandas as pd

    score = "results/italian-demo/scores/gpt2-tiny/baby-f/800/seed1/babies-it.parquet"
    snakemake(project, "--", score)
    df = pd.read_parquet(project / score)
    final = df[df["final"]]
    assert len(final) == 51 and set(final["task"]) == {"minimal_pair", "multiple_choice", "completion"}
    comp = final[final["task"] == "completion"]
    assert comp["generations"].map(lambda g: len(json.loads(g))).eq(3).all()  # 3 beams returned, saved
    tok = json.loads((project / "results/italian-demo/tokenizers/baby-f/800/tokenizer.json").read_text(encoding="utf-8"))
    # Byte-level BPE shows "è" (bytes C3 A8) as "Ã¨"; it learnt merges with it (è, perché, ...).
    assert sum("Ã¨" in t for t in tok["model"]["vocab"]) > 1
