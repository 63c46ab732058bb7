"""Acquisition points: parameter recovery on simulated binomial learning curves with
planted halfway points, the categories (not acquired within the budget, before the first checkpoint), the
seeds' pooled summary, condition contrasts, and clear notes for curves too short to fit."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from povstim.analysis.timing import acquisition as A
from povstim.io import PovstimError

SETTINGS = A.AcquisitionSettings(method="per_seed", min_checkpoints=4, min_gain=0.05, interval=0.95, childes=None,
                                 child_words=None, contexts=20, word_learning=False, draws=300, tune=300, chains=2,
                                 seed=1, sampler="pymc")
WORDS = np.logspace(4, 7, 10)  # 10k .. 10M words, 10 checkpoints


def simulate(x0, asymptote=0.9, slope=3.0, n=200, rng=None, chance=0.5, words=WORDS):
    rng = rng or np.random.default_rng(0)
    p = chance + (asymptote - chance) / (1 + np.exp(-slope * (np.log10(words) - x0)))
    return rng.binomial(n, p), np.full(len(words), n)


def curves_table(planted: dict, seeds=(1, 2, 3), rng=None, n=200, words=WORDS) -> pd.DataFrame:
    """accuracy_by_step rows for condition -> {paradigm: x0 (None: flat at chance)}."""
    rng = rng or np.random.default_rng(7)
    rows = []
    for cond, paradigms in planted.items():
        for seed in seeds:
            for par, x0 in paradigms.items():
                if x0 is None:
                    k, nn = rng.binomial(n, 0.5, size=len(words)), np.full(len(words), n)
                else:
                    k, nn = simulate(x0 + rng.normal(0, 0.05), rng=rng, n=n, words=words)
                for step, (w, kk, tot) in enumerate(zip(words, k, nn), 1):
                    rows.append({"suite": "posh", "arch": "gpt2", "condition": cond, "size": "10M", "seed": seed,
                                 "step": step * 10, "final": step == len(words), "category": "cat",
                                 "paradigm": par, "n_correct": int(kk), "n_total": int(tot),
                                 "accuracy": kk / tot, "words_seen": int(w)})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("x0", [4.6, 5.0, 5.5, 6.0, 6.5])
def test_planted_points_are_recovered(x0):
    """Over 20 simulated curves per planted point: the estimate is unbiased to 0.1 decade and the 95% Laplace
    interval covers the planted point in most of them."""
    rng = np.random.default_rng(int(x0 * 10))
    est, cover = [], 0
    for _ in range(20):
        k, n = simulate(x0, rng=rng)
        fit = A.fit_curve(WORDS, k, n)
        est.append(fit["x0"])
        cover += abs(fit["x0"] - x0) <= 1.96 * fit["x0_se"]
        assert A.categorise(fit, 0.05)[0] == "acquired"
    assert abs(np.mean(est) - x0) < 0.1
    assert cover >= 16
    assert abs(fit["asymptote"] - 0.9) < 0.05


def test_halfway_is_between_chance_and_the_asymptote_not_one():
    """A curve that tops out at 0.7 is acquired where it crosses 0.6, not 0.75."""
    rng = np.random.default_rng(3)
    k, n = simulate(5.5, asymptote=0.7, n=2000, rng=rng)
    fit = A.fit_curve(WORDS, k, n)
    assert abs(fit["x0"] - 5.5) < 0.15 and abs(fit["asymptote"] - 0.7) < 0.03


def test_other_chance_levels():
    rng = np.random.default_rng(4)
    k, n = simulate(5.0, asymptote=0.8, chance=0.25, n=500, rng=rng)
    fit = A.fit_curve(WORDS, k, n, chance=0.25)
    assert abs(fit["x0"] - 5.0) < 0.15


def test_never_acquired_is_a_category_with_the_budget():
    rng = np.random.default_rng(5)
    k = rng.binomial(200, 0.5, size=len(WORDS))
    fit = A.fit_curve(WORDS, k, np.full(len(WORDS), 200))
    category, words = A.categorise(fit, 0.05)
    assert category == "not_acquired" and words == pytest.approx(1e7)


def test_crossing_after_the_budget_is_not_acquired():
    k, n = simulate(8.5, rng=np.random.default_rng(6), n=400)  # halfway at 300M words, budget 10M
    category, words = A.categorise(A.fit_curve(WORDS, k, n), 0.05)
    assert category == "not_acquired" and words == pytest.approx(1e7)


def test_acquired_before_the_first_checkpoint():
    k, n = simulate(3.0, rng=np.random.default_rng(8), n=400)  # halfway at 1k words, first checkpoint 10k
    category, words = A.categorise(A.fit_curve(WORDS, k, n), 0.05)
    assert category == "before_first" and words == pytest.approx(1e4)


def test_summary_contrasts_and_delay():
    """BABY-F planted one decade later than BABY on one paradigm, the same on another, never on a third."""
    curves = curves_table({"baby-f": {"p1": 6.0, "p2": 5.0, "p3": None},
                           "baby": {"p1": 5.0, "p2": 5.0, "p3": 5.5}})
    points, notes = A.acquisition_points(curves, SETTINGS)
    assert not notes and len(points) == 2 * 3 * 3
    summ = A.summary(points, SETTINGS)
    row = summ[(summ["condition"] == "baby-f") & (summ["paradigm"] == "p1")].iloc[0]
    assert row["acquisition"] == "acquired" and row["n_acquired"] == 3
    assert row["log10_lo"] < 6.0 < row["log10_hi"] and abs(row["log10_point"] - 6.0) < 0.15
    p3 = summ[(summ["condition"] == "baby-f") & (summ["paradigm"] == "p3")].iloc[0]
    assert p3["acquisition"] == "not_acquired" and p3["point_words"] == pytest.approx(1e7)
    con = A.contrasts(summ, SETTINGS)
    par = con[con["level"] == "paradigm"].set_index("paradigm")
    assert list(con["condition_a"].unique()) == ["baby-f"] and list(con["condition_b"].unique()) == ["baby"]
    assert par.loc["p1", "status"] == "later" and abs(par.loc["p1", "delta"] - 1.0) < 0.2
    assert par.loc["p1", "factor"] == pytest.approx(10 ** par.loc["p1", "delta"])
    assert par.loc["p2", "status"] == "no clear difference"
    assert par.loc["p3", "status"].startswith("a not acquired") and par.loc["p3", "lo"] > 0
    assert con[con["level"] == "category"].iloc[0]["acquisition_a"] == "not_acquired"


def test_too_few_checkpoints_are_named_and_skipped():
    curves = curves_table({"baby": {"p1": 5.0}}, seeds=(1,), words=np.logspace(4, 7, 3))
    points, notes = A.acquisition_points(curves, SETTINGS)
    assert points.empty
    assert notes == [("posh gpt2/baby/10M/seed1 p1: 3 checkpoint(s) with words seen, fewer than the 4 the sigmoid "
                      "fit needs (acquisition.min_checkpoints): skipped")]


def test_curves_without_words_seen_say_what_is_missing():
    curves = curves_table({"baby": {"p1": 5.0}}, seeds=(1,)).drop(columns=["words_seen"])
    with pytest.raises(PovstimError, match="training.checkpoint_words"):
        A.acquisition_points(curves, SETTINGS)


def test_pooled_matches_a_fixed_effect_mean_when_seeds_agree():
    mu, se, tau = A.pooled(np.array([5.0, 5.0, 5.0]), np.array([0.1, 0.1, 0.1]))
    assert mu == pytest.approx(5.0) and tau == 0 and se == pytest.approx(0.1 / math.sqrt(3))
    mu, se, tau = A.pooled(np.array([4.0, 5.0, 6.0]), np.array([0.05, 0.05, 0.05]))
    assert tau > 0.8 and se > 0.5  # seeds that disagree widen the interval


def test_flat_curves_are_rarely_called_acquired():
    """Curves at chance with binomial noise: the likelihood-ratio gate calls few of them acquired."""
    rng = np.random.default_rng(11)
    called = 0
    for _ in range(40):
        k = rng.binomial(200, 0.5, size=len(WORDS))
        called += A.categorise(A.fit_curve(WORDS, k, np.full(len(WORDS), 200)), 0.05)[0] != "not_acquired"
    assert called <= 4


def test_the_stage_writes_tables_figures_and_notes(tmp_path):
    """povstim acquisition on simulated curves (one model with too few checkpoints) and the children's fixture."""
    import json
    from pathlib import Path

    from povstim import cli

    curves = curves_table({"baby-f": {"p1": 6.0, "p2": 5.0}, "baby": {"p1": 5.0, "p2": 5.0},
                           "wiki": {"p1": 5.2, "p2": None}}, seeds=(1, 2))
    short = curves_table({"baby": {"p1": 5.0}}, seeds=(9,), words=np.logspace(4, 7, 3))
    path = tmp_path / "accuracy_by_step.csv"
    pd.concat([curves, short]).to_csv(path, index=False)
    fixture = Path(__file__).parent / "fixtures" / "children" / "chat"
    out = tmp_path / "acq"
    assert cli.main(["acquisition", "--curves", str(path), "--params", '{"interval": 0.9, "method": "per_seed"}',
                     "--childes",
                     str(fixture), "--out-dir", str(out)]) == 0
    for name in ("points.csv", "summary.csv", "summary.html", "contrasts.csv", "contrasts.html", "children.csv",
                 "acquisition_curves_posh.png", "acquisition_points_posh.png", "notes.json"):
        assert (out / name).exists(), name
    notes = json.loads((out / "notes.json").read_text())
    assert notes["fits"] == 3 * 2 * 2 and len(notes["skipped"]) == 1 and "seed9" in notes["skipped"][0]
    assert any("noage.cha" in n for n in notes["children"])
    con = pd.read_csv(out / "contrasts.csv")
    assert {(a, b) for a, b in zip(con["condition_a"], con["condition_b"])} == {
        ("baby-f", "baby"), ("baby-f", "wiki"), ("baby", "wiki")}


def test_bad_params_name_the_key(tmp_path):
    from povstim import cli

    path = tmp_path / "c.csv"
    curves_table({"baby": {"p1": 5.0}}, seeds=(1,)).to_csv(path, index=False)
    assert cli.main(["acquisition", "--curves", str(path), "--params", '{"min_checkpoints": 2}',
                     "--out-dir", str(tmp_path / "o")]) == 1


# ------------------------------------------------------------- the hierarchical Bayesian fit (acquisition_bayes)
def test_draws_are_classified_by_the_budget_and_the_gain():
    """Hand-made draws for two groups with checkpoints 10k..10M (log10 4..7) and min_gain 0.05."""
    from povstim.analysis.timing import acquisition_bayes as H

    groups = pd.DataFrame({"first_words": [1e4, 1e4], "budget_words": [1e7, 1e7]})
    draws = {"x0": np.array([[5.0, 3.5], [7.5, 5.0], [5.0, 6.0]]),
             "gain": np.array([[0.4, 0.4], [0.4, 0.4], [0.4, 0.01]])}
    # group 0: acquired, after the budget, acquired; group 1: before the first, acquired, gain below min_gain
    assert H.classify(draws, groups, 0.05).tolist() == [[0, 1], [2, 0], [0, 2]]


def test_contrast_of_draws_and_its_bounds():
    """delta, interval and P(later) from hand-made draws; a side not acquired gives a bound from its budget."""
    from povstim.analysis.timing import acquisition_bayes as H

    x0 = np.array([[6.0, 5.0], [6.2, 5.0], [6.4, 5.2], [5.8, 4.8], [6.1, 5.1]])
    side = lambda i, state: pd.DataFrame({"acquisition": [state], "budget_words": [1e7]}, index=[i])
    out = H._contrast(side(0, "acquired"), side(1, "acquired"), x0, [0.0, 1.0])
    # differences 1.0, 1.2, 1.2, 1.0, 1.0: median 1.0, range [1.0, 1.2], all later
    assert out["delta"] == pytest.approx(1.0) and (out["lo"], out["hi"]) == pytest.approx((1.0, 1.2))
    assert out["status"] == "later" and out["p_later"] == 1.0 and out["factor"] == pytest.approx(10.0)
    bound = H._contrast(side(0, "not_acquired"), side(1, "acquired"), x0, [0.0, 1.0])
    assert bound["status"].startswith("a not acquired") and bound["lo"] == pytest.approx(7 - 5.2)


@pytest.mark.slow
def test_hierarchical_fit_recovers_planted_points():
    """One sampled model over 2 conditions x 3 paradigms x 3 seeds: each planted point lies in its 95% interval
    and near its median, a planted never-acquired group is not_acquired with high posterior probability, the
    planted one-decade delay is 'later' and the planted equal points are not, and every group with a planted point
    converged."""
    curves = curves_table({"baby-f": {"p1": 6.0, "p2": 5.0, "p3": None},
                           "baby": {"p1": 5.0, "p2": 5.0, "p3": 5.5}})
    settings = A.AcquisitionSettings(**{**SETTINGS.__dict__, "method": "hierarchical"})
    _points, summ, con, notes, info = A.analyse(curves, settings)
    # a flat curve leaves its slope and midpoint to the prior, where NUTS mixes slowly: it may be flagged (and a
    # divergence or two reported), the curves with a planted point may not
    # divergences: 3-7 on earlier machines, 12 of the 600 draws on this one (same pins, base commit too): a few
    # percent at most, and always said in the notes
    assert info["divergences"] <= 0.03 * settings.draws * settings.chains and len(notes) == (not summ["converged"].all()) + (info["divergences"] > 0)
    flat = (summ["condition"] == "baby-f") & (summ["paradigm"] == "p3")
    assert summ[~flat]["converged"].all() and (summ[~flat]["r_hat"] < 1.05).all()
    planted = {("baby-f", "p1"): 6.0, ("baby-f", "p2"): 5.0, ("baby", "p1"): 5.0, ("baby", "p2"): 5.0,
               ("baby", "p3"): 5.5}
    for r in summ.itertuples():
        if (r.condition, r.paradigm) in planted:
            x0 = planted[(r.condition, r.paradigm)]
            assert r.acquisition == "acquired" and r.log10_lo < x0 < r.log10_hi, r
            assert abs(r.log10_point - x0) < 0.15 and r.point_words == pytest.approx(10 ** r.log10_point)
    never = summ[(summ["condition"] == "baby-f") & (summ["paradigm"] == "p3")].iloc[0]
    assert never["acquisition"] == "not_acquired" and never["p_not_acquired"] > 0.9
    assert never["point_words"] == pytest.approx(1e7) and not math.isnan(never["log10_point"])
    par = con[con["level"] == "paradigm"].set_index("paradigm")
    assert par.loc["p1", "status"] == "later" and abs(par.loc["p1", "delta"] - 1.0) < 0.2
    assert par.loc["p1", "p_later"] > 0.99
    assert par.loc["p2", "status"] == "no clear difference"
    assert par.loc["p3", "status"].startswith("a not acquired")


def test_unknown_method_names_the_key():
    from povstim.settings import build

    with pytest.raises(PovstimError, match=r"acquisition\.method"):
        build(A.AcquisitionSettings, "acquisition", {"method": "bayes"})
