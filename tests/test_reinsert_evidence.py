"""What BABY really got back, in the report's words: the description of the conditions and the
caveat of the BABY-F vs. BABY sentence, on planted condition.json files with a shortfall.

Gold strings and counts are worked out by hand from the planted numbers."""

from __future__ import annotations

import json
from pathlib import Path

import docutils.core
import jinja2
import pandas as pd
import pytest

from povstim import plan
from povstim.analysis.models import bayes
from povstim.analysis import cli as analysis_cli
from povstim.analysis.tables import conditions_page as CP

REPO = Path(__file__).resolve().parents[1]
WORKFLOW_RST = REPO / "workflow" / "report" / "workflow.rst"


def _write(results: Path, condition: str, size: str, stats: dict) -> Path:
    p = results / "corpus" / condition / size / "condition.json"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(stats))
    return p


# the replay: question_formation at 0.002; at 30k the pool held 0 targeted sentences (60 needed), at 150k 6
# of 86 (6 / 43,000 sentences = 0.00013953, 7% of the rate); binding 0.0007 was met at 150k (30 of 30)
NOTHING = {"reinsert_config": {"question_formation": 0.002}, "reinserted": {"question_formation": 0},
           "reinserted_targeted": {"question_formation": 0}, "dpe_rate_targeted": {"question_formation": 0.0},
           "reinsert_shortfall": {"question_formation": {"needed": 60, "available": 0}}}
SOME = {"reinsert_config": {"question_formation": 0.002, "binding": 0.0007},
        "reinserted": {"question_formation": 6, "binding": 31}, "reinserted_targeted": {"question_formation": 6,
                                                                                         "binding": 30},
        "dpe_rate_targeted": {"question_formation": 6 / 43000, "binding": 30 / 43000},
        "reinsert_shortfall": {"question_formation": {"needed": 86, "available": 6}}}
FULL = {"reinsert_config": {"question_formation": 0.002}, "reinserted": {"question_formation": 60},
        "reinserted_targeted": {"question_formation": 60}, "dpe_rate_targeted": {"question_formation": 0.002},
        "reinsert_shortfall": {}}


def _config(tmp_path: Path) -> dict:
    return {"experiment": "x", "sizes": ["30k", "150k"], "seeds": [1], "archs": {"gpt2-tiny": {}},
            "benchmarks": {"posh": {}}, "guardrails": {"reinsert_share": 0.8},
            "conditions": {"baby-f": {"from": "baby", "filter": True},
                           "baby": {"from": "baby", "filter": True, "reinsert": {"question_formation": 0.002}},
                           "wiki": {"from": "wiki", "filter": False}}}


def test_rows_and_caveat_name_the_shortfall(tmp_path):
    stats = [CP.read_condition(_write(tmp_path, "baby", "30k", NOTHING)),
             CP.read_condition(_write(tmp_path, "baby", "150k", SOME))]
    rows = CP.reinsert_rows(stats, 0.8)
    assert [(r["size"], r["phenomenon"], r["below_share"]) for r in rows] == [
        ("30k", "question_formation", True), ("150k", "binding", False), ("150k", "question_formation", True)]
    # 30/43000 = 0.00069767 >= 0.8 x 0.0007 = 0.00056: binding met
    caveat = CP.shortfall_caveat(stats, 0.8)
    assert caveat.startswith("Caveat: BABY holds less direct evidence than configured")
    assert ("baby 30k question_formation: 0 targeted sentences put back, 60 needed and 0 in the pool, measured "
            "rate 0.00000 vs configured 0.002") in caveat
    assert ("baby 150k question_formation: 6 targeted sentences put back, 86 needed and 6 in the pool, measured "
            "rate 0.00014 vs configured 0.002") in caveat
    assert "binding" not in caveat
    assert "BABY and BABY-F hold the same evidence" in caveat
    # met everywhere: no caveat
    full = [CP.read_condition(_write(tmp_path / "ok", "baby", "30k", FULL))]
    assert CP.shortfall_caveat(full, 0.8) == ""
    # a pool shortfall alone (measured 90% of the rate, above the share) still gets the caveat: the stats show it
    near = dict(FULL, dpe_rate_targeted={"question_formation": 0.0018}, reinserted_targeted={"question_formation": 54},
                reinsert_shortfall={"question_formation": {"needed": 60, "available": 54}})
    near_stats = [CP.read_condition(_write(tmp_path / "near", "baby", "30k", near))]
    assert "54 targeted sentences put back, 60 needed and 54 in the pool" in CP.shortfall_caveat(near_stats, 0.8)
    assert "smaller dose than the config names" in CP.shortfall_caveat(near_stats, 0.8)


def test_the_baby_f_vs_baby_sentence_carries_the_caveat(tmp_path):
    c = pd.DataFrame([
        {"contrast": "BABY-F vs. BABY", "a": "BABY-F", "b": "BABY", "scope": "overall", "median": 0.01,
         "lower": -0.1, "upper": 0.12, "p_gt0": 0.55},
        {"contrast": "BABY vs. WIKI", "a": "BABY", "b": "WIKI", "scope": "overall", "median": 0.3, "lower": 0.1,
         "upper": 0.5, "p_gt0": 1.0},
    ])
    stats = [CP.read_condition(_write(tmp_path, "baby", "30k", NOTHING))]
    caveat = analysis_cli._shortfall_caveat((stats, 0.02), 0.8)
    text = bayes.filtering_sentences(c, caveat=caveat)
    assert len(text) == 2
    assert "no credible difference" in text[0] and text[0].endswith(caveat) and caveat
    assert "Caveat" not in text[1]
    # without the BABY-F vs. BABY contrast the caveat is a paragraph of its own, not lost
    assert bayes.filtering_sentences(c[c["a"] == "BABY"], caveat=caveat)[-1] == caveat
    # no shortfall: the sentences are as before
    assert bayes.filtering_sentences(c, caveat=analysis_cli._shortfall_caveat(None, 0.8)) == bayes.filtering_sentences(c)
    # the schema's default share (0.8) when the flag is not given
    assert analysis_cli._shortfall_caveat((stats, 0.02), None) == caveat


def _render(config: dict) -> str:
    class Snakemake:
        pass
    Snakemake.config = config
    text = jinja2.Environment().from_string(WORKFLOW_RST.read_text()).render(snakemake=Snakemake)
    return text


def test_report_description_states_what_baby_got_back(tmp_path):
    results = tmp_path / "results" / "x"
    _write(results, "baby", "30k", NOTHING)
    cfg = _config(tmp_path)
    cfg.update(analysis={"formula": "f"}, language="en")
    evidence = CP.report_evidence(cfg, results, plan.condition_sizes)
    assert set(evidence) == {"baby"}
    assert evidence["baby"] == ("**nothing reinserted** (it holds the same evidence as its filtered corpus): 30k "
                                "question_formation: 0 targeted sentences put back, 60 needed and 0 in the pool, "
                                "measured rate 0.00000 vs configured 0.002")
    text = _render({**cfg, "_reinsert_evidence": evidence})
    line = next(x for x in text.splitlines() if x.startswith("* Conditions:"))
    assert "DPE reinserted" not in line and "**nothing reinserted**" in line
    # both sizes built, one short: "below the configured rate", with the counts of each size
    _write(results, "baby", "150k", FULL | {"reinserted_targeted": {"question_formation": 86},
                                            "reinserted": {"question_formation": 86}})
    _write(results, "baby", "30k", SOME)
    evidence = CP.report_evidence(cfg, results, plan.condition_sizes)
    assert evidence["baby"].startswith("DPE reinserted **below the configured rate**: 30k binding: 30 targeted")
    assert "150k question_formation: 86 targeted sentences put back, measured rate 0.00200 vs configured 0.002" \
        in evidence["baby"]
    # no condition statistics (an analysis-only run): the configured rate, and where to look
    line = next(x for x in _render(cfg).splitlines() if x.startswith("* Conditions:"))
    assert ("DPE reinsertion configured (question_formation 0.002); no condition statistics found, what was put "
            "back is in conditions.tsv") in line
    # the rendered description is valid reStructuredText (Snakemake renders it with docutils, after adding the
    # link targets of the report's categories)
    targets = "".join(f"\n.. _{name}: #\n" for name in ("Guardrails", "Figures", "Tables", "Bayesian model",
                                                         "DPE filter", "Run info", "Constructions"))
    for c in (cfg, {**cfg, "_reinsert_evidence": evidence}):
        docutils.core.publish_parts(_render(c) + "\n" + targets, writer="html",
                                    settings_overrides={"report_level": 2, "halt_level": 2})


@pytest.mark.parametrize("name", ["french-demo", "german-example", "default"])
def test_report_description_describes_the_run_it_reports(name):
    """The description names the run's language, the filter it ran (or that none ran, and why) and what each
    condition put back, or that nothing was put back: not POSH-BENCH App. C and 'BABY: DPE put back' for every run."""
    from povstim import config as config_mod

    path = REPO / ("config.yaml" if name == "default" else f"configs/{name}.yaml")
    cfg = config_mod.load(path)
    rf = plan.report_filter(cfg, sanity_samples=True)
    desc = plan.report_description(cfg, rf)
    text = _render({**cfg, "_report_filter": rf, "_report_description": desc})
    intro = text.split("{#")[0] if "{#" in text else text.split("* Conditions:")[0]
    if name == "french-demo":
        assert "language ``fr``" in intro
        assert ("removes direct positive evidence (DPE) for question_formation_fr, binding_fr with povstim's ``fr`` "
                "rules (filter.mode posh)") in intro and "App. C" not in intro
        assert "BABY-F from baby: DPE removed, nothing put back; BABY from baby: unfiltered" in intro
        assert "No condition puts DPE back." in intro and "put back at a small rate" not in intro
    elif name == "german-example":
        assert "language ``de``" in intro and "runs no DPE filter (no condition asks for it)" in intro
        assert "App. C" not in intro and "No condition puts DPE back" not in intro
    else:
        assert "language ``en``" in intro and "for question_formation, binding with POSH-BENCH App. C's rules" in intro
        assert "BABY from baby: DPE removed, then put back: question_formation rate 0.002, binding rate 0.0007" in intro
    targets = "".join(f"\n.. _{t}: #\n" for t in ("Guardrails", "Figures", "Tables", "Bayesian model", "DPE filter",
                                                   "Run info", "Constructions"))
    docutils.core.publish_parts(text + "\n" + targets, writer="html",
                                settings_overrides={"report_level": 2, "halt_level": 2})
