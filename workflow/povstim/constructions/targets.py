"""The benchmark paradigms a construction names (``targets: {blimp, zorro, posh}``) must exist in their suite.

A construction's targets are the paradigms its removal should affect (the Δ-accuracy table compares them
with the others). A misspelt name would silently make the table measure nothing, so every name is checked
against the suite's paradigm list: BLiMP's and Zorro's are the file names of the suite's folder
(``{UID}.jsonl``, ``{paradigm}.txt``: what the importers call a paradigm), POSH's the generated POSH-BENCH
paradigms (given by the caller: ``benchmarks`` sits above this layer). A suite whose list is unknown (its
folder is absent) is not checked. No target at all is a warning, not an error (``library.warn_untargeted``).
"""

from __future__ import annotations

import difflib
from pathlib import Path

from ..io import PovstimError
from .library import CONSTRUCTIONS

# suite -> the file pattern of one paradigm in the suite's folder (benchmarks.importers: the stem is the name)
SUITE_FILES = {"blimp": "*.jsonl", "zorro": "*.txt"}


def paradigms_in(folder: str | Path, suite: str) -> frozenset[str] | None:
    """The paradigm names of a BLiMP or Zorro folder (None when the folder is absent or holds none)."""
    folder = Path(folder)
    if not folder.is_dir():
        return None
    names = frozenset(p.stem for p in folder.glob(SUITE_FILES[suite]))
    return names or None


def check_targets(names, known: dict[str, frozenset | set | None]) -> int:
    """Raise when a construction among ``names`` names a paradigm its suite does not have; the error names
    the construction's file:line (or config key), the ``targets.<suite>`` key and the nearest names.
    Python phenomena and suites whose list is None are skipped. Returns the number of names checked."""
    n = 0
    for name in names:
        c = CONSTRUCTIONS.get(name)
        if c is None:
            continue
        for suite, wanted in sorted(c.targets.items()):
            have = known.get(suite)
            if have is None:
                continue
            for t in wanted:
                n += 1
                if t in have:
                    continue
                near = difflib.get_close_matches(t, sorted(have), n=3, cutoff=0.6)
                hint = f" (did you mean {', '.join(repr(x) for x in near)}?)" if near else ""
                raise PovstimError(f"{c.origin}: construction {name!r}: targets.{suite}: {t!r} is not a {suite} "
                                   f"paradigm{hint}; the suite has {len(have)} paradigms")
    return n
