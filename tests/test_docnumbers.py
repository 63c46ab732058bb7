"""Docs that cannot drift: the numbers a doc quotes from a demo run are generated from that run's files
(povstim/preflight/docnumbers.py), and a doc edited by hand, or a block gone, fails here.

The default suite checks the docs against the committed snapshots (docs/demo-numbers/*.json, summaries of the last
demo runs) and the summarisers on hand-written result files; the slow test (~30 s) reruns the dose demo's two
counterfactual conditions (synth, parse, filter, condition: no training) and compares their numbers with the
snapshot."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from povstim.io import PovstimError
from povstim.preflight import docnumbers as D

REPO = Path(__file__).resolve().parents[1]


def test_every_block_matches_its_snapshot():
    assert D.check() == []


def test_a_typed_run_time_is_a_dated_record(tmp_path):
    """Outside the generated blocks, a run's time or CPU typed into a doc says when it was measured."""
    assert D.undated_timings() == []
    root = _root(tmp_path)
    doc = root / "docs" / "probe.md"
    doc.write_text("# A page\n\nThe demo took 3 min 10 s.\n\n## Measured 2026-11-30\n\nIt took 200 CPU-s.\n\n"
                   "## Later\n\nIntro.\n\nAnd 12 CPU-s\nhere.\n\n"
                   "<!-- demo-numbers demo/cost (generated) -->\n9 min 9 s\n<!-- /demo-numbers -->\n",
                   encoding="utf-8")
    got = D.undated_timings(root)
    assert got == ["docs/probe.md:3: '3 min 10 s' has no date in its paragraph or section (say when it was measured)",
                   "docs/probe.md:13: '12 CPU-s' has no date in its paragraph or section (say when it was measured)"]


def test_the_docs_no_longer_say_what_the_demos_contradict():
    """The two statements the issue found wrong: 'converged' fits that the demo reports not converged, and the QF
    linear rule said to skip do-support questions while the code rewrote them (now it skips them)."""
    snap = D.snapshot("constructions-demo")["delta"]
    text = (REPO / "docs" / "constructions.md").read_text(encoding="utf-8")
    start, end = D.blocks_in(text)["constructions-demo/delta"]
    for cond, row in snap.items():
        line = next(ln for ln in text[start:end].splitlines() if ln.startswith(f"| {cond} |"))
        assert ("**not converged**" in line) == (not row["converged"])
    qf = D.snapshot("dose-demo")["replace"]["question_formation"]
    assert any(reason.startswith("do-support") for reason in qf["kept"])
    assert qf["rewritten"] + sum(qf["kept"].values()) == qf["rows"]


def _root(tmp_path) -> Path:
    """A copy of the docs, the README and the snapshots to edit."""
    shutil.copytree(REPO / "docs", tmp_path / "docs")
    shutil.copy(REPO / "README.md", tmp_path / "README.md")
    return tmp_path


def test_a_number_edited_by_hand_is_found(tmp_path):
    root = _root(tmp_path)
    doc = root / "docs" / "manipulations.md"
    text = doc.read_text(encoding="utf-8")
    qf = D.snapshot("dose-demo")["replace"]["question_formation"]
    edited = text.replace(f"of {qf['rows']} question-formation rows {qf['rewritten']} were rewritten",
                          f"of {qf['rows']} question-formation rows {qf['rewritten'] + 24} were rewritten")
    assert edited != text
    doc.write_text(edited, encoding="utf-8")
    problems = D.check(root)
    assert len(problems) == 1 and "dose-demo/replace" in problems[0] and "manipulations.md" in problems[0]
    # a removed block is named too
    doc.write_text(text.replace("<!-- /demo-numbers -->", "", 1), encoding="utf-8")
    with pytest.raises(PovstimError, match="no closing"):
        D.check(root)


DELTA_HEAD = ("condition\tconstructions\tfull\tarch\tsize\tsuite\tn_target\tn_control\tn_seeds\tacc_filtered_target\t"
              "acc_full_target\traw_delta_target\tacc_filtered_control\tacc_full_control\traw_delta_control\traw_diff\t"
              "delta_target\tdelta_target_lower\tdelta_target_upper\tdelta_control\tdelta_control_lower\t"
              "delta_control_upper\tdiff\tdiff_lower\tdiff_upper\tp_diff_below_0\tconverged\tmax_r_hat\t"
              "max_r_hat_delta\tmin_ess_bulk\tdivergences\tdropped_terms\tproblems\n")


def test_update_writes_the_runs_numbers_into_the_doc(tmp_path):
    """A hand-written delta.tsv (one fit converged, one not), filter summary and condition records -> the snapshot
    and the doc's tables and removals say so."""
    root = _root(tmp_path)
    run = tmp_path / "results" / "constructions-demo"
    (run / "filter" / "baby" / "50k").mkdir(parents=True)
    (run / "filter" / "baby" / "50k" / "summary.json").write_text(json.dumps({
        "n_sentences": 1200, "per_phenomenon": {"b": 7, "a": 30}, "prefilter": {"n_misses": 0, "n_spared": 40}}))
    for cond, removed in (("full", {}), ("no-a", {"a": 30}), ("no-b", {"b": 7})):
        (run / "corpus" / cond / "50k").mkdir(parents=True)
        (run / "corpus" / cond / "50k" / "condition.json").write_text(json.dumps({"dpe_removed": removed}))
    d = run / "analysis" / "construction_delta"
    d.mkdir(parents=True)
    (d / "delta.tsv").write_text(DELTA_HEAD + (
        "no-a\ta\tfull\tg\t50k\tblimp\t2\t6\t1\t0.5\t0.6\t-0.1\t0.6\t0.6\t0.0\t-0.1\t-0.1\t-0.2\t-0.05\t0.0\t-0.01\t0.01\t"
        "-0.1\t-0.19\t-0.02\t0.99\tTrue\t1.004\t1.002\t400.0\t0\t(1|seed)\t\n"
        "no-b\tb\tfull\tg\t50k\tblimp\t1\t7\t1\t0.5\t0.5\t0.0\t0.6\t0.6\t0.0\t0.0\t0.0\t-0.05\t0.05\t0.0\t-0.01\t0.01\t"
        "0.0\t-0.05\t0.05\t0.5\tFalse\t1.03\t1.01\t90.0\t2\t(1|seed)\tmax R-hat 1.030 > 1.01 (Intercept)\n"))
    (run / "config.yaml").write_text("experiment: constructions-demo\n")
    changed = D.update("constructions-demo", tmp_path / "results", root)
    assert changed == ["docs/constructions.md"] * 3
    snap = json.loads((root / "docs" / "demo-numbers" / "constructions-demo.json").read_text())
    # the snapshot says which code and which run its numbers come from
    head = subprocess.run(["git", "-C", str(D.ROOT), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    if head:
        assert snap["provenance"]["commit"].split("+")[0] == head
    assert snap["provenance"]["run"]["config_sha256"] == hashlib.sha256(b"experiment: constructions-demo\n").hexdigest()
    assert D.compare("constructions-demo", tmp_path / "results", root) == []  # provenance is no number to compare
    assert snap["delta"]["no-a"]["converged"] is True and snap["delta"]["no-b"]["converged"] is False
    text = (root / "docs" / "constructions.md").read_text(encoding="utf-8")
    assert "| no-a | −0.100 [−0.200, −0.050] |" in text and "converged (R-hat 1.004, bulk ESS 400)" in text
    assert "| no-b |" in text and "**not converged**: max R-hat 1.030 > 1.01 (Intercept)" in text
    assert "Of the 2 fits 1 passed" in text and "excludes 0 for no-a." in text
    assert ("The filter removed 30 (a) and 7 (b) of 1,200 sentences (baby/50k); prefilter: 0 misses, 40 sentences "
            "spared the parse. Removed per condition (condition.json): full nothing; no-a a 30; no-b b 7.") \
        in " ".join(text.split())
    # one fit converged: the flag is the other's, not every fit's
    assert "the others' chains are not called mixed, so their estimates are flagged" in text
    # an interval that excludes 0 from a fit that did not converge says so beside its name
    snap["delta"]["no-b"].update(diff_lower=0.01, diff_upper=0.05)
    assert "excludes 0 for no-a, no-b (not converged)." in D.render_delta(snap)
    snap["delta"]["no-a"]["converged"] = False
    assert "Of the 2 fits none passed the stage's convergence check: at the demo's 2 x 500 draws the chains are" \
        in D.render_delta(snap)
    assert D.check(root) == [] or all("constructions-demo" not in p for p in D.check(root))
    with pytest.raises(PovstimError, match="missing"):
        D.constructions_demo(tmp_path / "nowhere")


def test_the_dose_demos_rewrites_are_counted_from_the_audit(tmp_path):
    head = "step\top\taction\tsent_id\tconstruction\treason\tsentence\tnew_sentence\n"
    for cond, rows in (("qf-linear", [("rewritten", "linear_rule variant"),
                                      ("kept", "linear_rule: do-support: the declarative has no main-clause auxiliary"),
                                      ("kept", "linear_rule: not a question"), ("kept", "linear_rule: not a question")]),
                       ("refl-swap", [("kept", "wrong_antecedent: the gender of 'duck' is unknown"),
                                      ("kept", "wrong_antecedent: the gender of 'lion' is unknown"),
                                      ("kept", "wrong_antecedent: 'Emma' takes the same reflexive (herself)")])):
        d = tmp_path / "dose-demo" / "corpus" / cond / "30k"
        d.mkdir(parents=True)
        (d / "operations.tsv").write_text(head + "".join(
            f"0\treplace\t{a}\t{i}\tx\t{r}\ts\t\n" for i, (a, r) in enumerate(rows)) + "0\tremove\tremoved\t9\tx\tr\ts\t\n")
    s = D.dose_demo(tmp_path / "dose-demo")
    assert s["replace"]["question_formation"] == {"condition": "qf-linear", "rows": 4, "rewritten": 1, "kept": {
        "not a question": 2, "do-support: the declarative has no main-clause auxiliary": 1}}
    assert s["replace"]["binding"]["kept"] == {"the gender of X is unknown": 2, "X takes the same reflexive": 1}
    text = D.render_replace(json.loads(json.dumps(s, sort_keys=True)))
    assert "of 4 question-formation rows 1 were rewritten (2: not a question, 1: do-support" in text
    assert "of 3 binding rows 0 were rewritten (2: the gender of X is unknown, 1: X takes" in text


def _demo_run(root: Path) -> Path:
    """A hand-written results/demo: 4 models, the guardrails, both Bayesian models' files, the run's config."""
    run = root / "results" / "demo"
    for cond, size, seed, best, steps, loss, reason in (
            ("baby", "10k", 1, 200, 330, 2.6391, "plateau"), ("baby-f", "10k", 1, 248, 248, 2.611, "max_steps"),
            ("wiki", "10k", 1, 125, 248, 3.5074, "plateau"), ("baby", "30k", 1, 743, 743, 2.3214, "plateau")):
        d = run / "models" / "gpt2-tiny" / cond / size / f"seed{seed}"
        d.mkdir(parents=True)
        (d / "train_summary.json").write_text(json.dumps({"best_step": best, "steps": steps, "best_dev_loss": loss,
                                                          "stop_reason": reason}))
    g = run / "analysis" / "guardrails"
    g.mkdir(parents=True)
    (g / "guardrails.json").write_text(json.dumps({"fired": ["below_chance", "size_label"], "checks": {
        "undertrained": {"fired": False, "findings": []}, "equal_tokens": {"fired": False, "findings": []},
        "below_chance": {"fired": True, "findings": [
            {"scope": "posh/wanna", "accuracy": 0.18, "detail": "gpt2-tiny wiki 10k: accuracy 18.0% is below"},
            {"scope": "posh/wanna", "accuracy": 0.21, "detail": "gpt2-tiny wiki 30k: accuracy 21.0% is below"}]},
        "size_label": {"fired": True, "findings": [{"scope": "baby/10k", "detail": "holds 9,011 words"}]}}}))
    b = run / "analysis" / "bayes"
    b.mkdir(parents=True)
    (b / "three_level_contrasts.csv").write_text(
        "contrast,a,b,scope,median,lower,upper,p_gt0\n"
        "BABY-F vs. BABY,BABY-F,BABY,overall,0.1038,-0.013,0.2223,0.9605\n"
        "BABY-F vs. BABY,BABY-F,BABY,Question Formation,0.1457,-0.0144,0.307,0.961\n"
        "BABY vs. WIKI,BABY,WIKI,Question Formation,-0.13,-0.29,0.04,0.06\n")
    (b / "table12.csv").write_text('Predictor,Estimate,95% CrI,R-hat,ESS (bulk)\n'
                                   'Question Formation × Filtering,-0.20,"[-0.27, -0.13]",1.00,5158\n')
    for name, ok in (("diagnostics.json", True), ("three_level_diagnostics.json", False)):
        (b / name).write_text(json.dumps({"converged": ok, "divergences": 0 if ok else 3, "max_r_hat": 1.003,
                                          "min_ess_bulk": 1273.0}))
    shutil.copy(REPO / "config.yaml", run / "config.yaml")
    bench = root / "benchmarks" / "demo"  # Snakemake's benchmark files: s (wall) and cpu_time per job
    for rel, wall, cpu in (("train/gpt2-tiny/baby/10k/seed1.tsv", 20.5, 38.25), ("train/gpt2-tiny/wiki/10k/seed1.tsv",
                                                                                   10.0, 17.5),
                           ("score/gpt2-tiny/baby/10k/seed1.tsv", 3.25, 3.0), ("analyze/analyze.tsv", 40.0, 61.0)):
        (bench / rel).parent.mkdir(parents=True, exist_ok=True)
        (bench / rel).write_text("s\th:m:s\tmax_rss\tcpu_time\n" f"{wall}\t0:00:{int(wall):02d}\t30.1\t{cpu}\n")
    return run


def test_the_embedded_defaults_numbers_come_from_its_run(tmp_path):
    """docs/demo.md's training, filtering and checks blocks and analysis.md's power block, from a hand-written run."""
    root = _root(tmp_path)
    _demo_run(tmp_path)
    changed = D.update("demo", tmp_path / "results", root)
    assert "docs/demo.md" in changed  # analysis.md's power block: the same config as the real run, so unchanged
    readme = " ".join((root / "docs" / "demo.md").read_text(encoding="utf-8").split())
    assert ("The 4 models stopped by 3 `plateau`; 1 `max_steps`: best steps 125-248 at 10k (of 248-330 steps; the "
            "best is the last step in 1 of 3; dev losses 2.61-2.64 BABY/BABY-F, 3.51 WIKI); best steps 743 at 30k (of "
            "743 steps; the best is the last step in 1 of 1; dev losses 2.32 BABY/BABY-F). `undertrained` and "
            "`equal_tokens` pass.") in readme
    assert "Question Formation × Filtering is -0.20 [-0.27, -0.13] log-odds, which reads as filtering faring worse" \
        in readme
    assert "BABY-F vs. BABY on question formation is +0.15 [-0.01, 0.31] (P(> 0) = 0.96)" in readme
    assert "The two disagree in the way docs/analysis.md warns about" in readme  # credible term, no direct effect
    assert "Overall BABY-F and BABY do not differ credibly (+0.10 [-0.01, 0.22], P(> 0) = 0.96)" in readme
    assert "table12 converged (0 divergences" in readme and "three_level NOT converged (3 divergences" in readme
    assert "Checks that fire (2 of 4): `below_chance`, `size_label`; pass: `equal_tokens`, `undertrained`." in readme
    assert "`below_chance` (2 findings): wanna: WIKI 10k 18.0%, WIKI 30k 21.0%." in readme
    assert "`size_label` (1 finding): baby/10k: holds 9,011 words." in readme
    # the jobs' wall time, summed from the benchmark files by hand: train 20.5 + 10.0 = 30.5 s over 2 jobs
    cost = (root / "docs" / "own-data.md").read_text(encoding="utf-8")
    assert "| analyze | 1 | 40.0 | 40.0 |\n| train | 2 | 30.5 | 10.0-20.5 |\n| score | 1 | 3.2 | 3.2 |\n" \
        "| **all** | **4** | **73.8** | |" in cost
    assert "4 jobs wrote a benchmark file (benchmarks/<exp>/, one a job), 74 job-seconds" in cost
    # a rerun's other wall times are no difference for --compare (they differ on every run)
    (tmp_path / "benchmarks" / "demo" / "train" / "gpt2-tiny" / "baby" / "10k" / "seed1.tsv").write_text(
        "s\th:m:s\tmax_rss\tcpu_time\n99.0\t0:01:39\t30.1\t1\n")
    assert D.compare("demo", tmp_path / "results", root) == []
    (tmp_path / "benchmarks" / "demo" / "analyze" / "analyze.tsv").write_text("wall\n1\n")
    with pytest.raises(PovstimError, match="analyze.tsv: not a Snakemake benchmark file"):
        D.run_cost(tmp_path / "results" / "demo")
    # a direct contrast that agrees with the interaction is not called a disagreement
    snap = json.loads((root / "docs" / "demo-numbers" / "demo.json").read_text())
    snap["contrasts"]["BABY-F vs. BABY|Question Formation"].update(median=-0.2, lower=-0.3, upper=-0.1)
    assert "agrees with the interaction" in " ".join(D.render_demo_filtering(snap).split())
    with pytest.raises(PovstimError, match="no .*train_summary.json"):
        D.demo(tmp_path / "nowhere")


def test_the_power_the_docs_quote_is_what_power_computes_on_the_default_config():
    """analysis.md's power block against `povstim power config.yaml` now: a change to the power code or the
    config's design must regenerate the doc."""
    from povstim import config as cfg
    from povstim.analysis.models import power as P

    rep = P.analyse(cfg.load(REPO / "config.yaml"))
    fb = next(r for r in rep["rows"] if r["contrast"] == "BABY-F vs. BABY" and r["scope"] == "overall")
    text = " ".join((REPO / "docs" / "analysis.md").read_text(encoding="utf-8").split())
    assert (f"BABY-F vs. BABY has SE {fb['se']:.3f}, power {fb['power']:.2f} at {fb['effect']:.2f} and MDE "
            f"{fb['mde']:.2f}; 80% needs {rep['recommend']['seeds']} seeds or {rep['recommend']['pairs_per_paradigm']} "
            "pairs per paradigm") in text


def test_the_command_line(capsys):
    assert D.main([]) == 0
    assert "blocks match their snapshots" in capsys.readouterr().out
    assert D.main(["--compare", "dose-demo", "--results", "/nonexistent"]) == 1
    assert "missing (run the demo first)" in capsys.readouterr().err


@pytest.mark.slow
def test_a_rerun_of_the_dose_demos_counterfactuals_gives_the_snapshot(tmp_path):
    """synth -> parse (gold) -> filter -> the two replace conditions of configs/dose-demo.yaml, in a copy of the
    workflow: the rewrite counts the docs quote are what the code makes now."""
    from helpers.project import copy_parts

    work = copy_parts(tmp_path / "wf", ("Snakefile", "rules", "workflow", "envs", "configs", "config.yaml",
                                        "profiles"))
    targets = [f"results/dose-demo/corpus/{c}/30k/operations.tsv" for c in ("qf-linear", "refl-swap")]
    env = {**os.environ, "POVSTIM_YES": "1", "PYTHONPATH": str(work / "workflow")}
    run = subprocess.run([sys.executable, "-m", "snakemake", *targets, "--cores", "2", "--configfile",
                          "configs/dose-demo.yaml", "--config", "warm_start=False"], cwd=work, env=env,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    assert D.compare("dose-demo", work / "results") == []
