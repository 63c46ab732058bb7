"""The ``acquisition:`` section's settings, in a module of their own: the word-curves stage reads them
without importing the acquisition fits (whose hierarchical method imports PyMC), so that stage's
environment and code hash stay those of a scoring job."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AcquisitionSettings:
    method: str  # hierarchical | per_seed
    min_checkpoints: int
    min_gain: float
    interval: float
    childes: list | None
    child_words: list | None
    contexts: int  # word learning: training sentences per word
    word_learning: bool
    draws: int  # the hierarchical fit's NUTS run (acquisition_bayes.py)
    tune: int
    chains: int
    seed: int
    sampler: str
