"""Age-equivalent scores: lookup with boundary cases, norms validation naming file and line,
and the analysis writing the age table and per-construction accuracy for mixed task kinds."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from povstim.analysis.timing.age import Norms, Row, age_table, format_age, lookup, read_norms
from povstim.cli import main
from povstim.io import PovstimError
from povstim.scoring.items import write_parquet

# A small normative table: raw 4 -> 3;0 ... raw 10 -> 6;0 (ages in months).
NORMS = Norms("t", [Row(4, 36, 2), Row(6, 42, 3), Row(8, 48, 4), Row(10, 72, 5)])


@pytest.mark.parametrize("raw, label, months, bound", [
    (0, "< 3;0", math.nan, "below"),     # below the lowest raw score
    (3, "< 3;0", math.nan, "below"),
    (4, "3;0", 36, "within"),            # exactly the lowest raw score: the youngest age, not "<"
    (5, "3;0", 36, "within"),            # between rows: the lower row's age
    (6, "3;6", 42, "within"),            # exact boundary of a row
    (9, "4;0", 48, "within"),
    (10, "6;0", 72, "within"),           # exactly the highest raw score: the oldest age, not ">"
    (11, "> 6;0", math.nan, "above"),    # above the highest
])
def test_lookup_boundaries(raw, label, months, bound):
    eq = lookup(NORMS, raw)
    assert (eq.label, eq.bound) == (label, bound)
    assert (math.isnan(eq.age_months) and math.isnan(months)) or eq.age_months == months


def test_age_notation():
    assert [format_age(m) for m in (36, 49, 52, 143, 30.5)] == ["3;0", "4;1", "4;4", "11;11", "2;6.5"]
    assert NORMS.age_range == "3;0–6;0"


def test_json_and_csv_norms_read_the_same(tmp_path):
    j = tmp_path / "norms.json"
    j.write_text(json.dumps({"tests": [{"test": "t", "select": {"category": "A"},
                                        "rows": [{"raw": 4, "age_months": 36}, {"raw": 6, "age_months": 42}]}]}))
    c = tmp_path / "norms.csv"
    c.write_text("test,category,raw,age_months\nt,A,4,36\nt,A,6,42\n")
    (a,), (b,) = read_norms(j), read_norms(c)
    assert [(r.raw, r.age_months) for r in a.rows] == [(r.raw, r.age_months) for r in b.rows] == [(4, 36), (6, 42)]
    assert a.select == b.select == {"category": ["A"]}


@pytest.mark.parametrize("rows, line, what", [
    ([(4, 36), (6, 42), (5, 48)], 4, "raw score 5 does not increase"),
    ([(4, 36), (4, 42)], 3, "raw score 4 does not increase"),
    ([(4, 36), (6, 30)], 3, "age 30 months at raw score 6 is younger"),
])
def test_non_monotone_norms_name_file_and_line(tmp_path, rows, line, what):
    c = tmp_path / "norms.csv"
    c.write_text("test,raw,age_months\n" + "".join(f"t,{r},{a}\n" for r, a in rows))
    with pytest.raises(PovstimError) as exc:
        read_norms(c)
    assert f"{c}, line {line}" in str(exc.value) and "not monotone" in str(exc.value) and what in str(exc.value)
    # The same table as JSON, one row per line: the error names the row's own line.
    j = tmp_path / "norms.json"
    body = ",\n".join(f'    {{"raw": {r}, "age_months": {a}}}' for r, a in rows)
    j.write_text('{"tests": [{"test": "t", "rows": [\n' + body + "\n]}]}\n")
    with pytest.raises(PovstimError) as exc:
        read_norms(j)
    assert f"{j}, line {line}" in str(exc.value) and "not monotone" in str(exc.value)


def test_other_bad_norms(tmp_path):
    c = tmp_path / "norms.csv"
    c.write_text("test,raw,age\nt,1,2\n")
    with pytest.raises(PovstimError, match="line 1: norms CSV lacks column"):
        read_norms(c)
    c.write_text("test,raw,age_months\nt,1.5,2\n")
    with pytest.raises(PovstimError, match="line 2: raw score must be a non-negative integer"):
        read_norms(c)
    j = tmp_path / "norms.json"
    j.write_text('{"tests": [\n {"test": "t", "rows": [{"raw": 1, "age_months": 2}], "selekt": {}}]}')
    with pytest.raises(PovstimError, match="line 2: unknown key"):
        read_norms(j)


def _items(n_correct_by_model: dict, category="A", n=10):
    rows = []
    for (cond, seed), k in n_correct_by_model.items():
        for i in range(n):
            rows.append({"arch": "a", "condition": cond, "size": "1k", "seed": seed, "suite": "s",
                         "category": category, "paradigm": "p", "item_id": str(i), "correct": i < k})
    return pd.DataFrame(rows)


def test_age_table_per_model():
    items = _items({("baby", 1): 3, ("baby", 2): 6, ("wiki", 1): 10})
    items = pd.concat([items, _items({("baby", 1): 10}, category="B")])  # not selected
    t = age_table(items, "s", [Norms("t", NORMS.rows, {"category": ["A"]}, "norms.csv")])
    got = {(r.condition, r.seed): (r.raw, r.age_equivalent, r.bound) for r in t.itertuples()}
    assert got == {("baby", 1): (3, "< 3;0", "below"), ("baby", 2): (6, "3;6", "within"),
                   ("wiki", 1): (10, "6;0", "within")}
    assert set(t["n_items"]) == {10} and set(t["age_range"]) == {"3;0–6;0"}
    with pytest.raises(PovstimError, match="selects no item"):
        age_table(items, "s", [Norms("t", NORMS.rows, {"category": ["Z"]}, "norms.csv")])


def _score_file(path, cond, correct_mc, task_rows=True):
    """A mixed score file as povstim score writes it (columns of scoring/tasks.py)."""
    from povstim.scoring.items import COLUMNS
    from povstim.scoring.tasks import TASK_COLUMNS

    recs = []
    for i in range(8):  # 4-option multiple choice, paradigm by construction
        recs.append({"task": "multiple_choice", "paradigm": "passiva" if i < 4 else "negativa",
                     "category": "Comprensione di frasi", "n_options": 4, "correct": i < correct_mc})
    for i in range(4):
        recs.append({"task": "minimal_pair", "paradigm": "accordo", "category": "Giudizio", "correct": i < 3})
    for i in range(2):
        recs.append({"task": "completion", "paradigm": "verbo", "category": "Completamento", "correct": i < 1})
    df = pd.DataFrame({
        "arch": "gpt2", "condition": cond, "size": "1k", "seed": np.int64(1), "step": np.int64(10),
        "final": True, "suite": "it", "paradigm": [r["paradigm"] for r in recs],
        "category": [r["category"] for r in recs], "item_id": [str(i) for i in range(len(recs))],
        "logp_good": -1.0, "logp_bad": -2.0, "ntok_good": np.int64(3), "ntok_bad": np.int64(3),
        "correct": [r["correct"] for r in recs],
    })
    for col in TASK_COLUMNS:
        df[col] = pd.array([r.get(col) for r in recs], dtype="Int64" if col == "n_options" else "string") \
            if col in ("task", "n_options") else pd.array([None] * len(recs), dtype="string")
    write_parquet(df[COLUMNS + TASK_COLUMNS], path)


def test_analysis_of_mixed_tasks_writes_chance_aware_tables_and_ages(tmp_path):
    scores = [tmp_path / "baby.parquet", tmp_path / "wiki.parquet"]
    _score_file(scores[0], "baby", correct_mc=2)
    _score_file(scores[1], "wiki", correct_mc=7)
    suite = tmp_path / "it"
    suite.mkdir()
    (suite / "norms.csv").write_text("test,category,raw,age_months\nfrasi,Comprensione di frasi,2,36\n"
                                     "frasi,Comprensione di frasi,5,48\nfrasi,Comprensione di frasi,8,60\n")
    conditions = {"baby": {"source": "baby", "filtered": False, "note": "not filtered: no DPE rules for language it"},
                  "wiki": {"source": "wiki", "filtered": False}}
    out = tmp_path / "analysis"
    rc = main(["analyze", "--scores", *map(str, scores), "--conditions", json.dumps(conditions), "--no-model",
               "--out-dir", str(out), "--suite-dirs", str(suite)])
    assert rc == 0
    acc = pd.read_csv(out / "accuracy.csv")
    par = acc[acc["level"] == "paradigm"].set_index(["condition", "paradigm"])
    # Per-construction accuracy (BaBIEs Tables 5-8) and each item's chance level.
    assert par.loc[("baby", "passiva"), "accuracy"] == 0.5 and par.loc[("wiki", "negativa"), "accuracy"] == 0.75
    assert par.loc[("baby", "passiva"), "chance"] == 0.25 and par.loc[("baby", "accordo"), "chance"] == 0.5
    assert np.isnan(par.loc[("baby", "verbo"), "chance"])
    # the learning curves carry the same chance level (the figures draw it per panel)
    curves = pd.read_csv(out / "accuracy_by_step.csv").groupby("paradigm")["chance"].first()
    assert curves["passiva"] == 0.25 and curves["accordo"] == 0.5 and np.isnan(curves["verbo"])
    chisq = pd.read_csv(out / "chisq.csv")
    row = chisq[(chisq["condition"] == "wiki") & (chisq["paradigm"] == "passiva")].iloc[0]
    from scipy import stats

    ref = stats.chisquare([4, 0], [1, 3])  # 4 of 4 correct against chance 1/4
    assert row["chi2"] == pytest.approx(ref.statistic) and row["p"] == pytest.approx(ref.pvalue)
    assert np.isnan(chisq[chisq["paradigm"] == "verbo"]["p"]).all()  # completion: no chance, no test
    ages = pd.read_csv(out / "age_equivalents.csv")
    got = dict(zip(ages["condition"], ages["age_equivalent"]))
    assert got == {"baby": "3;0", "wiki": "4;0"}  # raw 2 -> 36 months; raw 7 is between 5 (48) and 8 (60): 48
    caption = (out / "tables" / "table8_it.md").read_text()
    assert "1/k for a k-option" in caption and "BABY: not filtered: no DPE rules for language it" in caption
    assert (out / "tables" / "age_it.html").exists()
