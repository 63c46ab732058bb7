"""Count-matched placebo conditions (docs/manipulations.md, "Placebo conditions"): the config expansion, the
corpus each draw builds (as many sentences changed as the matched contrast changes, none of them evidence),
and the errors that name their key."""

from __future__ import annotations

import copy
import json
import subprocess
import sys

import pytest
import yaml

from povstim import config as cfg
from povstim.conditions import operations as O
from povstim.conditions import opsrun
from povstim.conditions.build import build as legacy_build
from povstim.dpe import audit
from povstim.io import PovstimError

RULES = ["question_formation", "binding"]


def corpus():
    """2,000 sentences of 3-9 words; every 40th question-formation evidence (targeted), every 50th binding."""
    lines, rows = [], []
    for i in range(2000):
        if i % 40 == 0:
            lines.append(f"Is the boy who is smiling number {i} happy?")
            rows.append(audit.Row(i, "question_formation", "qf", "3:boy", lines[-1], True))
        elif i % 50 == 0:
            lines.append(f"The girl said that boy {i} hurt himself.")
            rows.append(audit.Row(i, "binding", "b", "2:girl", lines[-1], True))
        else:
            lines.append(" ".join(["word"] * (3 + (i * 5) % 7)) + f" {i}.")
    return lines, rows


@pytest.fixture
def tiny(repo_root):
    return yaml.safe_load((repo_root / "tests" / "configs" / "tiny.yaml").read_text())


def with_placebo(tiny, draws=3, **extra):
    c = copy.deepcopy(tiny)
    c["conditions"]["baby-placebo"] = {"placebo": {"of": "baby", "vs": "baby-f", "draws": draws, **extra}}
    return c


def test_placebo_expands_into_draws(tiny):
    c = with_placebo(tiny)
    c["archs"]["gpt2-nano"]["conditions"] = ["baby-f", "baby", "baby-placebo"]
    cfg.validate(c)
    names = [n for n in c["conditions"] if n.startswith("baby-placebo")]
    assert names == ["baby-placebo1", "baby-placebo2", "baby-placebo3"]
    m = c["conditions"]["baby-placebo2"]
    assert m["from"] == "baby"
    assert m["operations"] == [{"op": "remove", "constructions": True},
                               {"op": "placebo", "of": "baby", "vs": "baby-f", "draw": 2}]
    assert c["archs"]["gpt2-nano"]["conditions"] == ["baby-f", "baby"] + names
    assert O.placebo_series(c["conditions"]) == {"baby-placebo": {"of": "baby", "vs": "baby-f", "members": names}}
    cfg.validate(c)  # idempotent


def build_member(c, name, lines, rows, seed=1):
    ops = O.resolve(c["conditions"], name, RULES)
    return opsrun.build(lines, rows, ops, seed, name, [])


def test_a_placebo_changes_as_many_sentences_as_the_contrast(tiny):
    """Legacy BABY puts 19 of the 50 QF sentences and 4 of the 30 binding ones back (rates 0.01, 0.002 of 1,920
    kept sentences: round(19.2) = 19 and round(3.84) = 4, computed by hand), each replacing a sentence: BABY and
    BABY-F differ by 2 x 23 = 46 lines. Each placebo takes 46 sentences without evidence out of BABY-F, words
    matched, different ones per draw."""
    c = with_placebo(tiny)
    c["conditions"]["baby"]["reinsert"] = {"question_formation": 0.01, "binding": 0.002}
    cfg.validate(c)
    lines, rows = corpus()
    dpe_of, targeted = audit.removed(rows), audit.targeted(rows)
    assert len(dpe_of) == 50 + 40 - 10  # every 200th line is a multiple of 40 too: question formation here
    baby_f = set(legacy_build(len(lines), dpe_of, {}, 1, targeted).ids)
    baby = set(legacy_build(len(lines), dpe_of, {"question_formation": 0.01, "binding": 0.002}, 1, targeted,
                            words=[len(x.split()) for x in lines]).ids)
    assert len(baby_f) == 2000 - 80 and len(baby ^ baby_f) == 2 * (19 + 4)
    changed_words = sum(len(lines[i].split()) for i in baby ^ baby_f)
    draws = []
    for k in (1, 2, 3):
        st = build_member(c, f"baby-placebo{k}", lines, rows)
        ids = set(st.ids)
        assert ids < baby_f  # BABY-F's corpus, less the placebo's sentences
        gone = baby_f - ids
        assert len(gone) == 46
        assert not gone & set(dpe_of)  # no evidence changed
        assert abs(sum(len(lines[i].split()) for i in gone) - changed_words) <= max(1, int(0.001 * 9000))
        assert st.notes["placebo"]["sentences"] == 46 and st.notes["placebo"]["words"] == changed_words
        assert {a[1] for a in st.audit if a[0] == 1} == {"placebo"}
        draws.append(frozenset(gone))
    assert len(set(draws)) == 3  # three different draws
    assert set(build_member(c, "baby-placebo1", lines, rows).ids) == baby_f - draws[0]  # seeded: a rerun is equal


def test_placebo_of_an_operations_contrast(tiny):
    c = copy.deepcopy(tiny)
    c["conditions"].update({
        "qf-removed": {"from": "baby", "operations": [{"op": "remove", "constructions": ["question_formation"]}]},
        "qf-back": {"from": "baby", "operations": [{"op": "remove", "constructions": ["question_formation"]},
                                                   {"op": "add", "construction": "question_formation", "n": 5}]},
        "qf-pl": {"placebo": {"of": "qf-back", "vs": "qf-removed", "draws": 2}}})
    cfg.validate(c)
    lines, rows = corpus()
    st = build_member(c, "qf-pl1", lines, rows)
    removed = build_member(c, "qf-removed", lines, rows)
    assert len(set(removed.ids) - set(st.ids)) == 10 and set(st.ids) < set(removed.ids)


def test_placebo_that_cannot_be_matched_names_the_key(tiny):
    """A contrast that changes more sentences than the corpus has without evidence."""
    c = with_placebo(tiny)
    cfg.validate(c)
    lines = [f"Is the boy who is smiling number {i} happy?" for i in range(30)] + ["a b c."] * 3
    rows = [audit.Row(i, "question_formation", "qf", "3:boy", lines[i], True) for i in range(30)]
    c["conditions"]["baby"]["reinsert"] = {"question_formation": 0.5}
    with pytest.raises(PovstimError, match=r"^conditions\.baby-placebo\.placebo: cannot be matched: baby and "
                                           r"baby-f differ by 4 sentences"):
        build_member(c, "baby-placebo1", lines, rows)


@pytest.mark.parametrize("placebo,match", [
    ({"of": "babyy", "vs": "baby-f"}, r"conditions\.x\.placebo\.of: 'babyy' is not a condition"),
    ({"of": "baby", "vs": "baby"}, r"conditions\.x\.placebo: of and vs are the same condition"),
    ({"of": "wiki", "vs": "baby-f"}, r"conditions\.x\.placebo: wiki is built from 'wiki' and baby-f from 'baby'"),
    ({"of": "baby-f", "vs": "baby"}, r"conditions\.x\.placebo\.vs: the placebos change baby's corpus"),
    ({"of": "baby", "vs": "baby-f", "draws": 0}, r"conditions\.x\.placebo\.draws"),
])
def test_bad_placebo_is_named(tiny, placebo, match):
    c = copy.deepcopy(tiny)
    c["conditions"]["x"] = {"placebo": placebo}
    with pytest.raises(PovstimError, match=match):
        cfg.validate(c)


def test_placebo_cli_writes_condition_json(tmp_path, tiny):
    """The condition stage as the rule runs it: condition.json says what the placebo changed."""
    c = with_placebo(tiny, draws=1)
    cfg.validate(c)
    lines, rows = corpus()
    (tmp_path / "base.txt").write_text("\n".join(lines) + "\n")
    audit.write(tmp_path / "dpe.tsv", rows)
    ops = json.dumps(O.resolve(c["conditions"], "baby-placebo1", RULES), sort_keys=True)
    r = subprocess.run([sys.executable, "-m", "povstim", "condition", "--base", tmp_path / "base.txt", "--dpe",
                        tmp_path / "dpe.tsv", "--operations", ops, "--condition-name", "baby-placebo1",
                        "--split", '{"dev_fraction": 0.05, "seed": 1}', "--out-train", tmp_path / "train.txt",
                        "--out-dev", tmp_path / "dev.txt", "--stats", tmp_path / "condition.json",
                        "--out-audit", tmp_path / "operations.tsv"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    stats = json.loads((tmp_path / "condition.json").read_text())
    # tiny.yaml's BABY: round(0.004 x 1920) = 8 QF, round(0.002 x 1920) = 4 binding: 12 swapped, 24 lines
    assert stats["placebo"]["sentences"] == 24 and stats["n_sentences"] == 1920 - 24
    assert stats["dpe_count_targeted"] == {"binding": 0, "question_formation": 0}


def contrasts(rows):
    import pandas as pd

    return pd.DataFrame([{"contrast": f"{a} vs. {b}", "a": a, "b": b, "scope": sc, "median": m, "lower": lo,
                          "upper": hi, "p_gt0": p} for a, b, sc, m, lo, hi, p in rows])


PLACEBOS = {"BABY-F-PLACEBO1": ("BABY-F", "BABY"), "BABY-F-PLACEBO2": ("BABY-F", "BABY")}


def test_a_contrast_within_its_placebos_is_not_beyond_chance():
    """The issue's case: BABY-F vs. BABY +0.16 [0.03, 0.28], credible on its own; the placebos' estimates of the
    same contrast (BABY-F - placebo) are -0.05 and +0.19, so it is not beyond chance corpus changes. The
    second placebo's row is written the other way round (PLACEBO2 vs. BABY-F = -0.19) and must be turned."""
    from povstim.analysis.models import bayes

    c = contrasts([("BABY-F", "BABY", "overall", 0.16, 0.03, 0.28, 0.99),
                   ("BABY-F", "BABY-F-PLACEBO1", "overall", -0.05, -0.2, 0.1, 0.3),
                   ("BABY-F-PLACEBO2", "BABY-F", "overall", -0.19, -0.3, -0.05, 0.01),
                   ("BABY", "BABY-F-PLACEBO1", "overall", -0.21, -0.4, -0.05, 0.01)])
    out = bayes.filtering_sentences(c, placebos=PLACEBOS)
    assert len(out) == 1  # the placebos' own contrasts get no sentence
    assert out[0].startswith("Filtering out direct positive evidence (BABY-F vs. BABY): overall, no difference "
                             "beyond chance corpus changes (+0.16 [0.03, 0.28]")
    assert "count-matched placebos (2 draws): -0.05 to +0.19: not beyond chance corpus changes" in out[0]
    assert "credibly higher" not in out[0]
    assert "probability 0.67" in out[0]  # 2 / (2 + 1)


def test_a_contrast_beyond_its_placebos_stays_credible():
    from povstim.analysis.models import bayes

    c = contrasts([("BABY-F", "BABY", "overall", 0.60, 0.40, 0.80, 1.0),
                   ("BABY-F", "BABY-F-PLACEBO1", "overall", -0.05, -0.2, 0.1, 0.3),
                   ("BABY-F", "BABY-F-PLACEBO2", "overall", 0.10, -0.1, 0.3, 0.8)])
    (out,) = bayes.filtering_sentences(c, placebos=PLACEBOS)
    assert "models without it scored credibly higher (+0.60 [0.40, 0.80]" in out
    assert "-0.05 to +0.10: beyond chance corpus changes" in out


def test_placebo_levels_from_the_plan(tiny):
    """plan.condition_meta gives each placebo BABY-F's predictors and a level of its own."""
    from povstim import plan
    from povstim.analysis import pipeline

    c = with_placebo(tiny, draws=2)
    cfg.validate(c)
    meta = plan.condition_meta(c)
    assert meta["baby-placebo1"]["filtered"] is True and meta["baby-placebo1"]["source"] == "baby"
    assert pipeline.condition_levels(meta) == {"baby-f": "BABY-F", "baby": "BABY", "wiki": "WIKI",
                                               "baby-placebo1": "BABY-F-PLACEBO1", "baby-placebo2": "BABY-F-PLACEBO2"}
    assert pipeline.placebo_levels(meta) == PLACEBOS


def test_the_own_data_templates_placebo_line_is_valid(repo_root):
    """configs/own-data-template.yaml shows the placebo block commented out: uncommented, it is a valid config."""
    text = (repo_root / "configs" / "own-data-template.yaml").read_text()
    (line,) = [x for x in text.splitlines() if x.strip().startswith("# baby-placebo: {placebo:")]
    c = yaml.safe_load(text.replace(line, line.replace("# ", "", 1)))
    assert c["conditions"]["baby-placebo"] == {"placebo": {"of": "baby", "vs": "baby-f", "draws": 3}}
    cfg.validate(c)
    assert [n for n in c["conditions"] if "placebo" in n] == ["baby-placebo1", "baby-placebo2", "baby-placebo3"]


def test_plan_forecasts_each_draws_change_and_a_placebo_that_cannot_be_matched(tiny):
    """povstim plan: each draw changes twice what BABY puts back (hand-computed: 6 + 3 = 9 -> 18 lines), against
    BABY-F's sentences; a corpus with fewer is CANNOT BE MATCHED, naming the key."""
    from povstim.preflight import evidence

    c = with_placebo(tiny, draws=2)
    cfg.validate(c)
    back = [{"condition": "baby", "size": "8k", "phenomenon": p, "expected": n} for p, n in
            (("question_formation", 6), ("binding", 3))]
    rows = [{"corpus": "baby", "size": "8k", "sentences": 1543, "removed": 121}]
    (p,) = evidence.placebo_outlook(c, rows, back)
    assert (p["changes"], p["free"], p["ok"]) == (18, 1422, True)
    assert evidence.render_placebo([p])[1].split() == ["baby-placebo", "8k", "2", "draws", "of", "baby-f", "vs.",
                                                       "baby:", "~18", "/", "1,422", "ok"]
    rows[0]["sentences"] = 131
    (p,) = evidence.placebo_outlook(c, rows, back)
    assert not p["ok"]
    assert evidence.render_placebo([p])[-1] == ("  -> WARNING: conditions.baby-placebo.placebo: cannot be matched at "
                                                "8k: the condition job will stop there")


@pytest.mark.slow
def test_full_analysis_reads_baby_f_vs_baby_against_its_placebos(tmp_path):
    """Simulated scores in which BABY-F, BABY and two placebos of BABY-F are one distribution (no effect of the
    evidence): the three-level model fits a level per placebo (Table 12 leaves them out) and the filtering page
    reads BABY-F vs. BABY against the placebos' range; no sentence of its own for a placebo."""
    import pandas as pd

    from helpers.simulate import simulate_scores, write_score_files
    from povstim.analysis.pipeline import analysis_settings, full_analysis

    meta = {"baby-f": {"source": "baby", "filtered": True}, "baby": {"source": "baby", "filtered": False},
            "wiki": {"source": "wiki", "filtered": False}}
    sim = simulate_scores(conditions={"baby-f": meta["baby-f"], "wiki": meta["wiki"]}, sizes=("1k", "2k"),
                          seeds=(1, 2, 3), items=20, steps=(10,), rng_seed=5)
    parts = [sim]
    for k, name in enumerate(("baby", "baby-placebo1", "baby-placebo2"), 1):  # BABY-F's distribution, other draws
        again = simulate_scores(conditions={"baby-f": meta["baby-f"]}, sizes=("1k", "2k"), seeds=(1, 2, 3),
                                items=20, steps=(10,), rng_seed=5 + 10 * k)
        parts.append(again.assign(condition=name))
    meta.update({f"baby-placebo{k}": {"source": "baby", "filtered": True,
                                      "placebo": {"series": "baby-placebo", "of": "baby", "vs": "baby-f", "draw": k}}
                 for k in (1, 2)})
    paths = write_score_files(pd.concat(parts, ignore_index=True), tmp_path / "scores")
    settings = analysis_settings({"models": ["table12", "three_level"], "draws": 50, "tune": 50, "chains": 1})
    out = tmp_path / "analysis"
    full_analysis([str(p) for p in paths], meta, settings, out, cores=1)
    table12 = pd.read_csv(out / "bayes" / "data.csv")  # Table 12's cells: BABY-F, BABY and WIKI only
    assert not [c for c in table12.columns if table12[c].astype(str).str.contains("(?i)placebo").any()]
    assert len(table12) > 0
    levels = set(pd.read_csv(out / "bayes" / "three_level_data.csv")["source_filter"])
    assert levels == {"BABY-F", "BABY", "WIKI", "BABY-F-PLACEBO1", "BABY-F-PLACEBO2"}
    text = (out / "bayes" / "filtering.md").read_text()
    assert "Filtering out direct positive evidence (BABY-F vs. BABY): overall," in text
    assert "count-matched placebos (2 draws):" in text
    assert "PLACEBO1 vs." not in text.split("Filtering out direct positive evidence")[0]  # no sentence of their own
    assert not [x for x in text.splitlines() if x.startswith(("BABY-F-PLACEBO", "BABY vs. BABY-F-PLACEBO"))]


def test_the_three_level_design_has_a_level_per_placebo():
    """Without sampling: the items of BABY-F, BABY, WIKI and two placebos, attached with plan's meta, build a
    three-level design with one source_filter level per placebo (coded against BABY), and its pairwise contrasts
    (on a made-up posterior: every coefficient 0.1 x its column index) give the filtering sentence its placebo
    range."""
    import numpy as np
    import pandas as pd

    from helpers.simulate import simulate_scores
    from povstim.analysis import pipeline
    from povstim.analysis.models import bayes
    from povstim.analysis.tables import tidy

    meta = {"baby-f": {"source": "baby", "filtered": True}, "baby": {"source": "baby", "filtered": False},
            "wiki": {"source": "wiki", "filtered": False},
            **{f"baby-placebo{k}": {"source": "baby", "filtered": True, "placebo": {
                "series": "baby-placebo", "of": "baby", "vs": "baby-f", "draw": k}} for k in (1, 2)}}
    sim = simulate_scores(conditions={"baby-f": meta["baby-f"]}, sizes=("1k", "2k"), seeds=(1, 2, 3), items=5,
                          steps=(10,))
    items = pd.concat([sim.assign(condition=c) for c in meta], ignore_index=True)
    items = tidy.attach_conditions(tidy.final_items(tidy.normalise(items, "sim")), meta)
    settings = pipeline.analysis_settings({"models": ["three_level"]})
    spec = pipeline.model_spec("three_level", settings)
    design = pipeline.model_design(items, settings, "bernoulli", spec["formula"], spec["coding_of"])
    assert set(design.coding["source_filter"]["levels"]) == {"BABY", "BABY-F", "WIKI", "BABY-F-PLACEBO1",
                                                            "BABY-F-PLACEBO2"}
    post = {c.name: np.full(10, 0.1 * (k + 1)) for k, c in enumerate(design.columns)}
    con = bayes.pairwise_contrasts(post, design, by="category")
    assert {"BABY-F vs. BABY-F-PLACEBO1", "BABY-F vs. BABY-F-PLACEBO2"} <= set(con["contrast"])
    out = bayes.filtering_sentences(con, placebos=pipeline.placebo_levels(meta))
    (baby,) = [x for x in out if x.startswith("Filtering out direct positive evidence (BABY-F vs. BABY)")]
    assert "count-matched placebos (2 draws):" in baby
    assert not any("PLACEBO" in x.split(":")[0] for x in out)


@pytest.mark.slow
def test_the_dag_builds_trains_and_scores_each_placebo(tmp_path, tiny):
    """Dry run of tiny.yaml with two placebos: each is a condition job (its resolved operations carry how baby and
    baby-f are built), with its own tokenizer and train jobs, every seed."""
    import re

    from helpers.project import dry_run

    c = with_placebo(tiny, draws=2)
    r = dry_run(tmp_path, c)
    table = r.stdout.split("Job stats:")[1].split("\n\n")[0]
    jobs = {m[1]: int(m[2]) for m in re.finditer(r"^(\w+)\s+(\d+)$", table, re.M)}
    assert jobs["condition"] == 5 * 2 and jobs["tokenizer"] == 5 * 2 and jobs["train"] == 5 * 2 * len(c["seeds"])
    (job,) = [x for x in r.stdout.splitlines() if "--condition-name baby-placebo2" in x and "/8k/train.txt" in x]
    assert '"op": "placebo"' in job and '"draw": 2' in job and '"reinsert": {"binding": 0.002' in job
