"""Power before training (povstim/analysis/models/power.py): the closed-form normal approximation against brute-force
binomial simulations of the three-level design (parameter recovery), its MDE against scipy's normal quantiles,
the recommendation, and bad input naming the config key."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from scipy.special import expit, logit

from povstim import config as cfg
from povstim.analysis.models import power
from povstim.io import PovstimError

REPO = Path(__file__).resolve().parents[1]
ITEMS = {"A": [60, 60], "B": [60]}  # two categories: two paradigms and one, 60 pairs each
P = 0.65


def simulate(effect: float, run_sd: float, models: int, reps: int, seed: int):
    """Brute force: binomial counts of every model x category x paradigm of two conditions, a per-model
    run deviation shared by its categories, the contrast a - b planted on every category. Returns per replicate
    (estimate, Wald SE) of the overall contrast from the saturated binomial GLM's MLE per (model, category)
    cell: log-odds logit(k / N) with variance 1 / (N p_hat (1 - p_hat)), averaged over categories and models."""
    rng = np.random.default_rng(seed)
    cats = list(ITEMS)
    est, se = np.empty(reps), np.empty(reps)
    for r in range(reps):
        cond_mean, cond_var = [], []
        for shift in (effect / 2, -effect / 2):
            dev = rng.normal(0.0, run_sd, size=models)  # one trained model's deviation, all categories
            per_model, var_model = [], []
            for m in range(models):
                eta, var = [], []
                for c in cats:
                    n = sum(ITEMS[c])
                    k = rng.binomial(n, expit(logit(P) + shift + dev[m]))
                    ph = k / n
                    eta.append(logit(ph))
                    var.append(1.0 / (n * ph * (1 - ph)))
                per_model.append(np.mean(eta))
                var_model.append(np.sum(var) / len(cats) ** 2)
            cond_mean.append(np.mean(per_model))
            cond_var.append(np.sum(var_model) / models ** 2)
        est[r] = cond_mean[0] - cond_mean[1]
        se[r] = np.sqrt(cond_var[0] + cond_var[1])
    return est, se


def test_binomial_power_recovered_by_brute_force():
    """No run variance: the share of simulated experiments whose Wald interval excludes 0 is the closed form's
    power (+- 3 binomial SEs), at an effect planted where power is near 1/2 (most sensitive) and at 0 (5%)."""
    models, reps = 3, 600
    se = power.contrast_se(power.binomial_variance(ITEMS, P), 0.0, models, models)
    for effect in (2.0 * se, 0.0):
        want = power.power(effect, se)
        est, wald = simulate(effect, 0.0, models, reps, seed=7)
        got = float(np.mean(np.abs(est) > power.Z * wald))
        assert abs(got - want) < 3 * np.sqrt(want * (1 - want) / reps), (effect, got, want)
        # the SE it assumes is the estimator's spread (relative SE of an SD: 1 / sqrt(2 reps))
        assert abs(est.std(ddof=1) / se - 1) < 3 / np.sqrt(2 * reps)


def test_run_variance_is_shared_by_categories():
    """Run-to-run variance dominating: the estimator's spread and the detection rate at the closed form's SE
    match it; dividing run_sd^2 by the categories (as if each category had its own run) would not."""
    models, reps, run_sd = 3, 600, 0.3
    se = power.contrast_se(power.binomial_variance(ITEMS, P), run_sd, models, models)
    effect = 2.0 * se
    est, _ = simulate(effect, run_sd, models, reps, seed=11)
    assert abs(est.std(ddof=1) / se - 1) < 3 / np.sqrt(2 * reps)
    wrong = power.contrast_se(power.binomial_variance(ITEMS, P), run_sd / np.sqrt(len(ITEMS)), models, models)
    assert abs(est.std(ddof=1) / wrong - 1) > 3 / np.sqrt(2 * reps)
    want = power.power(effect, se)
    got = float(np.mean(np.abs(est) > power.Z * se))
    assert abs(got - want) < 3 * np.sqrt(want * (1 - want) / reps)


def test_mde_is_the_normal_quantile_sum():
    """At 80% power the MDE is (z_.975 + z_.80) SE, up to the other tail's share (< 1e-4 here)."""
    for se in (0.01, 0.07, 0.5):
        d = power.mde(se, 0.8)
        assert abs(power.power(d, se) - 0.8) < 1e-8
        assert d / se == pytest.approx(stats.norm.ppf(0.975) + stats.norm.ppf(0.8), abs=1e-3)


def _demo():
    return cfg.load(REPO / "config.yaml")


def test_demo_config_power_and_recommendation():
    """config.yaml: 2 seeds x 2 sizes, POSH's 9 paradigms x 100 pairs; the recommended seeds reach the target
    and one fewer does not."""
    config = _demo()
    rep = power.analyse(config, None)
    over = {r["contrast"]: r for r in rep["rows"] if r["scope"] == "overall"}
    assert set(over) == {"BABY-F vs. BABY", "BABY vs. WIKI", "BABY-F vs. WIKI"}
    assert over["BABY-F vs. BABY"]["models"] == [4, 4]
    # hand-computed: categories Island 3, QF 3, Binding 2, Wanna 1 paradigms of 100 at p = 0.643
    q = 100 * 0.643 * 0.357
    v = (1 / (3 * q) + 1 / (3 * q) + 1 / (2 * q) + 1 / q) / 16
    assert over["BABY-F vs. BABY"]["se"] == pytest.approx(np.sqrt((v + 0.06 ** 2) * 0.5), rel=1e-9)
    k = rep["recommend"]["seeds"]
    assert k is not None and k > 2
    for seeds, ok in ((k, True), (k - 1, False)):
        c = copy.deepcopy(config)
        c["seeds"] = list(range(1, seeds + 1))
        worst = min(r["power"] for r in power.analyse(c, None)["rows"]
                    if r["scope"] == "overall" and r["power"] is not None)
        assert (worst >= 0.8) is ok
    pairs = rep["recommend"]["pairs_per_paradigm"]
    c = copy.deepcopy(config)
    c["benchmarks"]["posh"]["pairs_per_paradigm"] = pairs
    assert min(r["power"] for r in power.analyse(c, None)["rows"] if r["scope"] == "overall") >= 0.8
    assert "3 seeds" in power.plan_line(rep) or f"{k} seeds" in power.plan_line(rep)


def test_bad_input_names_the_key():
    config = _demo()
    one = copy.deepcopy(config)
    one["seeds"] = [1]
    with pytest.raises(PovstimError, match=r"^seeds: a single seed"):
        power.analyse(one, None)
    one["power"] = {"run_sd": 0.0}  # no run variance: one seed is defined
    assert power.analyse(one, None)["rows"]
    bad = copy.deepcopy(config)
    bad["power"] = {"effects": {"BABY vs. ADULT": 0.2}}
    with pytest.raises(PovstimError, match=r"power\.effects: contrast\(s\) BABY vs\. ADULT"):
        power.analyse(bad, None)
    for given in ({"accuracy": 1.0}, {"run_sd": -0.1}, {"target": 0.01}):
        with pytest.raises(PovstimError, match=f"power.*{list(given)[0]}"):
            power.power_settings(given)
    with pytest.raises(PovstimError, match="undefined"):
        power.power(0.1, 0.0)
    assert "fewer than analysis.min_groups 3" in power.seed_warning(config)
    three = copy.deepcopy(config)
    three["seeds"] = [1, 2, 3]
    assert power.seed_warning(three) == ""


def test_a_config_without_a_powered_contrast_recommends_nothing():
    """One condition (no contrast), or an effect so large one pair per paradigm reaches the target: the pairs
    search once raised scipy's 'f(a) and f(b) must have different signs' out of povstim plan and povstim power."""
    config = _demo()
    one = copy.deepcopy(config)
    one["conditions"] = {"baby": one["conditions"]["baby"]}
    rep = power.analyse(one, None)
    assert rep["rows"] == [] and rep["recommend"] == {"seeds": None, "pairs_per_paradigm": None, "now": None}
    assert "no contrast at 2 seeds" in power.plan_line(rep)
    big = copy.deepcopy(config)
    big["power"] = {"effects": {"BABY-F vs. BABY": 8.0, "BABY vs. WIKI": 0.0, "BABY-F vs. WIKI": 0.0},
                    "run_sd": 0.0}
    rep = power.analyse(big, None)
    assert rep["recommend"]["pairs_per_paradigm"] == 1
    # by hand: one pair per paradigm (variance x 100 of the 100-pair suite's) still powers an 8-logit effect
    one_pair = copy.deepcopy(big)
    one_pair["benchmarks"]["posh"]["pairs_per_paradigm"] = 1
    assert min(r["power"] for r in power.analyse(one_pair, None)["rows"]
               if r["scope"] == "overall" and r["contrast"] == "BABY-F vs. BABY") >= 0.8


def test_the_summary_names_every_contrast_including_a_zero_effect():
    """An effect of 0 is not dropped: its 'power' is the 5% false-positive rate (Phi(-1.96) x 2, scipy), said as
    such, and the recommendation is about the contrasts with an effect."""
    config = _demo()
    config["power"] = {"effects": {"BABY-F vs. BABY": 0.0, "BABY vs. WIKI": 0.18, "BABY-F vs. WIKI": 0.18}}
    rep = power.analyse(config, None)
    text = "\n".join(power.render(rep))
    fp = 2 * stats.norm.cdf(-stats.norm.ppf(0.975))
    assert f"BABY-F vs. BABY: effect 0, so {fp:.2f} is its false-positive rate, not a power" in text
    assert "BABY vs. WIKI: power 0.74 at +0.18 (models 4/4)" in text and "BABY-F vs. WIKI: power 0.74" in text
    assert "the weakest overall contrast with a non-zero effect has power 0.74" in text
    line = power.plan_line(rep)
    assert "BABY-F vs. BABY effect 0 (false-positive rate 0.05)" in line and "BABY vs. WIKI 0.74" in line


def test_power_counts_what_will_be_fitted_without_void_cells(tmp_path):
    """BABY void at 10k (plan's forecast): its 2 seeds there are not fitted, so BABY-F vs. BABY counts 4/2 models
    and its SE is the closed form's at 2 models; void at every size: no estimate, said by name."""
    config = _demo()
    full = {r["contrast"]: r for r in power.analyse(config, None)["rows"] if r["scope"] == "overall"}
    rep = power.analyse(config, None, void=frozenset({("baby", "10k")}))
    over = {r["contrast"]: r for r in rep["rows"] if r["scope"] == "overall"}
    assert over["BABY-F vs. BABY"]["models"] == [4, 2] and over["BABY vs. WIKI"]["models"] == [2, 4]
    v = (full["BABY-F vs. BABY"]["se"] ** 2) / 0.5  # (v_binomial + run_sd^2), from the 4/4 design
    assert over["BABY-F vs. BABY"]["se"] == pytest.approx(np.sqrt(v * (1 / 4 + 1 / 2)), rel=1e-9)
    assert "models counted without the void cells the analysis leaves out: baby 10k" in "\n".join(power.render(rep))
    every = power.analyse(config, None, void=frozenset({("baby", "10k"), ("baby", "30k")}))
    text = "\n".join(power.render(every))
    assert "BABY-F vs. BABY: VOID, no estimate" in text and "BABY vs. WIKI: VOID, no estimate" in text
    assert "BABY-F vs. WIKI: power" in text
    # from the built conditions (the analysis' own rule): BABY's text identical to BABY-F's at 30k
    res = tmp_path / "results"
    for c in ("baby-f", "baby", "wiki"):
        for z in ("10k", "30k"):
            d = res / "corpus" / c / z
            d.mkdir(parents=True)
            same = c != "wiki" and z == "30k"
            (d / "condition.json").write_text(json.dumps({"corpus_sha256": "x" if same else f"{c}{z}"}))
    rep = power.analyse(config, res)
    assert rep["void_cells"] == [("baby", "30k")]
    assert {r["contrast"]: r["models"] for r in rep["rows"] if r["scope"] == "overall"}["BABY-F vs. BABY"] == [4, 2]


def test_the_pairs_search_range_is_the_schema_key():
    """pairs per paradigm are searched up to power.max_pairs_per_paradigm (schema default 20,000): the demo needs
    127, so a range of 100 finds none."""
    config = _demo()
    assert power.power_settings({}).max_pairs_per_paradigm == 20000
    assert power.analyse(config, None)["recommend"]["pairs_per_paradigm"] == 127
    config["power"] = {"max_pairs_per_paradigm": 100}
    rep = power.analyse(config, None)
    assert rep["recommend"]["pairs_per_paradigm"] is None
    assert "no number of pairs up to power.max_pairs_per_paradigm reaches it" in "\n".join(power.render(rep))
