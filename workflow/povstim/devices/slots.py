"""Which torch device a training or scoring job runs on, and which GPU slot it holds.

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

from ..io import PovstimError

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
