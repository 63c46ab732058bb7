"""Stopping a training run the way a kill does, at a chosen step (the resume tests of every learner)."""

from __future__ import annotations

import pytest


def stop_at(tr, step: int) -> None:
    """Run the trainer ``tr`` and stop it as a kill would when it starts ``step``: after the checkpoints of the
    steps before it, before any later one, without a final model."""
    real_step = tr.train_step

    def train_step(s):
        if s == step:
            raise KeyboardInterrupt
        return real_step(s)

    tr.train_step = train_step
    with pytest.raises(KeyboardInterrupt):
        tr.run()


def sigint_as_in_a_terminal() -> None:
    """Give SIGINT Python's KeyboardInterrupt handler, as in a terminal. A test run started in the background
    (``cmd &`` in a script, nohup) inherits SIGINT *ignored*, and a process that ignores it cannot be stopped
    by Ctrl-C: the interrupt tests would test nothing. Used as ``preexec_fn`` of the children they signal (their
    Python then installs its own handler at start) and in-process before a handler is installed."""
    import signal

    signal.signal(signal.SIGINT, signal.default_int_handler)
