"""Scoring fast and in groups: FastScorer gives Scorer's numbers bit for bit (and so
minicons' within 1e-4); `povstim score-group` writes each model's parquet byte for byte as
`povstim score` does alone; scoring.group builds one job per condition x size or per suite."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from helpers import tiny_models as tiny
from povstim.benchmarks import posh, words
from povstim.benchmarks.suite import write_suite
from povstim.cli import main
from povstim.scoring.fast import FastScorer
from povstim.scoring.scorer import Scorer, load
from povstim.scoring.tree import TreeScorer

torch.set_num_threads(1)
REPO = Path(__file__).resolve().parents[1]

SENTS = [
    "Is the boy who is smiling happy?",
    "The girl said that Tom likes himself.",
    "Who does Mary wanna go?",
    "Hi.",
    "What did the boy who saw the girl that the dog chased like?",
    "Who does Mary wanna go?",  # a duplicate
    "Can the dog the girl saw run?",
]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    corpus = SENTS * 3 + [p.good for p in posh.generate(words.default_lexicon(), 20, seed=1)]
    return {
        "causal": tiny.build(root / "gpt2", corpus, "causal", vocab_size=400, seed=1),
        "causal2": tiny.build(root / "gpt2b", corpus, "causal", vocab_size=400, seed=3),
        "masked": tiny.build(root / "roberta", corpus, "masked", vocab_size=400, seed=2),
    }


@pytest.mark.parametrize("kind,method,bos,eos", [("causal", "pll", True, False), ("causal", "pll", False, True),
                                                 ("masked", "holistic", True, False), ("masked", "pll", True, False)])
@pytest.mark.parametrize("batch", [1, 3, 64])
def test_fast_scorer_is_scorer_bit_for_bit(models, kind, method, bos, eos, batch):
    lm, tok, k = load(models[kind])
    kw = dict(bos=bos, eos=eos, method=method, batch_size=batch)
    want = Scorer(lm, tok, k, **kw).score(SENTS)
    got = FastScorer(lm, tok, k, **kw).score(SENTS)
    assert got.logp.tobytes() == want.logp.tobytes() and (got.ntok == want.ntok).all()


@pytest.mark.parametrize("method", ["pll", "holistic"])
def test_masked_fast_scoring_decides_padding_on_the_host(models, method, monkeypatch):
    """A masked model's batches: transformers asks the device whether a padding mask has any padding (a host
    sync per forward); FastScorer knows it from the lengths (no mask, or the 4D mask transformers would build)
    and makes no host sync, with Scorer's numbers bit for bit (above)."""
    from test_train_gpu import _host_syncs

    lm, tok, k = load(models["masked"])
    masks = []
    real = FastScorer._token_logprobs
    monkeypatch.setattr(FastScorer, "_token_logprobs",
                        lambda self, ids, mask, *a: masks.append(mask) or real(self, ids, mask, *a))
    with torch.inference_mode():
        assert _host_syncs(lambda: FastScorer(lm, tok, k, method=method, batch_size=3).score(SENTS)) == []
        # Scorer passes the padding mask to transformers, which checks it on the device
        assert "all" in _host_syncs(lambda: Scorer(lm, tok, k, method=method, batch_size=3).score(SENTS))
    padded = [m for m in masks if m is not None]
    assert padded  # padded batches got the 4D mask
    if method == "pll":  # and a PLL chunk of one sentence's rows is not padded: no mask at all
        assert len(padded) < len(masks)
    assert all(m.dtype == torch.bool and m.dim() == 4 for m in padded)


@pytest.mark.parametrize("cls", [FastScorer, TreeScorer], ids=["FastScorer", "TreeScorer"])
def test_fast_scorer_equals_minicons(models, cls):
    """FastScorer, and the prefix-tree scorer `povstim score` runs for causal models (scoring/tree.py)."""
    from minicons import scorer as mc

    lm, tok, kind = load(models["causal"])
    scorer = cls(lm, tok, kind, batch_size=4)
    assert getattr(scorer, "tree", False) == (cls is TreeScorer)
    ours = scorer.score(SENTS)
    ref = mc.IncrementalLMScorer(str(models["causal"]), "cpu").sequence_score(
        SENTS, reduction=lambda x: x.sum(0).item(), bos_token=True)
    np.testing.assert_allclose(ours.logp, ref, atol=1e-4, rtol=0)


def _model_with_checkpoints(src, dst, best):
    shutil.copytree(src, dst)
    shutil.copytree(src, dst / "checkpoints" / f"step{best}")
    (dst / "train_summary.json").write_text(json.dumps({"best_step": best}))
    return dst


def test_score_group_writes_what_score_writes(models, tmp_path):
    suite = tmp_path / "suite"
    write_suite(suite, posh.generate(words.default_lexicon(), 3, seed=2), {"kind": "generated"})
    m1 = _model_with_checkpoints(models["causal"], tmp_path / "m1", 10)
    m2 = _model_with_checkpoints(models["causal2"], tmp_path / "m2", 20)
    params = json.dumps({"batch_size": 5, "checkpoints": True, "device": "cpu"})
    metas = [{"arch": "gpt2-tiny", "condition": "baby", "size": "50k", "seed": s} for s in (1, 2)]
    for m, meta, name in ((m1, metas[0], "a"), (m2, metas[1], "b")):
        assert main(["score", "--model", str(m), "--suite", str(suite), "--params", params, "--meta",
                     json.dumps(meta), "--threads", "1", "--out", str(tmp_path / f"{name}.parquet")]) == 0
    jobs = []
    for m, meta, name in ((m1, metas[0], "ga"), (m2, metas[1], "gb")):
        jobs += ["--job", str(m), json.dumps(meta), str(tmp_path / f"{name}.parquet")]
    assert main(["score-group", "--suite", str(suite), "--params", params, "--threads", "1", *jobs]) == 0
    assert (tmp_path / "ga.parquet").read_bytes() == (tmp_path / "a.parquet").read_bytes()
    assert (tmp_path / "gb.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()
    assert (tmp_path / "a.parquet").read_bytes() != (tmp_path / "b.parquet").read_bytes()


def test_score_group_errors(models, tmp_path, capsys):
    suite = tmp_path / "suite"
    write_suite(suite, posh.generate(words.default_lexicon(), 1, seed=2), {"kind": "generated"})
    assert main(["score-group", "--suite", str(suite)]) == 1
    assert "at least one --job" in capsys.readouterr().err
    job = ["--job", str(models["causal"]), "{}", str(tmp_path / "x.parquet")]
    assert main(["score-group", "--suite", str(suite), *job, *job]) == 1
    assert "same output file" in capsys.readouterr().err
    assert main(["score-group", "--suite", str(suite), "--job", str(models["causal"]), "{seed", "x.parquet"]) == 1
    assert "--job" in capsys.readouterr().err


def _dry_run_jobs(tmp_path, group):
    cfg = (REPO / "config.yaml").read_text().replace(
        "scoring: {reduction: sum, bos: true, batch_size: 64, checkpoints: true}",
        "scoring: {reduction: sum, bos: true, batch_size: 64, checkpoints: true, group: %s}" % group)
    cfg = cfg.replace("experiment: demo", f"experiment: group-{group}")
    path = tmp_path / f"{group}.yaml"
    path.write_text(cfg)
    snakemake = Path(sys.executable).with_name("snakemake")
    out = subprocess.run([str(snakemake), "-n", f"results/group-{group}/analysis/accuracy.csv",
                          "--configfile", str(path)],
                         cwd=REPO, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return [line for line in out.stdout.splitlines() if " -m povstim score" in line]


@pytest.mark.slow
@pytest.mark.heavy
def test_scoring_group_rules(tmp_path):
    """The demo's 12 one-model scoring jobs become 6 (seeds) or 1 (all) jobs writing the same files; the
    params do not mention the group (switching it reruns nothing)."""
    none, seeds, every = (_dry_run_jobs(tmp_path, g) for g in ("none", "seeds", "all"))
    assert len(none) == 12 and all(c.count("--job ") == 1 for c in none)
    assert len(seeds) == 6 and all(c.count("--job ") == 2 for c in seeds)
    assert len(every) == 1 and every[0].count("--job ") == 12
    assert '"group"' not in "".join(none + seeds + every)

    def outputs(commands, exp):
        return sorted(shlex.split(part)[2].replace(exp, "X") for c in commands for part in c.split("--job ")[1:])

    assert outputs(none, "group-none") == outputs(seeds, "group-seeds") == outputs(every, "group-all")
    assert len(set(outputs(none, "group-none"))) == 12


@pytest.mark.gpu
def test_fast_scorer_on_cuda_equals_cpu(models):
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    for kind, method in (("causal", "pll"), ("masked", "holistic"), ("masked", "pll")):
        lm, tok, k = load(models[kind])
        cpu = FastScorer(lm, tok, k, method=method, batch_size=4).score(SENTS)
        lm, tok, k = load(models[kind], "cuda")
        gpu = FastScorer(lm, tok, k, device="cuda", method=method, batch_size=4).score(SENTS)
        np.testing.assert_allclose(gpu.logp, cpu.logp, atol=1e-4, rtol=0)


def test_a_scoring_process_freezes_the_libraries_it_imported_but_no_garbage():
    """preload_and_freeze (what `povstim score`/`score-group` run before loading a model): torch and transformers
    imported, their objects out of the collector's walks, and a garbage cycle of before collected, not frozen."""
    code = ("import gc, sys, weakref\n"
            "class Node: pass\n"
            "a, b = Node(), Node()\n"
            "a.other, b.other = b, a\n"
            "gone = weakref.ref(a)\n"
            "del a, b\n"
            "gc.disable()\n"  # nothing collects the cycle but preload_and_freeze's own collection
            "from povstim.scoring.scorer import preload_and_freeze\n"
            "preload_and_freeze()\n"
            "print(gc.get_freeze_count(), 'transformers' in sys.modules, gone() is None)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO / "workflow")})
    frozen, imported, collected = proc.stdout.split()
    assert int(frozen) > 100_000, proc.stderr
    assert imported == "True" and collected == "True"


def test_score_commands_freeze_before_loading_a_model_and_baselines_do_not(models, tmp_path, monkeypatch):
    from povstim.scoring import scorer

    calls = []
    monkeypatch.setattr(scorer, "preload_and_freeze", lambda: calls.append("freeze"))
    real_load = scorer.load
    monkeypatch.setattr(scorer, "load", lambda *a, **k: (calls.append("load"), real_load(*a, **k))[1])
    suite = tmp_path / "suite"
    write_suite(suite, posh.generate(words.default_lexicon(), 1, seed=2), {"kind": "generated"})
    params = json.dumps({"checkpoints": False, "device": "cpu", "sensitivity": False})
    assert main(["score", "--model", str(models["causal"]), "--suite", str(suite), "--params", params,
                 "--out", str(tmp_path / "a.parquet")]) == 0
    assert calls == ["freeze", "load"]
    assert main(["score-group", "--suite", str(suite), "--params", params,
                 "--job", str(models["causal"]), "{}", str(tmp_path / "b.parquet")]) == 0
    assert calls == ["freeze", "load", "freeze", "load"]
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(SENTS) + "\n")
    assert main(["score", "--baseline", "unigram", "--corpus", str(corpus), "--suite", str(suite),
                 "--out", str(tmp_path / "c.parquet")]) == 0
    assert calls == ["freeze", "load", "freeze", "load"]  # an n-gram baseline loads no libraries to freeze
