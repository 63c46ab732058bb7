"""analysis.sampler: `auto` picks nutpie for long fits and PyMC's NUTS for short ones; nutpie's posterior is
checked against the data it was fitted on (cell log-odds computed by hand), not against povstim's own code."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from povstim.analysis.models import bayes
from povstim.analysis.pipeline import analysis_settings, fit_models


def test_auto_uses_nutpie_only_where_its_compilation_pays():
    # nutpie is a dependency (pyproject.toml), so auto can pick it
    assert bayes.resolve_sampler("auto", 4 * (1000 + 1000)) == "nutpie"  # the demo and POSH: 8,000 iterations
    assert bayes.resolve_sampler("auto", bayes.NUTPIE_MIN_ITERATIONS) == "nutpie"
    assert bayes.resolve_sampler("auto", bayes.NUTPIE_MIN_ITERATIONS - 1) == "pymc"
    assert bayes.resolve_sampler("auto", 2 * (200 + 150)) == "pymc"  # a test-sized fit: PyMC is faster there
    assert bayes.resolve_sampler("pymc", 10**6) == "pymc" and bayes.resolve_sampler("nutpie", 10) == "nutpie"


@pytest.mark.slow
def test_nutpie_fit_recovers_the_cells_log_odds(tmp_path, monkeypatch):
    """Two cells of 4,000 trials each: the posterior of each cell's log-odds sits on logit(k/n) (the prior is
    negligible at this n), whatever the coding of `filtered`."""
    k = {True: 2600, False: 1500}
    rows = [{"suite": "posh", "arch": "gpt2", "condition": "baby-f" if f else "baby", "size": "10M", "seed": 1,
             "category": "Island", "paradigm": "p", "phenomenon": "p", "n_correct": k[f], "n_total": 4000,
             "filtered": f, "source": "baby"} for f in (True, False)]
    # auto would pick PyMC for this short run: name nutpie to test it
    settings = analysis_settings({"formula": "filtered", "draws": 300, "tune": 300, "chains": 2, "seed": 3,
                                  "sampler": "nutpie"})
    import nutpie

    asked = []
    real = nutpie.sample
    # a spy, not a stand-in: the real sampler runs, told how many chains to run at once (the job's cores)
    monkeypatch.setattr(nutpie, "sample", lambda *a, **kw: asked.append(kw.get("cores")) or real(*a, **kw))
    out = tmp_path / "bayes"
    fit_models(pd.DataFrame(rows), settings, out, family="binomial", cores=2)
    # one core: the same draws, bit for bit (each chain has its own seed, whatever runs it)
    fit_models(pd.DataFrame(rows), settings, tmp_path / "one", family="binomial", cores=1)
    assert asked == [2, 1]
    import arviz

    one = arviz.from_netcdf(tmp_path / "one" / "posterior.nc").posterior
    two = arviz.from_netcdf(out / "posterior.nc").posterior
    assert all(np.array_equal(one[v].values, two[v].values) for v in two.data_vars)
    diag = json.loads((out / "diagnostics.json").read_text())
    assert diag["sampler"] == "nutpie" and diag["divergences"] == 0 and diag["max_r_hat"] <= 1.05
    post = __import__("arviz").from_netcdf(out / "posterior.nc").posterior
    names = diag["posterior_names"]
    design = bayes.build_design(pd.DataFrame(rows), "filtered", family="binomial", zscore=True, contrasts="sum")
    beta = np.column_stack([post[names[c.label]].values.reshape(-1) for c in design.columns])
    intercept = post[names.get("Intercept", "Intercept")].values.reshape(-1)
    assert len(intercept) == 2 * 300
    for f, kk in k.items():
        eta = intercept + beta @ design.row({"filtered": f})
        want = np.log(kk / (4000 - kk))
        sd = np.sqrt(1 / kk + 1 / (4000 - kk))  # the log-odds' standard error
        assert abs(np.median(eta) - want) < 0.25 * sd, (f, np.median(eta), want)
        assert np.std(eta) == pytest.approx(sd, rel=0.2)
