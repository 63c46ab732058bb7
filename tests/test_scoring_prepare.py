"""A score job encodes its suite once per tokenizer and framing, the first model's while the device starts and the
weights load (scoring/prepare.py, the per-job overhead), and writes the same bytes as encoding for every
model.

Gold: the same job with the sharing switched off (every scorer encodes for itself, in the foreground, as before),
and a checkpoint folder scored on its own as a model."""

from __future__ import annotations

import json
import shutil
import threading

import pandas as pd
import pytest
import torch

from helpers import tiny_models as tiny
from povstim.benchmarks import posh, words
from povstim.benchmarks.suite import write_suite
from povstim.cli import main
from povstim.scoring import prepare as scoring_prepare
from povstim.scoring import scorer as scoring_scorer

torch.set_num_threads(1)

CORPUS = ["Is the boy who is smiling happy?", "The girl said that Tom likes himself.", "Who does Mary wanna go?",
          "Can the dog the girl saw run?", "the cats eat.", "the dog chases the cat."] * 3


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("prepare_models")
    corpus = CORPUS + [p.good for p in posh.generate(words.default_lexicon(), 10, seed=1)]
    return {"a": tiny.build(root / "a", corpus, "causal", vocab_size=400, seed=1),
            "b": tiny.build(root / "b", corpus, "causal", vocab_size=400, seed=3),  # same tokenizer, other weights
            "other_tok": tiny.build(root / "c", corpus, "causal", vocab_size=300, seed=4),
            "short": tiny.build(root / "d", corpus, "causal", vocab_size=400, positions=12, seed=5)}


def with_checkpoints(final, dst, others):
    """A model folder whose checkpoints/step{5, 6, ...} hold ``others`` (other weights)."""
    shutil.copytree(final, dst)
    (dst / "train_summary.json").write_text(json.dumps({"best_step": 10}))
    for k, other in enumerate(others):
        shutil.copytree(other, dst / "checkpoints" / f"step{5 + k}")
    return dst


@pytest.fixture
def suite(tmp_path):
    folder = tmp_path / "suite"
    write_suite(folder, posh.generate(words.default_lexicon(), 4, seed=2), {"kind": "generated"})
    return folder


@pytest.fixture
def encodings(monkeypatch):
    """Every encoding of the suite a job makes: (thread name, number of sentences)."""
    seen, real = [], scoring_prepare.batch_ids

    def spy(tok, sentences, special):
        seen.append((threading.current_thread().name, len(sentences)))
        return real(tok, sentences, special)

    monkeypatch.setattr(scoring_prepare, "batch_ids", spy)
    return seen


def no_sharing(monkeypatch):
    """The job as it was before scoring/prepare.py: each scorer encodes for itself, in the foreground."""
    monkeypatch.setattr(scoring_prepare.Preparations, "ahead", lambda self, *a, **k: None)
    monkeypatch.setattr(scoring_prepare.Preparations, "get",
                        lambda self, tok, fr: scoring_prepare.prepare(tok, fr, self.sentences))


def score(model, suite, out, params, *extra):
    code = main(["score", "--model", str(model), "--suite", str(suite), "--params", json.dumps(params),
                 "--meta", json.dumps({"arch": "gpt2-tiny", "condition": "baby", "size": "8k", "seed": 1}),
                 "--threads", "1", "--out", str(out), "--device", "cpu", *extra])
    return code


@pytest.mark.parametrize("sensitivity,share_prefixes", [(True, True), (False, True), (True, False)])
def test_a_job_encodes_once_per_framing_and_writes_what_encoding_per_model_writes(
        models, suite, tmp_path, encodings, monkeypatch, sensitivity, share_prefixes):
    model = with_checkpoints(models["a"], tmp_path / "model", [models["b"], models["b"]])
    params = {"batch_size": 5, "checkpoints": True, "sensitivity": sensitivity, "share_prefixes": share_prefixes}
    assert score(model, suite, tmp_path / "shared.parquet", params) == 0
    # one encoding per BOS setting (the second for the final model's sensitivity pass), for three models
    assert len(encodings) == (2 if sensitivity else 1)
    encodings.clear()
    no_sharing(monkeypatch)
    assert score(model, suite, tmp_path / "each.parquet", params) == 0
    assert len(encodings) == (4 if sensitivity else 3)
    assert (tmp_path / "shared.parquet").read_bytes() == (tmp_path / "each.parquet").read_bytes()


def test_the_first_models_sentences_are_encoded_while_it_loads(models, suite, tmp_path, encodings, monkeypatch):
    """load() waits until the suite has been encoded: a job that encoded after loading would never get there."""
    encoded, real = threading.Event(), scoring_scorer.load

    def slow_load(path, *args, **kw):
        assert encoded.wait(60), "the suite was not encoded while the model loaded"
        return real(path, *args, **kw)

    real_prepare = scoring_prepare.prepare

    def spy_prepare(*args, **kw):
        got = real_prepare(*args, **kw)
        encoded.set()
        return got

    monkeypatch.setattr(scoring_scorer, "load", slow_load)
    monkeypatch.setattr(scoring_prepare, "prepare", spy_prepare)
    params = {"batch_size": 5, "checkpoints": False, "sensitivity": False}
    assert score(models["a"], suite, tmp_path / "ahead.parquet", params) == 0
    assert [name.startswith("povstim-prepare") for name, _ in encodings] == [True]
    monkeypatch.setattr(scoring_scorer, "load", real)
    monkeypatch.setattr(scoring_prepare, "prepare", real_prepare)
    no_sharing(monkeypatch)
    assert score(models["a"], suite, tmp_path / "after.parquet", params) == 0
    assert (tmp_path / "ahead.parquet").read_bytes() == (tmp_path / "after.parquet").read_bytes()


def test_the_first_pass_does_not_wait_for_the_second_passs_encoding(models, suite, tmp_path, monkeypatch):
    """With scoring.sensitivity the thread also encodes the sentences without BOS; the first pass starts as soon as
    its own encoding is made: here the second encoding waits until the first pass has started."""
    started, real_prepare, real_score = threading.Event(), scoring_prepare.prepare, scoring_scorer.Scorer.score
    waits = []  # whether the thread's BOS-less encoding saw the first pass start (an error there is not the job's)

    def spy_prepare(tok, fr, sentences):
        if fr.prefix is None:  # the BOS-less framing, the sensitivity pass's
            waits.append((threading.current_thread().name.startswith("povstim-prepare"), started.wait(30)))
        return real_prepare(tok, fr, sentences)

    def spy_score(self, sentences, prepared=None):
        started.set()
        return real_score(self, sentences, prepared)

    monkeypatch.setattr(scoring_prepare, "prepare", spy_prepare)
    monkeypatch.setattr(scoring_scorer.Scorer, "score", spy_score)
    params = {"batch_size": 5, "checkpoints": False, "sensitivity": True}
    assert score(models["a"], suite, tmp_path / "s.parquet", params) == 0
    assert waits == [(True, True)]  # made in the thread, after the first pass had started


def test_a_checkpoint_with_other_tokenizer_files_gets_its_own_encoding(models, suite, tmp_path, encodings):
    model = with_checkpoints(models["a"], tmp_path / "model", [models["other_tok"]])
    params = {"batch_size": 5, "checkpoints": True, "sensitivity": False}
    assert score(model, suite, tmp_path / "all.parquet", params) == 0
    assert len(encodings) == 2
    both = pd.read_parquet(tmp_path / "all.parquet")
    assert score(models["other_tok"], suite, tmp_path / "alone.parquet", {**params, "checkpoints": False}) == 0
    alone = pd.read_parquet(tmp_path / "alone.parquet")
    ck = both[both.step == 5].reset_index(drop=True)
    cols = ["logp_good", "logp_bad", "ntok_good", "ntok_bad", "correct"]
    pd.testing.assert_frame_equal(ck[cols], alone[cols])
    # the two tokenizers cut the suite differently, so reusing the first one's ids would have been wrong
    assert not (ck.ntok_good.to_numpy() == both[both.final].ntok_good.to_numpy()).all()


def test_an_error_found_ahead_is_raised_as_without_the_thread(models, tmp_path, capsys):
    suite = tmp_path / "long"
    long = posh.generate(words.default_lexicon(), 1, seed=2)
    write_suite(suite, long, {"kind": "generated"})
    out = tmp_path / "s.parquet"
    assert score(models["short"], suite, out, {"batch_size": 5, "checkpoints": False}) == 1
    err = capsys.readouterr().err
    assert "longer than the model's context (12)" in err and "Traceback" not in err
    assert not out.exists()


def test_a_score_group_encodes_once_for_models_with_one_tokenizer(models, suite, tmp_path, encodings, monkeypatch):
    params = json.dumps({"batch_size": 5, "checkpoints": False, "sensitivity": False, "device": "cpu"})
    jobs = []
    for name in ("a", "b", "other_tok"):
        jobs += ["--job", str(models[name]), json.dumps({"seed": 1}), str(tmp_path / f"g_{name}.parquet")]
    assert main(["score-group", "--suite", str(suite), "--params", params, "--threads", "1", *jobs]) == 0
    assert len(encodings) == 2  # a and b share a tokenizer; other_tok has its own
    encodings.clear()
    no_sharing(monkeypatch)
    for name in ("a", "b", "other_tok"):
        assert main(["score", "--model", str(models[name]), "--suite", str(suite), "--params", params, "--meta",
                     json.dumps({"seed": 1}), "--threads", "1", "--out", str(tmp_path / f"s_{name}.parquet")]) == 0
        assert (tmp_path / f"g_{name}.parquet").read_bytes() == (tmp_path / f"s_{name}.parquet").read_bytes()
    assert len(encodings) == 3


def test_the_tokenizer_key_is_its_whole_serialisation(models, tmp_path):
    from transformers import AutoTokenizer

    key = scoring_prepare.tokenizer_key
    a = AutoTokenizer.from_pretrained(str(models["a"]))
    assert key(a) == key(AutoTokenizer.from_pretrained(str(models["b"])))
    edited = tmp_path / "edited"
    shutil.copytree(models["a"], edited)
    spec = json.loads((edited / "tokenizer.json").read_text())
    spec["model"]["merges"] = spec["model"]["merges"][:-1]  # one merge fewer
    (edited / "tokenizer.json").write_text(json.dumps(spec))
    assert key(AutoTokenizer.from_pretrained(str(edited))) != key(a)
