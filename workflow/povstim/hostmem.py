"""Host memory for the scoring and training stages: freed blocks stay with the process for the next allocation.

glibc's malloc gives the top of its heap back to the OS once more than its *trim threshold* of it is free,
and serves blocks above its *mmap threshold* with a fresh mmap each time. By default it moves both as the
process runs (the mmap threshold up to the largest mmapped block freed so far, at most 32 MB on 64-bit, the
trim threshold to twice that). Either way a block of a few tens of MB, allocated and freed over and over, comes
back from the kernel as fresh zeroed pages each time: thousands of page faults per block.

- A CPU scoring job: each chunk of the vocabulary head (``scoring.scorer.SOFTMAX_CHUNK``) allocates 16 MB of
  logits and 16 MB of their log-softmax and frees both, 32 MB at the top of the heap, which glibc trimmed.
  Measured on the 2-core machine (2026-11-28): a 1-layer GPT-2 with a 32k vocabulary scoring 20,000 pairs took
  50 s with 38 s of system time (medians of 5 runs); with the thresholds fixed, 33 s with 1 s.
- A CPU training job: a step's vocabulary logits and their gradient are over 32 MB with a big vocabulary
  (134 MB for 16 x 64 tokens of a 32k vocabulary), so each was a fresh mmap: a 2 x 128 GPT-2 with a 32k
  vocabulary took 52.2 s for 60 steps with 15.5 s of system time, and 40.0 s with 1.3 s with the training
  thresholds, at a 39% higher peak (1,438 vs 1,033 MiB): freed blocks stay resident and the heap fragments
  (docs/training.md traces it).

:func:`keep_freed_memory` fixes both thresholds, per stage (:data:`STAGES`), so those blocks come from the heap
and are reused; freed memory under the trim threshold is not handed back until the process ends (each job is
its own process, or a fork of the warm-start server that exits after its job). ``POVSTIM_HOSTMEM=glibc`` leaves
glibc's own (and a user's ``GLIBC_TUNABLES``). Only glibc has ``mallopt`` with these parameters; elsewhere
(macOS, musl) nothing changes. docs/evaluation.md and docs/training.md have the measurements.
"""

from __future__ import annotations

import ctypes
import logging
import os
import sys

log = logging.getLogger(__name__)

# mallopt's parameter numbers (glibc's malloc.h)
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3

# per stage (cli.main calls keep_freed_memory for these): (mmap threshold, trim threshold), as measured
# (docs/evaluation.md, docs/training.md). Scoring: blocks up to 32 MB (where glibc's own dynamic mmap threshold
# stops rising on 64-bit) from the heap, which holds the head's 16-MB chunks; a 1-GB mmap threshold was no faster
# there and raised GPT-2 small's peak by 14%. Training: a step's vocabulary logits and their gradients are bigger
# than 32 MB (134 MB for 1,024 tokens of a 32k vocabulary), so its blocks up to 1 GB come from the heap too.
STAGES = {
    "score": (32 << 20, 1 << 30),
    "score-group": (32 << 20, 1 << 30),
    "train": (1 << 30, (1 << 31) - 1),
}
MMAP_THRESHOLD, TRIM_THRESHOLD = STAGES["score"]

ENV = "POVSTIM_HOSTMEM"  # "keep" (the default) or "glibc": leave glibc's own thresholds (and GLIBC_TUNABLES) alone
CHOICES = ("keep", "glibc")


def wanted(env=None) -> bool:
    """Whether this process should fix the thresholds: not under ``POVSTIM_HOSTMEM=glibc``, which leaves them to
    glibc (and to a user's ``GLIBC_TUNABLES``). Another value is named in a warning and also leaves them alone."""
    value = (os.environ if env is None else env).get(ENV, "").strip().lower() or "keep"
    if value not in CHOICES:
        log.warning("%s=%r is not one of %s; leaving glibc's malloc thresholds as they are", ENV, value,
                    ", ".join(CHOICES))
        return False
    return value == "keep"


def _glibc():
    """glibc's handle, or None where the C library is another (musl has a mallopt that ignores these)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        # this process's own symbols (libc is loaded already; find_library would run ldconfig in a subprocess)
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018 -- glibc only: an AttributeError elsewhere
    except (OSError, AttributeError):
        return None
    libc.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    libc.mallopt.restype = ctypes.c_int
    return libc


def keep_freed_memory(mmap_threshold: int = MMAP_THRESHOLD, trim_threshold: int = TRIM_THRESHOLD) -> bool:
    """Fix glibc's mmap and trim thresholds for this process (see the module docstring); True when both were
    set. Setting either stops glibc from moving them, so both are set, the mmap threshold first."""
    libc = _glibc()
    if libc is None:
        return False
    done = bool(libc.mallopt(M_MMAP_THRESHOLD, int(mmap_threshold))) and bool(
        libc.mallopt(M_TRIM_THRESHOLD, int(trim_threshold)))
    if not done:  # a value this glibc refuses; after a refused mmap threshold the trim threshold is not set
        log.debug("mallopt refused the thresholds (mmap %d, trim %d)", mmap_threshold, trim_threshold)
    return done
