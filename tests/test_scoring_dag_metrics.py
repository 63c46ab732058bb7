"""Word-level metrics as the paradigm metric of the DAG's score rule: ``scoring.metric: slor`` runs
with each model's condition's unigram (rule score passes ``--job-corpus``), and ``region`` is refused before any
job for a suite kind without regions.

The values the rule writes are compared with the library functions (``score_model`` with ``unigram_for``), which
tests/test_scoring_words.py checks against minicons and hand-computed values.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from helpers import tiny_models as tiny
from povstim import config as povstim_config
from povstim.benchmarks.suite import read_suite
from povstim.io import PovstimError
from povstim.scoring.group_cli import job_unigrams
from povstim.scoring.run import ScoringSettings, score_model, unigram_for
from povstim.settings import build

SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))

PAIRS = [
    {"suite": "posh", "paradigm": "binding", "category": "Binding", "item_id": str(i), "good": g, "bad": b}
    for i, (g, b) in enumerate([
        ("The girl said that Tom likes himself.", "The girl said that Tom likes herself."),
        ("Who does Mary wanna see?", "Who does Mary wanna go?"),
        ("Is the boy who is smiling happy?", "Is the boy who smiling is happy?"),
    ])
]
CORPUS = ("the girl said that tom likes himself .\nwho does mary want to see ?\nis the boy happy ?\n"
          "the boy who is smiling is happy .\n")


def _config(repo_root: Path, scoring: dict, **extra) -> dict:
    cfg = copy.deepcopy(yaml.safe_load((repo_root / "config.yaml").read_text()))
    cfg.update(experiment="slordag", seeds=[1], sizes=["10k"], conditions={"baby": {"from": "baby", "filter": True}},
               scoring={**cfg["scoring"], **scoring}, **extra)
    return cfg


def test_region_on_a_suite_kind_without_regions_is_refused_before_any_job(repo_root):
    cfg = _config(repo_root, {"metric": "region"})
    with pytest.raises(PovstimError, match=r"scoring\.metric is region, but suite posh \(kind generated\) has no "
                                           r"critical regions"):
        povstim_config.validate(cfg, "c.yaml")
    cfg = _config(repo_root, {})
    cfg["benchmarks"]["posh"]["scoring"] = {"metric": "region"}
    with pytest.raises(PovstimError, match=r"benchmarks\.posh\.scoring\.metric is region"):
        povstim_config.validate(cfg, "c.yaml")
    cfg = _config(repo_root, {})
    cfg["benchmarks"]["mine"] = {"kind": "jsonl", "path": "x.jsonl", "columns": {"good": "g", "bad": "b"},
                                 "scoring": {"metric": "region"}}
    povstim_config.validate(cfg, "c.yaml")  # a jsonl suite may give regions


def test_job_corpus_gives_each_job_its_own_unigram(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("the girl .\n")
    b.write_text("the boy the boy .\n")
    opts = build(ScoringSettings, "scoring", {"metric": "slor"})
    unis = job_unigrams(opts, [], [str(a), str(b), str(a)], 3)
    assert unis[0] is unis[2] and unis[0] is not unis[1]  # one model per training text
    assert unis[1].logprob(["the boy"]).logp[0] != unis[0].logprob(["the boy"]).logp[0]
    with pytest.raises(PovstimError, match=r"--job-corpus is given 2 time\(s\) for 3 --job\(s\)"):
        job_unigrams(opts, [], [str(a), str(b)], 3)
    with pytest.raises(PovstimError, match="not both"):
        job_unigrams(opts, [str(a)], [str(a)], 1)
    assert job_unigrams(build(ScoringSettings, "scoring", {}), [], [str(a)], 1) is None


@pytest.mark.slow
def test_score_rule_writes_slor_with_the_conditions_unigram(repo_root, tmp_path):
    """Real Snakemake, only rule score allowed: a tiny GPT-2 in the model's place, the suite and the condition's
    train.txt in theirs; the rule's parquet holds SLOR with that train.txt's unigram."""
    work = tmp_path / "run"
    cfg = _config(repo_root, {"metric": "slor", "sensitivity": False, "checkpoints": False, "device": "cpu"})
    results = work / "results" / cfg["experiment"]
    model = tiny.build(results / "models" / "gpt2-tiny" / "baby" / "10k" / "seed1",
                       [p["good"] for p in PAIRS] * 4 + CORPUS.splitlines() * 4, "causal", vocab_size=300, seed=1)
    suite = results / "benchmarks" / "posh"
    suite.mkdir(parents=True)
    (suite / "binding.jsonl").write_text("".join(json.dumps(p) + "\n" for p in PAIRS))
    train = results / "corpus" / "baby" / "10k" / "train.txt"
    train.parent.mkdir(parents=True)
    train.write_text(CORPUS)
    work.mkdir(exist_ok=True)
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))
    out = results / "scores" / "gpt2-tiny" / "baby" / "10k" / "seed1" / "posh.parquet"
    cmd = [SNAKEMAKE, "-s", str(repo_root / "Snakefile"), "-d", str(work), "--configfile", str(work / "config.yaml"),
           "--allowed-rules", "score", "--cores", "1", str(out.relative_to(work))]
    r = subprocess.run(cmd, check=False, capture_output=True, text=True, cwd=repo_root, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    got = pd.read_parquet(out)
    settings = build(ScoringSettings, "scoring", {k: v for k, v in cfg["scoring"].items() if k != "group"})
    ref = score_model(read_suite(suite), str(model), settings, {"arch": "gpt2-tiny"},
                      unigram=unigram_for(settings, [str(train)]))
    np.testing.assert_array_equal(got["logp_good"].to_numpy(), ref["logp_good"].to_numpy())
    np.testing.assert_array_equal(got["logp_bad"].to_numpy(), ref["logp_bad"].to_numpy())
    # and SLOR it is: not the sentence sums (those would be the sentence metric's)
    sentence = score_model(read_suite(suite), str(model), build(ScoringSettings, "scoring", {
        **{k: v for k, v in cfg["scoring"].items() if k != "group"}, "metric": "sentence"}), {"arch": "x"})
    assert not np.allclose(got["logp_good"], sentence["logp_good"])


@pytest.mark.parametrize("kind, scoring", [("masked", {"mlm": "pll_word_l2r"}), ("causal", {"metric": "region"}),
                                           ("masked", {"metric": "region", "mlm": "pll_word_l2r"})])
def test_score_group_command_writes_the_word_level_metrics(repo_root, tmp_path, kind, scoring):
    """The score rule's command (``povstim score-group`` with the params plan.scoring_for builds for the suite) on a
    tiny model: the file holds exactly score_model's values for the word-level metric (checked against minicons
    in tests/test_scoring_words.py)."""
    from povstim import cli, plan

    cfg = _config(repo_root, {"sensitivity": False, "checkpoints": False, "device": "cpu"})
    cfg["benchmarks"] = {"mine": {"kind": "jsonl", "path": "x.jsonl", "columns": {"good": "good", "bad": "bad"},
                                  "scoring": scoring}}
    povstim_config.validate(cfg, "c.yaml")
    params = {k: v for k, v in plan.scoring_for(cfg, "mine").items() if k != "group"}
    model = tiny.build(tmp_path / kind, [p["good"] for p in PAIRS] * 4 + CORPUS.splitlines() * 4, kind,
                       vocab_size=300, seed=2)
    # regions: the last word by characters (himself./herself., see?/go?, happy?) and the first two words by words
    pairs = []
    for i, p in enumerate(PAIRS):
        g, b = p["good"], p["bad"]
        region = ({"good": [g.rindex(" ") + 1, len(g)], "bad": [b.rindex(" ") + 1, len(b)]} if i % 2 == 0 else
                  {"unit": "words", "good": [0, 2], "bad": [0, 2]})
        pairs.append({**p, "suite": "mine", "region": region})
    suite = tmp_path / "mine"
    suite.mkdir()
    (suite / "binding.jsonl").write_text("".join(json.dumps(p) + "\n" for p in pairs))
    out = tmp_path / "out.parquet"
    meta = json.dumps({"arch": "a", "condition": "baby", "size": "10k", "seed": 1})
    assert cli.main(["score-group", "--suite", str(suite), "--params", json.dumps(params), "--threads", "1",
                     "--job", str(model), meta, str(out)]) == 0
    got = pd.read_parquet(out)
    settings = build(ScoringSettings, "scoring", params)
    ref = score_model(read_suite(suite), str(model), settings, {"arch": "a"})
    np.testing.assert_array_equal(got["logp_good"].to_numpy(), ref["logp_good"].to_numpy())
    np.testing.assert_array_equal(got["logp_bad"].to_numpy(), ref["logp_bad"].to_numpy())
    plain = score_model(read_suite(suite), str(model), build(ScoringSettings, "scoring", {
        **params, "metric": "sentence", "mlm": "pll"}), {"arch": "a"})
    assert not np.allclose(got["logp_good"], plain["logp_good"])  # the metric changed the numbers
