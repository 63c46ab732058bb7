"""Significance against chance as POSH-BENCH published it (analysis.significance: posh), on a
hand-computed example, and as povstim pooled it; below-chance marks.

POSH's released analysis (xiulinyang/posh-bench, posh-analysis.py): per seed a two-sided
chi-square goodness-of-fit test against 50%; the seeds' p values combined with Fisher's method;
p = 1 when that p < 0.05 but the seeds disagree in direction (a seed at exactly 50% counts as
"above"); Holm within each training-data column (one family per column and table level).
The gold numbers below are worked out from the chi-square distribution directly, not through
the code under test (nor scipy's combine_pvalues, which the code uses).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from povstim.analysis.tables import tables

N = 100  # items per paradigm and seed

# column -> paradigm -> correct items of seeds 1, 2, 3
COUNTS = {
    "baby-f": {
        "p_up": (60, 62, 58),      # above chance in every seed
        "p_down": (40, 38, 45),    # below chance in every seed
        "p_mixed": (70, 30, 52),   # strongly significant per seed, but the seeds disagree: p -> 1
        "p_flat": (53, 47, 50),    # mixed and not significant: p stays as combined
    },
    "wiki": {
        "p_up": (55, 56, 57),
        "p_down": (50, 51, 49),
        "p_mixed": (80, 79, 81),
        "p_flat": (50, 50, 50),    # exactly chance everywhere
    },
}
CATEGORY = {"p_up": "A", "p_down": "A", "p_mixed": "B", "p_flat": "B"}


def _counts() -> pd.DataFrame:
    rows = []
    for cond, pars in COUNTS.items():
        for par, ks in pars.items():
            for seed, k in zip((1, 2, 3), ks):
                rows.append({"suite": "posh", "arch": "gpt2", "condition": cond, "size": "10M", "seed": seed,
                             "category": CATEGORY[par], "paradigm": par, "n_correct": k, "n_total": N})
    return pd.DataFrame(rows)


def _p_chi2(k: int, n: int) -> float:
    """Two-sided chi-square goodness of fit against n/2 with 1 df, by hand."""
    x2 = (k - n / 2) ** 2 / (n / 2) + ((n - k) - n / 2) ** 2 / (n / 2)
    return float(stats.chi2.sf(x2, 1))


def _fisher(ps) -> float:
    return float(stats.chi2.sf(-2 * sum(math.log(p) for p in ps), 2 * len(ps)))


def _posh_raw(ks, n) -> float:
    ps = [_p_chi2(k, n) for k in ks]
    p = _fisher(ps)
    accs = [k / n for k in ks]
    mixed = not (all(a >= 0.5 for a in accs) or all(a < 0.5 for a in accs))
    return 1.0 if (p < 0.05 and mixed) else p


def _holm(ps: dict) -> dict:
    keys = sorted(ps, key=lambda k: ps[k])
    m, out, running = len(keys), {}, 0.0
    for i, k in enumerate(keys):
        running = max(running, min(1.0, (m - i) * ps[k]))
        out[k] = running
    return out


def _marks(p: float, mark: str) -> str:
    return mark * (3 if p < 0.001 else 2 if p < 0.01 else 1 if p < 0.05 else 0)


@pytest.fixture(scope="module")
def posh_chisq():
    acc = tables.accuracy_from_counts(_counts())
    return tables.chisq_table(acc, "holm", "posh")


def test_posh_paradigm_level_per_seed_fisher_direction_holm_per_column(posh_chisq):
    par = posh_chisq[posh_chisq["level"] == "paradigm"].set_index(["condition", "paradigm"])
    for cond, pars in COUNTS.items():
        raw = {p: _posh_raw(ks, N) for p, ks in pars.items()}
        adj = _holm(raw)  # the family is this column's four paradigms only
        for p, ks in pars.items():
            row = par.loc[(cond, p)]
            assert row["p"] == pytest.approx(raw[p], rel=1e-9, abs=1e-300), (cond, p)
            assert row["p_adj"] == pytest.approx(adj[p], rel=1e-9, abs=1e-300), (cond, p)
            seed_ps = [float(x) for x in row["p_seeds"].split(";")]
            assert seed_ps == pytest.approx([_p_chi2(k, N) for k in ks], rel=1e-3)
    # the worked example's verdicts
    bf = par.loc["baby-f"]
    assert bf.loc["p_mixed", "p"] == 1.0 and bf.loc["p_mixed", "direction"] == "mixed"
    assert _fisher([_p_chi2(k, N) for k in (70, 30, 52)]) < 1e-6  # what the direction rule overrides
    assert 0.05 < bf.loc["p_flat", "p"] < 1.0 and bf.loc["p_flat", "direction"] == "mixed"
    assert bf.loc["p_up", "direction"] == "above" and bf.loc["p_up", "stars"] == _marks(bf.loc["p_up", "p_adj"], "*")
    assert bf.loc["p_down", "direction"] == "below"
    assert bf.loc["p_down", "stars"] == _marks(bf.loc["p_down", "p_adj"], "\u2020") != ""
    assert par.loc[("wiki", "p_flat"), "p"] == 1.0 and par.loc[("wiki", "p_flat"), "direction"] == "none"
    assert (posh_chisq["significance"] == "posh").all()


def test_posh_category_level_pools_paradigms_within_each_seed(posh_chisq):
    cat = posh_chisq[posh_chisq["level"] == "category"].set_index(["condition", "category"])
    for cond, pars in COUNTS.items():
        raw = {}
        for c in ("A", "B"):
            members = [p for p in pars if CATEGORY[p] == c]
            ks = [sum(pars[p][s] for p in members) for s in range(3)]
            raw[c] = _posh_raw(ks, N * len(members))
        adj = _holm(raw)  # Table 3's family: this column's categories
        for c in ("A", "B"):
            assert cat.loc[(cond, c), "p"] == pytest.approx(raw[c], rel=1e-9, abs=1e-300)
            assert cat.loc[(cond, c), "p_adj"] == pytest.approx(adj[c], rel=1e-9, abs=1e-300)
    overall = posh_chisq[posh_chisq["level"] == "overall"]
    assert overall["p"].isna().all() and (overall["stars"] == "").all()  # POSH tests no Overall/Average


def test_pooled_procedure_is_one_test_of_all_items_corrected_per_table():
    acc = tables.accuracy_from_counts(_counts())
    chi = tables.chisq_table(acc, "holm", "pooled")
    par = chi[chi["level"] == "paradigm"].set_index(["condition", "paradigm"])
    raw = {(c, p): _p_chi2(sum(ks), 3 * N) for c, pars in COUNTS.items() for p, ks in pars.items()}
    adj = _holm(raw)  # one family: every paradigm cell of the table
    for key, p in raw.items():
        assert par.loc[key, "p"] == pytest.approx(p, rel=1e-9, abs=1e-300)
        assert par.loc[key, "p_adj"] == pytest.approx(adj[key], rel=1e-9, abs=1e-300)
    # pooling averages the seeds' disagreement away: 152/300 is just "not significant"
    assert par.loc[("baby-f", "p_mixed"), "p"] > 0.05 and par.loc[("baby-f", "p_mixed"), "direction"] == "above"
    down = par.loc[("baby-f", "p_down")]
    assert down["direction"] == "below" and down["stars"] == _marks(down["p_adj"], "\u2020") != ""


def test_below_chance_is_marked_differently_in_every_format(posh_chisq):
    t3 = tables.table3(posh_chisq, "posh")
    t8 = tables.table8(posh_chisq, "posh")
    cell = t8.loc[t8["Phenomenon"] == "p_down", "10M BABY-F"].iloc[0]
    assert cell.startswith("41.0\u2020") and "*" not in cell
    up = t8.loc[t8["Phenomenon"] == "p_mixed", "10M WIKI"].iloc[0]
    assert up.startswith("80.0***")
    tex = tables.to_latex(t8, tables.caption("table8", "posh", "holm", 3, "posh"), "tab:x")
    assert r"\textit{41.0}$^{\dagger" in tex and "$^{***}$" in tex and "\u2020" not in tex
    html = tables.to_html(t8, "cap")
    assert '<td class="below">41.0' in html and "td.below{" in html
    assert "td.below{" not in tables.to_html(t3[["Size", "Cond."]], "cap")  # the style only when used


def test_captions_name_the_procedure():
    posh = tables.caption("table3", "posh", "holm", 3, "posh")
    assert "per seed" in posh and "Fisher" in posh and "within each training-data column" in posh
    assert "Holm" in posh and "\u2020" in posh
    pooled = tables.caption("table8", "posh", "bonferroni", 3, "pooled")
    assert "pooled over seeds" in pooled and "Bonferroni" in pooled and "within the table" in pooled


def test_direction_rule_matches_posh_get_direction():
    assert tables.seed_direction([0.5, 0.6, 0.51]) == "above"  # a seed at chance counts as above
    assert tables.seed_direction([0.4, 0.49]) == "below"
    assert tables.seed_direction([0.5, 0.49]) == "mixed"
    assert tables.seed_direction([0.5, 0.5]) == "none"
    # a single seed: no combination, its own p value
    p, d, ps = tables.posh_p([(60, 100)])
    assert p == pytest.approx(_p_chi2(60, 100)) and d == "above" and len(ps) == 1
    assert np.isclose(tables.posh_p([(60, 100), (61, 100)])[0], _fisher([_p_chi2(60, 100), _p_chi2(61, 100)]))
