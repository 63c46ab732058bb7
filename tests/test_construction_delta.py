"""Δ accuracy per construction (analysis/models/construction_delta.py, `povstim construction-delta`): a planted effect
the Bambi fit recovers, the raw Δ against a hand computation, the degenerate case where the estimate is the raw
Δ, and a construction without targets as a warning."""

from __future__ import annotations

import json
import logging

import numpy as np
import pandas as pd
import pytest
from povstim.analysis.models import construction_delta as cd
from povstim.analysis.pipeline import analysis_settings

TARGETS = ["determiner_noun_agreement_1", "determiner_noun_agreement_2"]  # det_noun's targets (library)
CONDITIONS = {"full": {"from": "baby", "filter": False}, "no-det-noun": {"from": "baby", "filter": ["det_noun"]}}


def items_from(cells: dict, seeds=(1,)) -> pd.DataFrame:
    """Item rows with exactly ``k`` of ``n`` correct per (condition, paradigm): cells[(cond, paradigm)] = (k, n)."""
    rows = []
    for seed in seeds:
        for (cond, paradigm), (k, n) in cells.items():
            for i in range(n):
                rows.append({"arch": "gpt2", "condition": cond, "size": "50k", "seed": seed, "suite": "blimp",
                             "paradigm": paradigm, "item_id": str(i), "correct": i < k})
    return pd.DataFrame(rows)


def test_raw_delta_is_the_hand_computed_mean_of_paradigm_differences():
    # target paradigms: filtered 30/50 and 40/50 vs full 35/50 and 45/50 -> (-0.1 + -0.1) / 2 = -0.1
    # control: filtered 20/40 vs full 10/40 on one paradigm, 40/40 vs 40/40 on the other -> (0.25 + 0) / 2 = 0.125
    cells = {("no-det-noun", TARGETS[0]): (30, 50), ("full", TARGETS[0]): (35, 50),
             ("no-det-noun", TARGETS[1]): (40, 50), ("full", TARGETS[1]): (45, 50),
             ("no-det-noun", "passive_1"): (20, 40), ("full", "passive_1"): (10, 40),
             ("no-det-noun", "anaphor_number_agreement"): (40, 40), ("full", "anaphor_number_agreement"): (40, 40)}
    comp = cd.comparisons(CONDITIONS)[0]
    assert (comp.condition, comp.full, comp.constructions) == ("no-det-noun", "full", ("det_noun",))
    df = cd.comparison_items(items_from(cells), comp)
    raw = cd.raw_deltas(df)
    assert raw["target"] == pytest.approx((0.7, 0.8))  # (30+40)/100 vs (35+45)/100
    assert raw["control"] == pytest.approx((0.75, 0.625))


def test_raw_delta_averages_seeds_per_paradigm_first():
    # one target paradigm, two seeds: filtered 10/10 and 0/10 -> 0.5; full 5/10 twice -> 0.5; Δ 0
    df = pd.concat([items_from({("no-det-noun", TARGETS[0]): (10, 10), ("full", TARGETS[0]): (5, 10),
                                ("no-det-noun", "passive_1"): (3, 10), ("full", "passive_1"): (6, 10)}, seeds=(1,)),
                    items_from({("no-det-noun", TARGETS[0]): (0, 10), ("full", TARGETS[0]): (5, 10),
                                ("no-det-noun", "passive_1"): (5, 10), ("full", "passive_1"): (6, 10)}, seeds=(2,))])
    raw = cd.raw_deltas(cd.comparison_items(df, cd.comparisons(CONDITIONS)[0]))
    assert raw["target"] == pytest.approx((0.5, 0.5))
    assert raw["control"] == pytest.approx((0.4, 0.6))


def test_a_construction_without_targets_is_a_warning_not_a_crash(caplog, tmp_path):
    from povstim.figures.construction_delta_cli import construction_delta

    conditions = {"full": {"from": "baby", "filter": False}, "no-aann": {"from": "baby", "filter": ["aann"]},
                  # targets exist, but this run scored none of them
                  "no-passive": {"from": "baby", "filter": ["passive"]}}
    cells = {(c, p): (5, 10) for c in conditions for p in ("anaphor_number_agreement", TARGETS[0])}
    settings = analysis_settings({"draws": 10, "tune": 10, "chains": 1})
    with caplog.at_level(logging.WARNING):
        info = construction_delta(items_from(cells), conditions, settings, tmp_path / "out")
    assert info["fits"] == 0
    assert any(n.startswith("NO TARGET: condition no-aann (aann)") for n in info["notes"])
    assert any(n.startswith("NO TARGET: condition no-passive (passive)") and "passive_1" in n for n in info["notes"])
    assert "NO TARGET" in caplog.text
    assert json.loads((tmp_path / "out" / "notes.json").read_text())["notes"] == info["notes"]
    assert "NO TARGET" in (tmp_path / "out" / "delta.html").read_text()


def test_no_condition_naming_constructions_is_an_error_before_any_fit(tmp_path):
    from povstim.figures.construction_delta_cli import construction_delta
    from povstim.io import PovstimError

    with pytest.raises(PovstimError, match="no condition names constructions"):
        construction_delta(pd.DataFrame(), {"full": {"from": "baby", "filter": False}},
                           analysis_settings({}), tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_the_stage_is_planned_exactly_when_a_condition_names_constructions():
    from povstim import config as cfg
    from povstim.constructions.delta import comparison_targets, named_conditions

    demo = cfg.load("configs/constructions-demo.yaml")
    assert named_conditions(demo["conditions"]) == {"no-det-noun": ["det_noun"], "no-relative": ["relative_clause"],
                                                   "no-irregular-sv": ["irregular_subject_verb_agreement"]}
    # the library's det_noun: four BLiMP UIDs and one Zorro paradigm
    assert comparison_targets(demo["conditions"])["no-det-noun"] == [
        "agreement_determiner_noun-between_neighbors", "determiner_noun_agreement_1", "determiner_noun_agreement_2",
        "determiner_noun_agreement_irregular_1", "determiner_noun_agreement_irregular_2"]
    assert named_conditions(cfg.load("config.yaml")["conditions"]) == {}


@pytest.mark.slow
def test_degenerate_case_the_estimate_is_the_raw_delta(tmp_path):
    """Every paradigm of a kind has the same counts and (1|paradigm) is dropped (min_groups above the 4
    paradigms): the model is the 2 x 2 table itself, so its Δ is the hand-computed one (prior negligible at
    1,000 items a cell). Through the command line, as the rule runs it."""
    from povstim.cli import main

    # Δ target = 0.6 - 0.7 = -0.1 on both target paradigms; Δ control = 0.8 - 0.8 = 0
    cells = {(cond, p): (k, 1000) for p in TARGETS for cond, k in (("no-det-noun", 600), ("full", 700))}
    cells |= {(cond, p): (800, 1000) for p in ("passive_1", "anaphor_number_agreement")
              for cond in ("no-det-noun", "full")}
    df = items_from(cells).assign(final=True, step=0)
    df.to_parquet(tmp_path / "items.parquet", index=False)
    out = tmp_path / "delta"
    params = {"draws": 300, "tune": 300, "chains": 2, "seed": 1, "min_groups": 5, "sampler": "pymc"}
    assert main(["construction-delta", "--items", str(tmp_path / "items.parquet"), "--conditions",
                 json.dumps(CONDITIONS), "--params", json.dumps(params), "--cores", "2", "--out-dir", str(out)]) == 0
    row = pd.read_csv(out / "delta.tsv", sep="\t").iloc[0]
    assert (row["raw_delta_target"], row["raw_delta_control"], row["raw_diff"]) == (-0.1, 0.0, -0.1)
    assert row["delta_target"] == pytest.approx(-0.1, abs=0.01)
    assert row["delta_control"] == pytest.approx(0.0, abs=0.01)
    assert row["diff"] == pytest.approx(-0.1, abs=0.015)
    assert "(1|paradigm)" in row["dropped_terms"] and "(1|seed)" in row["dropped_terms"]
    assert (out / "delta_blimp.png").stat().st_size > 0 and "delta_target" in (out / "delta.html").read_text()
    # no timing in the outputs (a rerun's files are byte-identical; the sampling time is logged)
    diag = json.loads((out / "diagnostics.json").read_text())
    assert diag["no-det-noun/gpt2/50k/blimp"]["chains"] == 2 and "sampling_seconds" not in json.dumps(diag)


@pytest.mark.slow
def test_a_planted_target_only_effect_is_recovered():
    """Filtered models lose 15 points on the construction's target paradigms and nothing elsewhere; paradigms
    differ in difficulty and three seeds in skill. The target Δ's interval excludes 0, the control's covers it."""
    rng = np.random.default_rng(7)
    paradigms = TARGETS + ["determiner_noun_agreement_irregular_1", "passive_1", "passive_2",
                           "anaphor_number_agreement", "wh_questions_object_gap", "sentential_subject_island"]
    base = dict(zip(paradigms, rng.uniform(0.65, 0.9, len(paradigms))))
    skill = {1: 0.0, 2: 0.02, 3: -0.02}
    rows = []
    for seed, shift in skill.items():
        for cond in ("full", "no-det-noun"):
            for p in paradigms:
                drop = 0.15 if (cond == "no-det-noun" and p.startswith("determiner")) else 0.0
                correct = rng.random(300) < base[p] + shift - drop
                rows += [{"arch": "gpt2", "condition": cond, "size": "50k", "seed": seed, "suite": "blimp",
                          "paradigm": p, "item_id": str(i), "correct": bool(c)} for i, c in enumerate(correct)]
    settings = analysis_settings({"draws": 400, "tune": 400, "chains": 2, "seed": 1, "sampler": "pymc"})
    table, _, _ = cd.delta_table(pd.DataFrame(rows), CONDITIONS, settings, cores=2)
    row = table.iloc[0]
    assert row["n_target"] == 3 and row["n_control"] == 5
    assert row["delta_target_upper"] < 0
    assert row["delta_target"] == pytest.approx(-0.15, abs=0.04)
    assert row["delta_control_lower"] < 0 < row["delta_control_upper"]
    assert row["diff_upper"] < 0 and row["p_diff_below_0"] > 0.99
