"""scripts/gpu_bench.sh and scripts/gpu_check.sh in their CPU dry-run mode (DRY=1): the same code as
on a GPU with tiny sizes, so a broken script is caught without a GPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _env(**extra):
    env = {**os.environ, "DRY": "1", "PYTHON": sys.executable, **extra}
    env.pop("CUDA_VISIBLE_DEVICES", None)
    return env


@pytest.mark.slow
@pytest.mark.heavy
def test_gpu_bench_dry_run_prints_every_row(tmp_path):
    out = tmp_path / "rows.json"
    prof = tmp_path / "prof"
    proc = subprocess.run(["bash", "scripts/gpu_bench.sh", "--json", str(out)], cwd=REPO,
                          env=_env(ROWS="dag,score,gpt2,babyberta,bbseeds,generator", PROFILE=str(prof),
                                   BB_REFERENCE="false", SCORE_WHOLE="1"),
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    rows = json.loads(out.read_text())
    names = " | ".join(r["row"] for r in rows)
    for what in ("embedded default DAG", "`povstim score` job", "score-group", "tokens/s", "MFU", "steps/s",
                 "corpus generator"):
        assert what in names, what
    by = {r["row"].split(",")[0]: r for r in rows}
    # the scoring row checks exactness against minicons; the group job writes the separate jobs' bytes
    diff = next(r for r in rows if "max |score difference|" in r["note"])["note"]
    assert float(diff.split("difference| ")[1].split()[0]) <= 1e-4
    assert next(r for r in rows if "score-group" in r["row"])["note"].endswith("True")
    # SCORE_WHOLE: the same job with every sentence whole, the same verdicts and sums to fp32 rounding
    whole = next(r for r in rows if r["peer_name"].startswith("share_prefixes: false"))
    assert whole["note"].endswith("same verdicts: True"), whole
    assert float(whole["note"].split("difference| ")[1].split(";")[0]) <= 1e-4
    # scoring.matmul: 3xtf32 runs (on a CPU its products stay fp32), within minicons' 1e-4, the same verdicts
    tf32 = next(r for r in rows if "3xtf32" in r["row"])
    assert "same verdicts: True" in tf32["note"] and "a CPU has no TF32" in tf32["note"], tf32
    assert float(tf32["note"].split("difference| ")[1].split()[0]) <= 1e-4
    assert by["gpu_check.sh corpus generator"]["note"] == "same sentences: True"
    assert by["gpu_check.sh corpus generator"]["better"] > 5  # cum_weights really is the fix
    for r in rows:
        if r["peer"] is not None and "MFU" not in r["row"]:
            assert r["povstim"] > 0 and r["peer"] > 0 and r["better"] > 0
    # PROFILE=DIR: where povstim's steady-state training steps spend host time, per op
    for name in ("gpt2", "babyberta"):
        text = (prof / f"{name}.txt").read_text()
        assert "host wall per step" in text and "aten::" in text and "Optimizer.step" in text, name
    # BB_REFERENCE: the same seed trained again (eager on the CPU) logs the very same losses
    bb = next(r for r in rows if r["row"] == "tiny BabyBERTa, steps/s")["note"]
    assert "max relative loss difference 0 over" in bb, bb
    seeds = next(r for r in rows if "seeds at once" in r["row"])
    assert seeds["povstim"] > 0 and seeds["peer"] > 0 and "per job" in seeds["note"]
    table = proc.stdout[proc.stdout.index("| what"):]
    assert len([line for line in table.splitlines() if line.startswith("| ")]) == len(rows) + 1


def test_gpu_bench_a_failed_row_does_not_stop_the_others(tmp_path):
    # a row that breaks (here GPT2_MICRO is not a number; on a GPU machine once the HF peer's import) is
    # reported with its error, the rows after it still run, and the exit status says something failed
    out = tmp_path / "rows.json"
    proc = subprocess.run(["bash", "scripts/gpu_bench.sh", "--json", str(out)], cwd=REPO,
                          env=_env(ROWS="gpt2,generator", GPT2_MICRO="sixteen"),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert "gpt2: FAILED" in proc.stdout and "'sixteen'" in proc.stdout
    assert "1 row(s) failed: gpt2" in proc.stderr
    rows = json.loads(out.read_text())
    assert rows[0]["row"] == "gpt2 (FAILED)" and rows[0]["povstim"] is None
    assert rows[1]["row"].startswith("gpu_check.sh corpus generator") and rows[1]["note"] == "same sentences: True"


def test_gpu_bench_unknown_row_is_refused_before_anything_runs(tmp_path):
    proc = subprocess.run(["bash", "scripts/gpu_bench.sh", "--json", str(tmp_path / "rows.json")], cwd=REPO,
                          env=_env(ROWS="generator,gtp2"), capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "unknown row(s) 'gtp2'" in proc.stderr and "rows: dag, score, gpt2" in proc.stderr
    assert "gpu_bench: CPU" not in proc.stdout  # nothing started (not even torch's import)
    assert not (tmp_path / "rows.json").exists()


@pytest.mark.slow
@pytest.mark.heavy
def test_gpu_check_dry_run(tmp_path):
    proc = subprocess.run(["bash", "scripts/gpu_check.sh"], cwd=REPO, env=_env(STEPS="12", COMPILE="reduce-overhead",
                                                                             MICRO="2"),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout[proc.stdout.index("{"):])
    assert report["steps"] == 12 and report["micro_batch"] == 2 and report["tokens_per_s"] > 0
    assert report["gpu"] == "cpu (DRY run)"


def _bench():
    sys.path.insert(0, str(REPO / "scripts"))
    import gpu_bench

    return gpu_bench


def test_bench_timeline_counts_jobs_running_at_once():
    # hand-computed: one job ending as another starts does not overlap it
    got = _bench().timeline([("train", 10.0, 12.0), ("train", 12.0, 13.0), ("train", 10.5, 11.0),
                             ("score", 11.0, 14.0)])
    assert got == {"train": (3, 0.0, 3.0, 2), "score": (1, 1.0, 4.0, 1)}
    assert _bench().timeline([]) == {}


def test_bench_reads_job_times_from_a_real_snakemake_run(tmp_path):
    # the DAG row's timeline comes from the records Snakemake itself writes (.snakemake/metadata): three 1-s
    # jobs on 2 cores run two at once, then one; the gather job runs after them
    (tmp_path / "Snakefile").write_text(
        'rule all:\n    input: "b.txt"\n'
        'rule a:\n    output: "a{i}.txt"\n    shell: "sleep 1; touch {output}"\n'
        'rule b:\n    input: expand("a{i}.txt", i=range(3))\n    output: "b.txt"\n    shell: "cat {input} > {output}"\n')
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "2", "--quiet"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    bench = _bench()
    jobs = bench.job_times(tmp_path)
    assert [r for r, _, _ in jobs] == ["a", "a", "a", "b"]  # `all` has no output, so no record
    spans = bench.timeline(jobs)
    n, first, last, at_once = spans["a"]
    assert (n, first, at_once) == (3, 0.0, 2) and last >= 2.0
    assert spans["b"][1] >= last - 0.05  # b started after the last a ended
    assert bench.job_times(tmp_path / "nothing") == []


def test_bench_reads_a_score_jobs_time_parts_from_its_log(tmp_path):
    # the score row's notes say where a job's time went, from the lines a real `povstim score` job logs
    sys.path.insert(0, str(REPO / "tests"))
    from helpers import tiny_models as tiny
    from povstim.benchmarks import posh, words
    from povstim.benchmarks.suite import write_suite

    pairs = posh.generate(words.default_lexicon(), 5, seed=2)
    model = tiny.build(tmp_path / "m", [s for p in pairs for s in (p.good, p.bad)] * 3, "causal", vocab_size=300)
    write_suite(tmp_path / "suite", pairs, {"kind": "generated"})
    bench = _bench()
    env = {**os.environ, "PYTHONPATH": str(REPO / "workflow")}
    wall = bench.run([sys.executable, "-m", "povstim", "score", "--model", str(model), "--suite",
                      str(tmp_path / "suite"), "--params", '{"checkpoints": false, "device": "cpu"}',
                      "--out", str(tmp_path / "s.parquet")], env=env)
    log = bench.LAST_RUN["log"]
    assert "loaded in" in log and "sentences encoded in" in log  # the lines the parts come from
    parts = dict(p.rsplit(" ", 2)[:2] for p in bench.job_parts(log, wall).split(", "))
    parts = {k: float(v) for k, v in parts.items()}
    assert list(parts) == ["device", "load", "encode", "model", "rest"]
    assert parts["device"] == 0  # a CPU job claims no GPU
    assert parts["load"] > 0 and parts["model"] > 0 and parts["rest"] > 0 and parts["encode"] >= 0  # 10 pairs: ~0 s
    assert abs(sum(parts.values()) - wall) < 0.02  # the parts add up to the wall time (rounded to 0.01 s)
    assert bench.job_parts(
        "x (step 0): accuracy 0.5 (loaded in 1.50s, 12 sentences encoded in 0.25s, scored in 2.00s)\n"
        "device cuda:0 ready in 0.75s (driver 0.40s, slot 0.00s, torch 0.35s)\n"
        "20 pairs x 1 model(s) and checkpoint(s) scored in 9.9s -> o", 6.0) \
        == "device 0.75 s, load 1.50 s, encode 0.25 s, model 2.00 s, rest 1.50 s"  # by hand; the total line ignored


def test_bench_says_whether_a_forked_job_ran_in_a_ready_child():
    """From a warm-start server's log (povstim/warm.py's lines): the job's child, and its driver's start-up."""
    log = ("2026-11-28 10:00:00 ready child 41: CUDA driver started (1 GPU(s) visible) in 0.62s; waiting for a job\n"
           "2026-11-28 10:00:05 pid 41: povstim score --out /w/ours-warm.parquet (in a ready child)\n"
           "2026-11-28 10:00:05 ready child 57: CUDA driver started (1 GPU(s) visible) in 0.60s; waiting for a job\n"
           "2026-11-28 10:00:09 pid 41: exit 0\n"
           "2026-11-28 10:00:09 pid 60: povstim score --out /w/hidden.parquet\n")
    bench = _bench()
    assert bench.ready_note(log, "ours-warm.parquet") == \
        "; in a ready child (CUDA driver started (1 GPU(s) visible) in 0.62 s before the job came)"
    assert bench.ready_note(log, "hidden.parquet") == "; in a child forked for it (no ready child)"
    assert bench.ready_note(log, "other.parquet") == "; not forked"


def test_bench_suite_repeats_pairs_under_their_own_ids(tmp_path):
    # more pairs than the lexicon gives: the repeats get ids of their own, so the suite reads as povstim's own
    # schema (a real suite's path) rather than through the generic-JSONL fallback duplicate ids send it to
    from povstim.benchmarks.suite import read_suite

    folder = _bench().pairs_suite(tmp_path / "suite", 20000)  # the score row's size
    pairs = read_suite(folder)
    assert len(pairs) == 20000
    assert len({(p["paradigm"], p["item_id"]) for p in pairs}) == 20000
    assert len({(p["good"], p["bad"]) for p in pairs}) < 20000  # it did repeat some
