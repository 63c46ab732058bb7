"""A researcher's own-data scenario, replayed: two plain-text files -> the template config ->
`povstim check` / `povstim plan` -> a full Snakemake run on tiny settings -> the report of that experiment;
then a second config (another lr) leaves a second complete result tree and a second report.

The two text files are written here the way a user's exports look: child-directed utterances (some
questions ending in "."), adult sentences, and the faults the issue found in real files (a latin-1 line,
a NUL byte, a 10,000-word line), so every cleaning guard runs on the real code path.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from helpers.project import copy_parts

# heavy: the whole template scenario (240 s of setup on 2 cores); its parts are tested on their own (test_plan,
# test_clean, test_workflow, test_analysis_snakemake): `pytest -m heavy` runs it
pytestmark = [pytest.mark.slow, pytest.mark.heavy]

REPO = Path(__file__).resolve().parents[1]
PARTS = ["Snakefile", "rules", "workflow", "envs", "configs"]


def project(dst: Path) -> Path:
    return copy_parts(dst, PARTS)


def user_files(root: Path) -> None:
    """Two plain-text files, one sentence per line, with the faults of real exports."""
    sys.path.insert(0, str(root / "workflow"))
    from povstim.synth import generate

    data = root / "data"
    data.mkdir()
    cds = [t for t, _, _ in generate("child", 3600, 21, {"question_formation": 0.02, "binding": 0.01})]
    # transcribers' habit: questions ending in a period
    cds = [line[:-1] + "." if line.endswith("?") and i % 3 == 0 else line for i, line in enumerate(cds)]
    raw = [line.encode() for line in cds]
    raw.insert(10, "The caf\u00e9 is open today.".encode("latin-1"))  # not UTF-8
    raw.insert(20, b"Look at the \x00 dog.")
    raw.insert(30, (" ".join(["word"] * 10_000) + ".").encode())
    (data / "my_cds.txt").write_bytes(b"\n".join(raw) + b"\n")
    wiki = [t for t, _, _ in generate("adult", 1800, 22, {"question_formation": 0.004, "binding": 0.004})]
    (data / "my_wiki.txt").write_text("\n".join(wiki) + "\n")


def config_from_template(root: Path, experiment: str, lr: float, sizes=("8k", "16k"), conditions=None) -> Path:
    config = yaml.safe_load((root / "configs" / "own-data-template.yaml").read_text())
    config["experiment"] = experiment
    config["seeds"] = [1]
    config["sizes"] = list(sizes)
    config["parser"]["shards"] = 1
    config["scoring"]["checkpoints"] = False
    config["scoring"]["group"] = "all"  # one scoring process for every model: CI time (same scores)
    if conditions:
        config["conditions"] = {c: config["conditions"][c] for c in conditions}
    config["tokenizer"] = {"vocab_size": 512}
    config["archs"] = {"gpt2-nano": {"family": "gpt2", "n_layer": 1, "n_embd": 32, "n_head": 2, "n_inner": 64}}
    config["training"].update(lr=lr, batch_size=8, epochs=1, eval_every=10, save_every=20, device="cpu")
    config["benchmarks"]["posh"]["pairs_per_paradigm"] = 10
    config["analysis"].update(draws=60, tune=60, chains=2)
    path = root / "configs" / f"{experiment}.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def run(root: Path, *cmd: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["POVSTIM_NO_PROGRESS"] = "1"
    return subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=env)


def povstim(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(root / "workflow"), "POVSTIM_NO_PROGRESS": "1"}
    return subprocess.run([sys.executable, "-m", "povstim", *args], cwd=root, capture_output=True, text=True, env=env)


def snakemake(root: Path, config: Path, *args: str) -> subprocess.CompletedProcess:
    return run(root, sys.executable, "-m", "snakemake", "--cores", "2", "--configfile", str(config),
               "--resources", "gpu=1", "--workflow-profile", "none", *args)


def ok(proc: subprocess.CompletedProcess, root: Path) -> subprocess.CompletedProcess:
    if proc.returncode != 0:
        logs = "\n".join(f"--- {p}\n{p.read_text()[-2000:]}" for p in sorted((root / "logs").rglob("*.log"))
                         if p.stat().st_size) if (root / "logs").exists() else ""
        raise AssertionError(f"{proc.args}\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}\n{logs[-8000:]}")
    return proc


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    root = project(tmp_path_factory.mktemp("own"))
    user_files(root)
    timings = {}
    mine = config_from_template(root, "mine", 1e-3)
    check = ok(povstim(root, "check", str(mine)), root)
    t0 = time.time()
    plan = ok(povstim(root, "plan", str(mine), "--json", "plan.json"), root)
    timings["plan"] = time.time() - t0
    t0 = time.time()
    first = ok(snakemake(root, mine, "--", "results/figures"), root)
    timings["run mine"] = time.time() - t0
    report = ok(povstim(root, "report", str(mine)), root)
    # a smaller second experiment: one size, BABY-F and WIKI
    other = config_from_template(root, "mine-lr2", 2e-3, sizes=("8k",), conditions=("baby-f", "wiki"))
    t0 = time.time()
    second = ok(snakemake(root, other, "--", "results/figures"), root)
    timings["run mine-lr2"] = time.time() - t0
    report2 = ok(povstim(root, "report", "results/mine-lr2/config.yaml"), root)
    (root / "timings.json").write_text(json.dumps(timings))
    print("scenario timings (s):", json.dumps({k: round(v, 1) for k, v in timings.items()}))
    return {"root": root, "check": check, "plan": plan, "first": first, "second": second, "report": report,
            "report2": report2, "timings": timings}


def test_check_and_plan_before_anything_is_trained(scenario):
    assert "OK: experiment 'mine'" in scenario["check"].stdout
    plan = json.loads((scenario["root"] / "plan.json").read_text())
    cds = plan["sources"]["my_cds"]
    # the three planted faults are counted, by reason
    assert cds["dropped"]["invalid_bytes"] == 1 and cds["dropped"]["nul_bytes"] == 1
    assert cds["dropped"]["over_150_words"] == 1
    # the words it reports are the words the corpus stage will see: equal to the cleaned file's
    clean = (scenario["root"] / "results" / "mine" / "corpus" / "clean" / "my_cds.txt").read_text().split("\n")
    assert cds["words"] == sum(len(line.split()) for line in clean if line)
    row = next(r for r in plan["sizes"] if r["corpus"] == "baby" and r["size"] == "16k")
    assert row["ok"] and row["largest"] == cds["words"]
    assert "Benchmark posh: word pools" in scenario["plan"].stdout and not plan["suites"]["posh"]["empty"]


def test_plan_predicted_what_the_filter_removed_and_what_baby_could_put_back(scenario):
    """`povstim plan` parsed the corpus at its largest size (fewer sentences than its sample) with
    the run's own parser and filter: its counts are the ones the run's condition stage recorded."""
    plan = json.loads((scenario["root"] / "plan.json").read_text())
    row = next(r for r in plan["filter"]["rows"] if r["corpus"] == "baby" and r["size"] == "16k")
    assert row["sample"] is None  # counted, not estimated
    stats = json.loads((scenario["root"] / "results" / "mine" / "corpus" / "baby" / "16k" / "condition.json").read_text())
    assert stats["n_base"] == row["sentences"] and stats["n_dpe_removed"] == row["removed"]
    for phen, pool in stats["reinsert_pool"].items():
        assert pool["targeted"] == row["pool"][phen], phen
    for o in plan["filter"]["reinsert"]:
        if o["size"] == "16k":
            assert (o["status"] != "ok") == (o["phenomenon"] in stats["reinsert_shortfall"]), o


def test_questions_ending_in_a_period_are_fixed_for_lines_input(scenario):
    stats = json.loads((scenario["root"] / "results" / "mine" / "corpus" / "clean" / "my_cds.stats.json").read_text())
    assert stats["questions_fixed"] > 100
    assert stats["malformed_lines"] == 2 and stats["malformed_examples"][0]["where"].endswith("my_cds.txt:11")


def test_full_run_leaves_results_guardrails_and_a_report_for_that_experiment(scenario):
    root = scenario["root"]
    res = root / "results" / "mine"
    assert list((res / "figures").glob("fig2_accuracy.png"))
    assert (res / "analysis" / "guardrails" / "guardrails.html").exists()
    assert "povstim: run of experiment 'mine' finished" in scenario["first"].stderr
    record = yaml.safe_load((res / "config.yaml").read_text())
    assert record["experiment"] == "mine" and record["training"]["lr"] == 1e-3
    html = (res / "report.html").read_bytes()
    assert len(html) > 10_000 and b"mine" in html


def test_second_config_leaves_a_second_complete_tree_and_report(scenario):
    root = scenario["root"]
    for exp, lr, n_models in (("mine", 1e-3, 6), ("mine-lr2", 2e-3, 2)):
        res = root / "results" / exp
        assert (res / "report.html").exists(), exp
        assert len(list((res / "models").glob("*/*/*/seed*/model.safetensors"))) == n_models
        assert len(list((res / "scores").rglob("*.parquet"))) == n_models
        assert (res / "analysis" / "guardrails" / "guardrails.json").exists()
        assert yaml.safe_load((res / "config.yaml").read_text())["training"]["lr"] == lr
        assert (root / "logs" / exp / "analyze" / "analyze.log").exists()
    a = root / "results" / "mine" / "models" / "gpt2-nano" / "baby-f" / "8k" / "seed1" / "model.safetensors"
    b = root / "results" / "mine-lr2" / "models" / "gpt2-nano" / "baby-f" / "8k" / "seed1" / "model.safetensors"
    assert a.read_bytes() != b.read_bytes()  # both kept, neither overwritten
    assert (root / "results" / "figures" / "EXPERIMENT").read_text().strip() == "mine-lr2"
