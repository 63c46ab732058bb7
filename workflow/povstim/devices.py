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

``cuda:N`` is taken literally (no slot is claimed); ``cpu`` is the CPU.
"""

from __future__ import annotations

import errno
import fcntl
import glob
import logging
import os
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

# The slot this process holds, if any: the open lock file must stay open for
# as long as the process uses the GPU (closing it releases the flock).
_held: "GpuSlot | None" = None


@dataclass
class GpuSlot:
    """One claimed GPU: ``index`` is its position among the visible devices
    (what torch calls ``cuda:<index>``), ``device_id`` the entry of
    CUDA_VISIBLE_DEVICES it corresponds to."""

    index: int
    device_id: str
    lock_path: Path
    _fd: int

    @property
    def torch_device(self) -> str:
        return f"cuda:{self.index}"

    def release(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)  # closing drops the flock
            self._fd = -1


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


def _try_lock(path: Path) -> int | None:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return None
        raise
    # For humans debugging a busy machine: who holds which GPU.
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd


def acquire_gpu(
    slots: Sequence[str],
    directory: Path,
    *,
    wait: float | None = None,
    poll: float = 0.5,
) -> GpuSlot:
    """Claim the first free slot of ``slots`` (an exclusive flock per slot).

    Waits up to ``wait`` seconds (forever when None) for a slot to free up --
    that only happens when more GPU jobs run than GPUs exist, i.e. when
    ``--resources gpu=N`` exceeds the GPU count -- then raises PovstimError.
    """
    if not slots:
        raise PovstimError("no GPU slot to claim: CUDA_VISIBLE_DEVICES lists no device")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PovstimError(f"cannot create the GPU lock directory {directory}: {exc} (set ${LOCK_DIR_ENV})") from None
    deadline = None if wait is None else time.monotonic() + wait
    told = False
    while True:
        for index, device_id in enumerate(slots):
            path = directory / f"gpu{_safe_name(device_id)}.lock"
            try:
                fd = _try_lock(path)
            except OSError as exc:
                raise PovstimError(f"cannot lock {path}: {exc} (set ${LOCK_DIR_ENV})") from None
            if fd is not None:
                return GpuSlot(index=index, device_id=device_id, lock_path=path, _fd=fd)
        if deadline is not None and time.monotonic() >= deadline:
            raise PovstimError(
                f"all {len(slots)} GPU(s) ({','.join(slots)}) stayed busy for {wait:g} s "
                f"(locks in {directory}); run fewer GPU jobs at once (--resources gpu=N)"
            )
        if not told:
            log.warning("all %d GPU(s) are busy (locks in %s); waiting for one", len(slots), directory)
            told = True
        time.sleep(poll)


def claim_gpu() -> GpuSlot:
    """This process's GPU slot, claimed on first call and held until exit."""
    global _held
    if _held is None or _held._fd < 0:
        wait_env = os.environ.get(WAIT_ENV)
        try:
            wait = float(wait_env) if wait_env else None
        except ValueError:
            raise PovstimError(f"${WAIT_ENV} must be a number of seconds, got {wait_env!r}") from None
        _held = acquire_gpu(visible_slots(), lock_dir(), wait=wait)
        print(
            f"povstim: using GPU {_held.device_id} as {_held.torch_device} (lock {_held.lock_path})",
            file=sys.stderr,
        )
    return _held


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


def resolve_device(requested: str = "auto") -> str:
    """A torch device string for ``requested`` (auto, cpu, cuda or cuda:N).

    ``auto`` and ``cuda`` claim a free GPU slot (see the module docstring) and
    return ``cuda:<its index>``; ``auto`` falls back to ``cpu`` without CUDA.
    """
    requested = (requested or "auto").strip().lower()
    if requested == "cpu":
        return "cpu"
    if requested not in ("auto", "cuda") and not requested.startswith("cuda:"):
        raise PovstimError(f"unknown device '{requested}': use auto, cpu, cuda or cuda:N")
    import torch

    if not torch.cuda.is_available():
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
    slot = claim_gpu()
    # Make it the current device too, so anything that allocates on "the"
    # GPU (CUDA contexts, library defaults) lands on this job's GPU, not cuda:0.
    torch.cuda.set_device(slot.index)
    return slot.torch_device
