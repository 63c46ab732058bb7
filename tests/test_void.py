"""Void contrasts (analysis/guardrails/void.py): a BABY that got nothing back trains on BABY-F's text, so the
BABY-F vs. BABY contrast is reported as void with no estimate and BABY's copied cells stay out of the
Bayesian models."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from helpers.simulate import simulate_scores, write_score_files
from povstim.analysis.guardrails import void
from povstim.analysis.tables.conditions_page import read_condition
from povstim.cli import main
from povstim.dpe import audit
from povstim.io import PovstimError

META = {"baby-f": {"source": "baby", "filtered": True}, "baby": {"source": "baby", "filtered": False},
        "wiki": {"source": "wiki", "filtered": False}}


def _condition(tmp_path, name, size, base, dpe, reinsert=None):
    out = tmp_path / "corpus" / name / size
    argv = ["condition", "--base", str(base), "--split", '{"dev_fraction": 0.1, "seed": 1}',
            "--out-train", str(out / "train.txt"), "--out-dev", str(out / "dev.txt"), "--stats", str(out / "condition.json")]
    if dpe:
        argv += ["--dpe", str(dpe)]
    if reinsert:
        argv += ["--reinsert", json.dumps(reinsert)]
    assert main(argv) == 0
    return out / "condition.json"


def _base(tmp_path, size, targeted: bool):
    """A base corpus of 200 sentences, 10 removed as question-formation DPE, targeted (strict-rule) or not."""
    d = tmp_path / "corpus" / "baby" / size
    d.mkdir(parents=True)
    lines = [f"the dog {size} saw cat number {i} ." for i in range(200)]
    (d / "base.txt").write_text("\n".join(lines) + "\n")
    rows = [audit.Row(i, "question_formation", "posh_qf", "", lines[i], targeted) for i in range(0, 200, 20)]
    audit.write(d / "dpe.tsv", rows)
    return d / "base.txt", d / "dpe.tsv"


def test_condition_stage_records_identity_and_evidence(tmp_path):
    """Real `povstim condition`: with no targeted evidence to put back, BABY's text hashes as BABY-F's; with
    some, its targeted count differs by what went back."""
    rate = {"question_formation": 0.02}
    base, dpe = _base(tmp_path, "1k", targeted=False)
    f = read_condition(_condition(tmp_path, "baby-f", "1k", base, dpe))
    b = read_condition(_condition(tmp_path, "baby", "1k", base, dpe, rate))
    assert b["reinserted"] == {"question_formation": 0} and f["corpus_sha256"] == b["corpus_sha256"]
    base2, dpe2 = _base(tmp_path, "2k", targeted=True)
    f2 = read_condition(_condition(tmp_path, "baby-f", "2k", base2, dpe2))
    b2 = read_condition(_condition(tmp_path, "baby", "2k", base2, dpe2, rate))
    assert f2["corpus_sha256"] != b2["corpus_sha256"]
    assert b2["dpe_count_targeted"]["question_formation"] - f2["dpe_count_targeted"]["question_formation"] == 4
    pairs = void.void_pairs([f, b, f2, b2], threshold=1)
    assert [{k: v for k, v in p.items() if k != "phenomena"} for p in pairs] == [
        {"size": "1k", "kept": "baby-f", "duplicate": "baby", "identical": True, "evidence": 0}]
    # the configured dose: round(0.02 x 190) = 4 sentences; 4 apart is void under a threshold of 4 only if ...
    assert [p["size"] for p in void.void_pairs([f, b, f2, b2], threshold=4)] == ["1k"]
    # ... a threshold above the dose would call every contrast void: one line naming the key
    with pytest.raises(PovstimError, match=r"^analysis\.void_evidence: 5 is above the configured dose of baby at "
                                           r"1k \(question_formation: 4 sentence\(s\)\)"):
        void.void_pairs([f, b, f2, b2], threshold=5)
    # auto: half the dose (2): 4 apart covers question formation, 0 apart is void
    assert [p["size"] for p in void.void_pairs([f, b, f2, b2], threshold="auto")] == ["1k"]
    rows = void.summarise(void.void_pairs([f, b, f2, b2], 1), {"baby": ["1k", "2k"]})
    assert rows[0]["sizes"] == ["1k"] and not rows[0]["all_sizes"]


def test_unrelated_conditions_are_not_void():
    a = {"condition": "baby-f", "size": "1k", "base": "b/base.txt", "n_dpe_removed": 5, "corpus_sha256": "x",
         "dpe_count_targeted": {"binding": 0}}
    w = {"condition": "wiki", "size": "1k", "base": "w/base.txt", "n_dpe_removed": 0, "corpus_sha256": "y",
         "dpe_count_targeted": {}}
    assert void.void_pairs([a, w], threshold=100) == []
    assert void.evidence_difference(a, w) is None


@pytest.mark.slow
def test_analysis_reports_a_void_contrast_without_an_estimate(tmp_path):
    """BABY's models are copies of BABY-F's (what training on identical text gives); full_analysis with the
    condition stats leaves BABY out of both Bayesian models, the filtering page states BABY-F vs. BABY as
    VOID with no estimate, and no BABY-F vs. BABY (or BABY vs. WIKI) contrast is fitted."""
    from povstim.analysis.pipeline import analysis_settings, full_analysis

    sim = simulate_scores(conditions={"baby-f": META["baby-f"], "wiki": META["wiki"]}, sizes=("1k", "2k"),
                          seeds=(1, 2, 3), items=30, steps=(10,), rng_seed=3)
    dup = sim[sim["condition"] == "baby-f"].assign(condition="baby")
    paths = write_score_files(pd.concat([sim, dup], ignore_index=True), tmp_path / "scores")
    stats = []
    for size in ("1k", "2k"):
        common = {"base": f"corpus/baby/{size}/base.txt", "n_dpe_removed": 10,
                  "dpe_count_targeted": {"question_formation": 0}, "corpus_sha256": f"same{size}"}
        stats += [{**common, "condition": "baby-f", "size": size},
                  {**common, "condition": "baby", "size": size, "reinsert_config": {"question_formation": 0.02}},
                  {"base": f"corpus/wiki/{size}/base.txt", "n_dpe_removed": 0, "corpus_sha256": f"w{size}",
                   "condition": "wiki", "size": size}]
    settings = analysis_settings({"models": ["three_level"], "draws": 50, "tune": 50, "chains": 1,
                                  "formula": "(size + category) * filtered + source + (1|phenomenon)"})
    out = tmp_path / "analysis"
    full_analysis([str(p) for p in paths], META, settings, out, cores=1, sizes=(stats, 0.5))
    text = (out / "bayes" / "filtering.md").read_text()
    assert "BABY-F vs. BABY: VOID, no estimate" in text and "1k: identical training text" in text
    con = pd.read_csv(out / "bayes" / "three_level_contrasts.csv")
    assert set(con["contrast"]) == {"BABY-F vs. WIKI"}
    data = pd.read_csv(out / "bayes" / "three_level_data.csv")
    assert set(data["source_filter"]) == {"BABY-F", "WIKI"}
    assert "VOID" in (out / "bayes" / "three_level.md").read_text()
    assert (out / "bayes" / "void_contrasts.csv").read_text().startswith("kept,duplicate,sizes")
    assert "BABY is BABY-F at 1k, 2k" in (out / "tables" / "table3_posh.md").read_text()
    # the tables still list BABY's models (they were trained), only the models' cells are left out
    assert "baby" in set(pd.read_csv(out / "accuracy.csv")["condition"])


def test_table12_without_the_void_duplicate_has_no_separate_filtering_term():
    """BABY's cells gone, filtered and source are aliased (BABY-F vs. WIKI only): Table 12 keeps one of the two
    terms, so no "filtering" estimate comes from copies of BABY-F (bayes._drop_aliased)."""
    from povstim.analysis.models import bayes
    from povstim.analysis.tables import tidy
    from povstim.analysis.pipeline import drop_void

    sim = simulate_scores(conditions=META, sizes=("1k", "2k"), seeds=(1, 2, 3), items=5, steps=(10,))
    items = tidy.attach_conditions(tidy.final_items(tidy.normalise(sim, "sim")), META)
    voids = [{"kept": "baby-f", "duplicate": "baby", "sizes": ["1k", "2k"]}]
    kept = drop_void(items, voids)
    assert set(kept["condition"]) == {"baby-f", "wiki"} and len(kept) == 2 * len(items) // 3
    formula = "(size + category) * filtered + source + (1|phenomenon)"
    full = bayes.build_design(items, formula, family="binomial", zscore=True, contrasts="sum")
    design = bayes.build_design(kept, formula, family="binomial", zscore=True, contrasts="sum")
    labels = {c.label for c in design.columns}
    assert {"filtered[True]", "source[baby]"} <= {c.label for c in full.columns}
    assert not {"filtered[True]", "source[baby]"} <= labels and design.dropped
    partial = drop_void(items, [{"kept": "baby-f", "duplicate": "baby", "sizes": ["1k"]}])
    assert set(partial[partial["condition"] == "baby"]["size"]) == {"2k"}


@pytest.mark.slow
def test_plan_forecasts_what_the_condition_stage_finds(tmp_path):
    """A tiny config whose BABY gets nothing back (child-directed source without planted DPE; the 8k corpus),
    and a second size where it does (16k, planted evidence through a second corpus): povstim plan's forecast
    runs the condition stage's own code, so its VOID and the sentences it says go back are what the real
    Snakemake condition jobs then write (identical text hashes; reinserted counts)."""
    import subprocess
    import sys

    import yaml

    from helpers.project import REPO
    from povstim.preflight.plan import make_plan, render

    cfg = yaml.safe_load((REPO / "tests" / "configs" / "tiny.yaml").read_text())
    cfg["experiment"] = "void"
    cfg["sources"]["cds"]["dpe_rate"] = {"question_formation": 0.0, "binding": 0.0}
    cfg["sources"]["rich"] = dict(cfg["sources"]["cds"], seed=13, dpe_rate={"question_formation": 0.03,
                                                                             "binding": 0.02})
    cfg["corpora"]["rich"] = {"mixture": {"rich": 1.0}, "seed": 1}
    cfg["sizes"] = ["8k"]
    cfg["conditions"] = {"baby-f": {"from": "baby", "filter": True},
                         "baby": {"from": "baby", "filter": True, "reinsert": {"question_formation": 0.004}},
                         "rich-f": {"from": "rich", "filter": True},
                         "rich-r": {"from": "rich", "filter": True, "reinsert": {"question_formation": 0.004}}}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    from povstim import config as config_mod

    plan = make_plan(config_mod.load(tmp_path / "config.yaml"), REPO)
    voids = {v["condition"]: v for v in plan["filter"]["void"]}
    assert voids["baby"]["status"] == "void" and voids["baby"]["expected"] == 0
    assert voids["rich-r"]["status"] == "ok" and voids["rich-r"]["expected"] > 0
    (line,) = [x for x in render(plan).splitlines() if "gets back" in x and x.split()[0] == "baby"]
    assert line.split()[1:] == ["8k", "gets", "back", "0", "evidence", "sentence(s):", "VOID:", "its", "corpus",
                                "is", "baby-f's", "in", "evidence;", "identical", "text:", "trains", "one", "model",
                                "for", "both", "(its", "train", "jobs", "link", "baby-f's", "models)"]
    from povstim.preflight.evidence import reused_models

    assert reused_models(plan["filter"]["void"]) == {("baby", "8k"): "baby-f"}
    targets = [f"results/void/corpus/{c}/8k/condition.json" for c in cfg["conditions"]]
    r = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(tmp_path),
                        "--configfile", str(tmp_path / "config.yaml"), "--cores", "2", *targets],
                       capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    got = {c: json.loads((tmp_path / t).read_text()) for c, t in zip(cfg["conditions"], targets)}
    assert got["baby"]["corpus_sha256"] == got["baby-f"]["corpus_sha256"]
    assert got["rich-r"]["corpus_sha256"] != got["rich-f"]["corpus_sha256"]
    forecast = {(o["condition"], o["phenomenon"]): o["expected"] for o in plan["filter"]["reinsert"]}
    assert forecast[("rich-r", "question_formation")] == got["rich-r"]["reinserted"]["question_formation"]
    assert forecast[("baby", "question_formation")] == got["baby"]["reinserted"]["question_formation"] == 0


def test_model_groups_per_suite_and_learner():
    """Every suite gets its own fit and every learner family its own (analysis.suite null, pool_learners
    false); the primary suite (posh) and first family come first; pooling a corpus model with a neural one is
    an error naming the key, pooling two causal neural learners is allowed."""
    from povstim.analysis.tables import tidy
    from povstim.analysis.pipeline import analysis_settings, model_groups

    frames = [simulate_scores(conditions=META, sizes=("1k",), seeds=(1,), items=3, steps=(10,), arch=arch,
                              suite=suite) for arch in ("gpt2-a", "lstm-a", "ngram") for suite in ("posh", "blimp")]
    items = tidy.final_items(tidy.normalise(pd.concat(frames, ignore_index=True), "sim"))
    from povstim.plan import analysis_archs

    config = {"archs": {"gpt2-a": {"family": "gpt2"}, "lstm-a": {"family": "lstm"}, "ngram": {"family": "kneser-ney"}}}
    arch_meta = analysis_archs(config, {a: {"bias": "vanilla"} for a in config["archs"]})
    assert arch_meta["ngram"] == {"bias": "vanilla", "family": "kneser-ney", "scale": "corpus model"}
    assert arch_meta["lstm-a"]["scale"] == arch_meta["gpt2-a"]["scale"] == "causal"
    groups = model_groups(items, analysis_settings({}), META, arch_meta)
    assert [(s, f) for s, f, _ in groups] == [("posh", "gpt2"), ("posh", "kneser-ney"), ("posh", "lstm"),
                                              ("blimp", "gpt2"), ("blimp", "kneser-ney"), ("blimp", "lstm")]
    for suite, fam, df in groups:
        assert set(df["suite"]) == {suite} and set(df["arch"]) == {a for a, m in arch_meta.items()
                                                                   if m["family"] == fam}
    only = model_groups(items, analysis_settings({"suite": "blimp"}), META, arch_meta)
    assert [s for s, _, _ in only] == ["blimp"] * 3
    with pytest.raises(PovstimError, match=r"analysis\.pool_learners: true pools"):
        model_groups(items, analysis_settings({"pool_learners": True}), META, arch_meta)
    neural = {a: m for a, m in arch_meta.items() if a != "ngram"}
    pooled = model_groups(items[items["arch"] != "ngram"], analysis_settings({"pool_learners": True}), META, neural)
    assert [(s, f) for s, f, _ in pooled] == [("posh", "gpt2+lstm"), ("blimp", "gpt2+lstm")]


@pytest.mark.slow
def test_the_dag_trains_one_model_for_a_void_pair(tmp_path):
    """A real Snakemake run of a tiny config whose BABY gets nothing back (no planted evidence in the
    child-directed source): BABY's corpus and tokenizer are BABY-F's byte for byte, so of the three train jobs
    two train and the void pair's twin links the model the other trained (train/reuse.py); both score the
    same, and the analysis still reports BABY-F vs. BABY as VOID."""
    import hashlib
    import subprocess
    import sys

    import yaml

    from helpers.project import REPO

    cfg = yaml.safe_load((REPO / "tests" / "configs" / "tiny.yaml").read_text())
    cfg["experiment"] = "voidtrain"
    cfg["sources"]["cds"]["dpe_rate"] = {"question_formation": 0.0, "binding": 0.0}
    cfg["sizes"] = ["8k"]  # one size (half the DAG): Table 12 without its size term
    cfg["analysis"]["formula"] = "category * filtered + source + (1|phenomenon)"
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    res = tmp_path / "results" / "voidtrain"
    r = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(tmp_path),
                        "--configfile", str(tmp_path / "config.yaml"), "--cores", "2",
                        str(res.relative_to(tmp_path) / "analysis" / "accuracy.csv")],
                       capture_output=True, text=True, cwd=REPO, env={**__import__("os").environ, "POVSTIM_YES": "1"})
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    # the twin's model is no older than its inputs: a second run has nothing to do
    again = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(tmp_path),
                            "--configfile", str(tmp_path / "config.yaml"), "--cores", "2", "-n",
                            str(res.relative_to(tmp_path) / "analysis" / "accuracy.csv")],
                           capture_output=True, text=True, cwd=REPO,
                           env={**__import__("os").environ, "POVSTIM_YES": "1"})
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr, again.stdout[-3000:]

    def sha(p):
        return hashlib.sha256(p.read_bytes()).hexdigest()

    summaries = {(c, s): json.loads((res / "models" / "gpt2-nano" / c / s / "seed1" / "train_summary.json")
                                    .read_text()) for c in cfg["conditions"] for s in cfg["sizes"]}
    reused = {k: v["reused"] for k, v in summaries.items() if "reused" in v}
    assert len(summaries) == 3 and len(reused) == 1  # 2 trainings instead of 3
    for size in cfg["sizes"]:
        assert json.loads((res / "corpus" / "baby" / size / "condition.json").read_text())["corpus_sha256"] == \
            json.loads((res / "corpus" / "baby-f" / size / "condition.json").read_text())["corpus_sha256"]
        assert sha(res / "tokenizers" / "baby" / size / "tokenizer.json") == \
            sha(res / "tokenizers" / "baby-f" / size / "tokenizer.json")  # per-condition tokenizers: identical
        ((cond, _), rec), = [(k, v) for k, v in reused.items() if k[1] == size]
        twin = {"baby": "baby-f", "baby-f": "baby"}[cond]  # whichever job got the key's lock first trained
        assert rec["model"]["condition"] == twin and "reused" not in summaries[twin, size]
        assert summaries[cond, size]["model"]["condition"] == cond
        log = (tmp_path / "logs" / "voidtrain" / "train" / "gpt2-nano" / cond / size / "seed1.log").read_text()
        assert f"reused the model trained for {twin}" in log and "not trained again" in log
        models = [res / "models" / "gpt2-nano" / c / size / "seed1" for c in ("baby", "baby-f")]
        assert sha(models[0] / "model.safetensors") == sha(models[1] / "model.safetensors")
        scores = [pd.read_parquet(res / "scores" / "gpt2-nano" / c / size / "seed1" / "posh.parquet")
                  for c in ("baby", "baby-f")]
        assert set(scores[0]["condition"]) == {"baby"} and set(scores[1]["condition"]) == {"baby-f"}
        cols = [c for c in scores[0].columns if c != "condition"]
        pd.testing.assert_frame_equal(scores[0][cols], scores[1][cols])
    assert len(list((res / "models" / ".reuse").glob("*/trained.json"))) == 2
    assert "BABY-F vs. BABY: VOID, no estimate" in (res / "analysis" / "bayes" / "table12.md").read_text()
    void_csv = pd.read_csv(res / "analysis" / "bayes" / "void_contrasts.csv")
    assert void_csv[["kept", "duplicate", "all_sizes"]].values.tolist() == [["baby-f", "baby", True]]


def _stats(condition, size, counts, reinsert=None, ref=6962, sha=None):
    return {"condition": condition, "size": size, "base": f"corpus/baby/{size}/base.txt", "n_dpe_removed": 50,
            "dpe_count_targeted": counts, "reinsert_config": reinsert or {}, "reference": {"n_sentences": ref},
            "corpus_sha256": sha or f"{condition}{size}"}


ISSUE_CASE = [  # the issue's BABY 50k: 4 binding sentences back of a configured 5, no question formation at all
    _stats("baby-f", "50k", {"binding": 0, "question_formation": 0}),
    _stats("baby", "50k", {"binding": 4, "question_formation": 0}, {"binding": 0.0007, "question_formation": 0.002})]


def test_void_per_phenomenon_by_dose():
    """Hand-computed doses: binding round(0.0007 x 6962) = 5, question formation round(0.002 x 6962) = 14; auto at
    half the dose: thresholds 3 and 7. BABY's 4 binding sentences cover binding; 0 question-formation ones are
    void for it, so the contrast is not void as a whole but names what it covers."""
    assert void.configured_dose(ISSUE_CASE[1], "binding") == 5
    assert void.configured_dose(ISSUE_CASE[1], "question_formation") == 14
    assert void.phenomenon_thresholds(*ISSUE_CASE, "auto", 0.5) == {"binding": (3, 5), "question_formation": (7, 14)}
    partial = []
    assert void.void_pairs(ISSUE_CASE, "auto", partial=partial) == []
    (p,) = partial
    assert p["phenomena"] == {"covered": {"binding": 4},
                              "void": {"question_formation": {"evidence": 0, "threshold": 7, "dose": 14}}}
    # under today's default of 1 it was one pooled contrast, void only with no sentence apart at all; at 0.9 of
    # the dose (threshold 5) binding is void too, and so is the whole contrast
    assert [q["duplicate"] for q in void.void_pairs(ISSUE_CASE, "auto", share=0.9)] == ["baby"]


def test_the_filtering_sentence_never_pools_void_phenomena():
    """The three-level contrasts of the issue (BABY-F vs. BABY overall +0.16 credible, Wanna +0.63 credible): read
    with its coverage, the sentence names binding as covered and question formation as void, gives Binding's
    estimate only, and no overall or Wanna verdict."""
    from povstim.analysis.models import bayes

    rows = [("overall", 0.16, 0.03, 0.28, 0.99), ("Binding", 0.10, -0.2, 0.4, 0.7),
            ("Question Formation", 0.12, 0.06, 0.18, 1.0), ("Wanna", 0.63, 0.30, 0.99, 1.0)]
    con = pd.DataFrame([{"contrast": "BABY-F vs. BABY", "a": "BABY-F", "b": "BABY", "scope": sc, "median": m,
                         "lower": lo, "upper": hi, "p_gt0": p} for sc, m, lo, hi, p in rows])
    partial = []
    void.void_pairs(ISSUE_CASE, "auto", partial=partial)
    cov = void.coverage(partial, {"baby-f": "BABY-F", "baby": "BABY"})
    (text,) = bayes.filtering_sentences(con, coverage=cov)
    assert text.startswith("Filtering out direct positive evidence (BABY-F vs. BABY): the evidence apart covers "
                           "binding (4 sentence(s) apart at 50k); void for question_formation: 0 apart at 50k, under "
                           "its threshold 7 (of a configured dose of 14).")
    assert "Binding: no credible difference (+0.10" in text
    assert "+0.63" not in text and "+0.16" not in text and "credibly higher" not in text
    assert text.endswith("Not read as effects of the evidence (no phenomenon it covers; a difference there comes "
                         "from the corpora and tokenizers, which placebos measure): overall, Question Formation, "
                         "Wanna.")
    # without coverage (a contrast between corpora, BABY vs. WIKI) the sentence is as before
    (old,) = bayes.filtering_sentences(con)
    assert "overall, models without it scored credibly higher (+0.16" in old


def _plan_config(**analysis):
    import yaml

    from helpers.project import REPO
    from povstim import config as config_mod

    c = yaml.safe_load((REPO / "tests" / "configs" / "tiny.yaml").read_text())
    c["analysis"] = {**(c.get("analysis") or {}), **analysis}
    config_mod.validate(c)
    return c


def _outlook_rows():
    """povstim plan's reinsert outlook for the issue's BABY 50k: binding needs 5 and gets 4, question formation
    needs 14 and gets 0."""
    return [{"condition": "baby", "size": "50k", "phenomenon": p, "needed": need, "expected": got,
             "expected_low": got} for p, need, got in (("binding", 5, 4), ("question_formation", 14, 0))]


def test_plan_names_the_phenomena_void_by_dose_and_advises_placebos():
    from povstim.preflight import evidence

    (v,) = evidence.void_outlook(_plan_config(), _outlook_rows())
    assert v["status"] == "ok" and v["void_phenomena"] == ["question_formation"]
    lines = evidence.render_void([v])
    assert lines[0] == ("Void contrasts (evidence put back per phenomenon vs. its threshold, analysis.void_evidence = "
                        "auto):")
    assert lines[1].split() == ["baby", "50k", "void", "for", "question_formation", "(gets", "back", "0,",
                                "threshold", "7", "of", "a", "dose", "of", "14):", "its", "contrast", "with", "baby-f",
                                "is", "read", "on", "binding", "only"]
    assert lines[2].startswith("  -> ADVICE: baby vs. baby-f changes fewer than 50 evidence sentences")
    assert "baby-placebo: {placebo: {of: baby, vs: baby-f}}" in lines[2]


def test_plan_refuses_a_threshold_above_the_dose():
    from povstim.preflight import evidence

    with pytest.raises(PovstimError, match=r"^analysis\.void_evidence: 6 is above the configured dose of baby at "
                                           r"50k \(binding: 5 sentence\(s\)\)"):
        evidence.void_outlook(_plan_config(void_evidence=6), _outlook_rows())
    (v,) = evidence.void_outlook(_plan_config(void_evidence=5), _outlook_rows())  # at the dose: binding void too
    assert v["status"] == "void"
