"""The three-level model of POSH's released analysis (one BABY-F/BABY/WIKI factor) and its
pairwise contrasts; Table 12's formula vs. the three-level model on one example.

POSH's stats/bayesian.R (xiulinyang/posh-bench): ``val ~ (size_z + category) * source_filter +
(1|random_seed) + (1|phenomenon)``, category sum-coded, source_filter treatment-coded against
baby_unfiltered (our BABY).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from helpers.simulate import CONDITIONS, simulate_scores
from povstim.analysis.models import bayes
from povstim.analysis.tables import tidy
from povstim.analysis.pipeline import analysis_settings

THREE = "(size + category) * source_filter + (1|seed) + (1|phenomenon)"
CODING = {"source_filter": ("treatment", "BABY")}


def _items(**kw):
    df = tidy.final_items(tidy.normalise(simulate_scores(**kw), "sim"))
    return tidy.attach_conditions(df, CONDITIONS)


def test_three_level_design_codes_like_posh_released_model():
    d = bayes.build_design(_items(items=5), THREE, family="binomial", zscore=True, contrasts="sum", coding_of=CODING)
    labels = [c.label for c in d.columns]
    assert labels[:6] == ["size", "category[Binding]", "category[Island]", "category[Question Formation]",
                          "source_filter[BABY-F]", "source_filter[WIKI]"]
    assert "category[Island]:source_filter[WIKI]" in labels and "size:source_filter[BABY-F]" in labels
    assert d.coding["source_filter"]["reference"] == "BABY" and d.coding["source_filter"]["contrasts"] == "treatment"
    col = dict(zip(labels, d.columns))
    raw = d.raw
    baby = (raw["source_filter"] == "BABY").to_numpy()
    assert np.all(col["source_filter[BABY-F]"].values[baby] == 0) and np.all(col["source_filter[WIKI]"].values[baby] == 0)
    assert set(col["source_filter[WIKI]"].values) == {0.0, 1.0}
    assert np.all(col["category[Binding]"].values[(raw["category"] == "Wanna").to_numpy()] == -1)  # still sum-coded
    pretty = dict(zip(labels, [c.pretty for c in d.columns]))
    assert pretty["source_filter[BABY-F]"] == "Condition (BABY-F vs. BABY)"
    assert pretty["category[Island]:source_filter[WIKI]"] == "Island × WIKI vs. BABY"
    # the design row of a hypothetical cell reproduces the data's coding
    i = int(np.flatnonzero((raw["source_filter"] == "WIKI").to_numpy() & (raw["category"] == "Wanna").to_numpy())[0])
    row = d.row({"source_filter": "WIKI", "category": "Wanna", "size": col["size"].values[i]})
    assert np.allclose(row, [c.values[i] for c in d.columns])


def test_pairwise_contrasts_are_the_hand_computed_sums_of_coefficients():
    d = bayes.build_design(_items(items=5), THREE, family="binomial", zscore=True, contrasts="sum", coding_of=CODING)
    rng = np.random.default_rng(0)
    beta = {c.label: rng.normal(0, 0.5) for c in d.columns}
    draws = 400
    noise = rng.normal(0, 0.1, draws)
    post = {c.name: beta[c.label] + noise * (k + 1) / 10 for k, c in enumerate(d.columns)}
    got = bayes.pairwise_contrasts(post, d).set_index(["contrast", "scope"])
    cats = ["Binding", "Island", "Question Formation"]

    def level_effect(level, cat, b):
        """η(level, cat) − η(BABY, cat) by hand: treatment main effect + the category interaction
        (Wanna's interaction is minus the sum of the others: sum coding)."""
        if level == "BABY":
            return 0.0
        main = b[f"source_filter[{level}]"]
        if cat == "Wanna":
            return main - sum(b[f"category[{c}]:source_filter[{level}]"] for c in cats)
        return main + b[f"category[{cat}]:source_filter[{level}]"]

    for a, bb in (("BABY-F", "BABY"), ("BABY", "WIKI"), ("BABY-F", "WIKI")):
        per = {cat: level_effect(a, cat, beta) - level_effect(bb, cat, beta) for cat in cats + ["Wanna"]}
        # medians of draws = beta + scaled common noise: compare with a tolerance well above that noise
        for cat, val in per.items():
            assert got.loc[(f"{a} vs. {bb}", cat), "median"] == pytest.approx(val, abs=0.15)
        # overall = mean over categories = the treatment main effects (size at its mean: z = 0)
        overall = np.mean(list(per.values()))
        main = (beta.get(f"source_filter[{a}]", 0.0) if a != "BABY" else 0.0) - (
            beta.get(f"source_filter[{bb}]", 0.0) if bb != "BABY" else 0.0)
        assert overall == pytest.approx(main, abs=1e-12)
        assert got.loc[(f"{a} vs. {bb}", "overall"), "median"] == pytest.approx(main, abs=0.15)
    # exactness without noise: point-mass posterior
    exact = bayes.pairwise_contrasts({c.name: np.full(3, beta[c.label]) for c in d.columns}, d).set_index(
        ["contrast", "scope"])
    assert exact.loc[("BABY-F vs. BABY", "Wanna"), "median"] == pytest.approx(
        level_effect("BABY-F", "Wanna", beta), abs=1e-12)
    assert list(dict.fromkeys(got.index.get_level_values(0))) == ["BABY-F vs. BABY", "BABY vs. WIKI", "BABY-F vs. WIKI"]


def test_filtering_sentences_say_credible_only_when_the_interval_excludes_zero():
    c = pd.DataFrame([
        {"contrast": "BABY-F vs. BABY", "a": "BABY-F", "b": "BABY", "scope": "overall", "median": 0.1, "lower": 0.05,
         "upper": 0.15, "p_gt0": 1.0},
        {"contrast": "BABY-F vs. BABY", "a": "BABY-F", "b": "BABY", "scope": "Wanna", "median": 0.02, "lower": -0.1,
         "upper": 0.14, "p_gt0": 0.6},
        {"contrast": "BABY vs. WIKI", "a": "BABY", "b": "WIKI", "scope": "overall", "median": -0.3, "lower": -0.4,
         "upper": -0.2, "p_gt0": 0.0},
    ])
    text = bayes.filtering_sentences(c)
    assert text[0].startswith("Filtering out direct positive evidence (BABY-F vs. BABY): overall, models without "
                              "it scored credibly higher")
    assert "Wanna: no credible difference" in text[0]
    assert "BABY models scored credibly lower" in text[1]
    assert bayes.filtering_sentences(c, converged=False)[0].startswith("CONVERGENCE PROBLEM")


def test_settings_offer_both_models():
    s = analysis_settings({"models": ["table12", "three_level"], "significance": "posh"})
    assert s.models == ("table12", "three_level") and s.significance == "posh"
    assert s.three_level_formula == THREE
    assert analysis_settings({}).models == ("table12",)  # the default: Table 12 only, as before
    from povstim.io import PovstimError

    with pytest.raises(PovstimError, match="analysis.models"):
        analysis_settings({"models": ["table13"]})


@pytest.mark.slow
@pytest.mark.heavy  # two Bambi fits of planted counts (~2 min); Table 12's fit itself: test_release
def test_table12_formula_blames_filtering_for_a_wiki_deficit_the_three_level_contrasts_do_not(tmp_path):
    """The issue's example. Truth: filtering does nothing (BABY-F = BABY everywhere) and WIKI is worse
    than BABY only in Wanna. Table 12's formula has no Source x Category term, so the Wanna-only WIKI
    deficit loads on the Category x Filtering terms: Wanna x Filtering (minus the sum of the printed
    interactions) comes out credibly positive, "filtering helps wanna". The three-level contrasts put it
    where it is: BABY vs WIKI in Wanna, with no credible BABY-F vs BABY difference in any category."""
    from povstim.analysis.pipeline import fit_models

    cats = {"island_adjunct": "Island", "question_formation_sr": "Question Formation",
            "principle_a_locality": "Binding", "wanna": "Wanna"}
    rows = []
    for cond, meta in CONDITIONS.items():
        for size in ("10M", "30M"):
            for seed in (1, 2, 3):
                for par, cat in cats.items():
                    logit = {"Island": 0.8, "Question Formation": 0.2, "Binding": 0.4, "Wanna": 1.2}[cat]
                    logit += 0.1 * (size == "30M") + 0.05 * (seed - 2)
                    if cond == "wiki" and cat == "Wanna":
                        logit -= 1.6  # WIKI's Wanna deficit (POSH Table 3: 20-40% vs 66-92%)
                    # expected counts, no sampling noise: BABY-F and BABY get exactly the same data
                    k = int(round(500 / (1 + np.exp(-logit))))
                    rows.append({"suite": "posh", "arch": "gpt2", "condition": cond, "size": size, "seed": seed,
                                 "category": cat, "paradigm": par, "phenomenon": par, "n_correct": k, "n_total": 500,
                                 **meta})
    counts = pd.DataFrame(rows)
    settings = analysis_settings({"models": ["table12", "three_level"], "draws": 300, "tune": 300, "chains": 2,
                                  "seed": 2, "target_accept": 0.9})
    out = tmp_path / "bayes"
    # BABY's shortfall caveat (conditions_page.shortfall_caveat) reaches filtering.md through fit_models
    caveat = "Caveat: BABY holds less direct evidence than configured (planted)."
    fit_models(counts, settings, out, family="binomial", cores=2, caveat=caveat)
    t12 = pd.read_csv(out / "summary.csv").set_index("term")
    post = __import__("arviz").from_netcdf(out / "posterior.nc").posterior
    names = json.loads((out / "diagnostics.json").read_text())["posterior_names"]
    inter = [f"category[{c}]:filtered[True]" for c in ("Binding", "Island", "Question Formation")]
    wanna_x_filter = -sum(post[names[t]].values.reshape(-1) for t in inter)
    assert np.quantile(wanna_x_filter, 0.025) > 0, "Table 12 should show a spurious Wanna x Filtering effect"
    assert all(t12.loc[t, "upper"] < 0 for t in inter)  # and every printed interaction credibly negative
    con = pd.read_csv(out / "three_level_contrasts.csv").set_index(["contrast", "scope"])
    for scope in ("overall", "Binding", "Island", "Question Formation", "Wanna"):
        lo, hi = con.loc[("BABY-F vs. BABY", scope), ["lower", "upper"]]
        assert lo < 0 < hi, f"BABY-F vs BABY in {scope}: [{lo}, {hi}] should include 0"
    assert con.loc[("BABY vs. WIKI", "Wanna"), "lower"] > 1.0  # the deficit, where it is
    for scope in ("Binding", "Island", "Question Formation"):
        lo, hi = con.loc[("BABY vs. WIKI", scope), ["lower", "upper"]]
        assert lo < 0 < hi
    text = (out / "filtering.md").read_text()
    assert "BABY-F vs. BABY" in text and "Wanna: no credible difference" in text
    (para,) = [p for p in text.split("\n\n") if p.startswith("Filtering out direct positive evidence")]
    assert para.rstrip().endswith(caveat) and text.count("Caveat") == 1
