"""scripts/power_recovery.py's simulator against hand-computed expectations (the benchmark itself fits Bambi per
replicate and is not a test)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from scipy.special import expit, logit

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("power_recovery", REPO / "scripts" / "power_recovery.py")
PR = importlib.util.module_from_spec(spec)
spec.loader.exec_module(PR)

PARADIGMS = {"p1": "Binding", "p2": "Island", "p3": "Wanna"}


def _runs(n_per_level: int, size="10k"):
    return [{"arch": "a", "condition": lv.lower(), "level": lv, "size": size, "seed": s}
            for lv in ("BABY-F", "BABY", "WIKI") for s in range(1, n_per_level + 1)]


def test_planted_shifts_are_the_stated_contrasts():
    shifts = PR.level_shifts({"BABY-F vs. BABY": 0.18, "BABY vs. WIKI": 0.18})
    assert shifts["BABY-F"] - shifts["BABY"] == pytest.approx(0.18)
    assert shifts["BABY"] - shifts["WIKI"] == pytest.approx(0.18)
    assert shifts["BABY-F"] - shifts["WIKI"] == pytest.approx(0.36)


def test_without_random_effects_every_cell_is_at_its_planted_accuracy():
    """No run, phenomenon, seed or size variation: each level's proportion is expit(logit(0.643) + shift), by hand,
    within the binomial SE of 10^6 items."""
    shifts = {"BABY-F": 0.18, "BABY": 0.0, "WIKI": -0.18}
    df = PR.simulate(_runs(2), PARADIGMS, 10**6, 0.643, shifts, 0.0, np.random.default_rng(1),
                     phenomenon_sd=0.0, seed_sd=0.0, size_slope=0.0)
    assert len(df) == 3 * 2 * 3 and (df["n_total"] == 10**6).all()
    for lv, shift in shifts.items():
        p = expit(logit(0.643) + shift)
        got = df[df["source_filter"] == lv]
        assert np.allclose(got["n_correct"] / got["n_total"], p, atol=5 * np.sqrt(p * (1 - p) / 10**6))


def test_a_run_deviation_is_shared_by_its_paradigms_with_the_stated_sd():
    """run_sd 0.5 and nothing else: within a run every paradigm has the same log-odds (to binomial error), and the
    runs' log-odds scatter with SD 0.5 (600 runs: the sample SD within 10%)."""
    df = PR.simulate(_runs(200), PARADIGMS, 10**6, 0.643, {"BABY-F": 0.0, "BABY": 0.0, "WIKI": 0.0}, 0.5,
                     np.random.default_rng(2), phenomenon_sd=0.0, seed_sd=0.0, size_slope=0.0)
    df["eta"] = logit(df["n_correct"] / df["n_total"])
    per_run = df.groupby(["condition", "seed"])["eta"]
    assert per_run.std().max() < 0.02
    assert per_run.mean().std(ddof=1) == pytest.approx(0.5, rel=0.1)
