"""Training: outputs load with HF Auto classes, determinism, best-by-dev, resume after SIGKILL, MLM masking."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from povstim import cli
from povstim.io import PovstimError
from povstim.tokenizer import bpe
from povstim.train import data as D
from povstim.train.params import resolve
from test_tokenizer import write_corpus

GPT2 = {"family": "gpt2", "n_layer": 2, "n_embd": 32, "n_head": 2, "n_inner": 64}
ROBERTA = {"family": "roberta", "n_layer": 2, "n_embd": 32, "n_head": 2, "n_inner": 64}
TRAINING = {
    "lr": 3e-3, "batch_size": 8, "context": 32, "warmup": 4, "max_steps": 40, "patience": 1000,
    "eval_every": 10, "save_every": 10, "log_every": 5, "weight_decay": 0.1, "dropout": 0.1,
    "device": "cpu",
}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    d = tmp_path_factory.mktemp("corpus")
    train = write_corpus(d / "train.txt", 1500, seed=1)
    dev = write_corpus(d / "dev.txt", 100, seed=2)
    tok = d / "tokenizer.json"
    bpe.save(bpe.train_file(train, {"vocab_size": 350}), tok)
    return {"train": train, "dev": dev, "tokenizer": tok}


def train_args(corpus, out, arch=GPT2, training=TRAINING, seed=1, extra=()):
    return [
        "train", "--train", str(corpus["train"]), "--dev", str(corpus["dev"]), "--tokenizer", str(corpus["tokenizer"]),
        "--arch", json.dumps(arch), "--params", json.dumps(training), "--seed", str(seed), "--out-dir", str(out),
        "--threads", "1", "--no-progress", *extra,
    ]


def train(corpus, out, **kw) -> Path:
    assert cli.main(train_args(corpus, out, **kw)) == 0
    return Path(out)


def weights(folder: Path) -> bytes:
    return (folder / "model.safetensors").read_bytes()


@pytest.fixture(scope="module")
def gpt2_run(corpus, tmp_path_factory):
    return train(corpus, tmp_path_factory.mktemp("gpt2") / "seed1")


def test_gpt2_outputs_load_with_auto_classes(gpt2_run):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    log = [json.loads(line) for line in (gpt2_run / "train_log.jsonl").read_text().splitlines()]
    assert [e["step"] for e in log] == list(range(5, 41, 5))
    assert {"step", "loss", "dev_loss", "lr", "tokens_per_s", "elapsed"} <= set(log[0])
    devs = [e["dev_loss"] for e in log if e["dev_loss"] is not None]
    assert len(devs) == 4 and devs[-1] < devs[0] < np.log(350)  # it learns, and beats a uniform guess
    steps = sorted(int(p.name[4:]) for p in (gpt2_run / "checkpoints").iterdir())
    assert steps == [10, 20, 30, 40]
    # resume state is kept only in the newest checkpoint; working copies are cleaned up
    assert [p.parent.name for p in (gpt2_run / "checkpoints").rglob("trainer_state.pt")] == ["step40"]
    assert not (gpt2_run / "best").exists() and not (gpt2_run / "train_log.partial.jsonl").exists()
    for folder in [gpt2_run] + [gpt2_run / "checkpoints" / f"step{s}" for s in steps]:
        model = AutoModelForCausalLM.from_pretrained(folder)
        tok = AutoTokenizer.from_pretrained(folder)
        assert tok.bos_token == "<s>" and tok.eos_token == "</s>"
        ids = torch.tensor([[tok.bos_token_id] + tok("The dog runs.")["input_ids"]])
        assert model(ids).logits.shape == (1, ids.shape[1], 350)


def test_final_model_is_best_by_dev_loss(gpt2_run):
    summary = json.loads((gpt2_run / "train_summary.json").read_text())
    log = [json.loads(line) for line in (gpt2_run / "train_log.jsonl").read_text().splitlines()]
    devs = {e["step"]: e["dev_loss"] for e in log if e["dev_loss"] is not None}
    best = min(devs, key=devs.get)
    assert summary["best_step"] == best and summary["best_dev_loss"] == devs[best]
    assert weights(gpt2_run) == weights(gpt2_run / "checkpoints" / f"step{best}")


@pytest.mark.slow
def test_early_stopping_keeps_best_not_last(corpus, tmp_path):
    # a huge learning rate makes dev loss worse after the first evaluation
    cfg = {**TRAINING, "lr": 3.0, "warmup": 0, "grad_clip": 0, "patience": 20, "max_steps": 200}
    out = train(corpus, tmp_path / "m", training=cfg)
    summary = json.loads((out / "train_summary.json").read_text())
    assert summary["stop_reason"] == "early_stopping"
    assert summary["steps"] == summary["best_step"] + 20 < 200
    assert weights(out) == weights(out / "checkpoints" / f"step{summary['best_step']}")
    assert weights(out) != weights(out / "checkpoints" / f"step{summary['steps']}")


def test_same_seed_same_bytes_other_seed_differs(corpus, gpt2_run, tmp_path):
    again = train(corpus, tmp_path / "again")
    assert weights(again) == weights(gpt2_run)
    assert (again / "tokenizer.json").read_bytes() == (gpt2_run / "tokenizer.json").read_bytes()
    other = train(corpus, tmp_path / "seed2", seed=2)
    assert weights(other) != weights(gpt2_run)


def test_changed_params_discard_old_checkpoints(corpus, gpt2_run, tmp_path):
    # a folder holding checkpoints of other params must retrain from scratch, not resume
    import shutil

    out = tmp_path / "m"
    shutil.copytree(gpt2_run, out)
    other = {**TRAINING, "lr": 1e-3}
    # leave a resumable state behind, as a killed run would
    shutil.copytree(gpt2_run / "checkpoints" / "step40", out / "checkpoints" / "step50")
    train(corpus, out, training=other)
    fresh = train(corpus, tmp_path / "fresh", training=other)
    assert weights(out) == weights(fresh) != weights(gpt2_run)
    assert not (out / "checkpoints" / "step50").exists()


@pytest.mark.slow
def test_sigkill_then_rerun_equals_uninterrupted(corpus, gpt2_run, tmp_path):
    out = tmp_path / "killed"
    cfg = {**TRAINING, "save_every": 10}
    env = {**os.environ, "PYTHONPATH": str(Path(cli.__file__).parents[1])}
    cmd = [sys.executable, "-m", "povstim", *train_args(corpus, out, training=cfg)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 120
    state = out / "checkpoints" / "step20" / "trainer_state.pt"
    # kill as soon as the second checkpoint's state exists (resuming from step 20 of 40)
    while not state.exists() and proc.poll() is None and time.time() < deadline:
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read().decode()[-2000:]
    assert not (out / "model.safetensors").exists(), "the run finished before it was killed"
    rerun = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert "resumed from" in rerun.stderr
    assert weights(out) == weights(gpt2_run)
    for s in (10, 20, 30, 40):
        assert weights(out / "checkpoints" / f"step{s}") == weights(gpt2_run / "checkpoints" / f"step{s}")
    log = [json.loads(line)["step"] for line in (out / "train_log.jsonl").read_text().splitlines()]
    assert log == list(range(5, 41, 5))


def test_babyberta_mlm_trains_and_loads(corpus, tmp_path):
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    # context 14: the corpus's longest sentences (up to 17 tokens with <s>, </s>) do not fit
    arch = {**ROBERTA, "training": {"repeats": 3, "context": 14}}
    out = train(corpus, tmp_path / "bb", arch=arch)
    log = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    devs = [e["dev_loss"] for e in log if e["dev_loss"] is not None]
    assert devs[-1] < devs[0]
    for folder in (out, out / "checkpoints" / "step20"):
        model = AutoModelForMaskedLM.from_pretrained(folder)
        tok = AutoTokenizer.from_pretrained(folder)
        enc = tok("The dog <mask>.", return_tensors="pt")
        assert enc["input_ids"][0, 0] == tok.bos_token_id and enc["input_ids"][0, -1] == tok.eos_token_id
        assert model(**enc).logits.shape[-1] == 350
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["model_type"] == "roberta" and cfg["max_position_embeddings"] == 14 + 2
    # sentences longer than the context (with <s>, </s>) are left out and counted (BabyBERTa App. A)
    tok = bpe.load(corpus["tokenizer"])
    too_long = {name: sum(len(tok.encode(line, add_special_tokens=False).ids) + 2 > 14
                          for line in Path(corpus[name]).read_text().splitlines()) for name in ("train", "dev")}
    assert too_long["train"] > 0
    summary = json.loads((out / "train_summary.json").read_text())
    assert summary["excluded_long_sentences"] == {**too_long, "context": 14}


def test_masking_follows_babyberta():
    rng = np.random.default_rng(0)
    ids = rng.integers(5, 300, size=(64, 40))
    ids[:, 0], ids[:, -1] = 0, 2
    att = np.ones_like(ids)
    att[:8, 30:] = 0
    ids[:8, 30:] = 1
    special = np.array([0, 1, 2, 3, 4])
    inputs, labels = D.mask_tokens(ids, att, np.random.default_rng(1), mask_id=4, special=special, vocab_size=300,
                                   mask_prob=0.15, leave_unmasked_prob=0.0, random_token_prob=0.1)
    chosen = labels != -100
    assert 0.12 < chosen[att == 1].mean() < 0.18
    assert not chosen[:, 0].any() and not chosen[:, -1].any() and not chosen[att == 0].any()
    assert (labels[chosen] == ids[chosen]).all() and (inputs[~chosen] == ids[~chosen]).all()
    # unmask prob 0: a target is never shown as itself except by a random draw of the same token
    replaced = inputs[chosen]
    assert 0.85 < (replaced == 4).mean() < 0.95
    assert (replaced[replaced != 4] >= 5).all()
    assert chosen.any(axis=1).all()


def _reference_mask(ids, att, rng, *, mask_id, special, vocab_size, mask_prob, leave_unmasked_prob,
                    random_token_prob):
    """The masking rule written the plain way (np.isin / np.setdiff1d, draws in the documented order):
    the fast mask_tokens must give the same arrays from the same generator."""
    candidate = (att == 1) & ~np.isin(ids, special)
    chosen = (rng.random(ids.shape) < mask_prob) & candidate
    for row in range(len(ids)):
        if not chosen[row].any() and candidate[row].any():
            cols = [c for c in range(ids.shape[1]) if candidate[row, c]]
            chosen[row, cols[rng.integers(len(cols))]] = True
    r = rng.random(ids.shape)
    inputs, labels = ids.copy(), np.full_like(ids, -100)
    ordinary = np.setdiff1d(np.arange(vocab_size), special)
    rand_positions = []
    for row, col in zip(*np.nonzero(chosen)):
        labels[row, col] = ids[row, col]
        if r[row, col] < leave_unmasked_prob:
            continue
        if r[row, col] < leave_unmasked_prob + random_token_prob:
            rand_positions.append((row, col))
        else:
            inputs[row, col] = mask_id
    if rand_positions:
        draws = rng.integers(len(ordinary), size=len(rand_positions))
        for (row, col), d in zip(rand_positions, draws):
            inputs[row, col] = ordinary[d]
    return inputs, labels


@pytest.mark.parametrize("leave,rand", [(0.0, 0.1), (0.1, 0.1), (0.0, 0.0), (0.3, 0.5)])
def test_fast_masking_equals_the_plain_rule(leave, rand):
    """mask_tokens caches its vocabulary tables (np.setdiff1d per step cost more than the rest
    of a BabyBERTa batch); the masks must be exactly the plain rule's, so seeds and resume keep their bytes."""
    special = np.array([0, 1, 2, 3, 4])
    for trial in range(6):
        g = np.random.default_rng(trial)
        ids = g.integers(5, 300, size=(16, int(g.integers(3, 40))))
        ids[:, 0], ids[:, -1] = 0, 2
        att = np.ones_like(ids)
        cut = int(g.integers(2, ids.shape[1] + 1))
        att[:5, cut:] = 0
        ids[:5, cut:] = 1
        kw = dict(mask_id=4, special=special, vocab_size=300, mask_prob=0.15, leave_unmasked_prob=leave,
                  random_token_prob=rand)
        got = D.mask_tokens(ids, att, np.random.default_rng([trial, 1]), **kw)
        want = _reference_mask(ids, att, np.random.default_rng([trial, 1]), **kw)
        assert (got[0] == want[0]).all() and (got[1] == want[1]).all()
    with pytest.raises(PovstimError, match="outside the vocabulary of 300"):
        D.mask_tokens(np.array([[0, 300, 2]]), np.ones((1, 3), dtype=np.int64), np.random.default_rng(0), **kw)


def test_pad_to_multiple_widens_with_padding_only():
    inputs = np.array([[0, 7, 8, 2], [0, 9, 2, 1]])
    labels = np.array([[-100, 7, -100, -100], [-100, -100, 2, -100]])
    att = np.array([[1, 1, 1, 1], [1, 1, 1, 0]])
    i, lab, a = D.pad_to_multiple(inputs, labels, att, multiple=3, cap=128, pad=1)
    assert i.tolist() == [[0, 7, 8, 2, 1, 1], [0, 9, 2, 1, 1, 1]]
    assert lab.tolist() == [[-100, 7, -100, -100, -100, -100], [-100, -100, 2, -100, -100, -100]]
    assert a.tolist() == [[1, 1, 1, 1, 0, 0], [1, 1, 1, 0, 0, 0]]
    assert i.dtype == inputs.dtype and a.dtype == att.dtype
    # capped at the context; already a multiple: the same arrays back
    assert D.pad_to_multiple(inputs, labels, att, multiple=32, cap=5, pad=1)[0].shape == (2, 5)
    assert D.pad_to_multiple(inputs, labels, att, multiple=2, cap=128, pad=1)[0] is inputs


def test_gpt2_activation_is_gpt2s_gelu():
    """GPT-2's gelu_new, written out in float64, is what the built model's MLP computes (one fused kernel)."""
    import math

    import torch

    from povstim.train.models import build_config, build_model
    from povstim.train.params import resolve

    a, t = resolve({"family": "gpt2", "n_layer": 1, "n_embd": 16, "n_head": 2, "n_inner": 32}, {"context": 8})
    model = build_model(a, build_config(a, t, 50, {"bos": 0, "eos": 2, "pad": 1}))
    assert model.config.activation_function == "gelu_pytorch_tanh"
    x = np.linspace(-8, 8, 2001)
    want = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    got = model.transformer.h[0].mlp.act(torch.tensor(x, dtype=torch.float32)).double().numpy()
    assert np.abs(got - want).max() < 1e-6


def test_schedule_is_a_function_of_seed_and_step():
    s = D.Schedule(n_items=10, batch_size=4, seed=3, ordered=False)
    assert s.batches_per_epoch == 3
    epoch0 = np.concatenate([s.batch(i) for i in range(3)])
    assert sorted(epoch0) == list(range(10))
    epoch1 = np.concatenate([s.batch(i) for i in range(3, 6)])
    assert sorted(epoch1) == list(range(10)) and list(epoch1) != list(epoch0)
    fresh = D.Schedule(n_items=10, batch_size=4, seed=3, ordered=False)
    assert list(fresh.batch(4)) == list(s.batch(4))
    ordered = D.Schedule(n_items=10, batch_size=4, seed=3, ordered=True)
    assert list(ordered.batch(1)) == [4, 5, 6, 7] and list(ordered.batch(5)) == [8, 9]


def test_packing_puts_eos_between_sentences(corpus):
    tok = bpe.load(corpus["tokenizer"])
    enc = D.encode(tok, ["The dog runs.", "Tom sleeps."], bos=0, eos=2, chunk=1)
    first = list(enc.sentence(0))
    assert first[0] == 0 and first[-1] == 2 and first[1:-1] == tok.encode("The dog runs.").ids
    assert list(enc.tokens) == first + list(enc.sentence(1))
    data = D.Dataset.build(enc, context=4, packed=True, pad=1, repeats=1, source="x")
    assert data.blocks.shape == (len(enc.tokens) // 4, 4)
    assert list(data.blocks.reshape(-1)) == list(enc.tokens[: data.blocks.size])
    unpacked = D.Dataset.build(enc, context=64, packed=False, pad=1, repeats=2, source="x")
    ids, att = unpacked.collate(np.array([0, 1, 2]))
    assert unpacked.n_items == 4 and (ids[0] == ids[1]).all()  # the two copies of sentence 0
    assert att[2].sum() == len(enc.sentence(1)) and (ids[2][att[2] == 0] == 1).all()
    # BabyBERTa App. A: a sentence longer than the context is left out and counted, never truncated
    lengths = [len(enc.sentence(i)) for i in range(2)]
    keep = int(np.argmin(lengths))
    assert lengths[keep] < lengths[1 - keep]
    short = D.Dataset.build(enc, context=lengths[keep], packed=False, pad=1, repeats=1, source="x")
    assert short.excluded == 1 and short.n_base == 1
    ids, att = short.collate(np.array([0]))
    assert list(ids[0]) == list(enc.sentence(keep))  # the whole shorter sentence, not a cut longer one
    assert D.Dataset.build(enc, context=max(lengths), packed=False, pad=1, repeats=1, source="x").excluded == 0
    with pytest.raises(PovstimError, match="all 2 sentences are longer than the context of 3"):
        D.Dataset.build(enc, context=3, packed=False, pad=1, repeats=1, source="x")


def test_bad_arch_and_params_name_the_key(corpus, tmp_path, capsys):
    with pytest.raises(PovstimError, match="family"):
        resolve({"family": "mamba"}, {})
    with pytest.raises(PovstimError, match="n_layerz"):
        resolve({"family": "gpt2", "n_layerz": 2}, {})
    with pytest.raises(PovstimError, match="divisible"):
        resolve({"family": "gpt2", "n_embd": 30, "n_head": 4}, {})
    with pytest.raises(PovstimError, match="batchsize"):
        resolve(GPT2, {"batchsize": 3})
    assert resolve(ROBERTA, {})[1].packing is False
    assert resolve(GPT2, {})[1].lr == 1e-4  # POSH Table 6
    rc = cli.main(train_args(corpus, tmp_path / "x", arch={"family": "mamba"}))
    assert rc == 1 and "arch.family" in capsys.readouterr().err
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    rc = cli.main(train_args({**corpus, "dev": empty}, tmp_path / "y"))
    assert rc == 1 and "empty.txt" in capsys.readouterr().err


def test_forced_rerun_after_outputs_deleted_trains_from_scratch(corpus, gpt2_run, tmp_path, caplog):
    # `snakemake --forcerun train` deletes a finished job's declared outputs and reruns it: forcing a stage
    # must redo it, not resume the finished checkpoint and stop at once. A crash never leaves a
    # finished checkpoint without outputs, so exact resume after a crash is unaffected
    # (test_sigkill_then_rerun_equals_uninterrupted).
    import logging
    import shutil

    out = tmp_path / "m"
    shutil.copytree(gpt2_run, out)
    for name in ("model.safetensors", "config.json", "train_log.jsonl"):
        (out / name).unlink()
    with caplog.at_level(logging.INFO, logger="povstim.train"):
        train(corpus, out)
    assert "training from scratch" in caplog.text and "resumed from" not in caplog.text
    summary = json.loads((out / "train_summary.json").read_text())
    assert summary["steps"] == TRAINING["max_steps"]
    # deterministic: retraining gives the same weights and losses (only timing fields differ)
    assert weights(out) == weights(gpt2_run)

    def losses(folder):
        return [(e["step"], e["loss"], e["dev_loss"]) for e in map(json.loads, (folder / "train_log.jsonl").open())]

    assert losses(out) == losses(gpt2_run)


def test_rerun_into_a_finished_folder_says_already_trained_and_changes_nothing(corpus, gpt2_run, tmp_path,
                                                                               capsys):
    """It used to resume the finished checkpoint, warn about the pruned best weights and retrain."""
    import shutil

    out = tmp_path / "m"
    shutil.copytree(gpt2_run, out)
    before = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in sorted(out.rglob("*")) if p.is_file()}
    capsys.readouterr()
    train(corpus, out)
    err = capsys.readouterr().err
    assert f"povstim train: {out} is already trained with these inputs" in err and "nothing changed" in err
    after = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in sorted(out.rglob("*")) if p.is_file()}
    assert after == before  # not a file written, not even rewritten with the same bytes
    # --force trains it again from scratch: the same weights (CPU, same seed), every file written anew
    train(corpus, out, extra=("--force",))
    assert "already trained" not in capsys.readouterr().err
    assert weights(out) == weights(gpt2_run)
    assert (out / "model.safetensors").stat().st_mtime_ns > before[out / "model.safetensors"][0]


def test_bf16_needs_cuda(corpus, tmp_path, capsys):
    rc = cli.main(train_args(corpus, tmp_path / "m", training={**TRAINING, "precision": "bf16"}))
    assert rc == 1 and "bf16" in capsys.readouterr().err


@pytest.mark.gpu
def test_cuda_bf16_compiled_training(corpus, tmp_path):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    from transformers import AutoModelForCausalLM

    cfg = {**TRAINING, "device": "cuda", "precision": "bf16", "compile": True}
    out = train(corpus, tmp_path / "gpu", training=cfg)
    summary = json.loads((out / "train_summary.json").read_text())
    assert summary["device"].startswith("cuda") and np.isfinite(summary["best_dev_loss"])
    assert summary["best_dev_loss"] < np.log(350)
    AutoModelForCausalLM.from_pretrained(out)


def test_the_log_says_where_the_jobs_time_went(corpus, tmp_path, caplog):
    # one line per job: start, wait (for a GPU slot), device, data, model, steps, evaluation, checkpoints, final --
    # the parts of the trainer's wall time, so a slow job (say, a GPU job's CUDA start-up) shows in its log
    import logging
    import re
    import time

    t0 = time.perf_counter()
    with caplog.at_level(logging.INFO, logger="povstim.train"):
        train(corpus, tmp_path / "m")
    wall = time.perf_counter() - t0
    line = next(r.getMessage() for r in caplog.records if r.getMessage().startswith("time: "))
    parts = dict((k, float(v)) for k, v in re.findall(r"(\w+) ([0-9.]+) s", line))
    assert list(parts) == ["start", "wait", "device", "data", "model", "steps", "evaluation", "checkpoints", "final",
                           "total"]
    assert parts["wait"] == 0  # the CPU: no GPU slot to wait for (tests/test_devices.py times a real wait)
    total = parts.pop("total")
    assert abs(sum(parts.values()) - total) < 0.1 + 1e-9 * total
    # 4 evaluations and 4 checkpoints (eval_every = save_every = 10 of 40 steps) took time; the parts cover
    # the trainer's wall time (the CLI's argument parsing and the summary print are outside)
    assert parts["evaluation"] > 0 and parts["checkpoints"] > 0 and parts["steps"] > 0
    assert 0.8 * wall <= total <= wall + 0.05
