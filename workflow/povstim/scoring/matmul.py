"""fp32-accurate matrix products on TF32 tensor cores (``scoring.matmul: 3xtf32``).

A GPU's fp32 matrix products run without tensor cores (67 TFLOP/s on an H100 or H200); TF32
tensor cores are several times faster (495 TFLOP/s dense) but keep 10 of fp32's 23 mantissa bits,
which moves a GPT-2 small sentence log-probability by up to ~1e-2 -- far outside the 1e-4 the
scores must stay within. The "3xTF32" method (as in NVIDIA CUTLASS) gets fp32's accuracy back from
them: each operand is split into two TF32 values, ``a = a_hi + a_lo`` to 2^-20 of ``a``, and

    a @ b  ~=  a_hi @ b_hi + a_lo @ b_hi + a_hi @ b_lo

(the dropped a_lo @ b_lo is ~2^-20 of the product), three times the work of one product at the
tensor cores' rate, accumulated in fp32. It runs as two products: ``[a_hi | a_lo] @ [b_hi; b_hi]``,
then ``a_hi @ b_lo`` added into its result. Only the linear layers are taken over (``F.linear``:
nn.Linear and LM heads; ``torch.addmm``: GPT-2's Conv1D); attention and the log-softmax stay plain
fp32. A weight's split is made once and kept while the weight lives ([w_hi; w_hi] and w_lo: three
times the weight's memory more, 1.5 GB for GPT-2 small: the price of one product less per layer).

Both parts of each operand are exact TF32 values, so the tensor cores read them without loss and
every product of two of them is exact in fp32: a CPU computes the very same products, in another
order of fp32 sums. That makes the method's accuracy testable on a CPU (tests/test_matmul.py); its
speed needs TF32 tensor cores, which CUDA GPUs of compute capability 8.0 and later have, so
elsewhere the setting leaves the products fp32 (:func:`mode_for`).
"""

from __future__ import annotations

import contextlib
import logging
import weakref

from ..io import PovstimError

log = logging.getLogger("povstim.score")

CHOICES = ("fp32", "3xtf32")
_KEEP = ~0x1FFF  # clears the 13 mantissa bits fp32 has and TF32 lacks


def split(x, hi=None, lo=None):
    """(hi, lo), both TF32 values (fp32 with the 13 mantissa bits TF32 lacks cleared), ``hi + lo`` = ``x``
    to 2^-20 of it: ``hi`` is ``x`` cut to TF32 and ``lo`` the remainder (exact in fp32) cut to TF32 too.
    Tensor cores read TF32 values exactly, so the products below are the same on a GPU and on a CPU:
    only the order of the fp32 sums differs. Written into ``hi`` and ``lo`` when given (three passes
    over ``x``'s size: these are memory-bound next to the products)."""
    import torch

    hi = torch.empty_like(x) if hi is None else hi
    lo = torch.empty_like(x) if lo is None else lo
    torch.bitwise_and(x.view(torch.int32), _KEEP, out=hi.view(torch.int32))
    torch.sub(x, hi, out=lo)
    lo.view(torch.int32).bitwise_and_(_KEEP)
    return hi, lo


@contextlib.contextmanager
def tf32_products(on: bool = True):
    """TF32 tensor cores for the fp32 matrix products inside (CUDA), then the caller's setting back.

    torch >= 2.9's ``fp32_precision`` where it exists: reading the legacy ``allow_tf32`` fails once the new
    switch has been set, while the new one reads right after either (training sets the legacy one)."""
    import torch

    if not on:
        yield
        return
    flags = torch.backends.cuda.matmul
    name, value = ("fp32_precision", "tf32") if hasattr(flags, "fp32_precision") else ("allow_tf32", True)
    before = getattr(flags, name)
    setattr(flags, name, value)
    try:
        yield
    finally:
        setattr(flags, name, before)


# id(weight), k_dim -> (weakref to the weight, its in-place version, [w_hi; w_hi], w_lo). Shared by every mode
# (a model's second scoring pass -- the sensitivity table's -- reuses the first one's split); an entry goes
# when its weight does, and a weight changed in place (a step of training between two scorings) is split again.
_SPLITS: dict = {}


def split_weight(w, k_dim: int):
    """``w`` (a linear layer's weight) as [w_hi; w_hi] (stacked along its inner dimension ``k_dim``) and w_lo,
    made once per weight and version (see ``_SPLITS``)."""
    import torch

    key = (id(w), k_dim)
    try:
        version = w._version
    except RuntimeError:  # an inference tensor keeps no version: it cannot change outside inference mode
        version = None
    got = _SPLITS.get(key)
    if got is None or got[0]() is not w or got[1] != version:
        hi, lo = split(w)
        ref = weakref.ref(w, lambda _, key=key: _SPLITS.pop(key, None))
        got = (ref, version, torch.cat([hi, hi], k_dim), lo)
        _SPLITS[key] = got
    return got[2], got[3]


def _mode_class():
    import torch
    import torch.nn.functional as F
    from torch.overrides import TorchFunctionMode

    class TF32x3(TorchFunctionMode):
        """Inside ``with TF32x3():``, fp32 linear layers run as 3xTF32 products (see the module)."""

        def _product(self, x, w, bias, k_dim):
            """x @ w (+ bias) for x [..., K]; w [M, K] (F.linear, k_dim 1) or [K, M] (addmm, k_dim 0)."""
            k = x.shape[-1]
            flat = x.reshape(-1, k)
            # [x_hi | x_lo] written in place, one buffer: the two GEMMs read x_hi from it (a row stride of 2K)
            both = torch.empty(flat.shape[0], 2 * k, dtype=x.dtype, device=x.device)
            hi, lo = both[:, :k], both[:, k:]
            split(flat, hi, lo)
            w_hi2, w_lo = split_weight(w, k_dim)
            if k_dim == 1:
                w_hi2, w_lo = w_hi2.t(), w_lo.t()
            with tf32_products(x.is_cuda):
                # x_hi·w_hi + x_lo·w_hi in one product, then x_hi·w_lo added into it (cuBLAS's beta = 1)
                out = torch.mm(both, w_hi2) if bias is None else torch.addmm(bias, both, w_hi2)
                out.addmm_(hi, w_lo)
            return out.reshape(*x.shape[:-1], out.shape[-1])

        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func is F.linear:
                x = args[0]
                w = args[1] if len(args) > 1 else kwargs["weight"]
                bias = args[2] if len(args) > 2 else kwargs.get("bias")
                if _fp32(x, w) and w.dim() == 2:
                    return self._product(x, w, bias, 1)
            elif func is torch.addmm and len(args) == 3 and not kwargs:
                bias, x, w = args
                if _fp32(x, w) and x.dim() == 2 and w.dim() == 2:
                    return self._product(x, w, bias, 0)
            return func(*args, **kwargs)

    return TF32x3


def _fp32(*tensors) -> bool:
    import torch

    return all(t.dtype == torch.float32 for t in tensors)


_CLASS = None
_SAID: set = set()  # devices whose fallback to fp32 the log has told


def TF32x3():
    """A new 3xTF32 mode (a torch function mode; enter it with ``with``). It runs on any device; only CUDA
    GPUs with TF32 tensor cores make it fast (:func:`mode_for`)."""
    global _CLASS
    if _CLASS is None:
        _CLASS = _mode_class()
    return _CLASS()


def tf32_capable(device: str) -> bool:
    """Whether ``device`` is a CUDA GPU with TF32 tensor cores (compute capability 8.0 and later)."""
    # deferred: devices pulls the schema (jsonschema); only a CUDA device is asked
    from ..devices.precision import capability, tensor_core_dtypes

    return tensor_core_dtypes(capability(device))


def mode_for(setting: str, device: str):
    """The mode ``scoring.matmul`` asks for on ``device``: None for fp32, or where TF32 does not exist."""
    if setting not in CHOICES:
        raise PovstimError(f"scoring.matmul must be one of {', '.join(CHOICES)}, not {setting!r}")
    if setting == "fp32":
        return None
    if not tf32_capable(device):
        if str(device) not in _SAID:  # once per device and process, not per checkpoint and scoring pass
            _SAID.add(str(device))
            log.info("scoring.matmul: 3xtf32 needs TF32 tensor cores (CUDA, compute capability 8.0+); on %s the "
                     "products stay plain fp32", device)
        return None
    return TF32x3()
