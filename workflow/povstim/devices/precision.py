"""What a GPU's tensor cores take: the training precision ``training.precision`` resolves to on a device."""

from __future__ import annotations

from ..io import PovstimError
from ..schema import load_schema

# Ampere (compute capability 8.0) and later: tensor cores for bf16 and TF32. Older GPUs (V100 7.0, T4 7.5,
# the free Colab GPU) have neither: bf16 autocast is emulated there (bf16's rounding without its speed),
# and TF32 does not exist.
AMPERE = (8, 0)


def tensor_core_dtypes(capability: tuple[int, int] | None) -> bool:
    """Whether a GPU of this compute ``capability`` (None: no GPU) has bf16 and TF32 tensor cores."""
    return capability is not None and tuple(capability) >= AMPERE


def capability(device: str) -> tuple[int, int] | None:
    """The compute capability of ``device`` (cuda or cuda:N); None for a CPU."""
    if not str(device).startswith("cuda"):
        return None
    import torch

    return tuple(torch.cuda.get_device_capability(torch.device(device)))


def train_precision(requested: str, device: str, capability_: tuple[int, int] | None = None) -> str:
    """``training.precision`` on ``device``: "bf16" or "fp16" (autocast, fp32 master weights) or "fp32".

    ``auto`` is bf16 where the GPU has bf16 tensor cores and fp32 elsewhere (CPU, GPUs before Ampere);
    ``bf16`` asked for where it would be emulated is an error naming the key. ``fp16`` (with dynamic loss
    scaling: the fp16 tensor cores of a V100 or T4) is never chosen by ``auto``, since it computes something
    else; it needs CUDA. ``capability_`` stands in for the device's own (tests; None: read it)."""
    choices = load_schema()["properties"]["training"]["properties"]["precision"]["enum"]  # the one list of them
    if requested not in choices:
        raise PovstimError(f"training.precision must be one of {', '.join(choices)}, not {requested!r}")
    if requested == "fp32":
        return "fp32"
    cuda = str(device).startswith("cuda")
    if not cuda:
        if requested in ("bf16", "fp16"):
            raise PovstimError(f"training.precision {requested} needs a CUDA device; use fp32 or auto on the CPU")
        return "fp32"
    if requested == "fp16":
        return "fp16"
    cap = capability(device) if capability_ is None else capability_
    if tensor_core_dtypes(cap):
        return "bf16"
    if requested == "bf16":
        raise PovstimError(f"training.precision bf16 needs bf16 tensor cores (compute capability 8.0+, Ampere or "
                           f"later); {device} has {cap[0]}.{cap[1]}: use fp16 (loss-scaled, its fp16 tensor "
                           "cores), auto or fp32")
    return "fp32"
