"""rules/analysis.smk under Snakemake: analyze -> figures -> report, on simulated item scores.

Only the analysis rules may run (``--allowed-rules``), so the simulated score files stand in for
the trained models. The tables must be byte-identical to those the CLI wrote for the same scores
and seed in another folder (reproducibility), and the report must contain every figure and table.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from test_analysis_helpers import PARAMS, simulate_into, simulated_results

pytestmark = pytest.mark.slow

SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))


def _config(repo_root: Path) -> dict:
    cfg = copy.deepcopy(yaml.safe_load((repo_root / "config.yaml").read_text()))
    arch = next(iter(cfg["archs"].values()))
    cfg.update(
        seeds=[1, 2], sizes=["50k", "150k"], archs={"gpt2-tiny": arch},
        benchmarks={"posh": {"kind": "generated", "pairs_per_paradigm": 60, "top_k_words": 3000, "seed": 1}},
        conditions={"baby-f": {"from": "baby", "filter": True},
                    "baby": {"from": "baby", "filter": True, "reinsert": {"question_formation": 0.002}},
                    "wiki": {"from": "wiki", "filter": False}},
        analysis=dict(PARAMS),
        vocab_study=cfg.get("vocab_study") or {"vocab_sizes": [512, 1024]},
    )
    return cfg


def _smk(repo_root, workdir, *args):
    cmd = [SNAKEMAKE, "-s", str(repo_root / "Snakefile"), "-d", str(workdir), "--configfile",
           str(workdir / "config.yaml"), "--allowed-rules", "analyze", "guardrails", "figures", "figures_index", *args]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=repo_root, timeout=900)


def test_analysis_rules_report_and_reproducibility(repo_root, tmp_path):
    work = tmp_path / "run"
    cfg = _config(repo_root)
    results = work / "results" / cfg["experiment"]  # this experiment's own folder
    results.mkdir(parents=True)
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))
    simulate_into(results)
    study = results / "tokenizers" / "study" / "table9.tsv"  # rule vocab_study's output
    study.parent.mkdir(parents=True)
    study.write_text("vocab_size\tcorpus\tsize\ttokens\n512\tbaby-f\t50k\t61000\n1024\tbaby-f\t50k\t55000\n"
                     "512\twiki\t50k\t64000\n1024\twiki\t50k\t56000\n")
    for size in ("50k", "150k"):
        d = results / "filter" / "baby" / size
        d.mkdir(parents=True)
        (d / "dpe.tsv").write_text("sent_id\tphenomenon\trule\ttokens\tsentence\ttargeted\n"
                                   "4\tbinding\tbinding_2np\t5:himself\tThe girl said that the boy hurt himself.\t"
                                   "true\n")

    # rule condition_table's output, which results/figures builds too (the conditions are not simulated)
    (results / "corpus").mkdir(exist_ok=True)
    (results / "corpus" / "conditions.tsv").write_text("condition\tsize\tn_words\n")

    r = _smk(repo_root, work, "--cores", "2", "results/figures")
    assert r.returncode == 0, r.stderr[-3000:]
    ours, ref = results, simulated_results()
    for rel in ("analysis/accuracy.csv", "analysis/chisq.csv", "analysis/accuracy_by_step.csv",
                "analysis/tables/table3_posh.md", "analysis/tables/table8_posh.tex",
                "analysis/bayes/summary.csv", "analysis/bayes/table12.csv", "figures/fig2_accuracy.png"):
        assert (ours / rel).read_bytes() == (ref / rel).read_bytes(), rel
    figs = sorted(p.name for p in (ours / "figures").glob("*.png"))
    assert "filter_audit.png" in figs and "fig3_posterior.png" in figs and "tokenizer_study.png" in figs

    # nothing left to do; the rules pass their config through params
    r = _smk(repo_root, work, "-n", "results/figures")
    assert r.returncode == 0 and "Nothing to be done" in r.stdout + r.stderr

    # BABY's condition.json at 50k (planted after the run: the tables above are compared with a
    # reference made without condition stats) -- nothing put back, 0 of 43 needed
    cond = results / "corpus" / "baby" / "50k" / "condition.json"
    cond.parent.mkdir(parents=True)
    cond.write_text(json.dumps({
        "reinsert_config": {"question_formation": 0.002}, "reinserted": {"question_formation": 0},
        "reinserted_targeted": {"question_formation": 0}, "dpe_rate_targeted": {"question_formation": 0.0},
        "reinsert_shortfall": {"question_formation": {"needed": 43, "available": 0}}}))
    r = _smk(repo_root, work, "--report", str(results / "report.html"))
    assert r.returncode == 0, r.stderr[-3000:]
    assert "WARNING/2" not in r.stderr  # captions are valid reStructuredText
    html = (results / "report.html").read_text(encoding="utf-8", errors="replace")
    # the description says what BABY really got back, not "DPE reinserted"
    assert "DPE reinserted" not in html and "nothing reinserted" in html
    assert "0 targeted sentences put back, 43 needed and 0 in the pool" in html
    for name in ("fig2_accuracy.png", "fig3_posterior.png", "learning_curves_posh.png", "filter_audit.png",
                 "table3_posh.html", "table8_posh.html", "table12.html", "run_info.html", "chisq.csv"):
        assert name in html, name
    assert "Holm" in html or "holm" in html
    info = (results / "report" / "run_info.html").read_text()
    assert "pymc" in info and "bambi" in info and "(1|phenomenon)" in info and "experiment:" in info
