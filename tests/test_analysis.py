"""Unit tests of the analysis stage: tidy inputs, tables, formula parsing, design coding."""

from __future__ import annotations

import logging
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from povstim.analysis.models import bayes

from povstim.analysis.models import formula

from povstim.analysis.tables import tables

from povstim.analysis.tables import tidy
from helpers.simulate import CONDITIONS, simulate_scores
from povstim.io import PovstimError

# POSH §6 / Table 12: the formula, size z-scored, sum-to-zero contrasts.
POSH_FORMULA = "(size + category) * filtered + source + (1|seed) + (1|phenomenon)"
POSH_CODING = {"zscore": True, "contrasts": "sum"}


def test_schema_defaults_are_posh_table_12():
    from povstim.analysis.pipeline import analysis_settings

    s = analysis_settings({})
    assert (s.formula, s.zscore, s.contrasts) == (POSH_FORMULA, True, "sum")
    # POSH §6 priors: Intercept N(0, 1.5), b N(0, 0.5), group SD Exp(2)
    assert s.priors == {"intercept": {"dist": "Normal", "mu": 0.0, "sigma": 1.5},
                        "common": {"dist": "Normal", "mu": 0.0, "sigma": 0.5},
                        "group_sd": {"dist": "Exponential", "lam": 2.0}}


# ---- formula -----------------------------------------------------------------------------

def test_formula_expands_posh_table12_model():
    f = formula.parse("(size + category) * filtered + source + (1|seed) + (1|phenomenon)")
    assert f.intercept
    assert f.terms == [("size",), ("category",), ("filtered",), ("source",), ("size", "filtered"),
                       ("category", "filtered")]
    assert [(g.group, g.intercept, g.slopes) for g in f.groups] == [("seed", True, []), ("phenomenon", True, [])]


@pytest.mark.parametrize("text,terms,intercept", [
    ("a*b*c", [("a",), ("b",), ("c",), ("a", "b"), ("a", "c"), ("b", "c"), ("a", "b", "c")], True),
    ("a:b + c - 1", [("c",), ("a", "b")], False),
    ("0 + x", [("x",)], False),
    ("a*(b + c):d", [("a",), ("b", "d"), ("c", "d"), ("a", "b", "d"), ("a", "c", "d")], True),
])
def test_formula_precedence_like_r(text, terms, intercept):
    f = formula.parse(text)
    assert f.terms == terms and f.intercept == intercept


@pytest.mark.parametrize("text,msg", [
    ("val ~ size", "right-hand side"),
    ("size +", "expected a variable"),
    ("size * (1|seed)", "interaction"),
    ("(1|)", "grouping variable"),
    ("", "empty formula"),
])
def test_formula_errors_are_clear(text, msg):
    with pytest.raises(PovstimError, match=msg):
        formula.parse(text)


# ---- tables ------------------------------------------------------------------------------

def test_chisq_matches_scipy_and_is_two_sided():
    chi2, p = tables.chisq_vs_chance(60, 100)
    assert chi2 == pytest.approx(4.0)
    assert p == pytest.approx(stats.chi2.sf(4.0, 1))
    # Below chance is just as significant as above it.
    assert tables.chisq_vs_chance(40, 100)[1] == pytest.approx(p)


def test_corrections():
    p = np.array([0.01, 0.04, 0.03, np.nan, 0.005])
    assert np.allclose(tables.adjust(p, "bonferroni")[[0, 1, 2, 4]], [0.04, 0.16, 0.12, 0.02])
    # Holm: sorted 0.005*4, 0.01*3, 0.03*2, 0.04*1 -> monotone 0.02, 0.03, 0.06, 0.06
    assert np.allclose(tables.adjust(p, "holm")[[4, 0, 2, 1]], [0.02, 0.03, 0.06, 0.06])
    bh = tables.adjust(p, "bh")
    assert np.allclose(bh[[0, 1, 2, 4]], stats.false_discovery_control(p[[0, 1, 2, 4]], method="bh"))
    assert np.isnan(tables.adjust(p, "holm")[3])
    assert np.array_equal(tables.adjust(p, "none")[[0, 1]], p[[0, 1]])


def test_stars():
    assert [tables.stars(x) for x in (0.0005, 0.005, 0.03, 0.2, math.nan)] == ["***", "**", "*", "", ""]


def _items(**kw):
    df = simulate_scores(**kw)
    return tidy.final_items(tidy.normalise(df, "sim"))


def test_accuracy_levels_are_macro_averages():
    items = _items(items=20, seeds=(1,), sizes=("50k",))
    acc = tables.accuracy_table(items)
    one = acc[acc["condition"] == "baby"]
    par = one[one["level"] == "paradigm"]
    cat = one[one["level"] == "category"].set_index("category")["accuracy"]
    for c, sub in par.groupby("category"):
        assert cat[c] == pytest.approx(sub["accuracy"].mean())
        assert sub["n_total"].sum() == 20 * len(sub)
    overall = one[one["level"] == "overall"]["accuracy"].iloc[0]
    assert overall == pytest.approx(cat.mean())  # mean over categories, as POSH Table 3
    # Only the final rows count: 20 items x 9 paradigms x 3 conditions.
    assert acc[acc["level"] == "paradigm"]["n_total"].sum() == 20 * 9 * 3


def test_chisq_table_pools_seeds_and_formats_table3_cells():
    items = _items(items=50, seeds=(1, 2, 3), sizes=("50k", "1M"))
    acc = tables.accuracy_table(items)
    chi = tables.chisq_table(acc, "bonferroni")
    row = chi[(chi["condition"] == "wiki") & (chi["size"] == "1M") & (chi["paradigm"] == "wanna")].iloc[0]
    per_seed = acc[(acc["condition"] == "wiki") & (acc["size"] == "1M") & (acc["paradigm"] == "wanna")]
    assert row["n_total"] == 150 and row["n_correct"] == per_seed["n_correct"].sum()
    assert row["accuracy_sd"] == pytest.approx(np.std(per_seed["accuracy"], ddof=1))
    n_par_tests = int((chi["level"] == "paradigm").sum())
    assert row["p_adj"] == pytest.approx(min(1.0, row["p"] * n_par_tests))
    t3 = tables.table3(chi, "posh")
    assert list(t3.columns) == ["Size", "Cond.", "Binding", "Island", "Question Formation", "Wanna", "Overall"]
    assert list(t3["Size"]) == ["50k"] * 3 + ["1M"] * 3  # sizes in numeric, not string, order
    cell = t3.iloc[0]["Island"]
    assert cell.count("(") == 1 and cell.endswith(")")
    t8 = tables.table8(chi, "posh")
    assert len(t8) == 9 and "1M WIKI" in t8.columns
    md = tables.to_markdown(t3, "cap")
    assert md.splitlines()[0].startswith("| Size | Cond.")
    tex = tables.to_latex(t3, "50% cap", "tab:x")
    assert r"50\% cap" in tex and "$^{***}$" in tex and "***}$*" not in tex


# ---- inputs ------------------------------------------------------------------------------

def test_read_scores_names_the_bad_file(tmp_path):
    df = simulate_scores(items=2, sizes=("50k",), seeds=(1,)).drop(columns=["ntok_bad"])
    path = tmp_path / "bad.parquet"
    df.to_parquet(path)
    with pytest.raises(PovstimError, match=r"bad\.parquet.*ntok_bad"):
        tidy.read_scores([path])
    with pytest.raises(PovstimError, match="no such item-score file"):
        tidy.read_scores([tmp_path / "missing.parquet"])


def test_read_counts_validates_lines(tmp_path):
    path = tmp_path / "counts.csv"
    path.write_text("condition,size,paradigm,n_correct,n_total\nbaby,10M,wanna,40,50\nbaby,10M,island_wh,60,50\n")
    with pytest.raises(PovstimError, match=r"line 3: n_correct > n_total"):
        tidy.read_counts(path)
    path.write_text("condition,size,paradigm,n_correct,n_total\nbaby,10M,wanna,4.5,50\n")
    with pytest.raises(PovstimError, match=r"line 2: n_correct must be a non-negative integer"):
        tidy.read_counts(path)
    path.write_text("condition,size,paradigm,correct\nbaby,10M,wanna,4\n")
    with pytest.raises(PovstimError, match="n_correct, n_total"):
        tidy.read_counts(path)


def test_attach_conditions_rejects_unknown_condition():
    df = pd.DataFrame({"condition": ["baby", "mystery"]})
    with pytest.raises(PovstimError, match="mystery"):
        tidy.attach_conditions(df, CONDITIONS)


# ---- design ------------------------------------------------------------------------------

def _model_items(conditions=CONDITIONS, **kw):
    return tidy.attach_conditions(_items(conditions=conditions, **kw), conditions)


def test_design_codes_like_posh_table12():
    items = _model_items(items=10)
    d = bayes.build_design(items, POSH_FORMULA, **POSH_CODING, family="binomial")
    labels = [c.label for c in d.columns]
    assert labels == ["size", "category[Binding]", "category[Island]", "category[Question Formation]",
                      "filtered[True]", "source[baby]", "size:filtered[True]",
                      "category[Binding]:filtered[True]", "category[Island]:filtered[True]",
                      "category[Question Formation]:filtered[True]"]
    raw = d.raw
    col = dict(zip(labels, d.columns))
    wanna = (raw["category"] == "Wanna").to_numpy()
    assert np.all(col["category[Binding]"].values[wanna] == -1)  # sum-to-zero: Wanna is -1 everywhere
    assert set(col["filtered[True]"].values) == {-1.0, 1.0}
    assert np.all(col["source[baby]"].values[(raw["source"] == "baby").to_numpy()] == 1)
    # size is z-scored over items
    w = raw["n_total"].to_numpy()
    assert np.average(col["size"].values, weights=w) == pytest.approx(0, abs=1e-12)
    # aggregation keeps every item: 3 conditions x 2 sizes x 2 seeds x 9 paradigms cells
    assert len(d.data) == 3 * 2 * 2 * 9 and d.data["n_total"].sum() == len(items)
    assert d.bambi_formula().startswith("p(n_correct, n_total) ~ 1 + x0 + x1")
    assert "(1|g_seed)" in d.bambi_formula() and d.dropped == []


def test_design_drops_single_level_factors_with_a_warning(caplog):
    items = _model_items(items=5, sizes=("50k",), seeds=(1,))
    with caplog.at_level(logging.WARNING):
        d = bayes.build_design(items, POSH_FORMULA, **POSH_CODING, family="binomial")
    assert "size" in d.dropped and "size:filtered" in d.dropped and "(1|seed)" in d.dropped
    assert not any(c.label.startswith("size") for c in d.columns)
    assert [g.group for g in d.groups] == ["phenomenon"]
    assert "dropping size" in caplog.text and "seed has 1 level" in caplog.text


def test_design_drops_aliased_terms():
    # BABY-F vs WIKI only: filtered and source are the same contrast.
    conds = {k: v for k, v in CONDITIONS.items() if k != "baby"}
    items = _model_items(conditions=conds, items=5)
    d = bayes.build_design(items, POSH_FORMULA, **POSH_CODING, family="binomial")
    labels = [c.label for c in d.columns]
    assert "filtered[True]" in labels and "source[baby]" not in labels
    assert "source[baby]" in d.dropped
    mat = np.column_stack([np.ones(len(d.data))] + [c.values for c in d.columns])
    assert np.linalg.matrix_rank(mat) == mat.shape[1]


def test_design_missing_variable_hint():
    items = _items(items=2, sizes=("50k",), seeds=(1,))
    with pytest.raises(PovstimError, match="come from --conditions"):
        bayes.build_design(items, POSH_FORMULA, **POSH_CODING, family="bernoulli")


def test_treatment_contrasts_and_no_zscore():
    items = _model_items(items=5)
    d = bayes.build_design(items, "size + category", family="binomial", zscore=False, contrasts="treatment")
    col = {c.label: c.values for c in d.columns}
    assert set(col["size"]) == {50000.0, 150000.0}
    assert set(col["category[Binding]"]) == {0.0, 1.0}


def test_bernoulli_and_binomial_designs_have_the_same_likelihood():
    """Sum over items of the Bernoulli log-likelihood == sum over cells of the binomial one."""
    items = _model_items(items=8)
    db = bayes.build_design(items, "size * filtered + category", **POSH_CODING, family="bernoulli")
    da = bayes.build_design(items, "size * filtered + category", **POSH_CODING, family="binomial")
    rng = np.random.default_rng(0)
    beta = rng.normal(0, 0.3, len(db.columns) + 1)
    eta_b = beta[0] + np.column_stack([c.values for c in db.columns]) @ beta[1:]
    eta_a = beta[0] + np.column_stack([c.values for c in da.columns]) @ beta[1:]
    y = db.data["val"].to_numpy()
    ll_b = np.sum(y * eta_b - np.log1p(np.exp(eta_b)))
    k, n = da.data["n_correct"].to_numpy(), da.data["n_total"].to_numpy()
    ll_a = np.sum(k * eta_a - n * np.log1p(np.exp(eta_a)))  # up to the constant log C(n, k)
    assert ll_a == pytest.approx(ll_b)
