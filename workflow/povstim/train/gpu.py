"""The training loop's CUDA speed paths: compilation, CUDA graphs, data on the device.

None of this changes what is computed -- the batches, masks, loss normalisation,
learning rate and seed semantics are the loop's -- only how fast a GPU gets
through it:

* ``training.compile``: ``true``/``default`` compiles forward + loss with
  ``torch.compile`` (as before); ``reduce-overhead`` also records them as CUDA
  graphs, so a small model's step costs two graph launches instead of hundreds of
  kernel launches (small-batch recipes such as BabyBERTa are launch-bound);
  ``max-autotune`` adds autotuned matmul kernels (with CUDA graphs),
  ``max-autotune-no-cudagraphs`` without. Graph modes compile with static shapes:
  one graph per batch shape, so one-sentence-per-sequence batches are padded to a
  multiple of ``training.pad_to_multiple_of`` (32 when unset), which leaves a
  handful of widths.
* ``training.compile: step-graphs`` records the *whole* training step -- zeroing the
  gradients, forward, loss, backward, clipping and the fused AdamW update -- as one
  CUDA graph per batch shape (``StepGraphs``), with the model left uncompiled. A step
  then costs the host three small copies and one graph launch; ``reduce-overhead``
  still ran autograd's gradient accumulation, the clipping and the optimizer from
  Python, ~12 ms of host time per BabyBERTa step on an H100 (GPU busy ~1.8 ms).
* Packed training data small enough (``DEVICE_DATA_BYTES``) lives on the GPU: a step's
  batch is one gather on the device instead of a host-side copy and transfer.
* Other batches (sentence-level, MLM masks drawn on the host so they stay a pure
  function of seed and step) go to the GPU as one pinned, asynchronous copy.

Everything here is skipped on the CPU, where the loop runs exactly as before.
"""

from __future__ import annotations

import numpy as np

from ..io import PovstimError

# Packed training data up to this size is copied to the GPU once (int32 tokens).
DEVICE_DATA_BYTES = 2 * 2**30
GRAPH_MODES = ("reduce-overhead", "max-autotune")
# training.compile value that records whole training steps as CUDA graphs (no torch.compile)
STEP_GRAPHS = "step-graphs"
# batch shapes recorded at most; steps of other shapes run eagerly (a graph's memory stays reserved)
MAX_STEP_GRAPHS = 16
# one-sentence-per-sequence widths are rounded up to this when compiling on CUDA and pad_to_multiple_of is unset
AUTO_PAD_MULTIPLE = 32
# every distinct batch shape, train/eval mode and loss reduction is its own graph
RECOMPILE_LIMIT = 64


def compile_mode(setting) -> str | None:
    """torch.compile's mode for ``training.compile`` (None: do not compile)."""
    if setting is None or setting is False:
        return None
    if setting is True:
        return "default"
    return str(setting)


def uses_graphs(mode: str | None) -> bool:
    """CUDA graphs of any kind (compiled graph modes, or whole-step graphs)."""
    return mode in GRAPH_MODES or mode == STEP_GRAPHS


def compiles(mode: str | None) -> bool:
    """Whether ``mode`` runs forward + loss through torch.compile (step-graphs does not)."""
    return bool(mode) and mode != STEP_GRAPHS


def pad_multiple(setting: int | None, cuda: bool, mode: str | None, packed: bool) -> int:
    """The width multiple of one-sentence-per-sequence batches."""
    if setting:
        return int(setting)
    return AUTO_PAD_MULTIPLE if (cuda and mode and not packed) else 1


def batching(training, cuda: bool, mode: str | None, packed: bool, tpt: bool) -> tuple[int | None, int]:
    """(micro-batch rows or None, width multiple) for these training settings; TPT allows neither
    (its supervision is per batch and aligned to the batch's longest sentence)."""
    micro = int(training.micro_batch) if training.micro_batch else None
    if micro is not None and micro >= int(training.batch_size):
        micro = None
    if tpt and micro:
        raise PovstimError("training.micro_batch cannot be used with bias.tpt (its loss is per batch)")
    if tpt and training.pad_to_multiple_of:
        raise PovstimError("training.pad_to_multiple_of cannot be used with bias.tpt (its supervision is "
                           "aligned to the batch's longest sentence); leave it unset")
    return micro, 1 if tpt else pad_multiple(training.pad_to_multiple_of, cuda, mode, packed)


def compile_loss(fn, mode: str, backend: str | None = None):
    """``fn`` (forward + loss) compiled in ``mode``; graph modes get a CUDA-graph step marker per call.

    ``backend`` is for tests on the CPU (e.g. ``aot_eager``: the same tracing, no code generation).
    """
    import torch
    import torch._dynamo

    cfg = torch._dynamo.config
    for name in ("recompile_limit", "cache_size_limit", "accumulated_recompile_limit", "accumulated_cache_size_limit"):
        if hasattr(cfg, name):
            setattr(cfg, name, max(int(getattr(cfg, name)), RECOMPILE_LIMIT))
    kwargs = {} if backend is None else {"backend": backend}
    if mode == "default":
        return torch.compile(fn, **kwargs)  # as before: dynamic shapes allowed
    if backend is None:
        kwargs["mode"] = mode
    compiled = torch.compile(fn, dynamic=False, **kwargs)
    if not uses_graphs(mode):
        return compiled

    def step(*args, **kw):
        # a new step: the graphs may reuse the memory of the previous step's outputs
        torch.compiler.cudagraph_mark_step_begin()
        return compiled(*args, **kw)

    return step


def persistent_grads(params) -> None:
    """Give every parameter a zeroed ``.grad`` up front (CUDA-graph modes).

    Autograd otherwise adopts a graph's output buffer as ``.grad`` when it is None;
    the next replay would overwrite it while micro-batches still accumulate into it.
    With real ``.grad`` tensors (zeroed, not freed, between steps) every graph output
    is added into them and never kept.
    """
    import torch

    for p in params:
        if p.requires_grad and p.grad is None:
            p.grad = torch.zeros_like(p)


class CudaGraphBackend:
    """Eager steps and graph capture on one side stream, all graphs in one memory pool."""

    def __init__(self, device: str):
        import warnings

        import torch

        self.torch = torch
        self.stream = torch.cuda.Stream(device)
        self.pool = torch.cuda.graph_pool_handle()
        # each shape's first step (and any micro-batched or bias-hooked step) runs the capturable AdamW
        # eagerly on purpose; torch would warn about that in every job's log
        warnings.filterwarnings("ignore", message="This instance was constructed with capturable=True")

    def eager(self, fn, args):
        # on the capture stream: the first step of a shape also initialises what capture must not
        # (cuBLAS workspaces, cuDNN plans, autograd's stream state for that stream)
        torch = self.torch
        cur = torch.cuda.current_stream()
        self.stream.wait_stream(cur)
        with torch.cuda.stream(self.stream):
            out = fn(*args)
        cur.wait_stream(self.stream)
        return out

    def capture(self, fn, args):
        """(replay, output): ``fn(*args)`` recorded, not run; each ``replay()`` runs it on the current
        stream and rewrites ``output`` in place."""
        torch = self.torch
        graph = torch.cuda.CUDAGraph()
        self.stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.graph(graph, pool=self.pool, stream=self.stream):
            out = fn(*args)
        return graph.replay, out


class StepGraphs:
    """A training step recorded as one CUDA graph per batch shape (``training.compile: step-graphs``).

    ``body(inputs, labels, attention)`` is the whole step and returns the loss; it must not touch the
    host (no ``.item()``, no Python branch on a tensor's value, the learning rate a device tensor filled
    in place). The first step of each shape runs eagerly (and warms up that shape), the second records
    the graph and replays it; from then on a step copies the batch into the graph's static buffers and
    replays. What the graph reads between replays (parameters, gradients, optimizer state, the
    learning-rate tensor) lives outside its memory pool, so graphs of different shapes can replay in
    any order. ``backend`` is CudaGraphBackend on a GPU; tests pass one that re-runs ``body``.
    """

    def __init__(self, body, backend, max_graphs: int = MAX_STEP_GRAPHS):
        self.body = body
        self.backend = backend
        self.max_graphs = max_graphs
        self.graphs: dict = {}  # shape key -> (replay, static inputs, static loss)
        self.warmed: set = set()
        self.replays = self.eager_steps = 0

    @staticmethod
    def key(tensors) -> tuple:
        return tuple(None if t is None else (tuple(t.shape), str(t.dtype)) for t in tensors)

    def __call__(self, inputs, labels, attention):
        tensors = (inputs, labels, attention)
        k = self.key(tensors)
        got = self.graphs.get(k)
        if got is None:
            if k not in self.warmed or len(self.graphs) >= self.max_graphs:
                self.warmed.add(k)
                self.eager_steps += 1
                return self.backend.eager(self.body, tensors)
            static = tuple(None if t is None else t.clone() for t in tensors)
            replay, loss = self.backend.capture(self.body, static)
            got = self.graphs[k] = (replay, static, loss)
        replay, static, loss = got
        for dst, src in zip(static, tensors):
            if dst is not None:
                dst.copy_(src, non_blocking=True)
        replay()
        self.replays += 1
        return loss


class DeviceBlocks:
    """Packed token blocks [n, context] resident on the GPU (int32; gathered and widened per batch)."""

    def __init__(self, blocks: np.ndarray, device: str):
        import torch

        self.torch = torch
        self.device = device
        self.blocks = torch.from_numpy(np.ascontiguousarray(blocks)).to(device)

    @classmethod
    def maybe(cls, data, device: str, limit: int = DEVICE_DATA_BYTES):
        if not data.packed or data.blocks is None or data.blocks.nbytes > limit:
            return None
        return cls(data.blocks, device)

    def gather(self, idx: np.ndarray, repeats: int):
        torch = self.torch
        rows = torch.from_numpy(np.asarray(idx, dtype=np.int64) // repeats).to(self.device, non_blocking=True)
        return self.blocks.index_select(0, rows).long()


def to_device(arrays: list[np.ndarray], device: str, pin: bool = True) -> list:
    """Int64 arrays -> device tensors of the same shapes, in one pinned asynchronous copy."""
    import torch

    flat = torch.from_numpy(np.concatenate([np.asarray(a, dtype=np.int64).ravel() for a in arrays]))
    dev = (flat.pin_memory() if pin else flat).to(device, non_blocking=True)
    out, at = [], 0
    for a in arrays:
        out.append(dev[at : at + a.size].view(a.shape))
        at += a.size
    return out
