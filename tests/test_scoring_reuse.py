"""A checkpoint saved at the final model's step holds the same files as the final model: `povstim score`
gives it the final model's scores instead of scoring it again, with the same bytes as scoring it again.

Gold: the same job with the reuse switched off (every target loaded and scored), and the checkpoint
folder scored on its own as a model."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest
import torch

from povstim.benchmarks import posh, words
from povstim.benchmarks.suite import write_suite
from povstim.cli import main
from povstim.scoring import items as scoring_items
from povstim.scoring import scorer as scoring_scorer
from povstim.scoring.items import COLUMNS, SENSITIVITY_COLUMNS
from helpers import tiny_models as tiny

torch.set_num_threads(1)

CORPUS = ["Is the boy who is smiling happy?", "The girl said that Tom likes himself.", "Who does Mary wanna go?",
          "Can the dog the girl saw run?", "Mary's dad likes himself.", "the cats eat.", "the dog chases the cat."] * 3


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("reuse_models")
    corpus = CORPUS + [p.good for p in posh.generate(words.default_lexicon(), 10, seed=1)]
    return {"causal": tiny.build(root / "gpt2", corpus, "causal", vocab_size=400, seed=1),
            "causal2": tiny.build(root / "gpt2b", corpus, "causal", vocab_size=400, seed=3),
            "masked": tiny.build(root / "roberta", corpus, "masked", vocab_size=400, seed=2)}


def trained_folder(src, dst, best=10, other=None):
    """A folder as `povstim train` leaves it: the final (best) weights, checkpoints/step{best} with the same
    files plus the trainer state, an earlier checkpoint (``other``: other weights), the training records."""
    shutil.copytree(src, dst)
    (dst / "train_summary.json").write_text(json.dumps({"best_step": best}))
    (dst / "train_log.jsonl").write_text(json.dumps({"step": best, "loss": 1.0}) + "\n")
    same = dst / "checkpoints" / f"step{best}"
    shutil.copytree(src, same)
    (same / "trainer_state.pt").write_bytes(b"optimizer and RNG state")
    (same / "train_log.jsonl").write_text(json.dumps({"step": best - 1, "loss": 1.5}) + "\n")
    if other is not None:
        shutil.copytree(other, dst / "checkpoints" / "step5")
    return dst


@pytest.fixture
def loads(monkeypatch):
    """The model folders `povstim score` loads, in order."""
    seen, real = [], scoring_scorer.load

    def spy(path, *args, **kw):
        seen.append(str(path))
        return real(path, *args, **kw)

    monkeypatch.setattr(scoring_scorer, "load", spy)
    return seen


def score(model, suite, out, params):
    assert main(["score", "--model", str(model), "--suite", str(suite), "--params", json.dumps(params),
                 "--meta", json.dumps({"arch": "gpt2-tiny", "condition": "baby", "size": "8k", "seed": 1}),
                 "--threads", "1", "--out", str(out), "--device", "cpu"]) == 0
    return pd.read_parquet(out)


def test_same_model_compares_every_file_but_the_training_records(models, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(models["causal"], a)
    shutil.copytree(models["causal"], b)
    (b / "trainer_state.pt").write_bytes(b"state")  # training records differ or exist on one side only
    (a / "train_log.jsonl").write_text("{}\n")
    assert scoring_items.same_model(a, b)
    assert not scoring_items.same_model(a, models["causal2"])  # other weights
    weights = bytearray((b / "model.safetensors").read_bytes())
    weights[-1] ^= 1  # one bit of the last tensor
    (b / "model.safetensors").write_bytes(bytes(weights))
    assert not scoring_items.same_model(a, b)
    shutil.copy2(a / "model.safetensors", b / "model.safetensors")
    assert scoring_items.same_model(a, b)
    config = json.loads((b / "config.json").read_text())
    (b / "config.json").write_text(json.dumps({**config, "layer_norm_epsilon": 1e-6}))
    assert not scoring_items.same_model(a, b)
    shutil.copy2(a / "config.json", b / "config.json")
    (b / "README.md").write_text("a model card\n")  # a file the other folder lacks
    assert not scoring_items.same_model(a, b)


@pytest.mark.parametrize("sensitivity", [True, False])
def test_the_checkpoint_at_the_final_step_is_not_scored_again_and_its_rows_are_the_same(
        models, tmp_path, loads, monkeypatch, caplog, sensitivity):
    model = trained_folder(models["causal"], tmp_path / "model", other=models["causal2"])
    suite = tmp_path / "suite"
    write_suite(suite, posh.generate(words.default_lexicon(), 4, seed=2), {"kind": "generated"})
    params = {"batch_size": 5, "checkpoints": True, "sensitivity": sensitivity}
    with caplog.at_level("INFO", logger="povstim.score"):
        reused = score(model, suite, tmp_path / "reused.parquet", params)
    # the BOS-less pass is the final model's alone, and the log says so (it doubles that model's scoring)
    second = [r.getMessage() for r in caplog.records if "for the metric sensitivity table" in r.getMessage()]
    assert second == ([f"{model}: scoring again without BOS for the metric sensitivity table "
                       "(scoring.sensitivity: false skips this pass)"] if sensitivity else [])
    # loaded: the final model and the step-5 checkpoint; not checkpoints/step10
    assert loads == [str(model), str(model / "checkpoints" / "step5")]
    assert reused.groupby(["step", "final"]).size().to_dict() == {(5, False): 36, (10, False): 36, (10, True): 36}

    # gold 1: every target loaded and scored
    loads.clear()
    monkeypatch.setattr(scoring_items, "same_model", lambda a, b: False)
    again = score(model, suite, tmp_path / "again.parquet", params)
    assert len(loads) == 3
    assert (tmp_path / "reused.parquet").read_bytes() == (tmp_path / "again.parquet").read_bytes()
    pd.testing.assert_frame_equal(reused, again)

    # gold 2: the checkpoint folder scored on its own, as a model
    alone = score(model / "checkpoints" / "step10", suite, tmp_path / "alone.parquet", {**params, "checkpoints": False})
    ck = reused[(reused.step == 10) & ~reused.final].reset_index(drop=True)
    shared = ["logp_good", "logp_bad", "ntok_good", "ntok_bad", "correct"] + (
        [c for c in SENSITIVITY_COLUMNS if "nobos" not in c] if sensitivity else [])
    pd.testing.assert_frame_equal(ck[shared], alone[shared])
    assert list(reused.columns) == COLUMNS + (SENSITIVITY_COLUMNS if sensitivity else [])


def test_a_checkpoint_at_the_final_step_with_other_weights_is_scored(models, tmp_path, loads):
    model = trained_folder(models["causal"], tmp_path / "model")
    shutil.rmtree(model / "checkpoints" / "step10")
    shutil.copytree(models["causal2"], model / "checkpoints" / "step10")  # e.g. a hand-edited folder
    suite = tmp_path / "suite"
    write_suite(suite, posh.generate(words.default_lexicon(), 2, seed=2), {"kind": "generated"})
    df = score(model, suite, tmp_path / "s.parquet", {"batch_size": 5, "checkpoints": True})
    assert loads == [str(model), str(model / "checkpoints" / "step10")]
    fin, ck = df[df.final].reset_index(drop=True), df[~df.final].reset_index(drop=True)
    assert not (fin.logp_good == ck.logp_good).all()


@pytest.mark.parametrize("kind", ["causal", "masked"])
def test_task_suites_reuse_the_final_rows_too(models, tmp_path, loads, monkeypatch, kind):
    model = trained_folder(models[kind], tmp_path / "model")
    params = {"batch_size": 8, "checkpoints": True, "completion": {"seed": 3}}
    reused = score(model, "builtin:en", tmp_path / "reused.parquet", params)
    assert loads == [str(model)]
    assert set(reused["task"]) == {"minimal_pair", "multiple_choice", "completion"}
    assert reused.groupby(["step", "final"]).size().to_dict() == {(10, False): len(reused) // 2,
                                                                    (10, True): len(reused) // 2}
    loads.clear()
    monkeypatch.setattr(scoring_items, "same_model", lambda a, b: False)
    score(model, "builtin:en", tmp_path / "again.parquet", params)
    assert len(loads) == 2
    assert (tmp_path / "reused.parquet").read_bytes() == (tmp_path / "again.parquet").read_bytes()
