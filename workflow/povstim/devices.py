"""Which torch device a training or scoring job runs on.

``resolve_device("auto")`` picks a GPU when CUDA is visible and the CPU
otherwise. Snakemake counts GPUs (``--resources gpu=N``) but never says WHICH
GPU a job should use, so on a multi-GPU machine every concurrent job would
default to ``cuda:0``. To spread them, a job that asks for ``auto`` or
``cuda`` claims one GPU *slot* -- one entry of ``CUDA_VISIBLE_DEVICES`` (or
``0..device_count-1`` when it is unset) -- by taking an exclusive ``flock`` on
``<lock dir>/gpu<ID>.lock`` and keeps it until the process exits. The kernel
drops a flock when its holder dies, however it dies, so a crashed job never
leaves a GPU claimed.

The lock directory is ``$POVSTIM_GPU_LOCK_DIR`` when set, else
``<tmp>/povstim-gpu-locks``. Inside a SLURM job it gets a ``job<SLURM_JOB_ID>``
subdirectory: SLURM already gives each job its own GPUs (and often renumbers
them from 0 in every job), so slots are only shared between the steps of one
job -- e.g. the scoring jobs of one Snakemake group job.

Small jobs share a GPU. A job started with ``POVSTIM_GPU_SHARE=N`` (N > 1; the
rules set it from the ``gpus:`` config section, see :func:`share_slots`) does not
take the GPU for itself: it takes a *shared* flock on ``gpu<ID>.lock`` plus an
exclusive flock on one of N slot files ``gpu<ID>.slot<k>.lock``, so at most N
small jobs run on one GPU at once. flock's own semantics keep big jobs apart from
small ones: an exclusive job's ``LOCK_EX`` cannot be granted while any small job
holds ``LOCK_SH`` and vice versa. So that a stream of small jobs cannot starve a
big one, a waiting exclusive job holds ``gpu<ID>.gate`` exclusively; small jobs
take the gate shared while they join, so they stop joining that GPU and it
drains. Small jobs fill the first GPU that has room (first fit), which leaves the
other GPUs whole for exclusive jobs.

``cuda:N`` is taken literally (no slot is claimed); ``cpu`` is the CPU.

CPU jobs share the cores too: :func:`job_environment` is what a run's jobs get so that they do.
"""

from __future__ import annotations

import dataclasses
import errno
import fcntl
import functools
import glob
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from .io import PovstimError

log = logging.getLogger(__name__)

LOCK_DIR_ENV = "POVSTIM_GPU_LOCK_DIR"
WAIT_ENV = "POVSTIM_GPU_WAIT"
SHARE_ENV = "POVSTIM_GPU_SHARE"

# The slot this process holds, if any: the open lock file must stay open for
# as long as the process uses the GPU (closing it releases the flock).
_held: "GpuSlot | None" = None


@dataclass
class GpuSlot:
    """One claimed GPU: ``index`` is its position among the visible devices
    (what torch calls ``cuda:<index>``), ``device_id`` the entry of
    CUDA_VISIBLE_DEVICES it corresponds to. ``share`` is 1 for a GPU held alone,
    N for one of N shared slots (``slot`` says which)."""

    index: int
    device_id: str
    lock_path: Path
    _fd: int
    share: int = 1
    slot: int | None = None
    _slot_fd: int = -1
    # seconds acquire_gpu waited for this slot (every slot taken): a job's log reports it apart from its work
    waited: float = 0.0

    @property
    def torch_device(self) -> str:
        return f"cuda:{self.index}"

    @property
    def shared(self) -> bool:
        return self.share > 1

    def release(self) -> None:
        for name in ("_slot_fd", "_fd"):
            fd = getattr(self, name)
            if fd >= 0:
                os.close(fd)  # closing drops the flock
                setattr(self, name, -1)


def visible_slots(env: Mapping[str, str] | None = None, device_count: int | None = None) -> list[str]:
    """The GPU ids this process may use, in torch's index order.

    From CUDA_VISIBLE_DEVICES when it is set (ids or UUIDs, comma-separated;
    an empty value or ``-1`` hides every GPU), else ``0..device_count-1``.
    """
    env = os.environ if env is None else env
    raw = env.get("CUDA_VISIBLE_DEVICES")
    if raw is not None:
        ids = []
        for part in raw.split(","):
            part = part.strip()
            # CUDA stops enumerating at the first invalid entry; -1 is the
            # conventional "no GPU" value.
            if not part or part.startswith("-"):
                break
            ids.append(part)
        return ids
    if device_count is None:
        import torch

        device_count = torch.cuda.device_count()
    return [str(i) for i in range(device_count)]


def lock_dir(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    base = Path(env.get(LOCK_DIR_ENV) or Path(tempfile.gettempdir()) / "povstim-gpu-locks")
    job = env.get("SLURM_JOB_ID")
    return base / f"job{job}" if job else base


def _safe_name(device_id: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in device_id)


def _flock(path: Path, mode: int) -> int | None:
    """An open fd holding ``mode`` (LOCK_EX or LOCK_SH) on ``path``, or None when another process blocks it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, mode | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return None
        raise
    return fd


def _sign(fd: int) -> None:
    # For humans debugging a busy machine: who holds which GPU (or slot).
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())


def _try_lock(path: Path) -> int | None:
    fd = _flock(path, fcntl.LOCK_EX)
    if fd is not None:
        _sign(fd)
    return fd


def _paths(directory: Path, device_id: str) -> tuple[Path, Path]:
    name = _safe_name(device_id)
    return directory / f"gpu{name}.lock", directory / f"gpu{name}.gate"


def _slot_path(directory: Path, device_id: str, k: int) -> Path:
    return directory / f"gpu{_safe_name(device_id)}.slot{k}.lock"


def shared_holders(directory: Path, device_id: str) -> int:
    """How many small jobs share this GPU now (slot files someone holds)."""
    n = 0
    for path in glob.glob(str(directory / f"gpu{_safe_name(device_id)}.slot*.lock")):
        fd = _flock(Path(path), fcntl.LOCK_EX)
        if fd is None:
            n += 1
        else:
            os.close(fd)
    return n


def _try_exclusive(directory: Path, index: int, device_id: str) -> GpuSlot | None:
    path, _ = _paths(directory, device_id)
    fd = _try_lock(path)
    return None if fd is None else GpuSlot(index=index, device_id=device_id, lock_path=path, _fd=fd)


def _try_shared(directory: Path, index: int, device_id: str, share: int) -> GpuSlot | None:
    path, gate_path = _paths(directory, device_id)
    # The gate is held exclusively by an exclusive job waiting for this GPU: then join no more.
    # Holding it shared while joining means that job cannot start gating halfway through.
    gate = _flock(gate_path, fcntl.LOCK_SH)
    if gate is None:
        return None
    try:
        fd = _flock(path, fcntl.LOCK_SH)  # fails while an exclusive job holds the GPU
        if fd is None:
            return None
        for k in range(share):
            slot_path = _slot_path(directory, device_id, k)
            slot_fd = _flock(slot_path, fcntl.LOCK_EX)
            if slot_fd is not None:
                _sign(slot_fd)
                return GpuSlot(index=index, device_id=device_id, lock_path=path, _fd=fd, share=share, slot=k,
                               _slot_fd=slot_fd)
        os.close(fd)  # all `share` slots of this GPU are taken
        return None
    finally:
        os.close(gate)


def _gate(directory: Path, slots: Sequence[str]) -> int | None:
    """An exclusive job that has to wait: hold the gate of the GPU that drains first (fewest small jobs)."""
    order = sorted(range(len(slots)), key=lambda i: (shared_holders(directory, slots[i]), i))
    for i in order:
        fd = _flock(_paths(directory, slots[i])[1], fcntl.LOCK_EX)
        if fd is not None:
            return fd
    return None


def acquire_gpu(
    slots: Sequence[str],
    directory: Path,
    *,
    wait: float | None = None,
    poll: float = 0.5,
    share: int = 1,
) -> GpuSlot:
    """Claim a GPU of ``slots``: the first free one for itself (``share`` 1), or, for a small job
    (``share`` N > 1), one of N shared slots of the first GPU that has one free and no exclusive holder.

    Waits up to ``wait`` seconds (forever when None) -- an exclusive job waits when more exclusive GPU
    jobs run than GPUs exist (``--resources gpu=N`` above the GPU count) or while small jobs drain
    from a GPU; a small job when every slot of every GPU is taken -- then raises PovstimError.
    """
    if not slots:
        raise PovstimError("no GPU slot to claim: CUDA_VISIBLE_DEVICES lists no device")
    if share < 1:
        raise PovstimError(f"GPU share must be at least 1 job per GPU, got {share}")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PovstimError(f"cannot create the GPU lock directory {directory}: {exc} (set ${LOCK_DIR_ENV})") from None
    started = time.monotonic()
    deadline = None if wait is None else started + wait
    told = False
    gate = None
    try:
        while True:
            for index, device_id in enumerate(slots):
                try:
                    got = (_try_shared(directory, index, device_id, share) if share > 1
                           else _try_exclusive(directory, index, device_id))
                except OSError as exc:
                    raise PovstimError(f"cannot lock a GPU in {directory}: {exc} (set ${LOCK_DIR_ENV})") from None
                if got is not None:
                    got.waited = time.monotonic() - started
                    return got
            if share == 1 and gate is None:
                gate = _gate(directory, slots)
            if deadline is not None and time.monotonic() >= deadline:
                what = (f"all {share} shared slots of each of the {len(slots)} GPU(s) ({','.join(slots)})"
                        if share > 1 else f"all {len(slots)} GPU(s) ({','.join(slots)})")
                hint = ("run fewer small GPU jobs at once, or raise gpus.slots" if share > 1
                        else "run fewer GPU jobs at once (--resources gpu=N)")
                raise PovstimError(f"{what} stayed busy for {wait:g} s (locks in {directory}); {hint}")
            if not told:
                log.warning("no GPU is free for this %s job (locks in %s); waiting for one",
                            "small (shared)" if share > 1 else "exclusive", directory)
                told = True
            time.sleep(poll)
    finally:
        if gate is not None:
            os.close(gate)


def share_from_env(env: Mapping[str, str] | None = None) -> int:
    """``$POVSTIM_GPU_SHARE``: how many small jobs may share this job's GPU (1 or unset: none)."""
    env = os.environ if env is None else env
    raw = (env.get(SHARE_ENV) or "").strip()
    if not raw:
        return 1
    try:
        share = int(raw)
    except ValueError:
        share = 0
    if share < 1:
        raise PovstimError(f"${SHARE_ENV} must be a whole number of jobs per GPU (1 or more), got {raw!r}")
    return share


def claim_gpu(share: int | None = None) -> GpuSlot:
    """This process's GPU slot, claimed on first call and held until exit.

    ``share``: N > 1 claims one of N shared slots (a small job), 1 the whole GPU;
    None reads ``$POVSTIM_GPU_SHARE`` (unset: the whole GPU).
    """
    global _held
    if _held is None or _held._fd < 0:
        wait_env = os.environ.get(WAIT_ENV)
        try:
            wait = float(wait_env) if wait_env else None
        except ValueError:
            raise PovstimError(f"${WAIT_ENV} must be a number of seconds, got {wait_env!r}") from None
        share = share_from_env() if share is None else int(share)
        _held = acquire_gpu(visible_slots(), lock_dir(), wait=wait, share=share)
        how = f"shared slot {_held.slot + 1} of {_held.share}" if _held.shared else "exclusive"
        waited = f", after waiting {_held.waited:.1f} s for it" if _held.waited >= 0.05 else ""
        print(
            f"povstim: using GPU {_held.device_id} as {_held.torch_device} ({how}, lock {_held.lock_path}{waited})",
            file=sys.stderr,
        )
    return _held


def held_gpu() -> GpuSlot | None:
    """The slot this process holds (None: none claimed, e.g. on the CPU or with ``cuda:N``)."""
    return _held if _held is not None and _held._fd >= 0 else None


def release_gpu() -> None:
    """Give the claimed slot back early (exit releases it anyway)."""
    global _held
    if _held is not None:
        _held.release()
        _held = None


def gpu_visible(env: Mapping[str, str] | None = None, dev_dir: str = "/dev") -> bool:
    """Whether an NVIDIA GPU is visible to jobs: a /dev/nvidiaN node and CUDA_VISIBLE_DEVICES not hiding it.

    Importing torch just to ask would add seconds to every Snakemake start.
    """
    env = os.environ if env is None else env
    cvd = env.get("CUDA_VISIBLE_DEVICES")
    if cvd is not None and cvd.strip() in ("", "-1"):
        return False
    return bool(glob.glob(os.path.join(dev_dir, "nvidia[0-9]*")))


def job_gpus(device: str | None, env: Mapping[str, str] | None = None, dev_dir: str = "/dev") -> int:
    """Units of Snakemake's ``gpu`` resource a job with this ``device`` setting holds.

    The one answer to "does this job use a GPU": 1 only when it really will
    (``cuda``/``cuda:N``, or ``auto`` with a GPU visible), so ``--resources gpu=1``
    never serialises CPU-only jobs. Decided at DAG-build time, without torch.
    """
    device = str(device or "auto").strip().lower()
    if device.startswith("cuda"):
        return 1
    return 1 if device == "auto" and gpu_visible(env, dev_dir) else 0


def resolve_device(requested: str = "auto", share: int | None = None, parts: dict | None = None) -> str:
    """A torch device string for ``requested`` (auto, cpu, cuda or cuda:N).

    ``auto`` and ``cuda`` claim a free GPU slot (see the module docstring) and
    return ``cuda:<its index>``; ``auto`` falls back to ``cpu`` without CUDA.
    ``share`` as in :func:`claim_gpu`. ``parts``: filled with the seconds the
    CUDA driver's start-up (``driver``: none where a warm-start ready child
    started it, povstim/warm.py), the slot claim (``slot``) and torch's own
    CUDA initialisation (``torch``) took; the device's context may come
    later, with the job's first allocation on it.
    """
    requested = (requested or "auto").strip().lower()
    if requested == "cpu":
        return "cpu"
    if requested not in ("auto", "cuda") and not requested.startswith("cuda:"):
        raise PovstimError(f"unknown device '{requested}': use auto, cpu, cuda or cuda:N")
    import torch

    parts = {} if parts is None else parts
    started = time.perf_counter()
    available = torch.cuda.is_available()  # cuInit, through the device count
    parts["driver"] = time.perf_counter() - started
    if not available:
        if requested == "auto":
            return "cpu"
        raise PovstimError(f"device '{requested}' was requested but no CUDA device is visible")
    if requested.startswith("cuda:"):
        index = requested.split(":", 1)[1]
        if not index.isdigit() or int(index) >= torch.cuda.device_count():
            raise PovstimError(
                f"device '{requested}' does not exist: {torch.cuda.device_count()} CUDA device(s) visible"
            )
        return requested
    started = time.perf_counter()
    slot = claim_gpu(share)
    parts["slot"] = time.perf_counter() - started
    # Make it the current device too, so anything that allocates on "the"
    # GPU (CUDA contexts, library defaults) lands on this job's GPU, not cuda:0.
    started = time.perf_counter()
    torch.cuda.set_device(slot.index)
    parts["torch"] = time.perf_counter() - started
    return slot.torch_device


# --- what a GPU's tensor cores take ------------------------------------------------------------------

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
    from .schema import load_schema

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


# --- which jobs share a GPU [issue 13] --------------------------------------------------------------
#
# Decided at DAG-build time, without torch, from the config's `gpus:` section and an estimate of the
# job's GPU memory. A small job holds no unit of Snakemake's `gpu` resource (so `--resources gpu=1`
# does not serialise it) and gets POVSTIM_GPU_SHARE=<gpus.slots> instead; a big one holds one unit
# and the whole GPU, as before.

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


def job_environment(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """Variables the Snakefile sets for every job of a run (and the warm-start server, which must match them).

    ``OMP_WAIT_POLICY=PASSIVE``: torch's OpenMP threads sleep when idle instead of spinning on a core. A run's
    CPU jobs share the machine (``--cores 8`` on a 2-core laptop runs four 2-thread scoring jobs at once), and a
    spinning thread takes the core another job needs: four of the demo's score jobs at once on the 2-core
    development machine took 22.5-23.9 s spinning and 11.6-12.2 s sleeping (one thread each: 11.4-11.5 s),
    while a job alone was as fast either way (GPT-2 small, 2,000 pairs, 2 threads: 48.0-49.5 s vs 49.0-49.7 s;
    only work in tiny pieces pays for the wake-ups: a demo model's 0.13-s scoring pass takes 0.20 s). A value the
    user set is kept."""
    env = os.environ if env is None else env
    return {} if "OMP_WAIT_POLICY" in env else {"OMP_WAIT_POLICY": "PASSIVE"}
