"""Any checkpointed Hugging Face model: its checkpoints found in BabyLM's (chck_*), the HF Trainer's
(checkpoint-N) and povstim's layouts, each scored (`povstim score-model`), learning curves by words seen.

Each revision's scores are compared with `score_model` on that folder alone (the scorer the other scoring tests
check against minicons), the curve with accuracies counted from the item rows."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest
import torch
from helpers import tiny_models as tiny
from povstim import cli
from povstim.io import PovstimError
from povstim.scoring import external as X
from povstim.scoring.run import ScoringSettings, score_model
from povstim.settings import build

torch.set_num_threads(1)

PAIRS = tiny.mini_pairs()
SENTS = [p["good"] for p in PAIRS] * 3 + ["the boy likes the girl .", "who does mary see ?"] * 3


def _babylm_folder(root, kind="causal"):
    """BabyLM's layout: chck_1M, chck_2M, chck_10M (trained 0, 5 and 20 steps), the folder itself the last."""
    for name, steps in (("chck_1M", 0), ("chck_2M", 5), ("chck_10M", 20)):
        tiny.build(root / name, SENTS, kind, vocab_size=300, seed=3, train_steps=steps)
    for f in (root / "chck_10M").iterdir():
        shutil.copy2(f, root / f.name)
    return root


@pytest.fixture(scope="module")
def babylm(tmp_path_factory):
    return _babylm_folder(tmp_path_factory.mktemp("babylm") / "bm")


def _settings(**given):
    return build(ScoringSettings, "scoring", {"checkpoints": False, "device": "cpu", "sensitivity": False, **given})


def test_babylm_trainer_and_povstim_layouts_are_found(babylm, tmp_path):
    revs = X.find_revisions(str(babylm))
    assert [(r.name, r.words, r.final) for r in revs] == [
        ("chck_1M", 1_000_000, False), ("chck_2M", 2_000_000, False), ("chck_10M", 10_000_000, False),
        ("main", None, True)]
    assert [r.step for r in revs[:3]] == [1_000_000, 2_000_000, 10_000_000]  # no step recorded: the words
    assert [r.name for r in X.find_revisions(str(babylm), checkpoints=False)] == ["main"]
    assert [r.name for r in X.find_revisions(str(babylm), revisions=["chck_2M"])] == ["chck_2M", "main"]

    trainer = tmp_path / "trainer"
    for step in (20, 5):
        shutil.copytree(babylm / "chck_1M", trainer / f"checkpoint-{step}")
    (trainer / "checkpoint-5" / "trainer_state.json").write_text(json.dumps({"global_step": 5}))
    (trainer / "runs").mkdir()  # not a checkpoint
    assert [(r.name, r.step, r.words) for r in X.find_revisions(str(trainer))] == [
        ("checkpoint-5", 5, None), ("checkpoint-20", 20, None)]  # no final model in the folder itself

    own = tmp_path / "own"
    shutil.copytree(babylm / "chck_1M", own)
    shutil.copytree(babylm / "chck_1M", own / "checkpoints" / "step100")
    shutil.copytree(babylm / "chck_2M", own / "checkpoints" / "chck_300k")
    (own / "checkpoints" / "chck_300k" / "manifest.json").write_text(json.dumps({"step": 40}))
    # povstim's word checkpoints make the step ones resume points, as for povstim score
    assert [(r.name, r.step, r.words) for r in X.find_revisions(str(own))] == [
        ("checkpoints/chck_300k", 40, 300_000), ("main", -1, None)]


def test_bad_folders_are_named(babylm, tmp_path):
    empty = tmp_path / "empty"
    (empty / "chck_1M").mkdir(parents=True)  # a chck_ folder without a model
    with pytest.raises(PovstimError, match=r"external_models\.x\.path: .*empty is not a model folder: it has no "
                                           r"config\.json with weights, and no checkpoint folders"):
        X.find_revisions(str(empty), where="external_models.x.path")
    single = tmp_path / "single"
    shutil.copytree(babylm / "chck_1M", single)
    with pytest.raises(PovstimError, match=r"external_models\.x\.path: .*single holds no checkpoint folders \(chck_\* "
                                           r"\(BabyLM\).*but checkpoints are asked for"):
        X.find_revisions(str(single), where="external_models.x.path")
    assert [r.name for r in X.find_revisions(str(single), checkpoints=False)] == ["main"]
    with pytest.raises(PovstimError, match=r"has no checkpoint chck_5M \(it has: chck_1M, chck_2M, chck_10M\)"):
        X.find_revisions(str(babylm), revisions=["chck_5M"])
    with pytest.raises(PovstimError, match=r"model folder .*nowhere does not exist"):
        X.find_revisions(str(tmp_path / "nowhere"))


def test_hub_revisions_load_through_from_pretrained_with_the_revision(monkeypatch):
    revs = X.find_revisions("some-org/some-babylm-model", revisions=["chck_1M", "chck_10M"])
    assert [(r.name, r.revision, r.words, r.final) for r in revs] == [
        ("chck_1M", "chck_1M", 1_000_000, False), ("chck_10M", "chck_10M", 10_000_000, False),
        ("main", "main", None, True)]
    # not in the local cache, and no download asked for: the error names the revision (nothing is fetched)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(PovstimError, match=r"no model of that name at revision 'chck_1M' in the local Hugging Face "
                                           r"cache"):
        X.score_revisions(PAIRS, revs[:1], _settings(), {"arch": "external"})


def test_score_model_command_scores_every_revision_and_draws_curves(babylm, tmp_path):
    suite = tmp_path / "mini.jsonl"
    suite.write_text("".join(json.dumps(p) + "\n" for p in PAIRS))
    out = tmp_path / "out"
    params = json.dumps({"sensitivity": False, "device": "cpu"})
    assert cli.main(["score-model", str(babylm), "--suite", str(suite), "--out-dir", str(out), "--size", "10M",
                     "--params", params, "--threads", "1"]) == 0
    df = pd.read_parquet(out / "mini.parquet")
    assert set(df["arch"]) == {"external"} and set(df["condition"]) == {"bm"} and set(df["size"]) == {"10M"}
    for name, words in (("chck_1M", 1e6), ("chck_2M", 2e6), ("chck_10M", 1e7), ("main", 1e7)):
        rows = df[df["revision"] == name].reset_index(drop=True)
        ref = score_model(PAIRS, str(babylm / name if name != "main" else babylm), _settings(), {"arch": "x"})
        np.testing.assert_array_equal(rows["logp_good"], ref["logp_good"])
        np.testing.assert_array_equal(rows["logp_bad"], ref["logp_bad"])
        # main holds chck_10M's files, so it has its words seen too
        assert (rows["words_seen"] == words).all() and rows["final"].all() == (name == "main")
    curve = pd.read_csv(out / "curve.csv")
    for (rev, par), sub in df.groupby(["revision", "paradigm"]):
        got = curve[(curve["revision"] == rev) & (curve["paradigm"] == par)]["accuracy"]
        assert got.iloc[0] == pytest.approx(sub["correct"].mean())
    alls = curve[curve["paradigm"] == "all"]
    assert list(alls["revision"]) == ["chck_1M", "chck_2M", "chck_10M", "main"]
    assert (out / "curve.png").read_bytes()[:4] == b"\x89PNG"
    # the scores of different checkpoints differ (they are different models)
    a, b = (df[df["revision"] == r]["logp_good"].to_numpy() for r in ("chck_1M", "chck_10M"))
    assert not np.allclose(a, b)


def test_score_model_command_errors_name_the_path(tmp_path, capsys):
    (tmp_path / "notamodel").mkdir()
    suite = tmp_path / "mini.jsonl"
    suite.write_text(json.dumps(PAIRS[0]) + "\n")
    assert cli.main(["score-model", str(tmp_path / "notamodel"), "--suite", str(suite), "--out-dir",
                     str(tmp_path / "o")]) == 1
    assert "notamodel is not a model folder" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_external_scores_join_tables_and_curves_not_the_model_table(tmp_path):
    """povstim analyze --external-scores: the external model's rows are in accuracy.csv, Tables 3/8 and the
    curves (accuracies counted here from its rows), not in items.parquet (no condition predictors)."""
    from helpers.simulate import CONDITIONS, simulate_scores, write_score_files

    ours = simulate_scores(sizes=("50k",), seeds=(1,), items=20)
    paths = write_score_files(ours, tmp_path / "scores")
    ext = simulate_scores(conditions={"bm": {"source": "baby", "filtered": False}}, sizes=("10M",), seeds=(0,),
                          items=20, rng_seed=5).assign(arch="external")
    ext = ext.assign(words_seen=np.where(ext["final"], np.nan, ext["step"] * 1000.0))
    ext_path = tmp_path / "ext.parquet"
    ext.to_parquet(ext_path, index=False)
    out = tmp_path / "analysis"
    meta = json.dumps(CONDITIONS)
    assert cli.main(["analyze", "--scores", *map(str, paths), "--external-scores", str(ext_path), "--conditions",
                     meta, "--out-dir", str(out), "--no-model"]) == 0
    acc = pd.read_csv(out / "accuracy.csv")
    mine = acc[(acc["arch"] == "external") & (acc["condition"] == "bm")]
    assert len(mine) > 0 and set(mine["size"].astype(str)) == {"10M"}
    final = ext[ext["final"]]
    for par, sub in final.groupby("paradigm"):
        got = mine[mine["paradigm"] == par]["accuracy"].iloc[0]
        assert got == pytest.approx(sub["correct"].mean())
    assert "BM" in (out / "tables" / "table3_posh.md").read_text()
    curves = pd.read_csv(out / "accuracy_by_step.csv")
    assert (curves["arch"] == "external").any() and (curves["arch"] == "gpt2-tiny").any()
    tidy = pd.read_parquet(out / "items.parquet")
    assert "external" not in set(tidy["arch"])


@pytest.mark.slow
def test_score_external_rule_in_the_dag(repo_root, babylm, tmp_path):
    """external_models puts rule score_external in the DAG (dry run): one job per model x suite, its output
    an input of analyze; a local folder that is not a model fails the DAG's build naming the key; a name that is a
    condition's, and slor without a corpus, are config errors."""
    import copy
    import subprocess
    import sys

    import yaml
    from povstim import config as povstim_config

    cfg = copy.deepcopy(yaml.safe_load((repo_root / "config.yaml").read_text()))
    cfg["experiment"] = "extdag"
    cfg["external_models"] = {"bm": {"path": str(babylm), "size": "10M", "revisions": ["chck_1M"]}}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg))
    snakemake = str(__import__("pathlib").Path(sys.executable).with_name("snakemake"))

    def dry_run():
        return subprocess.run([snakemake, "-s", str(repo_root / "Snakefile"), "-d", str(tmp_path), "--configfile",
                               str(tmp_path / "config.yaml"), "-n", "-p", "results/extdag/analysis/accuracy.csv"],
                              check=False, capture_output=True, text=True, cwd=repo_root, timeout=600)

    r = dry_run()
    assert r.returncode == 0, r.stderr[-3000:]
    text = r.stdout + r.stderr
    assert "score_external" in text
    assert "score-model" in text and "--out results/extdag/scores/external/bm/posh.parquet" in text
    assert "--size 10M --checkpoints --revision chck_1M" in text and "--where external_models.bm.path" in text
    assert "--external-scores results/extdag/scores/external/bm/posh.parquet" in text

    (tmp_path / "notamodel").mkdir()
    cfg["external_models"]["bm"]["path"] = str(tmp_path / "notamodel")
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg))
    r = dry_run()
    out = r.stdout + r.stderr
    assert r.returncode != 0 and "external_models.bm.path: " in out and "notamodel is not a model folder" in out
    assert "Traceback" not in out, out

    bad = copy.deepcopy(cfg)
    bad["external_models"] = {"baby": {"path": "x"}}
    with pytest.raises(PovstimError, match=r"external_models\.baby: the name is a condition's too"):
        povstim_config.validate(bad, "c.yaml")
    bad = copy.deepcopy(cfg)
    bad["scoring"]["metric"] = "slor"
    with pytest.raises(PovstimError, match=r"external_models\.bm\.corpus: scoring\.metric is slor"):
        povstim_config.validate(bad, "c.yaml")


@pytest.mark.slow
def test_score_external_rule_runs_under_snakemake(repo_root, babylm, tmp_path):
    """Rule score_external for real (only it allowed; the suite in place): the file it writes holds every revision,
    the same scores as score_revisions on the same folder."""
    import copy
    import subprocess
    import sys
    from pathlib import Path

    import yaml

    work = tmp_path / "run"
    cfg = copy.deepcopy(yaml.safe_load((repo_root / "config.yaml").read_text()))
    cfg.update(experiment="extrun", scoring={**cfg["scoring"], "sensitivity": False, "device": "cpu"},
               external_models={"bm": {"path": str(babylm), "size": "10M", "revisions": ["chck_1M", "chck_10M"]}})
    suite = work / "results" / "extrun" / "benchmarks" / "posh"
    suite.mkdir(parents=True)
    (suite / "binding.jsonl").write_text("".join(json.dumps({**p, "suite": "posh"}) + "\n" for p in PAIRS))
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))
    out = "results/extrun/scores/external/bm/posh.parquet"
    r = subprocess.run([str(Path(sys.executable).with_name("snakemake")), "-s", str(repo_root / "Snakefile"), "-d",
                        str(work), "--configfile", str(work / "config.yaml"), "--allowed-rules", "score_external",
                        "--cores", "1", out], check=False, capture_output=True, text=True, cwd=repo_root,
                       timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    got = pd.read_parquet(work / out)
    assert list(dict.fromkeys(got["revision"])) == ["main", "chck_1M", "chck_10M"]
    assert set(got["condition"]) == {"bm"} and set(got["arch"]) == {"external"}
    pairs = [{**p, "suite": "posh"} for p in PAIRS]
    settings = build(ScoringSettings, "scoring", {k: v for k, v in cfg["scoring"].items() if k != "group"})
    ref = X.score_revisions(pairs, X.find_revisions(str(babylm), revisions=["chck_1M", "chck_10M"]), settings,
                            {"arch": "external", "condition": "bm", "size": "10M", "seed": 0})
    pd.testing.assert_frame_equal(got, ref)


def test_hub_branches_are_the_chck_ones_by_words(monkeypatch):
    """Without revisions, a hub repository's chck_* branches (huggingface_hub.list_repo_refs, replaced here: no
    network) are scored in words order, then main; other branches are not checkpoints."""
    from types import SimpleNamespace

    import huggingface_hub

    branches = [SimpleNamespace(name=n) for n in ("main", "chck_10M", "chck_2M", "dev", "chck_100M", "chck_1M")]
    monkeypatch.setattr(huggingface_hub, "list_repo_refs", lambda repo: SimpleNamespace(branches=branches))
    revs = X.find_revisions("org/model")
    assert [r.name for r in revs] == ["chck_1M", "chck_2M", "chck_10M", "chck_100M", "main"]
    assert [r.words for r in revs] == [1_000_000, 2_000_000, 10_000_000, 100_000_000, None]
    monkeypatch.setattr(huggingface_hub, "list_repo_refs", lambda repo: SimpleNamespace(branches=branches[:1]))
    with pytest.raises(PovstimError, match=r"hub repository 'org/model' has no chck_\* branches"):
        X.find_revisions("org/model", where="external_models.m.path")

    def offline(repo):
        raise OSError("network unreachable")

    monkeypatch.setattr(huggingface_hub, "list_repo_refs", offline)
    with pytest.raises(PovstimError, match=r"external_models\.m\.path: no local folder org/model, and the revisions "
                                           r"of hub repository 'org/model' cannot be listed \(OSError: network"):
        X.find_revisions("org/model", where="external_models.m.path")


@pytest.mark.parametrize("bos", [True, False])
def test_a_checkpoint_holding_the_final_files_gets_the_rows_scoring_would_give(babylm, tmp_path, bos):
    """main holds chck_10M's files: chck_10M's rows are made from main's, and equal (bit for bit, sensitivity
    columns included) the rows chck_10M gets when scored as a checkpoint of a folder with no final model."""
    settings = _settings(sensitivity=True, bos=bos)
    meta = {"arch": "external", "condition": "bm", "size": "10M", "seed": 0}
    got = X.score_revisions(PAIRS, X.find_revisions(str(babylm), revisions=["chck_2M", "chck_10M"]), settings, meta)
    assert list(dict.fromkeys(got["revision"])) == ["main", "chck_2M", "chck_10M"]
    alone = tmp_path / "alone"
    shutil.copytree(babylm / "chck_10M", alone / "chck_10M")
    ref = X.score_revisions(PAIRS, X.find_revisions(str(alone)), settings, meta)  # scored: no final model here
    mine = got[got["revision"] == "chck_10M"].reset_index(drop=True)
    pd.testing.assert_frame_equal(mine, ref.reset_index(drop=True))
    assert mine[f"sum_{'nobos' if bos else 'bos'}_good"].isna().all()  # a checkpoint's own BOS setting only
