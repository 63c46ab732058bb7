"""The ``guardrails:`` section's settings, in a module of their own: ``povstim analyze`` reads a default from
them (the reinsertion share of its BABY-F vs BABY caveat) without importing the checks, so editing a check
reruns the guardrails job and not the analysis."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GuardrailSettings:
    """The ``guardrails:`` section (defaults: workflow/schemas/config/guardrails.schema.yaml)."""

    still_learning: float
    min_evals: int
    confidence: float
    window: float
    decayed_lr: float
    overfit_rise: float
    equal_tokens: float
    lexical_spread: float
    min_items: int
    alpha: float
    baseline_solves: float
    reinsert_share: float
    size_label: float
