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
