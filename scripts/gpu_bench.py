#!/usr/bin/env python
"""Every row of the GPU speed table for povstim and its peer, side by side, on one GPU machine.

    bash scripts/gpu_bench.sh                 # everything (aimed at <= 8 minutes on one H100/H200)
    ROWS=score,babyberta bash scripts/gpu_bench.sh
    DRY=1 bash scripts/gpu_bench.sh           # the same code on the CPU with tiny sizes, in about a minute
                                              # (workers run in this process: its timings mean nothing)

Rows (each measured in fresh processes, so start-up costs count where the row is about them):

  dag        the README command on the embedded default, `snakemake --cores N --resources gpu=1 --
             results/figures`, in a fresh copy of the checkout; peer: the same with the GPU hidden
             (CUDA_VISIBLE_DEVICES=). DRY: `snakemake -n` only. DAG_CONFIG=FILE merges FILE over config.yaml
             in both runs (e.g. `gpus: {slots: 16}` or `training: {compile: step-graphs}`). The row's note
             gives each run's train/score stages (when, how many jobs at once) and the train jobs' mean time
             parts (slot wait, CUDA start-up, steps, ...); PROFILE=DIR writes every stage to DIR/dag_*.tsv.
  score      one `povstim score` job, GPT-2 small (random weights: speed and exactness do not depend on
             training), 20k generated minimal pairs, `sensitivity: false` (one pass with BOS, the work minicons
             does; the default adds a second, BOS-less pass), each shared prefix fed once (the default
             `share_prefixes: true`); peer: minicons batched (128 pairs per call), and
             the largest score difference (must stay <= 1e-4); SCORE_WHOLE=1 also runs that job with
             `share_prefixes: false` (every sentence whole) and compares the two; the same job forked from the
             warm-start server, in fp32 and with `matmul: 3xtf32` (fp32-accurate products on TF32 tensor cores);
             plus one tiny-model job (the demo's gpt2-tiny, target <= 3 s), the same job forked from the warm-start
             server, and the same tiny models as one `povstim score-group` job.
  gpt2       GPT-2 small (POSH Table 5) at context 512, batch 32, bf16, compiled: tokens/s and MFU
             (6N + 12·L·d·T FLOPs per token against a 989 TFLOP/s dense bf16 peak); peer: HF Trainer,
             same model, data, batch, schedule, bf16, torch_compile, fused AdamW.
  babyberta  the BabyBERTa recipe (8 x 256, batch 16, context 128, MLM 0.15 with no unmasking):
             steps/s in BB_COMPILE mode (default step-graphs); peer: HF Trainer with the same model,
             batch and masking. BB_REFERENCE=MODE also trains povstim in MODE (e.g. false: the eager
             loop) with the same seed and reports its rate and the largest relative difference between
             the two runs' logged losses. BB_STEPS / BB_WARM (600 / 200): steps, and warm-up steps
             left out of the rates (400 steps measured: the HF peer's ~15 s; 1000 / 300 before 2026-11-27).
  bbseeds    (not in the default rows: ROWS=bbseeds) BB_SEEDS (4) seeds of that recipe trained at once on
             one GPU, as a Snakemake run's small jobs share it (POVSTIM_GPU_SHARE): total steps/s;
             peer: as many HF Trainers at once.
  generator  scripts/gpu_check.sh's corpus generator: per-sentence weights (the old quadratic code)
             vs cum_weights (the fix), on the same sentences.

PROFILE=DIR also writes where povstim's training steps spend their time (torch profiler over 20
steady-state steps: host time per op, and GPU time per kernel) to DIR/gpt2.txt and DIR/babyberta.txt;
the profiled rates include the profiler's own cost.

A row that fails is reported with its error and the rows after it still run (a GPU lease is short);
the exit status is then 1. An unknown row name is refused before anything runs.

Nothing is downloaded: every model is built here, every corpus generated. Ratios are "how many times
better povstim is" (peer time / ours, or our rate / the peer's).
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow"))
PEAK_TFLOPS = float(os.environ.get("PEAK_TFLOPS", "989"))

GPT2_SMALL = {"family": "gpt2", "n_layer": 12, "n_embd": 768, "n_head": 12, "n_inner": 3072}
BABYBERTA = {"family": "roberta", "n_layer": 8, "n_embd": 256, "n_head": 8, "n_inner": 1024}
TINY = {"family": "gpt2", "n_layer": 2, "n_embd": 64, "n_head": 2, "n_inner": 128}
DEMO_TINY = {"family": "gpt2", "n_layer": 2, "n_embd": 128, "n_head": 4, "n_inner": 512}


def sizes(dry: bool) -> dict:
    if dry:
        return {"pairs": 200, "gpt2_arch": TINY, "gpt2_steps": 12, "gpt2_warm": 4, "gpt2_batch": 4, "gpt2_ctx": 64,
                "gpt2_sentences": 3000, "vocab": 1024, "bb_arch": {**BABYBERTA, "n_layer": 2, "n_embd": 64,
                                                                  "n_head": 2, "n_inner": 128},
                "bb_steps": 20, "bb_warm": 8, "bb_sentences": 2000, "gen_sentences": 200, "tiny_models": 2}
    return {"pairs": 20000, "gpt2_arch": GPT2_SMALL, "gpt2_steps": 120, "gpt2_warm": 40, "gpt2_batch": 32,
            "gpt2_ctx": 512, "gpt2_sentences": 200000, "vocab": 32768, "bb_arch": BABYBERTA,
            "bb_steps": int(os.environ.get("BB_STEPS", "600")), "bb_warm": int(os.environ.get("BB_WARM", "200")),
            "bb_sentences": 100000, "gen_sentences": 3000, "tiny_models": 12}


# --------------------------------------------------------------------------- data

LETTERS = "etaoinshrdlcumwfgypbvkjxqz"


def lexicon(n: int = 60000) -> list[str]:
    r = random.Random(0)
    return sorted({"".join(r.choice(LETTERS) for _ in range(r.randint(2, 11))) for _ in range(n)})


def zipf_sentences(words: list[str], n: int, seed: int, lo: int, hi: int) -> list[str]:
    cum = list(itertools.accumulate(1 / (i + 1) for i in range(len(words))))
    g = random.Random(seed)
    return [" ".join(g.choices(words, cum_weights=cum, k=g.randint(lo, hi))).capitalize() + g.choice(".?!")
            for _ in range(n)]


def corpus(work: Path, name: str, n: int, lo: int, hi: int, vocab: int) -> dict:
    from povstim.tokenizer import bpe

    folder = work / name
    if (folder / "tokenizer.json").exists():
        return {k: str(folder / f) for k, f in (("train", "train.txt"), ("dev", "dev.txt"), ("tokenizer", "tokenizer.json"))}
    folder.mkdir(parents=True)
    words = lexicon()
    (folder / "train.txt").write_text("\n".join(zipf_sentences(words, n, 1, lo, hi)) + "\n")
    (folder / "dev.txt").write_text("\n".join(zipf_sentences(words, max(200, n // 100), 2, lo, hi)) + "\n")
    bpe.save(bpe.train_file(folder / "train.txt", {"vocab_size": vocab}), folder / "tokenizer.json")
    return corpus(work, name, n, lo, hi, vocab)


# DRY runs the workers and povstim commands inside this process (same functions, no per-process
# start-up), so the whole script is checked in about a minute on a small CPU machine.
IN_PROCESS = False


LAST_RUN: dict = {}  # the last subprocess's wall time and stderr (a job's log)


def job_parts(text: str, wall: float) -> str:
    """Where a `povstim score` job's wall time went, from the lines its log writes (scoring/run.py): the
    GPU's claim and start-up, model loading, encoding, the model's work; the rest is imports, reading the
    suite and writing the scores."""
    import re

    found = {name: sum(float(x) for x in re.findall(pattern, text)) for name, pattern in (
        ("device", r"device \S+ ready in ([\d.]+)s"), ("load", r"\(loaded in ([\d.]+)s"),
        ("encode", r"sentences encoded in ([\d.]+)s"), ("model", r"encoded in [\d.]+s, scored in ([\d.]+)s"))}
    found["rest"] = wall - sum(found.values())
    return ", ".join(f"{k} {v:.2f} s" for k, v in found.items())


def ready_note(server_log: str, needle: str) -> str:
    """Whether the forked job whose command line holds ``needle`` ran in a ready child of the warm-start server
    (povstim/warm.py: forked ahead, its CUDA driver started while it waited), and how long that start took."""
    import re

    jobs = [ln for ln in server_log.splitlines() if ": povstim " in ln and needle in ln]
    if not jobs:
        return "; not forked"
    if not jobs[-1].endswith("(in a ready child)"):
        return "; in a child forked for it (no ready child)"
    pid = jobs[-1].split("pid ", 1)[1].split(":", 1)[0]
    said = re.search(rf"ready child {pid}: (.*) in ([\d.]+)s; waiting for a job", server_log)
    return f"; in a ready child ({said.group(1)} in {said.group(2)} s before the job came)" if said else \
        "; in a ready child"


def run(cmd: list[str], env: dict | None = None, cwd: Path | None = None, timeout: int = 900) -> float:
    """Wall seconds of a command (which must succeed)."""
    t0 = time.perf_counter()
    if IN_PROCESS and cmd[1:3] == ["-m", "povstim"]:
        from povstim.cli import main as povstim_main

        if povstim_main(cmd[3:]) != 0:
            raise SystemExit(f"gpu_bench: povstim {cmd[3]} failed")
        return time.perf_counter() - t0
    if IN_PROCESS and cmd[1] == __file__:
        import contextlib
        import io

        with contextlib.redirect_stdout(io.StringIO()):
            worker(cmd[3], cmd[4:])
        return time.perf_counter() - t0
    proc = subprocess.run(cmd, env={**os.environ, **(env or {})}, cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)
    wall = time.perf_counter() - t0
    LAST_RUN.update(wall=wall, log=proc.stderr)
    if proc.returncode:
        raise SystemExit(f"gpu_bench: {' '.join(cmd[:6])} ... failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}")
    return wall


def py(*args) -> list[str]:
    return [sys.executable, *args]


# the checkout's code first, then whatever PYTHONPATH already holds (e.g. carried wheels on a GPU machine)
POVSTIM_ENV = {"PYTHONPATH": os.pathsep.join(p for p in (str(REPO / "workflow"), os.environ.get("PYTHONPATH")) if p)}


# --------------------------------------------------------------------------- rows

def rule_times(folder: Path) -> dict:
    """{rule: (jobs, longest wall s, summed wall s)} from a run's Snakemake `benchmark:` files, longest first:
    which stages a DAG's wall time is made of."""
    import csv

    out: dict[str, list] = {}
    for f in folder.glob("*/*/**/*.tsv"):
        rule = f.relative_to(folder).parts[1]
        with open(f) as fh:
            rows = list(csv.DictReader(fh, delimiter="\t"))
        if rows:
            wall = float(rows[0]["s"])
            n, mx, total = out.get(rule, (0, 0.0, 0.0))
            out[rule] = (n + 1, max(mx, wall), total + wall)
    return dict(sorted(out.items(), key=lambda kv: -kv[1][1]))


def job_times(folder: Path) -> list[tuple[str, float, float]]:
    """(rule, start, end) of every job a Snakemake run in ``folder`` ran, earliest first, from the records
    Snakemake keeps for each output (.snakemake/metadata: rule, job_hash, starttime, endtime)."""
    jobs = {}
    meta = folder / ".snakemake" / "metadata"
    for f in sorted(meta.iterdir()) if meta.is_dir() else ():
        try:
            r = json.loads(f.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(r, dict) and r.get("rule") and r.get("starttime") and r.get("endtime"):
            jobs[r.get("job_hash") or f.name] = (r["rule"], float(r["starttime"]), float(r["endtime"]))
    return sorted(jobs.values(), key=lambda j: (j[1], j[2], j[0]))


def timeline(jobs: list[tuple[str, float, float]]) -> dict:
    """{rule: (jobs, first start, last end, most jobs running at once)}, times in seconds from the run's first
    job start, in order of first start: when each stage ran, and whether its jobs ran side by side or queued
    (e.g. small GPU jobs waiting for gpus.slots)."""
    if not jobs:
        return {}
    t0 = min(start for _, start, _ in jobs)
    out = {}
    for rule in dict.fromkeys(r for r, _, _ in jobs):
        mine = [(start - t0, end - t0) for r, start, end in jobs if r == rule]
        # an end and a start at the same instant do not overlap: ends sort first
        events = sorted([(a, 1) for a, _ in mine] + [(b, -1) for _, b in mine], key=lambda e: (e[0], e[1]))
        running = peak = 0
        for _, step in events:
            running += step
            peak = max(peak, running)
        out[rule] = (len(mine), min(a for a, _ in mine), max(b for _, b in mine), peak)
    return out


def train_parts(logs: Path) -> str:
    """The train jobs' wall time by part, mean over the jobs (each job logs a `time:` line, povstim.train.loop):
    what a small model's job spends besides its steps (start-up, CUDA context, evaluation, checkpoints)."""
    import re

    jobs = []
    for f in sorted(logs.glob("*/train/**/*.log")):  # logs/<experiment>/train/...
        line = next((x for x in f.read_text(errors="replace").splitlines() if "povstim.train INFO: time: " in x), None)
        if line:
            jobs.append({k: float(v) for k, v in re.findall(r"(\w+) ([0-9.]+) s", line.split("time: ", 1)[1])})
    if not jobs:
        return ""
    return f"train jobs' mean parts ({len(jobs)}): " + ", ".join(
        f"{k} {sum(j.get(k, 0.0) for j in jobs) / len(jobs):.1f} s" for k in jobs[0])


def row_dag(work: Path, dry: bool) -> list[dict]:
    """README command on the embedded default, GPU visible vs hidden, each in a fresh copy."""
    cores = os.environ.get("CORES") or str(os.cpu_count())
    top = {"results", "resources", "logs", "benchmarks", ".snakemake", ".venv", ".git", "shared"}

    def skip(folder, names):  # outputs and caches of the checkout, not its code
        return [n for n in names if (Path(folder) == REPO and n in top) or n == "__pycache__"]

    walls, notes = {}, []
    for label, env in (("gpu", {}), ("cpu", {"CUDA_VISIBLE_DEVICES": ""})):
        copy = work / f"dag-{label}"
        shutil.copytree(REPO, copy, ignore=skip)
        # each run compiles from cold caches (PyTensor/numba for the Bayesian fit, inductor/triton): the run
        # that went second would otherwise reuse the first one's (the analyze job: 47 s cold, 30 s warm, H100)
        caches = copy / ".bench-caches"
        flags = ",".join(f for f in (os.environ.get("PYTENSOR_FLAGS"), f"base_compiledir={caches / 'pytensor'}") if f)
        env = {**env, "PYTENSOR_FLAGS": flags, "NUMBA_CACHE_DIR": str(caches / "numba"),
               "TORCHINDUCTOR_CACHE_DIR": str(caches / "inductor"), "TRITON_CACHE_DIR": str(caches / "triton")}
        # DAG_CONFIG=FILE: settings merged over config.yaml in both runs (speed-only keys such as gpus.slots or
        # training.compile, which the CPU run ignores), to compare them on one machine
        extra = ["--configfile", "config.yaml", str(Path(os.environ["DAG_CONFIG"]).resolve())] \
            if os.environ.get("DAG_CONFIG") else []
        cmd = py("-m", "snakemake", "--cores", cores, "--resources", "gpu=1", *extra, *(["-n"] if dry else []), "--",
                 "results/figures")
        walls[label] = run(cmd, env=env, cwd=copy, timeout=1800)
        devs = [json.loads(f.read_text()).get("device") for f in sorted(copy.glob("results/**/train_summary.json"))]
        forked = sum(line.rstrip().endswith("exit 0") for f in copy.glob("logs/**/warm_start.log")
                     for line in f.read_text().splitlines())
        rules = rule_times(copy / "benchmarks")
        heavy = ", ".join(f"{r} {mx:.0f} s" for r, (n, mx, total) in list(rules.items())[:4])
        parts = train_parts(copy / "logs")
        prewarmed = prewarm_note(copy / "logs")
        spans = timeline(job_times(copy))
        gpu_stages = "; ".join(f"{r} {n} jobs at {a:.0f}-{b:.0f} s, at most {k} at once"
                               for r, (n, a, b, k) in spans.items() if r in ("train", "score"))
        notes.append(f"{label}: train jobs on {', '.join(f'{d} x{devs.count(d)}' for d in sorted(set(map(str, devs))))}"
                     f"; jobs forked from the warm-start server: {forked}" + (f"; longest jobs: {heavy}" if heavy else "")
                     + (f"; {parts}" if parts else "") + (f"; {gpu_stages}" if gpu_stages else "")
                     + (f"; {prewarmed}" if prewarmed else ""))
        if os.environ.get("PROFILE") and rules:  # every rule's jobs: count, longest and summed wall, when they ran
            out = Path(os.environ["PROFILE"]).resolve() / f"dag_{label}.tsv"
            out.parent.mkdir(parents=True, exist_ok=True)
            none = (0, float("nan"), float("nan"), 0)
            out.write_text("rule\tjobs\tmax_s\tsum_s\tfirst_start_s\tlast_end_s\tat_once\n" + "".join(
                f"{r}\t{n}\t{mx:.2f}\t{total:.2f}\t{spans.get(r, none)[1]:.2f}\t{spans.get(r, none)[2]:.2f}\t"
                f"{spans.get(r, none)[3]}\n" for r, (n, mx, total) in rules.items()))
    note = ("dry run (-n) only" if dry else f"--cores {cores}") + (
        f"; config.yaml + {os.environ['DAG_CONFIG']}" if os.environ.get("DAG_CONFIG") else "") + "; " + "; ".join(notes)
    return [{"row": "embedded default DAG (README command), wall s", "povstim": walls["gpu"],
             "peer": walls["cpu"], "peer_name": "same, GPU hidden", "better": walls["cpu"] / walls["gpu"],
             "target": ">= 1 (never slower than CPU); <= 120 s", "note": note}]


def prewarm_note(logs: Path) -> str:
    """What the run's `povstim analyze-prewarm` did (povstim/analysis/models/prewarm.py: compiled the Bayesian model
    ahead on idle CPUs, or was stopped by analyze), from its log lines."""
    import re

    said = [line.split("INFO: ", 1)[-1] for f in sorted(logs.glob("*/analyze/prewarm.log"))
            for line in f.read_text().splitlines()
            if "povstim.analyze-prewarm" in line and re.search(r"compiling|compiled in|done in|stopped", line)]
    return "analyze-prewarm: " + "; ".join(said) if said else ""


def build_model(folder: Path, arch: dict, corpus_paths: dict, context: int):
    """A povstim model folder (random weights) as `povstim train` would save it."""
    import torch

    from povstim import families
    from povstim.tokenizer import bpe
    from povstim.train.models import build_config, build_model as build
    from povstim.train.params import resolve

    a, t = resolve(arch, {"context": context, "device": "cpu"})
    tok = bpe.load(corpus_paths["tokenizer"])
    ids = bpe.special_ids(tok)
    torch.manual_seed(0)
    model = build(a, build_config(a, t, tok.get_vocab_size(), ids))
    model.save_pretrained(folder)
    bpe.hf_tokenizer(tok, families.get(a["family"]).tokenizer_frame).save_pretrained(folder)
    (folder / "train_summary.json").write_text(json.dumps({"best_step": 0}))
    return folder


def pairs_suite(folder: Path, n: int) -> Path:
    from povstim.benchmarks import posh, words
    from povstim.benchmarks.suite import write_suite

    # as many distinct pairs as the lexicon gives each paradigm (wanna's strictly intransitive verbs give few),
    # then repeated up to n: scoring speed does not depend on whether pairs repeat
    import re

    from povstim.io import PovstimError

    per, pairs = -(-n // 9), []
    for paradigm in sorted({t.paradigm for t in posh.TEMPLATES}):
        try:
            pairs += posh.generate(words.default_lexicon(), per, seed=1, paradigms=[paradigm])
        except PovstimError as exc:
            got = re.search(r"only (\d+) distinct pairs", str(exc))
            if not got:
                raise
            pairs += posh.generate(words.default_lexicon(), int(got.group(1)), seed=1, paradigms=[paradigm])
    # each repeat gets its own item ids, so the suite reads as povstim's own schema (as a real suite does) and not
    # through the generic-JSONL fallback that duplicate ids send it to (0.4 s more for 20k pairs on a slow CPU)
    pairs = [p if k < len(pairs) else dataclasses.replace(p, item_id=f"{p.item_id}.{k // len(pairs)}")
             for k, p in enumerate((pairs * (-(-n // len(pairs))))[:n])]
    write_suite(folder, pairs, {"kind": "generated"})
    return folder


def minicons_worker(model: str, suite: str, out: str, device: str, per_call: int) -> None:
    """Peer: minicons IncrementalLMScorer, `per_call` pairs per sequence_score call, BOS prepended."""
    t0 = time.perf_counter()
    import numpy as np
    from minicons import scorer as mc

    from povstim.benchmarks.importers import load_pairs

    pairs = load_pairs(Path(suite), None, None)
    lm = mc.IncrementalLMScorer(model, device)
    t1 = time.perf_counter()
    good, bad = [], []
    for k in range(0, len(pairs), per_call):
        chunk = pairs[k : k + per_call]
        s = lm.sequence_score([p["good"] for p in chunk] + [p["bad"] for p in chunk],
                              reduction=lambda x: x.sum(0).item(), bos_token=True)
        good += s[: len(chunk)]
        bad += s[len(chunk):]
    np.save(out, np.array([good, bad]))
    print(json.dumps({"scoring_s": time.perf_counter() - t1, "total_s": time.perf_counter() - t0}))


def row_score(work: Path, dry: bool, s: dict, device: str) -> list[dict]:
    import numpy as np
    import pandas as pd

    def spent(wall):  # the last job's time parts, from its log (DRY runs jobs in-process: no log to read)
        return "" if IN_PROCESS else f"; job time: {job_parts(LAST_RUN['log'], wall)}"

    paths = corpus(work, "score-corpus", 20000 if not dry else 2000, 4, 14, s["vocab"])
    suite = pairs_suite(work / "suite", s["pairs"])
    model = build_model(work / "gpt2-score", s["gpt2_arch"], paths, 128)
    # sensitivity off: the job then does minicons' work, one pass with BOS (with it on, the default, a final causal
    # model's job scores every sentence a second time without BOS for the metric sensitivity table)
    params = json.dumps({"batch_size": 256, "checkpoints": False, "sensitivity": False,
                         "device": "auto" if device != "cpu" else "cpu"})
    out = work / "ours.parquet"
    # DRY scores in this process, where minicons then runs with the thread count povstim set: one thread keeps
    # both runs' float sums in one fixed order (with 4, a CI run once saw them 3.8e-4 apart; not reproduced)
    threads = "1" if dry else "4"
    ours = run(py("-m", "povstim", "score", "--model", str(model), "--suite", str(suite), "--params", params,
                  "--threads", threads, "--out", str(out)), env=POVSTIM_ENV)
    ours_parts = spent(ours)
    whole = None
    if os.environ.get("SCORE_WHOLE", "") not in ("", "0"):  # the same job without prefix sharing
        whole_out = work / "ours-whole.parquet"
        whole = run(py("-m", "povstim", "score", "--model", str(model), "--suite", str(suite), "--params",
                       json.dumps({**json.loads(params), "share_prefixes": False}), "--threads", threads, "--out",
                       str(whole_out)), env=POVSTIM_ENV)
    mc_out = work / "minicons.npy"
    peer = run(py(__file__, "--worker", "minicons", str(model), str(suite), str(mc_out), device, "128"))
    df = pd.read_parquet(out)
    ref = np.load(mc_out)
    diff = float(max(np.abs(df.logp_good.to_numpy() - ref[0]).max(), np.abs(df.logp_bad.to_numpy() - ref[1]).max()))
    rows = [{"row": f"`povstim score` job, {'GPT-2 small' if not dry else 'tiny GPT-2'}, {len(df)} pairs, wall s",
             "povstim": ours, "peer": peer, "peer_name": "minicons batched (128 pairs/call)", "better": peer / ours,
             "target": ">= 10", "note": f"max |score difference| {diff:.1e} (<= 1e-4); one pass (sensitivity: false), shared prefixes "
                     "fed once (share_prefixes: true, the default)" + ours_parts}]
    if whole is not None:
        w = pd.read_parquet(whole_out)
        apart = float(max(np.abs(df.logp_good - w.logp_good).max(), np.abs(df.logp_bad - w.logp_bad).max()))
        rows.append({"row": f"same {len(df)}-pair job, wall s", "povstim": ours, "peer": whole,
                     "peer_name": "share_prefixes: false (every sentence whole)", "better": whole / ours, "target": "",
                     "note": f"max |score difference| {apart:.1e}; same verdicts: {bool((df.correct == w.correct).all())}"})
    # a tiny model's job (the demo's gpt2-tiny, 3 checkpoints, 900 pairs), alone and as one group job
    tiny_paths = corpus(work, "tiny-corpus", 3000, 4, 12, 2048)
    tiny_suite = pairs_suite(work / "tiny-suite", 100 if dry else 900)
    models = []
    for i in range(s["tiny_models"]):
        m = build_model(work / f"tiny{i}", DEMO_TINY, tiny_paths, 64)
        for step in (100, 200):
            shutil.copytree(m, m / "checkpoints" / f"step{step}", ignore=shutil.ignore_patterns("checkpoints"))
        models.append(m)
    tparams = json.dumps({"batch_size": 64, "checkpoints": True, "device": "auto" if device != "cpu" else "cpu"})
    one = run(py("-m", "povstim", "score", "--model", str(models[0]), "--suite", str(tiny_suite), "--params", tparams,
                 "--threads", "2", "--out", str(work / "tiny0.parquet")), env=POVSTIM_ENV)
    warm_note, hot = "not measured in DRY (commands run in-process there)", None
    # the 20k-pair job with the linear layers as 3xTF32 products (scoring/matmul.py; forked below, in-process in DRY,
    # where there is no TF32 and the products stay fp32)
    tf32_params, tf32_out = json.dumps({**json.loads(params), "matmul": "3xtf32"}), work / "ours-3xtf32.parquet"
    tf32_parts = ""
    if IN_PROCESS:
        tf32_job = run(py("-m", "povstim", "score", "--model", str(model), "--suite", str(suite), "--params",
                          tf32_params, "--threads", threads, "--out", str(tf32_out)), env=POVSTIM_ENV)
    if not IN_PROCESS:  # the same job forked from the warm-start server a Snakemake run starts (povstim/warm.py)
        from povstim import warm

        server = warm.start(POVSTIM_ENV["PYTHONPATH"])
        sock = os.environ.pop(warm.ENV_SOCKET)
        try:
            server.ready()  # time the jobs, not the server's own imports (a Snakemake run overlaps those)
            hot = run(py("-m", "povstim", "score", "--model", str(models[0]), "--suite", str(tiny_suite), "--params",
                         tparams, "--threads", "2", "--out", str(work / "tiny0-warm.parquet")),
                      env={**POVSTIM_ENV, warm.ENV_SOCKET: sock})
            hot_big = run(py("-m", "povstim", "score", "--model", str(model), "--suite", str(suite), "--params", params,
                             "--threads", "4", "--out", str(work / "ours-warm.parquet")),
                          env={**POVSTIM_ENV, warm.ENV_SOCKET: sock})
            hot_big_parts = spent(hot_big)
            tf32_job = run(py("-m", "povstim", "score", "--model", str(model), "--suite", str(suite), "--params",
                              tf32_params, "--threads", "4", "--out", str(tf32_out)),
                           env={**POVSTIM_ENV, warm.ENV_SOCKET: sock})
            tf32_parts = spent(tf32_job)
            server_log = (server.folder / "server.log").read_text()
            forked = server_log.count(": povstim score ")
            hot_big_parts += ready_note(server_log, "ours-warm.parquet")
            tf32_parts += ready_note(server_log, "ours-3xtf32.parquet")
            same_warm = (work / "tiny0-warm.parquet").read_bytes() == (work / "tiny0.parquet").read_bytes()
            same_big = (work / "ours-warm.parquet").read_bytes() == out.read_bytes()
            warm_note = (f"jobs forked: {forked} of 3; output byte-identical to the fresh process's: {same_warm}"
                         + ready_note(server_log, "tiny0-warm.parquet"))
            rows.append({"row": f"same {len(df)}-pair job forked from the warm-start server, wall s", "povstim": hot_big,
                         "peer": peer, "peer_name": "minicons batched (128 pairs/call)", "better": peer / hot_big,
                         "target": ">= 10", "note": f"output byte-identical to the fresh process's: {same_big}"
                                                    + hot_big_parts})
        finally:
            server.stop()
    t = pd.read_parquet(tf32_out)
    t_diff = float(max(np.abs(t.logp_good.to_numpy() - ref[0]).max(), np.abs(t.logp_bad.to_numpy() - ref[1]).max()))
    t_apart = float(max(np.abs(t.logp_good - df.logp_good).max(), np.abs(t.logp_bad - df.logp_bad).max()))
    rows.append({"row": f"same {len(df)}-pair job, `scoring.matmul: 3xtf32`{'' if IN_PROCESS else ', forked'}, wall s",
                 "povstim": tf32_job, "peer": peer, "peer_name": "minicons batched (128 pairs/call)",
                 "better": peer / tf32_job, "target": ">= 10",
                 "note": f"max |score difference| {t_diff:.1e} (<= 1e-4), {t_apart:.1e} from the fp32 job; same verdicts: "
                         f"{bool((df.correct == t.correct).all())}"
                         + (f"; {hot_big / tf32_job:.2f}x the forked fp32 job" if hot is not None else
                            " (a CPU has no TF32: products stay fp32)") + tf32_parts})
    jobs = []
    for i, m in enumerate(models):
        jobs += ["--job", str(m), json.dumps({"seed": i}), str(work / f"group{i}.parquet")]
    group = run(py("-m", "povstim", "score-group", "--suite", str(tiny_suite), "--params", tparams, "--threads", "2",
                   *jobs), env=POVSTIM_ENV)
    same = (work / "group0.parquet").read_bytes() == (work / "tiny0.parquet").read_bytes()
    rows.append({"row": "`povstim score` job, tiny model (demo gpt2-tiny, 3 checkpoints), wall s", "povstim": one,
                 "peer": None, "peer_name": "", "better": None, "target": "<= 3 s", "note": ""})
    rows.append({"row": "same job forked from the warm-start server (a Snakemake run's), wall s", "povstim": hot,
                 "peer": one if hot else None, "peer_name": "fresh process", "better": one / hot if hot else None,
                 "target": "<= 3 s",
                 "note": warm_note})
    rows.append({"row": f"same, {len(models)} models in one `score-group` job, wall s per model",
                 "povstim": group / len(models), "peer": one, "peer_name": "one job per model", "better": one / (group / len(models)),
                 "target": "", "note": f"outputs byte-identical to separate jobs: {same}"})
    return rows


def ours_train(paths: dict, arch: dict, training: dict, out: str) -> None:
    """Worker: povstim's Trainer; prints steady-state steps/s and tokens/s from its log."""
    from povstim.train.loop import Trainer
    from povstim.train.params import resolve

    a, t = resolve(arch, training)
    tr = Trainer(train=paths["train"], dev=paths["dev"], tokenizer=paths["tokenizer"], arch=a, training=t,
                 seed=int(os.environ.get("BENCH_SEED", "1")), out_dir=out, threads=1 if IN_PROCESS else 4,
                 progress=False)
    prof = profiler(os.environ.get("BENCH_PROFILE"), int(os.environ.get("BENCH_WARM", "0")),
                    int(os.environ.get("BENCH_PROFILE_STEPS", PROFILE_STEPS)))
    if prof is None:
        tr.run()
    else:
        # one profiler step per training step, marked where the loop sets the step's learning rate (the loop
        # itself is not touched; an optimizer hook would miss steps replayed as CUDA graphs)
        set_lr = tr.opt.set_lr
        tr.opt.set_lr = lambda lr: (prof.step(), set_lr(lr))
        with prof:
            tr.run()
    log = [json.loads(x) for x in (Path(out) / "train_log.jsonl").read_text().splitlines()]
    warm = int(os.environ.get("BENCH_WARM", "0"))
    steady = [e for e in log if e["step"] > warm]
    first, last = steady[0], steady[-1]
    prev = [e for e in log if e["step"] <= warm]
    t0, s0 = (prev[-1]["elapsed"], prev[-1]["step"]) if prev else (0.0, 0)
    steps_s = (last["step"] - s0) / max(1e-9, last["elapsed"] - t0)
    tok_s = sum(e["tokens_per_s"] for e in steady) / len(steady)
    n = sum(p.numel() for p in tr.learner.raw_model.parameters())
    wpe = [p.numel() for name, p in tr.learner.raw_model.named_parameters() if "wpe" in name or "position_embeddings" in name]
    cfg = tr.learner.model_config
    print(json.dumps({"steps_s": steps_s, "tokens_s": tok_s, "params": n - sum(wpe),
                      "losses": [[e["step"], e["loss"]] for e in log],
                      "layers": int(getattr(cfg, "n_layer", getattr(cfg, "num_hidden_layers", 0))),
                      "d": int(getattr(cfg, "n_embd", getattr(cfg, "hidden_size", 0))), "first": first["step"]}))


PROFILE_STEPS = 20


def profiler(out: str | None, warm: int, active: int = PROFILE_STEPS):
    """A torch profiler over ``active`` steady-state steps (after ``warm``) that writes where a step's
    time goes to ``out``: host (CPU) time per op -- launch-bound small models are limited there -- and,
    on a GPU, device time per kernel. None when ``out`` is unset."""
    if not out:
        return None
    import torch
    from torch.profiler import ProfilerActivity, profile, schedule

    cuda = torch.cuda.is_available() and not IN_PROCESS

    def write(prof):
        avg = prof.key_averages()
        steps = [e for e in avg if e.key.startswith("ProfilerStep")]
        wall_ms = sum(e.cpu_time_total for e in steps) / max(1, sum(e.count for e in steps)) / 1e3
        parts = [f"gpu_bench profile: {active} steps after step {warm}; host wall per step {wall_ms:.2f} ms",
                 "", "by host (self CPU) time:", avg.table(sort_by="self_cpu_time_total", row_limit=30)]
        if cuda:
            key = "self_device_time_total" if hasattr(avg[0], "self_device_time_total") else "self_cuda_time_total"
            parts += ["", "by GPU (self device) time:", avg.table(sort_by=key, row_limit=30)]
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text("\n".join(parts) + "\n")

    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    return profile(activities=acts, on_trace_ready=write,
                   schedule=schedule(wait=max(0, warm - 1), warmup=1, active=active, repeat=1))


def hf_train(paths: dict, arch: dict, training: dict, steps: int, warm: int, bf16: bool, compile_: bool) -> None:
    """Worker: the Hugging Face Trainer on the same model, data, batch, schedule and masking."""
    import numpy as np
    import torch
    import transformers
    from transformers import DataCollatorForLanguageModeling, Trainer, TrainerCallback, TrainingArguments

    from povstim import families
    from povstim.tokenizer import bpe
    from povstim.train import data as D
    from povstim.train.models import build_config, build_model
    from povstim.train.params import resolve

    transformers.utils.logging.set_verbosity_error()
    a, t = resolve(arch, training)
    tok = bpe.load(paths["tokenizer"])
    ids = bpe.special_ids(tok)
    enc = D.encode(tok, D.read_corpus(paths["train"]), ids["bos"], ids["eos"])
    data = D.Dataset.build(enc, t.context, t.packing, ids["pad"], 1, paths["train"])
    torch.manual_seed(1)
    model = build_model(a, build_config(a, t, tok.get_vocab_size(), ids))
    fam = families.get(a["family"])
    hf_tok = bpe.hf_tokenizer(tok, fam.tokenizer_frame)

    class DS(torch.utils.data.Dataset):
        def __len__(self):
            return data.n_base

        def __getitem__(self, i):
            row, _ = data.collate(np.array([i]))
            return {"input_ids": torch.as_tensor(row[0])}

    masking = {}
    if not fam.causal:  # BabyBERTa masking: 15%, of which 90% <mask> and 10% random, never left unmasked
        masking = {"mask_replace_prob": 1 - t.leave_unmasked_prob - t.random_token_prob,
                   "random_replace_prob": t.random_token_prob}
    collator = DataCollatorForLanguageModeling(hf_tok, mlm=not fam.causal, mlm_probability=t.mask_prob, **masking)
    times = {}

    class Clock(TrainerCallback):
        def on_step_end(self, args, state, control, **kw):
            if state.global_step in (warm, steps):
                if torch.cuda.is_available():
                    torch.cuda.synchronize()
                times[state.global_step] = time.perf_counter()

    with tempfile.TemporaryDirectory() as out:
        args = TrainingArguments(
            output_dir=out, max_steps=steps, per_device_train_batch_size=t.batch_size, learning_rate=t.lr,
            warmup_steps=t.warmup, weight_decay=t.weight_decay, lr_scheduler_type="linear",
            max_grad_norm=t.grad_clip, logging_steps=10**6, save_strategy="no", eval_strategy="no", report_to=[],
            use_cpu=not torch.cuda.is_available(), bf16=bf16, torch_compile=compile_,
            optim="adamw_torch_fused" if torch.cuda.is_available() else "adamw_torch",
            dataloader_num_workers=0, seed=1, disable_tqdm=True,
        )
        Trainer(model=model, args=args, train_dataset=DS(), data_collator=collator, callbacks=[Clock()]).train()
    steps_s = (steps - warm) / (times[steps] - times[warm])
    print(json.dumps({"steps_s": steps_s, "tokens_s": steps_s * t.batch_size * t.context}))


def worker_json(args: list[str], env: dict | None = None) -> dict:
    if IN_PROCESS:
        import contextlib
        import io

        saved = {k: os.environ.get(k) for k in (env or {})}
        os.environ.update(env or {})
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                worker(args[0], args[1:])
        finally:
            for k, v in saved.items():
                os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
        return json.loads(out.getvalue().strip().splitlines()[-1])
    proc = subprocess.run(py(__file__, "--worker", *args), env={**os.environ, **POVSTIM_ENV, **(env or {})},
                          capture_output=True, text=True, timeout=1800)
    if proc.returncode:
        raise SystemExit(f"gpu_bench worker {args[0]} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def profile_env(name: str, steps: int, warm: int) -> tuple[dict, str]:
    """(worker env, row note) for PROFILE=DIR: povstim's steady-state steps profiled into DIR/<name>.txt."""
    folder = os.environ.get("PROFILE")
    if not folder:
        return {}, ""
    out = Path(folder).resolve() / f"{name}.txt"
    return ({"BENCH_PROFILE": str(out), "BENCH_PROFILE_STEPS": str(max(1, min(PROFILE_STEPS, steps - warm - 1)))},
            f"; profiled into {out} (povstim's rate includes the profiler)")


def row_gpt2(work: Path, dry: bool, s: dict, cuda: bool) -> list[dict]:
    paths = corpus(work, "gpt2-corpus", s["gpt2_sentences"], 4, 24, s["vocab"])
    steps, warm = s["gpt2_steps"], s["gpt2_warm"]
    mode = os.environ.get("GPT2_COMPILE", "true")
    compile_ = compile_setting(mode)
    training = {"batch_size": s["gpt2_batch"], "context": s["gpt2_ctx"], "max_steps": steps, "warmup": 10,
                "eval_every": steps, "save_every": steps, "log_every": max(1, warm // 4), "eval_batches": 2,
                "device": "auto" if cuda else "cpu", "compile": compile_ if cuda else False,
                "micro_batch": int(os.environ["GPT2_MICRO"]) if os.environ.get("GPT2_MICRO") else None}
    penv, pnote = profile_env("gpt2", steps, warm)
    ours = worker_json(["ours", json.dumps(paths), json.dumps(s["gpt2_arch"]), json.dumps(training),
                        str(work / "gpt2-ours")], env={"BENCH_WARM": str(warm), **penv})
    peer = worker_json(["hf", json.dumps(paths), json.dumps(s["gpt2_arch"]), json.dumps(training), str(steps),
                        str(warm), "1" if cuda else "0", "1" if cuda else "0"])
    flops = 6 * ours["params"] + 12 * ours["layers"] * ours["d"] * s["gpt2_ctx"]
    mfu = lambda tok_s: tok_s * flops / (PEAK_TFLOPS * 1e12)  # noqa: E731
    name = "GPT-2 small (Table 5)" if not dry else "tiny GPT-2"
    return [{"row": f"{name}, ctx {s['gpt2_ctx']}, batch {s['gpt2_batch']}, tokens/s", "povstim": ours["tokens_s"],
             "peer": peer["tokens_s"], "peer_name": "HF Trainer", "better": ours["tokens_s"] / peer["tokens_s"],
             "target": ">= 1.5", "note": f"compile={compile_ if cuda else False}{pnote}"},
            {"row": f"{name}, MFU (peak {PEAK_TFLOPS:g} TFLOP/s)", "povstim": mfu(ours["tokens_s"]),
             "peer": mfu(peer["tokens_s"]), "peer_name": "HF Trainer", "better": None, "target": ">= 0.50", "note": ""}]


def compile_setting(text: str):
    """An environment variable's value as training.compile takes it (true/false, or a mode name)."""
    return {"true": True, "false": False}.get(text, text)


def babyberta_recipe(work: Path, dry: bool, s: dict, cuda: bool):
    """(corpus paths, steps, warm-up steps, compile setting, training settings) of the BabyBERTa rows: batch 16,
    context 128, MLM 0.15 with no unmasking (BabyBERTa Table 3), compiled with BB_COMPILE on a GPU."""
    paths = corpus(work, "bb-corpus", s["bb_sentences"], 3, 12, 8192 if not dry else 1024)
    steps, warm = s["bb_steps"], s["bb_warm"]
    mode = os.environ.get("BB_COMPILE", "step-graphs")
    compile_ = compile_setting(mode)
    training = {"batch_size": 16, "context": 128, "max_steps": steps, "warmup": 10, "packing": False, "lr": 1e-4,
                "weight_decay": 0.0, "leave_unmasked_prob": 0.0, "random_token_prob": 0.1, "mask_prob": 0.15,
                "eval_every": steps, "save_every": steps, "log_every": max(1, warm // 4), "eval_batches": 2,
                "device": "auto" if cuda else "cpu", "compile": compile_ if cuda else False}
    return paths, steps, warm, compile_, training


def loss_gap(ours: dict, ref: dict) -> str:
    """The largest relative difference between two runs' logged training losses (same steps)."""
    a, b = dict(map(tuple, ours["losses"])), dict(map(tuple, ref["losses"]))
    common = sorted(set(a) & set(b))
    gap = max(abs(a[k] - b[k]) / abs(b[k]) for k in common)
    return f"max relative loss difference {gap:.2g} over {len(common)} logged steps (last {a[common[-1]]:.4f} vs " \
           f"{b[common[-1]]:.4f})"


def row_babyberta(work: Path, dry: bool, s: dict, cuda: bool) -> list[dict]:
    paths, steps, warm, compile_, training = babyberta_recipe(work, dry, s, cuda)
    penv, pnote = profile_env("babyberta", steps, warm)
    ours = worker_json(["ours", json.dumps(paths), json.dumps(s["bb_arch"]), json.dumps(training),
                        str(work / "bb-ours")], env={"BENCH_WARM": str(warm), **penv})
    print(f"    povstim (compile={compile_ if cuda else False}): {ours['steps_s']:.3g} steps/s", flush=True)
    if os.environ.get("BB_REFERENCE"):  # the same seed in another compile mode: is it the same training?
        ref_mode = compile_setting(os.environ["BB_REFERENCE"])
        ref = worker_json(["ours", json.dumps(paths), json.dumps(s["bb_arch"]),
                           json.dumps({**training, "compile": ref_mode if cuda else False}), str(work / "bb-ref")],
                          env={"BENCH_WARM": str(warm)})
        pnote += (f"; vs povstim compile={ref_mode} ({ref['steps_s']:.3g} steps/s, x{ours['steps_s'] / ref['steps_s']:.3g}):"
                  f" {loss_gap(ours, ref)}")
    peer = worker_json(["hf", json.dumps(paths), json.dumps(s["bb_arch"]), json.dumps(training), str(steps),
                        str(warm), "1" if cuda else "0", "0"])
    name = "BabyBERTa recipe (8 x 256, batch 16, ctx 128)" if not dry else "tiny BabyBERTa"
    return [{"row": f"{name}, steps/s", "povstim": ours["steps_s"], "peer": peer["steps_s"],
             "peer_name": "HF Trainer", "better": ours["steps_s"] / peer["steps_s"], "target": ">= 5",
             "note": f"compile={compile_ if cuda else False}{pnote}"}]


def workers_together(jobs: list[tuple[list[str], dict]]) -> list[dict]:
    """Several workers started at once (the results of each, in order). DRY runs them one after another
    in this process: that checks the code, not the concurrency."""
    if IN_PROCESS:
        return [worker_json(args, env) for args, env in jobs]
    procs = [subprocess.Popen(py(__file__, "--worker", *args), env={**os.environ, **POVSTIM_ENV, **env},
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for args, env in jobs]
    out = []
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=1800)
        if proc.returncode:
            raise SystemExit(f"gpu_bench worker failed:\n{stderr[-3000:]}")
        out.append(json.loads(stdout.strip().splitlines()[-1]))
    return out


def row_babyberta_seeds(work: Path, dry: bool, s: dict, cuda: bool) -> list[dict]:
    """Item 3's "train several seeds at once": k BabyBERTa seeds as k jobs sharing one GPU (what a Snakemake
    run does with gpus.slots >= k: POVSTIM_GPU_SHARE=k), total steps/s; peer: k HF Trainers at once."""
    k = int(os.environ.get("BB_SEEDS", "2" if dry else "4"))
    paths, steps, warm, compile_, training = babyberta_recipe(work, dry, s, cuda)
    ours = workers_together([(["ours", json.dumps(paths), json.dumps(s["bb_arch"]), json.dumps(training),
                                str(work / f"bb-seed{i}")],
                               {"BENCH_WARM": str(warm), "BENCH_SEED": str(i + 1), "POVSTIM_GPU_SHARE": str(k)})
                              for i in range(k)])
    peer = workers_together([(["hf", json.dumps(paths), json.dumps(s["bb_arch"]), json.dumps(training), str(steps),
                               str(warm), "1" if cuda else "0", "0"], {}) for _ in range(k)])
    total, total_peer = sum(r["steps_s"] for r in ours), sum(r["steps_s"] for r in peer)
    name = "BabyBERTa recipe" if not dry else "tiny BabyBERTa"
    return [{"row": f"{name}, {k} seeds at once on one GPU, total steps/s", "povstim": total, "peer": total_peer,
             "peer_name": f"{k} HF Trainers at once", "better": total / total_peer, "target": "",
             "note": f"each job's steady rate summed; povstim per job {min(r['steps_s'] for r in ours):.3g}-"
                     f"{max(r['steps_s'] for r in ours):.3g}"}]


def row_generator(s: dict) -> list[dict]:
    words = lexicon()
    weights = [1 / (i + 1) for i in range(len(words))]
    n = s["gen_sentences"]
    g = random.Random(1)
    t0 = time.perf_counter()
    old = [" ".join(g.choices(words, weights, k=g.randint(4, 24))) for _ in range(n)]
    t_old = time.perf_counter() - t0
    cum = list(itertools.accumulate(weights))
    g = random.Random(1)
    t0 = time.perf_counter()
    new = [" ".join(g.choices(words, cum_weights=cum, k=g.randint(4, 24))) for _ in range(n)]
    t_new = time.perf_counter() - t0
    return [{"row": f"gpu_check.sh corpus generator, {n} sentences, s (400k: x{400000 // n})", "povstim": t_new,
             "peer": t_old, "peer_name": "per-sentence weights (old)", "better": t_old / t_new,
             "target": "gpu_check.sh finishes", "note": f"same sentences: {old == new}"}]


def fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.3g}" if abs(v) < 1000 else f"{v:,.0f}"
    return str(v)


def worker(kind: str, rest: list[str]) -> None:
    if kind == "minicons":
        minicons_worker(rest[0], rest[1], rest[2], rest[3], int(rest[4]))
    elif kind == "ours":
        ours_train(json.loads(rest[0]), json.loads(rest[1]), json.loads(rest[2]), rest[3])
    elif kind == "hf":
        hf_train(json.loads(rest[0]), json.loads(rest[1]), json.loads(rest[2]), int(rest[3]), int(rest[4]),
                 rest[5] == "1", rest[6] == "1")
    else:
        raise SystemExit(f"gpu_bench: unknown worker {kind!r}")


ROW_NAMES = ("dag", "score", "gpt2", "babyberta", "bbseeds", "generator")


def main() -> int:
    global IN_PROCESS
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(sys.argv[2], sys.argv[3:])
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", default=os.environ.get("ROWS", "dag,score,gpt2,babyberta,generator"))
    ap.add_argument("--dry", action="store_true", default=os.environ.get("DRY") == "1")
    ap.add_argument("--json", help="also write the rows here")
    args = ap.parse_args()
    names = args.rows.split(",")
    unknown = [r for r in names if r not in ROW_NAMES]
    if unknown:  # before anything runs: a typo should not cost minutes of a GPU lease
        raise SystemExit(f"gpu_bench: unknown row(s) {', '.join(map(repr, unknown))}; rows: {', '.join(ROW_NAMES)}")
    import torch

    cuda = torch.cuda.is_available() and not args.dry
    IN_PROCESS = args.dry
    if args.dry:
        torch.set_num_threads(1)
    device = "cuda" if cuda else "cpu"
    s = sizes(args.dry)
    name = torch.cuda.get_device_name() if cuda else "CPU (DRY run: tiny sizes, the numbers mean nothing)"
    print(f"gpu_bench: {name}; torch {torch.__version__}; rows {args.rows}", flush=True)
    rows, failed = [], []
    t_all = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="povstim-gpu-bench-") as tmp:
        work = Path(tmp)
        for row in names:
            t0 = time.perf_counter()
            try:
                if row == "dag":
                    got = row_dag(work, args.dry)
                elif row == "score":
                    got = row_score(work, args.dry, s, device)
                elif row == "gpt2":
                    got = row_gpt2(work, args.dry, s, cuda)
                elif row == "babyberta":
                    got = row_babyberta(work, args.dry, s, cuda)
                elif row == "bbseeds":
                    got = row_babyberta_seeds(work, args.dry, s, cuda)
                else:
                    got = row_generator(s)
            except (Exception, SystemExit) as exc:  # noqa: BLE001 -- one broken row (a peer's import, say)
                # must not cost the other rows of a GPU lease: report it, go on, exit non-zero at the end
                why = str(exc).strip() or type(exc).__name__
                failed.append(row)
                print(f"  {row}: FAILED after {time.perf_counter() - t0:.0f} s: {why}", flush=True)
                got = [{"row": f"{row} (FAILED)", "povstim": None, "peer": None, "peer_name": "", "better": None,
                        "target": "", "note": why.splitlines()[-1][:300]}]
                rows += got
                continue
            rows += got
            for r in got:
                print(f"  {r['row']}: povstim {fmt(r['povstim'])} | {r['peer_name'] or 'peer'} {fmt(r['peer'])}"
                      f" | x{fmt(r['better'])} (target {r['target'] or '-'}) {r['note']}", flush=True)
            print(f"  [{row}: {time.perf_counter() - t0:.0f} s]", flush=True)
    print()
    head = f"| {'what':62} | {'povstim':>9} | {'peer':>9} | {'povstim better by':>17} | target | peer, notes"
    print(head)
    print("|" + "-" * (len(head) - 1))
    for r in rows:
        print(f"| {r['row']:62} | {fmt(r['povstim']):>9} | {fmt(r['peer']):>9} | {fmt(r['better']):>17} | "
              f"{r['target'] or '-'} | {'; '.join(x for x in (r['peer_name'], r['note']) if x)}")
    print(f"\ntotal {time.perf_counter() - t_all:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    if failed:
        print(f"gpu_bench: {len(failed)} row(s) failed: {', '.join(failed)} (their errors are above)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
