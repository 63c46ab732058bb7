"""Which torch device a training or scoring job runs on.

``resolve_device("auto")`` picks CUDA when it is visible and the CPU otherwise.
(GPU placement across concurrent jobs is layered on top of this API.)
"""

from __future__ import annotations

from .io import PovstimError


def resolve_device(requested: str = "auto") -> str:
    import torch

    requested = (requested or "auto").lower()
    if requested == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if requested.startswith("cuda") and not torch.cuda.is_available():
        raise PovstimError(f"device '{requested}' was requested but no CUDA device is visible")
    if requested not in ("cpu",) and not requested.startswith("cuda"):
        raise PovstimError(f"unknown device '{requested}': use auto, cpu, cuda or cuda:N")
    return requested
