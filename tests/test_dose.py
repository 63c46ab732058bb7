"""Dose-response fit: parameter recovery on simulated binomial data with a planted slope."""

from __future__ import annotations


import numpy as np
import pandas as pd
import pytest

from povstim.analysis.models import dose
from povstim.io import PovstimError

pytest.importorskip("bambi")


def simulate(slope: float, intercept: float = 0.0, rates=(0, 1e-4, 1e-3, 1e-2), seeds: int = 3, paradigms: int = 4,
             n_items: int = 200, sd_seed: float = 0.2, sd_paradigm: float = 0.3, rng_seed: int = 0) -> pd.DataFrame:
    """Cells with a planted slope per decade of rate (x centred as ``dose.fit`` centres it), for recovery tests."""
    rng = np.random.default_rng(rng_seed)
    fl = dose.floor_of(rates)
    xs = np.log10(np.array(rates, dtype=float) + fl)
    center = xs.mean()
    us, vs = rng.normal(0, sd_seed, seeds), rng.normal(0, sd_paradigm, paradigms)
    rows = []
    for r, x in zip(rates, xs):
        for s in range(seeds):
            for k in range(paradigms):
                eta = intercept + slope * (x - center) + us[s] + vs[k]
                n = int(rng.binomial(n_items, 1 / (1 + np.exp(-eta))))
                rows.append({"condition": f"dose{r:g}", "seed": str(s + 1), "paradigm": f"p{k}", "n_correct": n,
                             "n_items": n_items, "rate": float(r), "log_rate": float(x)})
    return pd.DataFrame(rows)


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
    data = simulate(slope=0.6, intercept=0.2, rng_seed=3)
    out = dose.fit(data, draws=400, tune=300, chains=1, seed=1)  # 150 draws left the 95% interval's ends noisy (upper 0.5993)
    s = out["slope_per_decade"]
    assert s["lower"] < 0.6 < s["upper"]
    assert abs(s["mean"] - 0.6) < 0.15
    # every positive rate's effect vs rate 0 is clearly positive with a 0.6/decade slope
    assert out["smallest_effective_rate"] == 1e-4
    flat = dose.fit(simulate(slope=0.0, rng_seed=4), draws=150, tune=150, chains=1, seed=1)
    assert flat["slope_per_decade"]["lower"] < 0 < flat["slope_per_decade"]["upper"]
    assert flat["smallest_effective_rate"] is None
