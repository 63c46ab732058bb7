"""A fit that fails its diagnostics is sampled once more with stronger settings before anything is reported, and
the output says which settings the reported fit used (bayes.fit_converged; analysis.refit)."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pandas as pd
import pytest

from povstim.analysis import pipeline
from povstim.analysis.models import bayes


def _diag(settings, problems):
    return {"chains": settings.chains, "tune": settings.tune, "draws": settings.draws,
            "target_accept": settings.target_accept, "sampler": "pymc", "divergences": 3 if problems else 0,
            "max_r_hat": 1.0, "min_ess_bulk": 500, "min_ess_tail": 500, "converged": not problems,
            "problems": problems}


def _planted(monkeypatch, outcomes):
    """bayes.fit replaced by one that records the settings it is given and returns the planted diagnostics."""
    seen = []

    def fake_fit(design, settings, cores=None):
        seen.append(settings)
        return bayes.FitResult(None, pd.DataFrame(), _diag(settings, outcomes[len(seen) - 1]))
    monkeypatch.setattr(bayes, "fit", fake_fit)
    return seen


DIVERGED = ["3 divergent transition(s) after tuning (raise target_accept or tune)"]


def test_a_failed_fit_is_refitted_once_with_stronger_settings(monkeypatch):
    s = pipeline.analysis_settings({"draws": 300, "tune": 300, "chains": 2, "target_accept": 0.9})
    seen = _planted(monkeypatch, [DIVERGED, []])
    res = bayes.fit_converged(None, s)
    assert len(seen) == 2
    # by hand: tune and draws doubled, target_accept halfway to 1
    assert (seen[1].tune, seen[1].draws, seen[1].target_accept) == (600, 600, 0.95)
    d = res.diagnostics
    assert d["refitted"] is True and d["converged"] is True
    assert [a["draws"] for a in d["attempts"]] == [300, 600] and d["attempts"][0]["problems"] == DIVERGED
    text = bayes.refit_sentence(d)
    assert text.startswith("The first fit (2 chains x 300 draws, 300 tuning, target_accept 0.9) failed its "
                           "diagnostics (3 divergent transition(s)")
    assert "from one refit with stronger settings (600 draws, 600 tuning, target_accept 0.95)." in text


def test_no_refit_when_converged_switched_off_or_incurable(monkeypatch):
    s = pipeline.analysis_settings({"draws": 300, "tune": 300, "chains": 2})
    seen = _planted(monkeypatch, [[]])
    assert bayes.fit_converged(None, s).diagnostics["refitted"] is False and len(seen) == 1
    seen = _planted(monkeypatch, [DIVERGED])
    assert bayes.fit_converged(None, dataclasses.replace(s, refit=False)).diagnostics["attempts"][0]["converged"] is False
    assert len(seen) == 1
    # a single chain: more draws cannot let R-hat see anything
    seen = _planted(monkeypatch, [["a single chain: R-hat cannot detect non-convergence"]])
    assert bayes.fit_converged(None, s).diagnostics["refitted"] is False and len(seen) == 1
    # the refit fails too: reported as not converged, and said so
    seen = _planted(monkeypatch, [DIVERGED, DIVERGED])
    d = bayes.fit_converged(None, s).diagnostics
    assert len(seen) == 2 and d["converged"] is False and bayes.refit_sentence(d).endswith(
        ", which did not converge either.")


def test_the_schema_refits_by_default():
    assert pipeline.analysis_settings({}).refit is True


def test_a_real_fit_with_too_few_draws_is_refitted_and_the_caption_says_so(tmp_path):
    rng = np.random.default_rng(0)
    df = pd.DataFrame([{"seed": s, "phenomenon": f"p{k}", "filtered": f, "n_total": 50,
                        "n_correct": int(rng.binomial(50, 0.6))} for s in (1, 2, 3) for k in range(4) for f in (True, False)])
    s = pipeline.analysis_settings({"draws": 12, "tune": 12, "chains": 2, "sampler": "pymc",
                                    "formula": "filtered + (1|phenomenon)"})
    pipeline.fit_and_write(df, s, tmp_path, family="binomial")
    d = json.loads((tmp_path / "diagnostics.json").read_text())
    assert d["refitted"] is True and [a["draws"] for a in d["attempts"]] == [12, 24]
    assert d["draws"] == 24
    caption = (tmp_path / "table12.md").read_text()
    assert "from one refit with stronger settings (24 draws, 24 tuning" in caption
    # what the sum-coded term measures (its estimate is half the difference), said in the caption
    assert "Filtering (yes vs. no) is coded +1/-1, so its estimate is half the yes - no difference" in caption


def test_sum_coded_terms_say_what_they_measure():
    """Table 12's coding: Training source (baby vs. wiki) is half BABY - WIKI; categories are deviations from their
    mean; a treatment-coded factor is not described as sum-coded."""
    df = pd.DataFrame([{"source": src, "category": cat, "n_total": 10, "n_correct": 5}
                       for src in ("baby", "wiki") for cat in ("Binding", "Island", "Wanna")])
    d = bayes.build_design(df, "source + category", family="binomial", zscore=True, contrasts="sum")
    text = bayes.coding_sentence(d)
    assert "Training source (baby vs. wiki) is coded +1/-1, so its estimate is half the baby - wiki difference" in text
    assert "each Category term is that level's deviation from the mean over its 3 levels (Wanna's is minus" in text
    t = bayes.build_design(df, "source + category", family="binomial", zscore=True, contrasts="treatment")
    assert bayes.coding_sentence(t) == ""
