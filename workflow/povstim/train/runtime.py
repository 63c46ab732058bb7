"""Where a training job runs and in what precision: CPU threads, the device (a GPU slot), autocast, loss scaling.

``training.precision: auto`` is bf16 autocast with fp32 master weights on a GPU with bf16 tensor cores
(compute capability 8.0+), fp32 elsewhere (``povstim.devices.precision.train_precision``); ``fp16`` is asked for and
loss-scaled (torch's ``GradScaler``, whose state travels with each checkpoint).
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from dataclasses import dataclass

import torch

from ..devices.precision import capability, train_precision
from ..devices.slots import held_gpu, resolve_device

log = logging.getLogger("povstim.train")


@dataclass
class Runtime:
    device: str  # "cpu", "cuda:N"
    precision: str  # "fp32", "bf16", "fp16"
    amp_dtype: object  # torch.bfloat16 / torch.float16 for autocast, None in fp32
    scaler: object  # fp16's GradScaler, else None
    waited: float  # seconds spent waiting for a free GPU slot (gpus.slots)
    claimed: float  # seconds spent choosing and claiming the device (on a GPU: CUDA's start-up)

    @property
    def cuda(self) -> bool:
        return self.device.startswith("cuda")

    @property
    def amp_device(self) -> str:
        return "cuda" if self.cuda else "cpu"

    def autocast(self, cache: bool = True):
        """The forward's autocast (bf16 or fp16, fp32 master weights), or nothing in fp32."""
        if self.amp_dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(self.amp_device, dtype=self.amp_dtype, cache_enabled=cache)

    def describe(self) -> str:
        """The model log line's device part, e.g. ``cuda:0 bf16`` or ``cpu fp16 (loss-scaled)``."""
        return f"{self.device} {self.precision}" + (" (loss-scaled)" if self.scaler else "")


def start(training, threads: int | None = None, cpu_fp16: bool = False) -> Runtime:
    """Set the CPU threads, claim the device and choose the precision for ``training`` (a TrainingSettings).

    ``cpu_fp16`` lets a test run the fp16 path's autocast and loss scaling on the CPU.
    """
    torch.set_num_threads(int(threads or training.threads or 1))
    t0 = time.perf_counter()
    device = resolve_device(training.device)
    # on a GPU: waiting for a free slot (gpus.slots), then CUDA's start-up; logged apart in the `time:` line
    slot = held_gpu() if device.startswith("cuda") else None
    waited = slot.waited if slot is not None and slot.torch_device == device else 0.0
    claimed = time.perf_counter() - t0 - waited
    cuda = device.startswith("cuda")
    if cpu_fp16 and training.precision == "fp16" and not cuda:
        precision = "fp16"
    else:
        precision = train_precision(training.precision, device)
    if cuda and precision == "fp32" and training.precision == "auto":
        log.info("training.precision auto: %s has no bf16 tensor cores (compute capability %s, before Ampere's "
                 "8.0): training in fp32 (precision: fp16 would use its fp16 tensor cores, loss-scaled)",
                 device, ".".join(map(str, capability(device))))
    if cuda and training.tf32:
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    amp_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(precision)
    # fp16's narrow range: the loss is scaled up before backward, and a step whose gradients overflowed is
    # skipped (the scale halves); the scaler's state is part of a checkpoint, so a resumed run stays exact
    scaler = torch.amp.GradScaler("cuda" if cuda else "cpu") if precision == "fp16" else None
    return Runtime(device=device, precision=precision, amp_dtype=amp_dtype, scaler=scaler, waited=waited,
                   claimed=claimed)


def threads_note() -> str:
    """A run's jobs share the cores: idle threads sleep (povstim.devices.threads.job_environment)."""
    return f" (OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']})" if "OMP_WAIT_POLICY" in os.environ else ""
