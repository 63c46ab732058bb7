"""fork_map: results in input order whatever the number of processes; a worker's error is raised here."""

from __future__ import annotations

import os

import pytest

from povstim.forkmap import fork_map
from povstim.io import PovstimError


def test_results_keep_the_input_order_across_spans_and_processes():
    items = list(range(103))
    for jobs, chunk in ((1, None), (2, None), (3, 7), (8, 1), (200, None)):
        assert fork_map(lambda x: x * x, items, jobs, chunk) == [x * x for x in items]
    assert fork_map(lambda x: x, [], 4) == []


def test_work_is_done_in_other_processes_when_asked():
    pids = set(fork_map(lambda _: os.getpid(), range(8), 2, chunk=1))
    assert os.getpid() not in pids and len(pids) >= 1
    assert set(fork_map(lambda _: os.getpid(), range(8), 1)) == {os.getpid()}


def test_a_workers_error_is_raised_with_its_message():
    def check(x):
        if x == 5:
            raise PovstimError(f"item {x} is bad")
        return x

    with pytest.raises(PovstimError, match="item 5 is bad"):
        fork_map(check, range(10), 3)
