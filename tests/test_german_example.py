"""configs/german-example.yaml: the German template run for real on two synthetic CSVs (the acceptance of German support:
"a German config on a user's two CSVs dry-runs and runs BABY vs WIKI with CLAMS-de").

The CSVs come from scripts/german_example_csvs.py (synthetic stand-in data, seeded). The default run checks the
generator (German declension against hand-written forms, determinism, no CLAMS/FIT-CLAMS sentence), `povstim
check`, the DAG (dry run) and the report's description; the whole run (5-7 min on the shared 2 cores) is heavy.
"""

from __future__ import annotations

import csv
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import docutils.core
import jinja2
import pandas as pd
import pytest

from helpers.project import copy_parts, job_counts, run_snakemake
from povstim import config as povstim_config
from povstim import plan
from povstim.cli import main

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / "configs" / "german-example.yaml"
WORKFLOW_RST = REPO / "workflow" / "report" / "workflow.rst"
PARTS = ["Snakefile", "rules", "workflow", "envs", "configs", "scripts"]


def _generator():
    spec = importlib.util.spec_from_file_location("german_example_csvs", REPO / "scripts" / "german_example_csvs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = _generator()


def _rows(text: str) -> list[dict]:
    return list(csv.DictReader(text.splitlines()))


def test_declension_matches_hand_written_german():
    ball, puppe, auto = GEN.Noun("Ball", "m", "Bälle"), GEN.Noun("Puppe", "f", "Puppen"), GEN.Noun("Auto", "n", "Autos")
    assert GEN.np(ball, "acc", "ein", adj="rot") == "einen roten Ball"
    assert GEN.np(ball, "nom", "ein", adj="groß") == "ein großer Ball"
    assert GEN.np(auto, "nom", "ein", adj="neu") == "ein neues Auto"
    assert GEN.np(puppe, "dat", "def", adj="klein") == "der kleinen Puppe"
    assert GEN.np(ball, "dat", plural=True) == "den Bällen"      # dative plural -n
    assert GEN.np(auto, "dat", plural=True) == "den Autos"       # ... not after -s
    assert GEN.np(ball, "acc", "none", plural=True, adj="rot") == "rote Bälle"
    assert GEN.np(ball, "acc", "ein", stem="dein") == "deinen Ball"
    assert GEN.contract("Der Ort liegt in dem Tal.") == "Der Ort liegt im Tal."


def test_generator_is_seeded_and_shaped_like_the_template_expects():
    files = GEN.generate()
    assert files == GEN.generate()                    # deterministic
    assert files != GEN.generate(seed=GEN.SEED + 1)   # and the seed matters
    cds, wiki = _rows(files["cds_de.csv"]), _rows(files["wiki_de.csv"])
    assert len(cds) == GEN.CDS_ROWS and len(wiki) == GEN.WIKI_ROWS
    assert set(cds[0]) == {"text", "speaker_role"} and set(wiki[0]) == {"text"}
    child = [r for r in cds if r["speaker_role"] == "Target_Child"]
    assert 0.10 < len(child) / len(cds) < 0.20        # the child's own lines, for drop_speakers
    adult = [r["text"] for r in cds if r["speaker_role"] != "Target_Child"]
    assert all(re.search(r"[.!?]$", t) for t in adult + [r["text"] for r in wiki])
    assert len(set(adult)) > 800 and len({r["text"] for r in wiki}) > 1000   # varied, not a handful of lines
    # child-directed speech is short and full of questions; the encyclopedic side is long and declarative
    mean = lambda ts: sum(len(t.split()) for t in ts) / len(ts)  # noqa: E731
    assert mean(adult) < 6 < 9 < mean([r["text"] for r in wiki])
    assert sum(t.endswith("?") for t in adult) > 0.2 * len(adult)
    assert not any(r["text"].endswith("?") for r in wiki)


def _words(sentence: str) -> str:
    return " ".join(re.findall(r"\w+", sentence.lower()))


def test_no_generated_sentence_is_a_clams_or_fit_clams_sentence(shared_data):
    """CLAMS-de and FIT-CLAMS-de are the test suite: the training text must not hold their sentences."""
    suite = set()
    for path in (shared_data / "clams").rglob("*"):
        if path.is_file() and ("de_evalset" in path.parts or "de_" in path.parts):
            for line in path.read_text(encoding="utf-8").splitlines():
                suite.add(_words(line.split("\t")[-1]))
    assert len(suite) > 1000
    files = GEN.generate()
    generated = {_words(r["text"]) for name in files for r in _rows(files[name])}
    assert not (generated & suite) - {""}


def _project(tmp_path: Path, shared_data: Path) -> Path:
    """A copy of the workflow with the two CSVs generated where the config reads them (as the docs say)."""
    project = copy_parts(tmp_path / "project", PARTS)
    subprocess.run([sys.executable, "scripts/german_example_csvs.py"], cwd=project, check=True, capture_output=True)
    config = project / "configs" / "german-example.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace("../shared/data/clams", str(shared_data / "clams")),
                      encoding="utf-8")
    return project


def _snakemake(project: Path, *args: str) -> str:
    proc = run_snakemake(project, "configs/german-example.yaml", *args)
    return proc.stdout + proc.stderr


def test_check_says_german_has_no_dpe_filter(tmp_path, shared_data, capsys, monkeypatch):
    project = _project(tmp_path, shared_data)
    monkeypatch.chdir(project)
    # check reads relative source paths against the repository of the povstim it imports (this checkout), not
    # the copy: name the copy's generated CSVs absolutely (a fresh clone has none of its own)
    config = project / "configs" / "german-example.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace("data/german-example/", f"{project}/data/german-example/"),
                      encoding="utf-8")
    assert main(["check", "configs/german-example.yaml"]) == 0
    out = capsys.readouterr().out
    assert ("OK: experiment 'german-example', 2 source(s), 2 corpora x 2 size(s), 2 condition(s), 12 model(s), "
            "suites clams-de, fit-clams-de") in out
    assert "note: German has no DPE filter here (filter.rules cover: en): no BABY-F can be built" in out
    assert "warning" not in out  # both CSVs exist with the named columns


@pytest.mark.slow
def test_dry_run_trains_baby_and_wiki_and_scores_clams_de(tmp_path, shared_data):
    out = _snakemake(_project(tmp_path, shared_data), "-n", "-p", "--", "results/figures")
    counts = job_counts(out)
    assert "parse" not in counts and "filter" not in counts   # no German DPE rules: nothing parsed or filtered
    assert counts["clean"] == 2 and counts["benchmark"] == 2 and counts["analyze"] == 1
    assert counts["train"] == 12 and counts["score"] == 24     # 2 conditions x 2 sizes x 3 seeds; x 2 suites
    assert sum(counts.values()) == 57                           # docs/own-data.md quotes it
    assert "results/german-example/benchmarks/clams-de" in out


def _render(config: dict) -> str:
    class Snakemake:
        pass
    Snakemake.config = config
    return jinja2.Environment().from_string(WORKFLOW_RST.read_text()).render(snakemake=Snakemake)


def _publish(text: str, categories: tuple[str, ...]) -> None:
    """Snakemake renders the description with docutils after adding one link target per report category."""
    targets = "".join(f"\n.. _{name}: #\n" for name in categories)
    docutils.core.publish_parts(text + "\n" + targets, writer="html",
                                settings_overrides={"report_level": 2, "halt_level": 2})


def test_report_description_links_no_dpe_filter_section_in_german():
    """The German report has no "DPE filter" category (no filter job, no validation): its description must not
    link to one (a docutils error in the report), and it says that no filter ran."""
    config = povstim_config.load(CONFIG)
    config["_report_filter"] = plan.report_filter(config, sanity_samples=True)
    assert config["_report_filter"] == {"filtered": [], "notes": {}, "section": False}
    text = _render(config)
    assert "DPE filter`_" not in text and "No DPE filter ran for this\nexperiment." in text
    _publish(text, ("Guardrails", "Figures", "Tables", "Bayesian model", "Run info"))
    # a German BABY-F asked for is named unfiltered, with the reason
    config["conditions"]["baby-f"] = {"from": "baby", "filter": True}
    config["_report_filter"] = plan.report_filter(config, sanity_samples=True)
    line = next(x for x in _render(config).splitlines() if x.startswith("* Conditions:"))
    assert "``baby-f`` (from ``baby``, **not filtered: no DPE rules for language de**)" in line


def test_report_description_says_french_baby_f_is_filtered():
    """The French rules filter the French demo's BABY-F: the description says filtered (it used to say "not
    filtered" for every language but English), and links to the DPE filter section its validation fills."""
    config = povstim_config.load(REPO / "configs" / "french-demo.yaml")
    config["_report_filter"] = plan.report_filter(config, sanity_samples=False)
    assert config["_report_filter"] == {"filtered": ["baby-f"], "notes": {}, "section": True}
    line = next(x for x in _render(config).splitlines() if x.startswith("* Conditions:"))
    assert "``baby-f`` (from ``baby``, filtered)" in line and "not filtered" not in line


@pytest.mark.slow
@pytest.mark.heavy  # the whole German run (5-7 min on the shared 2 cores); the default run covers its DAG (dry run
# above), German cleaning (test_languages, test_italian_sources), the CLAMS importers (test_importers_crosslingual)
# and training, scoring and analysis on the tiny config (test_workflow)
def test_the_german_example_runs_end_to_end_with_clams_de(tmp_path, shared_data):
    project = _project(tmp_path, shared_data)
    out = _snakemake(project, "--", "results/figures")
    assert "parse" not in job_counts(out) and not (project / "results/german-example/parse").exists()
    results = project / "results" / "german-example"
    acc = pd.read_csv(results / "analysis" / "accuracy.csv")
    clams = acc[(acc.suite == "clams-de") & (acc.level == "paradigm")]
    assert set(clams.condition) == {"baby", "wiki"} and set(clams["size"]) == {"4k", "8k"}
    assert set(clams.seed) == {1, 2, 3} and clams.paradigm.nunique() == 7
    assert (clams.n_total == 100).all() and len(clams) == 2 * 2 * 3 * 7
    assert set(acc[acc.suite == "fit-clams-de"].condition) == {"baby", "wiki"}
    assert (results / "figures" / "fig2_accuracy.png").exists()
    # the child's own lines (some long enough to pass min_words) were dropped by drop_speakers
    clean = {s.lower() for s in (results / "corpus" / "clean" / "cds_de.txt").read_text(encoding="utf-8").splitlines()}
    assert len(clean) > 500 and not any(s.startswith(("ich auch haben", "da ist ball", "mama auch essen")) for s in clean)
    report = _snakemake(project, "--report", "results/german-example/report.html", "--", "results/figures")
    assert "ERROR" not in report and (results / "report.html").stat().st_size > 10_000
