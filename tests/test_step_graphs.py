"""training.compile: step-graphs -- whole training steps recorded as CUDA graphs (train/gpu.py), on the CPU.

CUDA graphs themselves need a GPU (tests/test_train_gpu.py's gpu-marked test runs them there). What the
CPU can check is everything around them:

* the bookkeeping of StepGraphs (first step of a shape eager, second recorded, then copy-and-replay;
  a cap on recorded shapes) drives the very steps of the plain loop: with a backend that "replays" by
  re-running the recorded step on its static buffers, training gives the plain loop's losses and
  weights, dropout included;
* the learning rate reaches a recorded step only through one device tensor filled in place;
* the recorded step never asks the host for a tensor's value (a `.item()`, a Python branch on a mask)
  -- which a real capture refuses -- checked by a dispatch mode that fails on such ops while
  `torch.cuda.is_current_stream_capturing()` says True, as it does during a capture.
"""

from __future__ import annotations


import numpy as np
import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from povstim.train import gpu
from povstim.train.loop import Trainer
from povstim.train.params import resolve
from test_train_gpu import BASE, GPT2, ROBERTA, corpus, logged, state  # noqa: F401  (corpus: fixture)


class ReplayBackend:
    """CudaGraphBackend's interface on the CPU: capture records (runs nothing), replay re-runs the step
    on the static buffers and writes its loss into the one output tensor, as a graph replay would."""

    def __init__(self):
        self.captures = 0

    def eager(self, fn, args):
        return fn(*args)

    def capture(self, fn, args):
        self.captures += 1
        out = torch.full((), float("nan"))

        def replay():
            out.copy_(fn(*args))

        return replay, out


def graph_trainer(corpus, out, arch, backend=None, **training) -> Trainer:
    a, t = resolve(arch, {**BASE, **training})
    return Trainer(arch=a, training=t, seed=1, out_dir=str(out), threads=1, progress=False,
                   graph_backend=backend or ReplayBackend(), **corpus)


def plain_trainer(corpus, out, arch, **training) -> Trainer:
    a, t = resolve(arch, {**BASE, **training})
    return Trainer(arch=a, training=t, seed=1, out_dir=str(out), threads=1, progress=False, **corpus)


@pytest.mark.parametrize("arch", [GPT2, ROBERTA], ids=["gpt2-packed", "roberta-mlm"])
def test_step_graphs_train_like_the_plain_loop(corpus, tmp_path, arch):
    """Recorded and replayed steps = the plain loop's steps: same logged losses, same final weights
    (dropout on, so the random stream must be consumed in the same order too)."""
    cfg = {"dropout": 0.1, "pad_to_multiple_of": 8, "max_steps": 12, "eval_every": 6, "save_every": 6,
           "grad_clip": 1.0}
    plain = plain_trainer(corpus, tmp_path / "plain", arch, **cfg)
    plain.run()
    fast = graph_trainer(corpus, tmp_path / "graphs", arch, compile="step-graphs", **cfg)
    fast.run()
    sg = fast.opt.graphs
    assert fast.compile_mode == gpu.STEP_GRAPHS and sg is not None
    shapes = {s for s in sg.warmed}
    # each shape's first step ran eagerly; every later step of a recorded shape was a replay
    assert sg.eager_steps == len(shapes) and sg.replays == 12 - len(shapes) and sg.replays > 0
    assert fast.opt.graphs.backend.captures == len(sg.graphs) >= 1
    a, b = logged(tmp_path / "plain"), logged(tmp_path / "graphs")
    assert [e["step"] for e in a] == [e["step"] for e in b]
    np.testing.assert_allclose([e["loss"] for e in b], [e["loss"] for e in a], rtol=1e-6)
    np.testing.assert_allclose([e["dev_loss"] for e in b if e["dev_loss"] is not None],
                               [e["dev_loss"] for e in a if e["dev_loss"] is not None], rtol=1e-6)
    # weights to float rounding: on the CPU the recorded step's AdamW is torch's single-tensor one (the
    # foreach one takes no tensor learning rate), the plain loop's the foreach one
    for k, v in state(plain).items():
        torch.testing.assert_close(state(fast)[k], v, rtol=1e-5, atol=2e-6)


def test_step_graphs_cap_falls_back_to_eager_steps(corpus, tmp_path):
    """Past max_graphs recorded shapes, a new shape's steps run eagerly -- same training either way."""
    cfg = {"pad_to_multiple_of": 4, "max_steps": 10, "eval_every": 10, "save_every": 10}
    plain = plain_trainer(corpus, tmp_path / "plain", ROBERTA, **cfg)
    plain.run()
    fast = graph_trainer(corpus, tmp_path / "graphs", ROBERTA, compile="step-graphs", **cfg)
    fast.opt.graphs.max_graphs = 1
    fast.run()
    assert len(fast.opt.graphs.graphs) == 1
    assert fast.opt.graphs.eager_steps + fast.opt.graphs.replays == 10
    np.testing.assert_allclose([e["loss"] for e in logged(tmp_path / "graphs")],
                               [e["loss"] for e in logged(tmp_path / "plain")], rtol=1e-6)


def test_recorded_steps_read_one_learning_rate_tensor(corpus, tmp_path):
    """A graph bakes in Python floats: every param group must read the one tensor the loop fills in
    place with the schedule's rate, also after resuming from a checkpoint (whose groups carry values)."""
    cfg = {"max_steps": 6, "eval_every": 3, "save_every": 3, "warmup": 2, "lr": 2e-3}
    tr = graph_trainer(corpus, tmp_path / "m", GPT2, compile="step-graphs", **cfg)
    lr_tensor = tr.opt.lr_tensor
    tr.run()
    assert all(g["lr"] is lr_tensor for g in tr.opt.optimizer.param_groups)
    # linear warmup over 2 steps, then linear decay to 0 at step 6 (lr_at of the last step, 5)
    assert float(lr_tensor) == pytest.approx(2e-3 * (6 - 5) / (6 - 2))
    resumed = graph_trainer(corpus, tmp_path / "m", GPT2, compile="step-graphs", **{**cfg, "max_steps": 6})
    resumed.resume()
    resumed.finished = False
    for group in resumed.opt.optimizer.param_groups:
        assert torch.is_tensor(group["lr"])
    out = resumed.run()
    assert all(g["lr"] is resumed.opt.lr_tensor for g in resumed.opt.optimizer.param_groups)
    assert out is not None


SYNCING = {"_local_scalar_dense", "is_nonzero", "nonzero", "equal", "masked_select", "item", "_unique2",
           "unique_dim", "unique_consecutive"}


class NoHostSync(TorchDispatchMode):
    """Fails on any op that hands a tensor's value to the host (illegal inside a CUDA graph capture)."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func._schema.name.split("::")[-1]
        if name in SYNCING:
            raise AssertionError(f"host sync inside the recorded step: {func._schema.name}")
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("arch", [GPT2, ROBERTA], ids=["gpt2", "roberta"])
def test_recorded_step_never_syncs_the_host(corpus, tmp_path, arch, monkeypatch):
    """zero_grad, forward (with a padding mask), loss, backward and clipping run without one host sync
    while a capture is under way (the fused capturable AdamW is a single GPU kernel; torch itself
    refuses a non-capturable optimizer in a capture). Without the capture flag, transformers checks
    the padding mask on the host: the detector sees that, so it can see a sync."""
    tr = graph_trainer(corpus, tmp_path / "m", arch, compile="step-graphs", grad_clip=1.0,
                       pad_to_multiple_of=32, batch_size=4)
    idx = tr.schedule.batch(0)
    rng = None if tr.learner.causal else np.random.default_rng([1, 1, 0])
    inputs, labels, att, _ = tr.learner.batch(tr.learner.train_data, idx, rng)
    if att is None:  # packed data: give the step a padding mask to check the masked path too
        att = torch.ones_like(inputs)
    att[0, -3:] = 0
    monkeypatch.setattr(tr.opt.optimizer, "step", lambda *a, **k: None)
    if arch is ROBERTA:
        full = torch.ones_like(att)
        with pytest.raises(AssertionError, match="host sync"), NoHostSync():
            tr.opt.graph_step(inputs, labels, full)
    monkeypatch.setattr(torch.cuda, "is_current_stream_capturing", lambda: True)
    with NoHostSync():
        loss = tr.opt.graph_step(inputs, labels, att)
    assert torch.isfinite(loss) and loss.requires_grad is False
    assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in tr.learner.raw_model.parameters())


def test_step_graphs_is_a_config_value():
    _, t = resolve(GPT2, {"compile": "step-graphs"})
    assert t.compile == "step-graphs"
    assert gpu.uses_graphs("step-graphs") and not gpu.compiles("step-graphs")
    assert gpu.compiles("reduce-overhead") and gpu.compiles("default") and not gpu.compiles(None)
    # static shapes: one-sentence batches padded to 32 on CUDA, as for the compiled graph modes
    assert gpu.pad_multiple(None, True, "step-graphs", packed=False) == 32
