"""Dose-response fit: parameter recovery on simulated binomial data with a planted slope."""

from __future__ import annotations


import numpy as np
import pandas as pd
import pytest

from povstim.analysis.models import dose
from povstim.io import PovstimError

pytest.importorskip("bambi")


def test_floor_and_cells():
    assert dose.floor_of([0, 1e-4, 1e-3, 1e-2]) == pytest.approx(1e-5)
    items = pd.DataFrame({"condition": ["a-dose0", "a-dose1e-3", "a-dose1e-3", "x"], "seed": [1, 1, 1, 1],
                          "paradigm": ["qf_rr"] * 4, "category": ["Question Formation"] * 4,
                          "correct": [True, True, False, True], "final": [True, True, True, True]})
    assert dose.target_paradigms(items, "question_formation") == ["qf_rr"]
    with pytest.raises(PovstimError, match="no paradigm's category is 'binding'"):
        dose.target_paradigms(items, "binding")
    c = dose.cells(items, {"a-dose0": 0.0, "a-dose1e-3": 1e-3}, ["qf_rr"])
    assert c[["condition", "n_correct", "n_items"]].values.tolist() == [["a-dose0", 1, 1], ["a-dose1e-3", 1, 2]]
    assert c["log_rate"].tolist() == pytest.approx([np.log10(1e-4), np.log10(1.1e-3)])


def test_parameter_recovery():
    data = dose.simulate(slope=0.6, intercept=0.2, rng_seed=3)
    out = dose.fit(data, draws=400, tune=300, chains=1, seed=1)  # 150 draws left the 95% interval's ends noisy (upper 0.5993)
    s = out["slope_per_decade"]
    assert s["lower"] < 0.6 < s["upper"]
    assert abs(s["mean"] - 0.6) < 0.15
    # every positive rate's effect vs rate 0 is clearly positive with a 0.6/decade slope
    assert out["smallest_effective_rate"] == 1e-4
    flat = dose.fit(dose.simulate(slope=0.0, rng_seed=4), draws=150, tune=150, chains=1, seed=1)
    assert flat["slope_per_decade"]["lower"] < 0 < flat["slope_per_decade"]["upper"]
    assert flat["smallest_effective_rate"] is None
