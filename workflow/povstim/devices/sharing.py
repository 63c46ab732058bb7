"""Which jobs share a GPU: one job's GPU memory, estimated, and the machine's GPUs, asked of nvidia-smi.

Decided at DAG-build time, without torch, from the config's `gpus:` section and an estimate of the
job's GPU memory. A small job holds no unit of Snakemake's `gpu` resource (so `--resources gpu=1`
does not serialise it) and gets POVSTIM_GPU_SHARE=<gpus.slots> instead; a big one holds one unit
and the whole GPU (the slots themselves: :mod:`povstim.devices.slots`).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import shutil
import subprocess
from dataclasses import dataclass
from typing import Mapping, Sequence

from .precision import tensor_core_dtypes

@dataclass(frozen=True)
class GpuSettings:
    """The config's ``gpus:`` section (defaults: workflow/schemas/config/gpus.schema.yaml)."""

    slots: int
    memory_gb: float


GIB = 2**30
# A CUDA context, cuBLAS workspaces and allocator slack: what any process on a GPU costs.
CONTEXT_GB = 0.75


def model_params(arch: dict, vocab_size: int, positions: int) -> int:
    """Parameters of a GPT-2 / RoBERTa-shaped transformer (tied output layer counted once)."""
    d, layers, ffn = int(arch["n_embd"]), int(arch["n_layer"]), int(arch["n_inner"])
    per_layer = 4 * d * d + 4 * d + 2 * d * ffn + ffn + d + 4 * d  # attention, FFN, 2 LayerNorms
    return vocab_size * d + positions * d + layers * per_layer + 2 * d


def train_memory_gb(arch: dict, vocab_size: int, context: int, batch: int, positions: int | None = None,
                    precision: str = "auto") -> float:
    """A deliberately generous estimate of one training job's peak GPU memory (GiB).

    Weights, gradients and AdamW's two moments in fp32 plus a bf16 copy (18 B/param);
    activations per token and layer as in Korthikanti et al. (2022, no recomputation): 34·d
    bytes plus 5·heads·T for materialised attention scores (counted although SDPA often
    avoids them); the logits in bf16, their fp32 copy and its gradient (10 B per token and
    vocabulary entry); and a CUDA context. ``batch`` is the sequences of one forward pass
    (the micro-batch when gradients are accumulated). With ``precision: fp32`` the activations
    are twice as wide (66·d and 9·heads·T: only the dropout masks stay one byte), the logits
    12 B, and there is no bf16 copy (16 B/param); fp16 is estimated as bf16. ``auto`` is estimated
    as bf16 here; povstim.plan makes it fp32 where a visible GPU predates Ampere (:func:`estimate_precision`).
    """
    wide = precision == "fp32"
    n = model_params(arch, vocab_size, positions or context)
    tokens = batch * context
    per_token_layer = (66 if wide else 34) * int(arch["n_embd"]) + (9 if wide else 5) * int(arch["n_head"]) * context
    acts = tokens * int(arch["n_layer"]) * per_token_layer
    logits = tokens * vocab_size * (12 if wide else 10)
    return ((16 if wide else 18) * n + acts + logits) / GIB + CONTEXT_GB


def score_memory_gb(arch: dict, vocab_size: int, positions: int, batch: int, tokens: int = 128) -> float:
    """Peak GPU memory (GiB) of scoring: fp32 weights, fp32 activations of ``batch`` sentences of up
    to ``tokens`` tokens (minimal pairs are short), fp32 logits and log-softmax where scored."""
    n = model_params(arch, vocab_size, positions)
    t = batch * min(tokens, positions)
    acts = t * int(arch["n_embd"]) * 4 * 16
    logits = t * vocab_size * 4 * 2
    return (4 * n + acts + logits) / GIB + CONTEXT_GB


# What the machine's GPUs are, asked of nvidia-smi at DAG-build time (no torch, no CUDA context): the
# `gpus:` defaults describe an 80-GB Ampere-or-later GPU, and a run on a smaller or older one must not
# share it as if it were one (eight 10-GB jobs on a 16-GB T4 run out of memory).
NVIDIA_SMI_ENV = "POVSTIM_NVIDIA_SMI"  # the nvidia-smi to ask ("" asks none: the GPUs are not known here)
_QUERY = ("--query-gpu=index,uuid,name,memory.total,compute_cap", "--format=csv,noheader,nounits")


@dataclass(frozen=True)
class GpuInfo:
    index: int
    uuid: str
    name: str
    memory_gb: float  # GiB
    capability: tuple[int, int]


def parse_inventory(text: str) -> tuple[GpuInfo, ...]:
    """nvidia-smi's ``index, uuid, name, memory.total [MiB], compute_cap`` lines; () for anything else
    (an old driver without compute_cap, an error message): then nothing is known and nothing adapts."""
    gpus = []
    for line in text.splitlines():
        if not line.strip():
            continue
        parts = [p.strip() for p in line.split(",")]
        try:
            index, uuid, name, memory, cap = int(parts[0]), parts[1], ",".join(parts[2:-2]), float(parts[-2]), parts[-1]
            major, minor = (int(x) for x in cap.split("."))
        except (ValueError, IndexError):
            return ()
        gpus.append(GpuInfo(index, uuid, name, memory / 1024, (major, minor)))
    return tuple(gpus)


def _visible(gpus: tuple[GpuInfo, ...], env: Mapping[str, str]) -> tuple[GpuInfo, ...]:
    """The GPUs CUDA_VISIBLE_DEVICES leaves (indices or GPU-UUIDs); () when an entry names none of them
    (a MIG instance: nvidia-smi's row is the whole GPU's, not the instance's memory)."""
    given = env.get("CUDA_VISIBLE_DEVICES")
    if given is None:
        return gpus
    chosen = []
    for entry in (e.strip() for e in given.split(",") if e.strip()):
        match = [g for g in gpus if entry == str(g.index) or entry == g.uuid]
        if not match:
            return ()
        chosen += match
    return tuple(chosen)


@functools.lru_cache(maxsize=8)
def _ask(exe: str) -> tuple[GpuInfo, ...]:
    try:
        out = subprocess.run([exe, *_QUERY], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ()
    return parse_inventory(out.stdout) if out.returncode == 0 else ()


def gpu_inventory(env: Mapping[str, str] | None = None) -> tuple[GpuInfo, ...]:
    """The GPUs this machine's jobs will see, from nvidia-smi (asked once per process); () when there is
    none, no nvidia-smi, or it cannot say (a SLURM login node, a container without the driver's tools)."""
    env = os.environ if env is None else env
    exe = env.get(NVIDIA_SMI_ENV)
    if exe is None:
        exe = shutil.which("nvidia-smi") or ""
    if not exe:
        return ()
    return _visible(_ask(exe), env)


def fitted(settings: GpuSettings, gpus: Sequence[GpuInfo]) -> tuple[GpuSettings, str | None]:
    """``settings`` with ``memory_gb`` lowered to the smallest visible GPU's when that is clearly smaller
    (below 95%: an "80-GB" H100 reports 79.6 GiB), and what to tell the user; unchanged when the GPUs are
    unknown."""
    if not gpus:
        return settings, None
    small = min(gpus, key=lambda g: g.memory_gb)
    if small.memory_gb >= 0.95 * float(settings.memory_gb):
        return settings, None
    return (dataclasses.replace(settings, memory_gb=round(small.memory_gb, 1)),
            f"povstim: gpus.memory_gb is {float(settings.memory_gb):g} GiB, but GPU {small.index} ({small.name}) has "
            f"{small.memory_gb:.1f} GiB: small jobs share GPUs by {small.memory_gb:.1f} GiB "
            f"(set gpus.memory_gb to the GPU's memory to silence this)")


def estimate_precision(requested: str, gpus: Sequence[GpuInfo]) -> str:
    """The precision a memory estimate assumes for ``training.precision`` (:func:`train_precision` decides the
    run's own on the job's device): ``auto`` trains in fp32 on GPUs before Ampere, so where any visible GPU is
    one, its jobs are estimated fp32-wide; unknown GPUs are taken as bf16-capable."""
    if requested == "auto" and any(not tensor_core_dtypes(g.capability) for g in gpus):
        return "fp32"
    return requested


def share_slots(settings: GpuSettings, memory_gb: float) -> int:
    """POVSTIM_GPU_SHARE of a job needing ``memory_gb``: ``gpus.slots`` when it fits in one slot's share
    of the GPU's memory (memory_gb / slots), else 1 (it holds the GPU alone)."""
    slots = int(settings.slots)
    if slots > 1 and memory_gb <= float(settings.memory_gb) / slots:
        return slots
    return 1
