"""The training loop's GPU speed paths, checked on the CPU.

Gradient accumulation (training.micro_batch) must give the step of one big batch;
resume and seed semantics must hold with it; padding one-sentence batches to a
multiple (static shapes for CUDA graphs) must not change the loss; the CUDA-only
batch path (packed data resident on the device, one copy per batch) must build
the very tensors of the CPU path; and forward + loss must trace into torch.compile
graphs without graph breaks (torch's ``aot_eager`` backend: the same Dynamo and
AOTAutograd tracing the GPU's ``reduce-overhead`` mode runs, without code generation).
Gold answers come from the plain (one batch, unpadded, eager) loop.
"""

from __future__ import annotations

import functools
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from povstim.io import PovstimError
from povstim.tokenizer import bpe
from povstim.train import data as D
from povstim.train import checkpoints, gpu
from povstim.train.loop import Trainer

from helpers.interrupt import stop_at
from povstim.train.optim import micro_batches
from povstim.train.params import resolve
from test_tokenizer import write_corpus

GPT2 = {"family": "gpt2", "n_layer": 2, "n_embd": 32, "n_head": 2, "n_inner": 64}
ROBERTA = {"family": "roberta", "n_layer": 2, "n_embd": 32, "n_head": 2, "n_inner": 64}
BASE = {
    "lr": 3e-3, "batch_size": 8, "context": 32, "warmup": 2, "max_steps": 12, "patience": 1000,
    "eval_every": 6, "save_every": 6, "log_every": 1, "weight_decay": 0.1, "dropout": 0.0, "device": "cpu",
}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    d = tmp_path_factory.mktemp("corpus")
    train = write_corpus(d / "train.txt", 600, seed=1)
    dev = write_corpus(d / "dev.txt", 60, seed=2)
    tok = d / "tokenizer.json"
    bpe.save(bpe.train_file(train, {"vocab_size": 300}), tok)
    return {"train": str(train), "dev": str(dev), "tokenizer": str(tok)}


def trainer(corpus, out, arch=GPT2, seed=1, **training) -> Trainer:
    a, t = resolve(arch, {**BASE, **training})
    return Trainer(arch=a, training=t, seed=seed, out_dir=str(out), threads=1, progress=False, **corpus)


def run(corpus, out, **kw):
    tr = trainer(corpus, out, **kw)
    tr.run()
    log = [json.loads(x) for x in (Path(out) / "train_log.jsonl").read_text().splitlines()]
    return tr, log


def logged(folder: Path) -> list[dict]:
    """train_log.jsonl without its wall-clock fields."""
    rows = [json.loads(x) for x in (folder / "train_log.jsonl").read_text().splitlines()]
    return [{k: v for k, v in r.items() if k not in ("elapsed", "tokens_per_s")} for r in rows]


def kill_at(tr, step: int) -> None:
    """Run ``tr`` and stop it as a kill would when it starts ``step`` (after its last checkpoint, before the next):
    the newest checkpoint keeps the trainer state to resume from, and no final model is written."""
    stop_at(tr, step)
    assert not (tr.store.out / "model.safetensors").exists()
    assert any(tr.store.ckpt_dir.glob("step*/trainer_state.pt"))


def state(tr) -> dict:
    return {k: v.detach().clone() for k, v in tr.learner.raw_model.state_dict().items()}


@pytest.mark.parametrize("arch", [GPT2, ROBERTA], ids=["gpt2-packed", "roberta-mlm"])
def test_micro_batches_give_the_big_batch_step(corpus, tmp_path, arch):
    """batch 8 as 3 micro-batches (3+3+2 rows) = batch 8 at once: same losses and weights (fp tolerance)."""
    whole, log_whole = run(corpus, tmp_path / "whole", arch=arch)
    micro, log_micro = run(corpus, tmp_path / "micro", arch=arch, micro_batch=3)
    assert micro.learner.micro == 3 and micro_batches(micro.learner.micro, 8, np.ones(8))[-1][0] == slice(6, 8)
    assert [e["step"] for e in log_micro] == [e["step"] for e in log_whole]
    np.testing.assert_allclose([e["loss"] for e in log_micro], [e["loss"] for e in log_whole], rtol=1e-5)
    np.testing.assert_allclose([e["dev_loss"] for e in log_micro if e["dev_loss"] is not None],
                               [e["dev_loss"] for e in log_whole if e["dev_loss"] is not None], rtol=1e-5)
    a, b = state(whole), state(micro)
    for name in a:
        np.testing.assert_allclose(b[name].numpy(), a[name].numpy(), atol=2e-5, rtol=1e-4, err_msg=name)
    # and micro-batching did change how the step was computed (not silently ignored)
    assert (micro_batches(micro.learner.micro, 8, np.arange(1, 9))
            != micro_batches(whole.learner.micro, 8, np.arange(1, 9)))


def test_micro_batch_weights_are_token_shares():
    n_pred = np.array([3, 1, 0, 0, 4, 4])
    parts = micro_batches(2, 6, n_pred)
    # rows 2-3 predict nothing: skipped (their mean loss would be 0/0); the rest weigh by their tokens
    assert parts == [(slice(0, 2), 4 / 12), (slice(4, 6), 8 / 12)]
    assert micro_batches(6, 6, n_pred) == [(slice(None), 1.0)]


def test_micro_batch_resume_and_seeds(corpus, tmp_path):
    """With micro-batches and dropout: same seed -> same bytes; a run resumed from its step-6 checkpoint
    equals the uninterrupted run; another seed differs."""
    cfg = {"micro_batch": 3, "dropout": 0.1}
    run(corpus, tmp_path / "a", **cfg)
    run(corpus, tmp_path / "b", **cfg)
    full = (tmp_path / "a" / "model.safetensors").read_bytes()
    assert (tmp_path / "b" / "model.safetensors").read_bytes() == full
    # killed between the step-6 checkpoint and the next: the rerun resumes from step 6
    c = tmp_path / "c"
    kill_at(trainer(corpus, c, **cfg), 8)
    tr = trainer(corpus, c, **cfg)
    assert tr.resume() and tr.state.step == 6
    tr = trainer(corpus, c, **cfg)
    tr.run()
    assert tr.store.key == trainer(corpus, tmp_path / "x", **cfg).store.key
    assert (c / "model.safetensors").read_bytes() == full
    assert logged(c) == logged(tmp_path / "a")
    run(corpus, tmp_path / "s2", seed=2, **cfg)
    assert (tmp_path / "s2" / "model.safetensors").read_bytes() != full


def test_padding_to_a_multiple_changes_no_loss(corpus, tmp_path):
    """BabyBERTa-style batches padded to a multiple of 16 tokens: the same masks (drawn before padding),
    the padding never attended to nor predicted, the same losses."""
    plain, log_plain = run(corpus, tmp_path / "plain", arch=ROBERTA, max_steps=6)
    padded, log_pad = run(corpus, tmp_path / "pad", arch=ROBERTA, max_steps=6, pad_to_multiple_of=16)
    assert plain.learner.pad_multiple == 1 and padded.learner.pad_multiple == 16
    widened = 0
    for step in range(6):
        idx = padded.schedule.batch(step)
        inputs, labels, att, ntok, _ = padded.learner._batch(padded.learner.train_data, idx, np.random.default_rng([1, 1, step]))
        base = plain.learner._batch(plain.learner.train_data, idx, np.random.default_rng([1, 1, step]))
        w = base[0].shape[1]
        assert inputs.shape[1] in (16, 32) and inputs.shape[1] >= w
        widened += inputs.shape[1] > w
        # the same masked inputs and labels, then only padding: never attended to, never predicted
        assert (inputs[:, :w] == base[0]).all() and (labels[:, :w] == base[1]).all() and ntok == base[3]
        assert (inputs[:, w:] == padded.corpora.ids["pad"]).all() and (labels[:, w:] == -100).all()
        assert (att[:, w:] == 0).all()
    assert widened
    np.testing.assert_allclose([e["loss"] for e in log_pad], [e["loss"] for e in log_plain], rtol=1e-5)


def test_batching_settings_and_tpt():
    def t(**kw):
        return resolve(GPT2, {"batch_size": 8, **kw})[1]

    assert gpu.batching(t(), cuda=False, mode=None, packed=True, tpt=False) == (None, 1)
    assert gpu.batching(t(micro_batch=3), cuda=False, mode=None, packed=True, tpt=False) == (3, 1)
    assert gpu.batching(t(micro_batch=8), cuda=True, mode=None, packed=True, tpt=False) == (None, 1)  # no split
    assert gpu.batching(t(), cuda=True, mode="reduce-overhead", packed=False, tpt=False) == (None, 32)
    assert gpu.batching(t(), cuda=True, mode="reduce-overhead", packed=False, tpt=True) == (None, 1)
    with pytest.raises(PovstimError, match="micro_batch cannot be used with bias.tpt"):
        gpu.batching(t(micro_batch=2), cuda=False, mode=None, packed=False, tpt=True)
    with pytest.raises(PovstimError, match="pad_to_multiple_of cannot be used with bias.tpt"):
        gpu.batching(t(pad_to_multiple_of=8), cuda=False, mode=None, packed=False, tpt=True)


def test_compile_settings():
    assert gpu.compile_mode(False) is None and gpu.compile_mode(True) == "default"
    assert gpu.compile_mode("reduce-overhead") == "reduce-overhead"
    assert gpu.uses_graphs("reduce-overhead") and gpu.uses_graphs("max-autotune")
    assert not gpu.uses_graphs("default") and not gpu.uses_graphs("max-autotune-no-cudagraphs")
    # graph modes on CUDA pad sentence batches to a few widths; explicit settings win; CPU: exact widths
    assert gpu.pad_multiple(None, True, "reduce-overhead", packed=False) == 32
    assert gpu.pad_multiple(None, True, "reduce-overhead", packed=True) == 1
    assert gpu.pad_multiple(8, False, None, packed=False) == 8
    assert gpu.pad_multiple(None, False, None, packed=False) == 1
    _, t = resolve(GPT2, {"compile": "reduce-overhead", "micro_batch": 4, "pad_to_multiple_of": 16})
    assert (t.compile, t.micro_batch, t.pad_to_multiple_of) == ("reduce-overhead", 4, 16)
    with pytest.raises(PovstimError, match="training.compile"):
        resolve(GPT2, {"compile": "fast"})


@pytest.mark.parametrize("arch", [GPT2, ROBERTA], ids=["gpt2-packed", "roberta-mlm"])
def test_cuda_batch_path_builds_the_cpu_tensors(corpus, tmp_path, arch):
    """The GPU batch path (packed blocks gathered on the device; other batches in one pinned copy),
    run here with device 'cpu' and no pinning: the same inputs, labels, mask and token counts."""
    tr = trainer(corpus, tmp_path / "m", arch=arch)
    assert tr.learner.to_device is None and tr.learner.device_blocks is None  # the CPU path

    def batches(data, rows):
        return tr.learner._batch(data, rows, None if tr.learner.causal else np.random.default_rng([1, 1, 3]))

    cases = [(tr.learner.train_data, tr.schedule.batch(3)), (tr.learner.dev_data, np.arange(3))]
    want = [batches(data, rows) for data, rows in cases]
    tr.learner.to_device = functools.partial(gpu.to_device, device="cpu", pin=False)
    if tr.learner.train_data.packed:
        tr.learner.device_blocks = gpu.DeviceBlocks(tr.learner.train_data.blocks, "cpu")
    for (data, rows), ref in zip(cases, want):
        got = batches(data, rows)
        assert got[3] == ref[3]
        np.testing.assert_array_equal(got[4], ref[4])
        for a, b in zip(got[:3], ref[:3]):
            assert (a is None) == (b is None)
            if a is not None:
                assert a.dtype == b.dtype and a.shape == b.shape and (a == b).all()


@pytest.mark.slow
# the masked family's compiled trace is heavy (~46 s of CPU compile for a CUDA-only path): the causal one runs by
# default and shares the compile wiring (training.compile, Trainer.compile_backend); gpu_bench.sh compiles both
@pytest.mark.parametrize("arch", [GPT2, pytest.param(ROBERTA, marks=pytest.mark.heavy)],
                         ids=["gpt2-packed", "roberta-mlm"])
def test_compiled_graph_mode_traces_whole_and_matches_eager(corpus, tmp_path, arch):
    """training.compile: reduce-overhead, traced on the CPU with aot_eager: no graph break in forward +
    loss (a break would split the CUDA graphs), and the losses of the eager loop."""
    from torch._dynamo.utils import counters

    eager, log_eager = run(corpus, tmp_path / "eager", arch=arch, max_steps=4, eval_every=4, save_every=4)
    counters.clear()
    a, t = resolve(arch, {**BASE, "max_steps": 4, "eval_every": 4, "save_every": 4, "compile": "reduce-overhead",
                          "pad_to_multiple_of": 32})
    tr = Trainer(arch=a, training=t, seed=1, out_dir=str(tmp_path / "compiled"), threads=1, progress=False,
                 compile_backend="aot_eager", **corpus)
    tr.run()
    log = [json.loads(x) for x in (tmp_path / "compiled" / "train_log.jsonl").read_text().splitlines()]
    assert tr.compile_mode == "reduce-overhead"
    assert not dict(counters["graph_break"]), dict(counters["graph_break"])
    assert counters["stats"]["unique_graphs"] >= 1  # it really compiled
    np.testing.assert_allclose([e["loss"] for e in log], [e["loss"] for e in log_eager], rtol=1e-5)


def test_device_blocks_only_for_packed_data_under_the_limit(corpus, tmp_path):
    tr = trainer(corpus, tmp_path / "m")
    assert gpu.DeviceBlocks.maybe(tr.learner.train_data, "cpu") is not None
    assert gpu.DeviceBlocks.maybe(tr.learner.train_data, "cpu", limit=16) is None
    enc = D.Encoded(tokens=np.arange(5, 50, dtype=np.int32), lengths=np.array([20, 25]))
    assert gpu.DeviceBlocks.maybe(D.Dataset.build(enc, 32, False, 1, 1, "x"), "cpu") is None
    # CPU training never builds them
    assert tr.learner.device_blocks is None


def test_unused_hooks_add_no_forward_pass(corpus, tmp_path):
    """Without micro_batch the loop makes exactly one forward per step (and per dev batch), as before."""
    tr = trainer(corpus, tmp_path / "m")
    calls = []
    orig = tr.learner.forward_loss
    tr.learner.forward_loss = functools.partial(lambda f, *a, **k: calls.append(1) or f(*a, **k), orig)
    tr.run()
    # one forward per step plus one per dev batch per evaluation
    n_dev = -(-tr.learner.dev_data.n_items // tr.p.batch_size)
    assert len(calls) == tr.p.max_steps + 2 * n_dev


def _cuda():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")


@pytest.mark.gpu
@pytest.mark.parametrize("arch,mode", [(GPT2, "reduce-overhead"), (ROBERTA, "reduce-overhead"), (GPT2, True)],
                         ids=["gpt2-graphs", "roberta-graphs", "gpt2-compiled"])
def test_cuda_compiled_training_matches_eager_cuda(corpus, tmp_path, arch, mode):
    """On a GPU: CUDA graphs / compile with micro-batches train to the eager GPU run's losses (bf16 noise)."""
    _cuda()
    cfg = {"device": "cuda", "max_steps": 8, "eval_every": 4, "save_every": 8}
    eager, log_eager = run(corpus, tmp_path / "eager", arch=arch, **cfg)
    fast, log_fast = run(corpus, tmp_path / "fast", arch=arch, compile=mode, micro_batch=4, **cfg)
    assert fast.compile_mode == ("default" if mode is True else mode) and fast.learner.micro == 4
    if eager.learner.train_data.packed:
        assert fast.learner.device_blocks is not None
    np.testing.assert_allclose([e["loss"] for e in log_fast], [e["loss"] for e in log_eager], rtol=2e-2)


@pytest.mark.gpu
@pytest.mark.parametrize("arch", [GPT2, ROBERTA], ids=["gpt2", "roberta"])
def test_cuda_step_graphs_match_eager_cuda(corpus, tmp_path, arch):
    """On a GPU: whole training steps recorded as CUDA graphs (compile: step-graphs) train to the eager
    GPU run's losses (bf16 noise), and most steps are replays."""
    _cuda()
    cfg = {"device": "cuda", "max_steps": 12, "eval_every": 6, "save_every": 12, "pad_to_multiple_of": 32}
    eager, log_eager = run(corpus, tmp_path / "eager", arch=arch, **cfg)
    fast, log_fast = run(corpus, tmp_path / "fast", arch=arch, compile="step-graphs", **cfg)
    assert fast.opt.graphs is not None and fast.opt.graphs.replays >= 6
    np.testing.assert_allclose([e["loss"] for e in log_fast], [e["loss"] for e in log_eager], rtol=2e-2)


SYNCING = {"all", "any", "item", "__bool__", "nonzero", "tolist", "__contains__"}


def _host_syncs(fn) -> list[str]:
    """Tensor calls in ``fn()`` that copy a value to the host (on a GPU: wait for the queued work)."""
    from torch.overrides import TorchFunctionMode

    seen = []

    class Spy(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            if getattr(func, "__name__", "") in SYNCING:
                seen.append(func.__name__)
            return func(*args, **(kwargs or {}))

    with Spy():
        fn()
    return seen


def _sdpa_calls(fn, *args) -> list[dict]:
    """The scaled_dot_product_attention calls of ``fn`` as torch.compile traces it (the Dynamo graph, before any
    backend), with whether each got a mask and is_causal."""
    import torch

    calls = []

    def backend(gm, inputs):
        for n in gm.graph.nodes:
            if "scaled_dot_product_attention" in str(n.target):
                calls.append({"mask": n.kwargs.get("attn_mask") is not None, "is_causal": n.kwargs.get("is_causal")})
        return gm.forward

    torch._dynamo.reset()
    torch.compile(fn, backend=backend)(*args)
    torch._dynamo.reset()
    return calls


@pytest.mark.parametrize("packing", [True, False], ids=["packed", "sentences"])
def test_causal_batches_attend_without_a_mask(corpus, tmp_path, monkeypatch, packing):
    """Packed GPT-2 blocks have no padding and right-padded sentences have padding only after their last real
    token (never a label), so the loop lets SDPA mask causally by itself (no mask tensor): the same losses and
    weights bit for bit on the CPU (dropout on), no host sync in a forward, and under torch.compile no
    materialised [B, 1, T, T] mask (which keeps SDPA off its flash kernel on a GPU)."""
    import torch

    from povstim.train import learner as loop

    tr, log = run(corpus, tmp_path / "new", dropout=0.1, packing=packing)
    assert tr.learner.attn_restore == "sdpa"
    assert tr.learner.raw_model.config._attn_implementation == "sdpa"  # restored after training
    assert "povstim" not in (tmp_path / "new" / "config.json").read_text()  # not saved with the model
    monkeypatch.setattr(loop, "use_unmasked_causal", lambda model: None)  # the loop as it was
    old, log_old = run(corpus, tmp_path / "old", dropout=0.1, packing=packing)
    assert old.learner.attn_restore is None
    assert [e["loss"] for e in log] == [e["loss"] for e in log_old]
    assert all(torch.equal(a, b) for a, b in zip(state(tr).values(), state(old).values()))

    ids, labels, att, _, _ = tr.learner._batch(tr.learner.train_data, tr.schedule.batch(0), None)
    assert (att is None) if packing else bool((att == 0).any())  # sentence batches really are padded
    from povstim.attention import PADDING_CHECK, use_unmasked_causal

    assert not any(PADDING_CHECK in m.__dict__ for m in tr.learner.raw_model.modules())  # restored after training
    assert use_unmasked_causal(tr.learner.raw_model) == "sdpa"  # as during training
    # none: not even transformers' padding check (`pad_id in ids[:, [-1, 0]]`), which the switch skips
    assert _host_syncs(lambda: tr.learner.forward_loss(ids, labels, att)) == []
    # transformers, given no mask, checks the position ids for packed sequences (`.all()` -> bool) and, given a
    # padding mask, turns its tensors into Python bools: a host sync per forward either way
    assert _host_syncs(lambda: old.learner.forward_loss(ids, labels, att))
    for trainer_, masked in ((tr, False), (old, True)):
        calls = _sdpa_calls(trainer_.learner._forward_loss, ids, labels, att)
        assert len(calls) == GPT2["n_layer"] and all(c["mask"] == masked for c in calls), (masked, calls)
        assert all(c["is_causal"] is (not masked) for c in calls), (masked, calls)


def test_causal_attention_without_a_mask_only_where_nothing_edits_the_mask(corpus, tmp_path):
    assert trainer(corpus, tmp_path / "mlm", arch=ROBERTA).learner.attn_restore is None  # bidirectional: padding matters
    recency = {**GPT2, "bias": {"recency": {"r": 0.6}}}
    assert trainer(corpus, tmp_path / "recency", arch=recency).learner.attn_restore is None  # adds its bias to the mask
    for packing in (True, False):
        tr = trainer(corpus, tmp_path / f"gpt2-{packing}", packing=packing)
        assert tr.learner.attn_restore == "sdpa" and tr.learner.raw_model.config._attn_implementation == "povstim_unmasked_causal"


@pytest.mark.parametrize("packing", [True, False], ids=["packed", "sentences"])
def test_causal_loss_and_gradients_equal_transformers_own(corpus, tmp_path, packing):
    """The loop shifts the labels, not the logits (train/loop.py lm_loss): the loss and every gradient must be
    transformers' own causal-LM loss (`labels=`, which slices the logits), for packed blocks and for
    right-padded sentence batches with -100 labels; the dev loss (a sum) must count the same tokens."""
    import torch

    tr = trainer(corpus, tmp_path / "t", packing=packing)
    ids, labels, att, _ = tr.learner.batch(tr.learner.train_data, np.arange(8), None)
    if not packing:
        assert bool((labels == -100).any())  # the padding really is in the batch
    model = tr.learner.raw_model
    model.eval()  # no dropout: both losses see the same forward

    def loss_and_grads(fn):
        model.zero_grad(set_to_none=True)
        loss = fn()
        loss.backward()
        return loss.detach().clone(), [p.grad.clone() for p in model.parameters()]

    ours, ours_g = loss_and_grads(lambda: tr.learner.forward_loss(ids, labels, att))
    theirs, theirs_g = loss_and_grads(lambda: model(input_ids=ids, attention_mask=att, labels=labels).loss)
    assert abs(float(ours) - float(theirs)) <= 1e-6 * float(theirs)
    for a, b in zip(ours_g, theirs_g):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-7)
    with torch.no_grad():
        total, n = tr.learner.loss(ids, labels, att, reduction="sum")
        hf = model(input_ids=ids, attention_mask=att, labels=labels).loss
    assert n == int((labels[:, 1:] != -100).sum())
    assert abs(float(total) / n - float(hf)) <= 1e-6 * float(hf)


def fp16_trainer(corpus, out, **training) -> Trainer:
    """precision fp16 run on the CPU (cpu_fp16): the same autocast, loss scaling and checkpointed scaler as on a
    GPU, where fp16 is for the fp16 tensor cores of GPUs before Ampere (V100, T4)."""
    a, t = resolve(GPT2, {**BASE, "precision": "fp16", **training})
    return Trainer(arch=a, training=t, seed=1, out_dir=str(out), threads=1, progress=False, cpu_fp16=True, **corpus)


def test_fp16_scales_the_loss_and_resumes_exactly(corpus, tmp_path):
    import torch

    cfg = {"dropout": 0.1}
    a = fp16_trainer(corpus, tmp_path / "a", **cfg)
    assert a.runtime.precision == "fp16" and a.runtime.amp_dtype is torch.float16 and a.runtime.scaler is not None
    ids, labels, att, _ = a.learner.batch(a.learner.train_data, np.arange(4), None)
    with a.runtime.autocast():
        assert a.learner.raw_model(input_ids=ids).logits.dtype is torch.float16  # the forward really runs in fp16
    a.run()
    log_a = logged(tmp_path / "a")
    assert log_a[-1]["loss"] < log_a[0]["loss"]  # it learns
    saved = torch.load(tmp_path / "a" / "checkpoints" / "step12" / "trainer_state.pt", weights_only=True)
    assert saved["scaler"]["scale"] == a.runtime.scaler.get_scale() and saved["scaler"]["growth_interval"] == 2000
    # the same run in fp32 computes something else (fp16 rounding), close to it
    b = trainer(corpus, tmp_path / "fp32", **cfg)
    b.run()
    assert (tmp_path / "fp32" / "model.safetensors").read_bytes() != (tmp_path / "a" / "model.safetensors").read_bytes()
    assert abs(logged(tmp_path / "fp32")[-1]["loss"] - log_a[-1]["loss"]) < 0.05 * log_a[-1]["loss"]
    # killed after step 6's checkpoint: the resumed run (scaler state from the checkpoint) equals the uninterrupted one
    c = tmp_path / "c"
    kill_at(fp16_trainer(corpus, c, **cfg), 8)
    # the scaler comes back from the checkpoint (this short run never overflowed, so its scale is still 2**16:
    # a scale and growth tracker of their own, in a copy, show that they are restored, not started afresh)
    d = tmp_path / "d"
    shutil.copytree(c, d)
    kept = torch.load(d / "checkpoints" / "step6" / "trainer_state.pt", weights_only=True)
    assert kept["scaler"]["scale"] == 2.0**16
    kept["scaler"].update(scale=1024.0, _growth_tracker=3)
    torch.save(kept, d / "checkpoints" / "step6" / "trainer_state.pt")
    # edited by hand: sealed again (its manifest's step and best step kept), or resume would refuse it
    meta = json.loads((d / "checkpoints" / "step6" / checkpoints.MANIFEST).read_text(encoding="utf-8"))
    checkpoints.seal(d / "checkpoints" / "step6", **{k: v for k, v in meta.items() if k != "files"})
    other = fp16_trainer(corpus, d, **cfg)
    assert other.resume() and other.state.step == 6
    assert other.runtime.scaler.get_scale() == 1024.0 and other.runtime.scaler.state_dict()["_growth_tracker"] == 3
    resumed = fp16_trainer(corpus, c, **cfg)
    resumed.run()
    assert (c / "model.safetensors").read_bytes() == (tmp_path / "a" / "model.safetensors").read_bytes()
    assert logged(c) == log_a


def test_fp16_backward_scales_and_update_clips_the_true_gradients(corpus, tmp_path, monkeypatch):
    import torch

    tr = fp16_trainer(corpus, tmp_path / "t")
    ids, labels, att, _ = tr.learner.batch(tr.learner.train_data, np.arange(4), None)
    tr.learner.raw_model.eval()  # no dropout: the two backwards see the same weights and inputs
    amp, tr.runtime.amp_dtype = tr.runtime.amp_dtype, None
    tr.learner.forward_loss(ids, labels, att).backward()  # fp32, unscaled: the reference
    plain = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(p.grad) for p in tr.learner.raw_model.parameters()]))
    tr.runtime.amp_dtype = amp
    tr.opt.optimizer.zero_grad(set_to_none=True)
    tr.opt.backward(tr.learner.forward_loss(ids, labels, att))
    scale = tr.runtime.scaler.get_scale()
    scaled = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(p.grad) for p in tr.learner.raw_model.parameters()]))
    torch.testing.assert_close(scaled / scale, plain, rtol=2e-2, atol=0)  # the loss was scaled up by the scale
    seen = []
    clip = torch.nn.utils.clip_grad_norm_
    monkeypatch.setattr(torch.nn.utils, "clip_grad_norm_", lambda params, m: seen.append(clip(params, m)) or seen[-1])
    tr.opt.update()
    torch.testing.assert_close(seen[0], plain, rtol=2e-2, atol=0)  # clipping saw the unscaled gradients


def test_fp16_skips_a_step_whose_gradients_overflowed(corpus, tmp_path):
    """update(): unscale, then clip, then a step only when every gradient is finite; an overflow halves the
    scale and leaves the weights as they were."""
    import torch

    tr = fp16_trainer(corpus, tmp_path / "t")
    ids, labels, att, _ = tr.learner.batch(tr.learner.train_data, np.arange(4), None)
    tr.opt.backward(tr.learner.forward_loss(ids, labels, att))  # as a step does: the loss scaled, then backward
    before = state(tr)
    scale = tr.runtime.scaler.get_scale()
    for p in tr.learner.raw_model.parameters():
        p.grad = torch.full_like(p, scale * 1e-3)
    next(tr.learner.raw_model.parameters()).grad.view(-1)[0] = float("inf")
    tr.opt.update()
    assert all(torch.equal(before[k], v) for k, v in state(tr).items())
    assert tr.runtime.scaler.get_scale() == scale / 2
    for p in tr.learner.raw_model.parameters():  # finite (scaled) gradients: a step, clipped on their true norm
        p.grad = torch.full_like(p, tr.runtime.scaler.get_scale() * 1e-3)
    tr.opt.update()
    assert not all(torch.equal(before[k], v) for k, v in state(tr).items())


def test_fp16_is_asked_for_and_not_with_step_graphs():
    from povstim.devices.precision import train_precision
    from povstim.io import PovstimError

    assert train_precision("fp16", "cuda:0", (7, 5)) == "fp16"  # a T4's fp16 tensor cores
    assert train_precision("fp16", "cuda:0", (9, 0)) == "fp16"  # asked for: not replaced by bf16
    assert train_precision("auto", "cuda:0", (7, 0)) == "fp32"  # never chosen by auto: it computes otherwise
    with pytest.raises(PovstimError, match=r"training\.precision fp16 needs a CUDA device"):
        train_precision("fp16", "cpu")
    with pytest.raises(PovstimError, match=r"--params\.precision fp16 cannot run with --params\.compile step-graphs"):
        resolve(GPT2, {**BASE, "precision": "fp16", "compile": "step-graphs"})


@pytest.mark.gpu
@pytest.mark.parametrize("compile_", [False, "reduce-overhead"], ids=["eager", "graphs"])
def test_cuda_fp16_trains_like_fp32(corpus, tmp_path, compile_):
    """On a GPU: precision fp16 (loss-scaled; for the fp16 tensor cores of a V100 or T4) trains to the fp32
    run's losses, eager and with CUDA graphs, and checkpoints its scaler."""
    _cuda()
    import torch

    cfg = {"device": "cuda", "max_steps": 8, "eval_every": 4, "save_every": 8, "compile": compile_}
    half, log_half = run(corpus, tmp_path / "fp16", precision="fp16", **cfg)
    ref, log_ref = run(corpus, tmp_path / "fp32", precision="fp32", **cfg)
    assert half.runtime.precision == "fp16" and half.runtime.scaler is not None
    np.testing.assert_allclose([e["loss"] for e in log_half], [e["loss"] for e in log_ref], rtol=2e-2)
    saved = torch.load(tmp_path / "fp16" / "checkpoints" / "step8" / "trainer_state.pt", weights_only=True)
    assert saved["scaler"]["scale"] == half.runtime.scaler.get_scale()
