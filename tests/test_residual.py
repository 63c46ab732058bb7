"""The residual evidence, the expected direct-evidence sentences still in BABY-F, beside the removal counts
(povstim plan and the report's conditions page), from the measured recall with a Wilson interval."""

from __future__ import annotations

import json

import pytest
from scipy.stats import binomtest

from povstim.analysis.tables.conditions_page import write_page
from povstim.filter import residual as R
from povstim.preflight import evidence


@pytest.mark.parametrize("k, n", [(147, 156), (20, 22), (0, 30), (30, 30), (1, 40)])
def test_wilson_interval_equals_scipys(k, n):
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    lo, hi = R.wilson(k, n)
    assert lo == pytest.approx(ci.low, abs=1e-9) and hi == pytest.approx(ci.high, abs=1e-9)


def test_residual_by_hand():
    # 90 of 100 positives found: 180 removals stand for 200 sentences, 20 left; the interval from Wilson's
    got = R.residual(180, 90, 100)
    assert got["status"] == "ok" and got["expected"] == pytest.approx(20.0)
    lo, hi = R.wilson(90, 100)
    assert got["low"] == pytest.approx(round(180 * (1 - hi) / hi, 1))
    assert got["high"] == pytest.approx(round(180 * (1 - lo) / lo, 1))
    assert got["low"] < 20 < got["high"]
    # every positive found: nothing expected, but the interval's lower recall leaves some
    full = R.residual(50, 30, 30)
    assert full["expected"] == 0 and full["high"] > 0


def test_too_few_positives_or_none_measured_is_never_a_number():
    few = R.residual(500, 19, 19)
    assert few["status"] == "not measurable" and "expected" not in few and "19 reference positives" in few["text"]
    rows = R.residual_rows({"question_formation": 10, "aann": 4}, {"question_formation": {"tp": 40, "positives": 50}},
                           exact=False)
    assert rows["aann"] == {"status": "not measured", "text": "recall not measured"}
    assert rows["question_formation"]["expected"] == pytest.approx(2.5)


def test_recall_source_order(tmp_path):
    # gold trees in posh mode: the reference itself
    _, src, exact = R.recall_source("gold", "posh")
    assert exact and "gold trees" in src
    # a run's own filter_validation output first ...
    v = tmp_path / "validation.json"
    v.write_text(json.dumps({"parser": "spacy", "n_sentences": 99, "treebank": {"path": "tb.conllu"},
                             "cv": {"group_by": ["child_name"]},
                             "modes": {"conservative": {"per_phenomenon": {"passive": {"cross_validated": {
                                 "reference": {"tp": 45, "fp": 3, "fn": 5}}}}}}}))
    recalls, src, exact = R.recall_source("spacy", "conservative", v)
    assert not exact and recalls["passive"]["tp"] == 45 and recalls["passive"]["positives"] == 50
    assert "tb.conllu" in recalls["passive"]["provenance"] and str(v) in src
    # ... else the shipped table, with its provenance
    recalls, src, _ = R.recall_source("spacy", "conservative", tmp_path / "absent.json")
    assert "measured_recall.yaml" in src and "gold_train" in src
    # the shipped QF recall is the cue design split by child (scripts/qf_cue_design_cv.py): out of sample
    assert recalls["question_formation"]["positives"] >= 20 and recalls["question_formation"]["sample"] == "out"
    assert recalls["binding_domain"]["sample"] == "in"  # a definition written reading these trees
    # a parser nobody measured: nothing
    recalls, src, _ = R.recall_source("stanza", "conservative")
    assert recalls == {} and "no measured recall" in src


def test_plan_prints_the_residual_beside_the_removals():
    row = {"corpus": "baby", "size": "50k", "sentences": 1000, "removed": 180, "per_phenomenon": {"passive": 180},
           "pool": {"passive": 0}, "pool_high": {"passive": 0}, "sample": None, "mode": "conservative",
           "backend": "spacy", "method": "all", "combos": {},
           "residual": R.residual_rows({"passive": 180}, {"passive": {"tp": 90, "positives": 100, "sample": "out"}},
                                       False)}
    text = "\n".join(evidence.render({"rows": [row], "reinsert": [], "notes": [], "residual_source": "the table"}))
    assert "still in BABY-F (expected DPE sentences, 95%): passive ~20 [" in text
    assert "recall 0.90 [" in text and "100 positives), out of sample" in text and "of of" not in text
    assert "recall from the table" in text


def test_conditions_page_has_the_residual_column(tmp_path):
    stats = [{"condition": "baby-f", "size": "50k", "filtered": True, "n_words": 50000, "n_sentences": 900,
              "n_dpe_removed": 180, "dpe_removed": {"passive": 180, "aann": 3}, "n_replaced": 0},
             {"condition": "baby", "size": "50k", "filtered": False, "n_words": 50000, "n_sentences": 1000,
              "n_dpe_removed": 0, "dpe_removed": {}, "n_replaced": 0}]
    out = tmp_path / "conditions.html"
    write_page(stats, out, 0.02, ({"passive": {"tp": 90, "positives": 100}}, "the shipped table", False))
    page = out.read_text()
    assert "still in it (expected DPE, 95%)" in page
    assert "passive: ~20 [" in page and "aann: recall not measured" in page and "recall from the shipped table" in page
    write_page(stats, out, 0.02)  # no residual asked: no column
    assert "still in it" not in out.read_text()
