"""Contrasts void by the conditions' definitions, found before any job (plan.void_definitions): BABY with every
reinsert rate 0 is BABY-F, a `filter: true` condition in a language without DPE rules is its corpus unfiltered,
two conditions with the same operations differ only by chance. Named by povstim plan, the run's console (the
Snakefile), the condition stage (condition.json, conditions.tsv) and the analysis' void sentences alike."""

from __future__ import annotations

import copy
import json
import subprocess
import sys

import pytest
import yaml

from povstim import config as cfg
from povstim import plan
from povstim.analysis.guardrails import void
from povstim.conditions.table import write_table
from povstim.cli import main
from povstim.dpe import audit


@pytest.fixture
def default(repo_root):
    return yaml.safe_load((repo_root / "config.yaml").read_text())


@pytest.fixture
def german(repo_root):
    return yaml.safe_load((repo_root / "configs" / "german-example.yaml").read_text())


def test_the_embedded_default_has_no_void_definition(default):
    cfg.validate(default)
    assert plan.void_definitions(default) == [] and plan.void_definition_lines(default) == []


def test_rates_zero_is_void_by_definition(default):
    c = copy.deepcopy(default)
    c["conditions"]["baby"]["reinsert"] = {p: 0 for p in c["conditions"]["baby"]["reinsert"]}
    cfg.validate(c)
    (v,) = plan.void_definitions(c)
    assert (v["kept"], v["duplicate"], v["identical"]) == ("baby-f", "baby", True)
    assert v["sizes"] == plan.condition_sizes(c, "baby")
    assert v["why"] == "baby's reinsert rates are all 0: its corpus is baby-f's"
    (line,) = plan.void_definition_lines(c)
    assert line.startswith("VOID BY DEFINITION: baby-f vs. baby at 10k, 30k: baby's reinsert rates are all 0")
    assert "baby's train jobs link baby-f's models" in line
    assert plan.void_definition_of(c, "baby", "10k")["of"] == "baby-f"
    assert plan.void_definition_of(c, "baby-f", "10k") is None


def test_a_language_without_rules_is_void_by_definition(german):
    """configs/german-example.yaml with `baby-f: {filter: true}`: German has no DPE rules, so BABY-F is built
    unfiltered: BABY's corpus."""
    c = copy.deepcopy(german)
    c["conditions"]["baby-f"] = {"from": "baby", "filter": True}
    cfg.validate(c)
    (v,) = plan.void_definitions(c)
    assert (v["kept"], v["duplicate"], v["identical"]) == ("baby", "baby-f", True)
    assert "not filtered: no DPE rules for language de" in v["why"]


def test_identical_operations_differ_by_chance_only(default):
    c = copy.deepcopy(default)
    ops = [{"op": "remove", "constructions": ["question_formation"]},
           {"op": "add", "construction": "question_formation", "n": 3}]
    c["conditions"]["qf-a"] = {"from": "baby", "operations": copy.deepcopy(ops)}
    c["conditions"]["qf-b"] = {"from": "baby", "operations": copy.deepcopy(ops)}
    c["conditions"]["qf-0"] = {"from": "baby", "operations": [ops[0], {**ops[1], "n": 0}]}
    cfg.validate(c)
    got = {(v["kept"], v["duplicate"]): v for v in plan.void_definitions(c)}
    assert got[("qf-a", "qf-b")]["identical"] is False and "a chance contrast" in got[("qf-a", "qf-b")]["why"]
    # an add of 0 removes question formation and puts nothing back: not qf-a, and not BABY-F (which removes both)
    assert ("qf-a", "qf-0") not in got and ("baby-f", "qf-0") not in got
    c["filter"]["rules"] = ["question_formation"]
    c["conditions"]["baby"]["reinsert"] = {"question_formation": 0.002}
    cfg.validate(c)
    assert ("baby-f", "qf-0") in {(v["kept"], v["duplicate"]) for v in plan.void_definitions(c)}


@pytest.mark.slow
def test_the_dry_run_console_names_it(tmp_path, default):
    """The run's console (the Snakefile at DAG build, a dry run too)."""
    from helpers.project import dry_run

    c = copy.deepcopy(default)
    c["conditions"]["baby"]["reinsert"] = {p: 0 for p in c["conditions"]["baby"]["reinsert"]}
    r = dry_run(tmp_path, c)
    assert "VOID BY DEFINITION: baby-f vs. baby at 10k, 30k" in r.stderr
    # the condition jobs of baby record it; baby-f's do not
    (job,) = [x for x in r.stdout.splitlines() if "povstim condition --base" in x and "corpus/baby/10k/train.txt" in x]
    assert "--void-definition" in job and "baby-f" in job.split("--void-definition")[1]
    (other,) = [x for x in r.stdout.splitlines() if "povstim condition --base" in x
                and "corpus/baby-f/10k/train.txt" in x]
    assert "--void-definition" not in other


def test_condition_json_table_and_analysis(tmp_path):
    """The condition stage records it, conditions.tsv gets a void column (only then), and the analysis calls the
    pair void from the definition even when the texts differ (the same operations, other draws)."""
    base = tmp_path / "base.txt"
    lines = [f"the dog saw cat number {i} ." for i in range(100)]
    base.write_text("\n".join(lines) + "\n")
    dpe = tmp_path / "dpe.tsv"
    audit.write(dpe, [audit.Row(i, "question_formation", "qf", "", lines[i], True) for i in range(0, 100, 10)])
    stats = {}
    for name, extra in (("qf-a", []), ("qf-b", ["--void-definition", json.dumps(
            {"of": "qf-a", "why": "qf-b and qf-a have the same operations", "identical": False})])):
        out = tmp_path / "corpus" / name / "1k"
        ops = json.dumps([{"op": "remove", "constructions": ["question_formation"]},
                          {"op": "random_remove", "of": "x", "constructions": ["question_formation"]}])
        assert main(["condition", "--base", str(base), "--dpe", str(dpe), "--operations", ops, "--condition-name", name,
                     "--split", '{"dev_fraction": 0.1, "seed": 1}', "--out-train", str(out / "train.txt"),
                     "--out-dev", str(out / "dev.txt"), "--stats", str(out / "condition.json"), *extra]) == 0
        stats[name] = json.loads((out / "condition.json").read_text())
        stats[name].update(condition=name, size="1k")
    assert "void_definition" not in stats["qf-a"]
    assert stats["qf-b"]["void_definition"]["of"] == "qf-a"
    assert stats["qf-a"]["corpus_sha256"] != stats["qf-b"]["corpus_sha256"]  # other draws
    write_table([str(tmp_path / "corpus" / n / "1k" / "condition.json") for n in ("qf-a", "qf-b")],
                str(tmp_path / "conditions.tsv"))
    head, a, b = (r.split("\t") for r in (tmp_path / "conditions.tsv").read_text().splitlines())
    assert head[-1] == "void" and a[-1] == "" and b[-1].startswith("VOID: qf-b and qf-a have the same operations")
    (p,) = void.void_pairs(list(stats.values()), threshold=0)  # 0: never void by evidence alone
    assert (p["kept"], p["duplicate"], p["identical"]) == ("qf-a", "qf-b", False)
    row = void.summarise([p], {"qf-b": ["1k"]})[0]
    assert "(by definition: qf-b and qf-a have the same operations)" in void.describe(row, 0, {})
    write_table([str(tmp_path / "corpus" / "qf-a" / "1k" / "condition.json")], str(tmp_path / "one.tsv"))
    assert "void" not in (tmp_path / "one.tsv").read_text().splitlines()[0].split("\t")


def test_plan_forecast_trains_a_void_twin_once(default, monkeypatch, repo_root):
    """plan --forecast: BABY with rates 0 is counted as links to BABY-F's models (forecast's ``reused``), found from
    the definitions even with no filter estimate (--filter-sample 0)."""
    from povstim.preflight import forecast
    from povstim.preflight.plan import make_plan, render

    c = copy.deepcopy(default)
    c["conditions"]["baby"]["reinsert"] = {p: 0 for p in c["conditions"]["baby"]["reinsert"]}
    cfg.validate(c)
    seen = {}

    def fake(config, counts, base_dir, cores, cache, recalibrate=False, reused=None, refused=None):
        seen.update(reused or {})
        return {"cores": cores, "jobs": [], "wall": 0.0, "cpu": 0.0, "calibrations": {}, "notes": []}

    monkeypatch.setattr(forecast, "forecast", fake)
    monkeypatch.setattr(forecast, "render", lambda f: [])
    result = make_plan(c, repo_root, filter_sample=0, forecast_cores=2)
    assert seen == {("baby", "10k"): "baby-f", ("baby", "30k"): "baby-f"}
    assert "VOID BY DEFINITION: baby-f vs. baby at 10k, 30k" in render(result)


def test_check_names_it_too(tmp_path, german):
    c = copy.deepcopy(german)
    c["conditions"]["baby-f"] = {"from": "baby", "filter": True}
    f = tmp_path / "de.yaml"
    f.write_text(yaml.safe_dump(c))
    r = subprocess.run([sys.executable, "-m", "povstim", "check", str(f)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert f"{f}: warning: VOID BY DEFINITION: baby vs. baby-f at 4k, 8k: baby-f asks for the DPE filter" in r.stdout
