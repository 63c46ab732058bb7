"""``fork_map``: a pure function over many items in forked worker processes, results in input order.

The items (parsed sentences, data frames of a figure) are inherited by the forked
workers rather than pickled to them; only each worker's results travel back. Where
fork is unavailable (Windows) or one job is asked for, the same calls run here, one
after another, so the results never depend on the number of processes -- the stages
that use it (``povstim filter``, ``povstim figures``) write the same bytes either way.
"""

from __future__ import annotations

import multiprocessing
from typing import Callable, Sequence, TypeVar

T = TypeVar("T")
R = TypeVar("R")

# (function, items) of the running fork_map: set before the pool forks, so its workers inherit both
_WORK: tuple[Callable, Sequence] | None = None


def fork_map(fn: Callable[[T], R], items: Sequence[T], jobs: int, chunk: int | None = None) -> list[R]:
    """``[fn(x) for x in items]`` by up to ``jobs`` forked processes, each given spans of ``chunk`` items
    (default: about four spans per process). An exception in a worker is raised here."""
    if jobs <= 1 or len(items) <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        return [fn(x) for x in items]
    global _WORK
    chunk = chunk or max(1, -(-len(items) // (4 * jobs)))
    spans = [(start, min(len(items), start + chunk)) for start in range(0, len(items), chunk)]
    _WORK = (fn, items)
    try:
        with multiprocessing.get_context("fork").Pool(min(jobs, len(spans))) as pool:
            parts = pool.map(_run_span, spans, chunksize=1)
    finally:
        _WORK = None
    return [r for part in parts for r in part]


def _run_span(span: tuple[int, int]) -> list:
    fn, items = _WORK
    return [fn(items[i]) for i in range(*span)]
