"""Host memory for the scoring stages: freed blocks stay with the process for the next allocation.

glibc's malloc gives the top of its heap back to the OS once more than its *trim threshold* of it is free,
and serves blocks above its *mmap threshold* with a fresh mmap each time. By default it moves both as the
process runs (the mmap threshold up to the largest mmapped block freed so far, the trim threshold to twice
that). A CPU scoring job sits right at those thresholds: each chunk of the vocabulary head
(``scoring.scorer.SOFTMAX_CHUNK``) allocates 16 MB of logits and 16 MB of their log-softmax and frees both,
32 MB at the top of the heap, so glibc trimmed it and the next chunk got the memory back from the kernel as
fresh zeroed pages: thousands of page faults per chunk. Measured on the 2-core machine (2026-11-28): a 1-layer
GPT-2 with a 32k vocabulary scoring 20,000 pairs took 50 s with 38 s of system time (medians of 5 runs);
with the thresholds fixed, 33 s with 1 s (docs/evaluation.md).

:func:`keep_freed_memory` fixes both thresholds: blocks up to 32 MB (where glibc's own mmap threshold stops rising
on 64-bit) come from the heap, and up to 1 GB free at its top stays there, so a chunk reuses the last chunk's memory.
Freed memory below 1 GB is not handed back until the process ends (each job is its own process, or a fork of
the warm-start server that exits after its job); the measured jobs' peaks grew 2-4%.
Only glibc has ``mallopt`` with these parameters; elsewhere (macOS, musl) nothing changes.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import sys

log = logging.getLogger(__name__)

# the stages whose CPU work is the chunked vocabulary head (cli.main calls keep_freed_memory there); a demo train
# job ran no faster with it (1.00x, docs/evaluation.md), so the others keep glibc's own thresholds
STAGES = frozenset({"score", "score-group"})

# mallopt's parameter numbers (glibc's malloc.h)
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3

# where glibc's own dynamic mmap threshold stops rising on 64-bit (DEFAULT_MMAP_THRESHOLD_MAX): blocks above it
# are mmapped, as before (the measured setting; larger ones were not tried)
MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 1 << 30


def _glibc():
    """glibc's handle, or None where the C library is another (musl has a mallopt that ignores these)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        version = libc.gnu_get_libc_version  # glibc only
    except (OSError, AttributeError):
        return None
    version.restype = ctypes.c_char_p
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
