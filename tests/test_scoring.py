"""Scorer exactness (vs minicons), the first-word problem, batching, PLL chunking, CLI."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest
import torch

from povstim.benchmarks import posh, words
from povstim.benchmarks.suite import write_suite
from povstim.cli import main
from helpers import tiny_models as tiny
from povstim.scoring.items import COLUMNS, SENSITIVITY_COLUMNS, final_step
from povstim.scoring.scorer import Scorer, load

torch.set_num_threads(1)

SENTS = [
    "Is the boy who is smiling happy?",
    "The girl said that Tom likes himself.",
    "Who does Mary wanna go?",
    "When does Mary wanna go?",
    "Can the dog the girl saw run?",
    "Mary's dad likes himself.",
    "Hi.",
    "What did the boy who saw the girl like?",
]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    corpus = SENTS * 3 + [p.good for p in posh.generate(words.default_lexicon(), 20, seed=1)]
    causal = tiny.build(root / "gpt2", corpus, "causal", vocab_size=400, seed=1)
    masked = tiny.build(root / "roberta", corpus, "masked", vocab_size=400, seed=2)
    return {"causal": causal, "masked": masked}


def _minicons_masked(path):
    from minicons import scorer as mc

    m = mc.MaskedLMScorer(str(path), "cpu")
    # minicons 0.3.39 calls batch_encode_plus, which transformers 5 removed;
    # __call__ is its documented replacement with the same arguments.
    object.__setattr__(m.tokenizer, "batch_encode_plus", m.tokenizer.__call__)
    return m


def test_causal_sum_equals_minicons_with_bos(models):
    from minicons import scorer as mc

    lm, tok, kind = load(models["causal"])
    assert kind == "causal"
    ours = Scorer(lm, tok, kind, batch_size=3).score(SENTS)
    ref = mc.IncrementalLMScorer(str(models["causal"]), "cpu").sequence_score(
        SENTS, reduction=lambda x: x.sum(0).item(), bos_token=True)
    np.testing.assert_allclose(ours.logp, ref, atol=1e-4, rtol=0)
    # every token of the sentence is scored: as many as the tokenizer makes
    assert list(ours.ntok) == [len(tok(s, add_special_tokens=False)["input_ids"]) for s in SENTS]


def test_causal_without_bos_equals_minicons_default_and_mean(models):
    from minicons import scorer as mc

    lm, tok, kind = load(models["causal"])
    m = mc.IncrementalLMScorer(str(models["causal"]), "cpu")
    no_bos = Scorer(lm, tok, kind, bos=False).score(SENTS)
    ref = m.sequence_score(SENTS, reduction=lambda x: x.sum(0).item())
    np.testing.assert_allclose(no_bos.logp, ref, atol=1e-4, rtol=0)
    mean = Scorer(lm, tok, kind, reduction="mean").score(SENTS)
    ref_mean = m.sequence_score(SENTS, reduction=lambda x: x.mean(0).item(), bos_token=True)
    np.testing.assert_allclose(mean.logp, ref_mean, atol=1e-5, rtol=0)


def test_eos_adds_the_end_of_sentence_probability(models):
    lm, tok, kind = load(models["causal"])
    plain = Scorer(lm, tok, kind).score(SENTS)
    with_eos = Scorer(lm, tok, kind, eos=True).score(SENTS)
    assert list(with_eos.ntok) == list(plain.ntok + 1)
    for s, a, b in zip(SENTS, plain.logp, with_eos.logp):
        ids = torch.tensor([[tok.bos_token_id] + tok(s, add_special_tokens=False)["input_ids"]])
        with torch.no_grad():
            lp = torch.log_softmax(lm(input_ids=ids).logits[0, -1], -1)[tok.eos_token_id].item()
        assert b == pytest.approx(a + lp, abs=1e-4)


def test_pll_equals_minicons_with_chunking(models):
    lm, tok, kind = load(models["masked"])
    assert kind == "masked"
    ref = _minicons_masked(models["masked"]).sequence_score(SENTS, reduction=lambda x: x.sum(0).item())
    for batch in (1, 7, 500):  # rows per forward: chunks split and span sentences
        ours = Scorer(lm, tok, kind, method="pll", batch_size=batch).score(SENTS)
        np.testing.assert_allclose(ours.logp, ref, atol=1e-4, rtol=0)
    assert list(ours.ntok) == [len(tok(s)["input_ids"]) - 2 for s in SENTS]


def test_holistic_is_unmasked_whole_sentence_scoring(models):
    lm, tok, kind = load(models["masked"])
    ours = Scorer(lm, tok, kind, method="holistic", batch_size=3).score(SENTS)
    for s, got in zip(SENTS, ours.logp):
        ids = torch.tensor([tok(s)["input_ids"]])
        with torch.no_grad():
            lp = torch.log_softmax(lm(input_ids=ids).logits[0], -1)
        expect = sum(lp[j, ids[0, j]].item() for j in range(1, ids.shape[1] - 1))
        assert got == pytest.approx(expect, abs=1e-4)
    pll = Scorer(lm, tok, kind, method="pll").score(SENTS)
    assert not np.allclose(pll.logp, ours.logp)


def test_batching_and_duplicates_do_not_change_scores(models):
    lm, tok, kind = load(models["causal"])
    one = Scorer(lm, tok, kind, batch_size=1).score(SENTS).logp
    many = Scorer(lm, tok, kind, batch_size=64).score(SENTS + SENTS[::-1])
    np.testing.assert_allclose(many.logp[: len(SENTS)], one, atol=1e-5)
    np.testing.assert_allclose(many.logp[len(SENTS):], one[::-1], atol=1e-5)


def test_first_word_problem(tmp_path):
    """A pair that differs only in its first word: scoring the first token decides it
    correctly, leaving it unscored (minicons' default, as POSH used it) flips the verdict.

    The corpus makes "When" a frequent sentence start with many continuations and
    "Who" a rare one always followed by the same words: P(rest | Who) is high, but
    P(When ... ) > P(Who ...) overall because "Who" itself is improbable.
    """
    conts = ["is it", "can we go", "did you eat", "is lunch", "are we there", "does it start", "will he come",
             "can I play", "is the party", "do we leave", "was it", "should we stop", "could she sing",
             "would you run", "might it rain"]
    corpus = [f"When {c}?" for c in conts for _ in range(10)] + ["When does Mary wanna go?"] * 10
    corpus += ["Who does Mary wanna go?"] * 2
    path = tiny.build(tmp_path / "fw", corpus, "causal", vocab_size=400, layers=1, hidden=32, heads=2,
                      train_steps=300, lr=1e-2, seed=0)
    lm, tok, kind = load(path)
    good, bad = "When does Mary wanna go?", "Who does Mary wanna go?"
    with_bos = Scorer(lm, tok, kind, bos=True).score([good, bad]).logp
    without = Scorer(lm, tok, kind, bos=False).score([good, bad]).logp
    assert with_bos[0] > with_bos[1]  # correct when the first word is scored
    assert without[0] < without[1]  # wrong when it only conditions the rest


def _suite(tmp_path, n=4):
    out = tmp_path / "suite"
    write_suite(out, posh.generate(words.default_lexicon(), n, seed=2), {"kind": "generated"})
    return out


def test_score_cli_final_and_checkpoints(models, tmp_path):
    model = tmp_path / "model"
    shutil.copytree(models["causal"], model)
    shutil.copytree(models["causal"], model / "checkpoints" / "step10")
    shutil.copytree(models["masked"], model / "checkpoints" / "step5")  # a checkpoint of another kind is fine too
    (model / "checkpoints" / "step7").mkdir()  # no weights: not a checkpoint
    (model / "train_summary.json").write_text(json.dumps({"best_step": 10}))
    suite = _suite(tmp_path)
    out = tmp_path / "scores.parquet"
    params = {"reduction": "sum", "bos": True, "batch_size": 5, "checkpoints": True}
    meta = {"arch": "gpt2-tiny", "condition": "baby", "size": "50k", "seed": 2}
    rc = main(["score", "--model", str(model), "--suite", str(suite), "--params", json.dumps(params),
               "--meta", json.dumps(meta), "--out", str(out), "--device", "cpu"])
    assert rc == 0
    df = pd.read_parquet(out)
    assert list(df.columns) == COLUMNS + SENSITIVITY_COLUMNS  # scoring.sensitivity defaults to true
    n = 4 * 9
    assert len(df) == 3 * n
    assert df.groupby(["step", "final"]).size().to_dict() == {(5, False): n, (10, False): n, (10, True): n}
    assert set(df.arch) == {"gpt2-tiny"} and set(df["size"]) == {"50k"} and set(df.seed) == {2}
    assert (df.correct == (df.logp_good > df.logp_bad)).all()
    # the second (no-BOS) pass runs for the final model only; the masked checkpoint has no BOS setting
    assert df[df.final]["ntok_nobos_good"].gt(0).all() and df[~df.final]["sum_nobos_good"].isna().all()
    assert (df["sum_bos_good"] == df["logp_good"]).all()
    fin, ck = df[df.final], df[(~df.final) & (df.step == 10)]
    np.testing.assert_allclose(fin.logp_good.to_numpy(), ck.logp_good.to_numpy(), atol=1e-6)
    # same input -> byte-identical parquet
    out2 = tmp_path / "scores2.parquet"
    main(["score", "--model", str(model), "--suite", str(suite), "--params", json.dumps(params),
          "--meta", json.dumps(meta), "--out", str(out2), "--device", "cpu"])
    assert out.read_bytes() == out2.read_bytes()


def test_score_cli_by_hand_with_importer_format(models, tmp_path):
    f = tmp_path / "pairs.txt"  # POSH release format: bad, then good
    f.write_text("Who does Mary wanna go?\nWhen does Mary wanna go?\nHimself likes Mary's dad.\nMary's dad likes himself.\n")
    out = tmp_path / "s.parquet"
    assert main(["score", "--model", str(models["masked"]), "--suite", str(f), "--format", "posh",
                 "--mlm", "holistic", "--out", str(out)]) == 0
    df = pd.read_parquet(out)
    assert len(df) == 2 and df.arch.iloc[0] == "roberta" and df.step.iloc[0] == -1 and df.final.all()
    assert df.item_id.tolist() == ["0", "1"] and set(df.paradigm) == {"pairs"} and set(df.suite) == {"pairs"}
    assert (df.ntok_good > 0).all()


def test_ties_are_not_correct(tmp_path):
    corpus = tmp_path / "train.txt"
    corpus.write_text("the dog saw the cat .\nthe cat saw the dog .\n")
    suite = tmp_path / "s.jsonl"
    rows = [
        {"suite": "t", "paradigm": "p", "category": "c", "item_id": "1", "good": "the dog saw the cat .",
         "bad": "the cat saw the dog ."},  # same words: equal frequency sums
        {"suite": "t", "paradigm": "p", "category": "c", "item_id": "2", "good": "the dog saw the cat .",
         "bad": "zebra saw ."},
    ]
    suite.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "u.parquet"
    assert main(["score", "--baseline", "unigram", "--corpus", str(corpus), "--suite", str(suite),
                 "--out", str(out)]) == 0
    df = pd.read_parquet(out)
    assert df.logp_good.iloc[0] == df.logp_bad.iloc[0] and not df.correct.iloc[0]
    assert df.correct.iloc[1] and df.arch.iloc[0] == "unigram"


def test_final_step_sources(tmp_path):
    assert final_step(tmp_path) == -1
    (tmp_path / "train_log.jsonl").write_text('{"step": 3}\n{"step": 9, "loss": 1}\nnot json\n')
    assert final_step(tmp_path) == 9
    (tmp_path / "trainer_state.json").write_text(json.dumps({"global_step": 12}))
    assert final_step(tmp_path) == 12
    (tmp_path / "train_summary.json").write_text(json.dumps({"best_step": 4}))
    assert final_step(tmp_path) == 4


def test_score_cli_errors(models, tmp_path, capsys):
    suite = _suite(tmp_path, 1)
    out = str(tmp_path / "x.parquet")
    assert main(["score", "--model", str(tmp_path / "nope"), "--suite", str(suite), "--out", out]) == 1
    assert main(["score", "--model", str(models["causal"]), "--suite", str(suite), "--params",
                 '{"reduce": "sum"}', "--out", out]) == 1
    assert main(["score", "--model", str(models["causal"]), "--suite", str(tmp_path / "none.jsonl"),
                 "--out", out]) == 1
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"suite": "s", "paradigm": "p", "category": "c", "item_id": 1, "good": "A."}\n')
    assert main(["score", "--model", str(models["causal"]), "--suite", str(bad), "--out", out]) == 1
    err = capsys.readouterr().err
    assert f"model folder {tmp_path / 'nope'} does not exist" in err and "unknown config key 'scoring.reduce'" in err
    assert "does not exist" in err and "bad.jsonl, line 1: missing field(s) bad" in err
    assert not (tmp_path / "x.parquet").exists()


def test_any_causal_lm_via_the_full_head(models, tmp_path):
    """A model type without a split body/head path (GPT-Neo) runs the full model: same exactness."""
    from minicons import scorer as mc
    from transformers import AutoTokenizer, GPTNeoConfig, GPTNeoForCausalLM

    tok = AutoTokenizer.from_pretrained(models["causal"])
    torch.manual_seed(0)
    cfg = GPTNeoConfig(vocab_size=len(tok), max_position_embeddings=64, hidden_size=32, num_layers=2,
                       attention_types=[[["global", "local"], 1]], num_heads=2, window_size=8,
                       bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
    GPTNeoForCausalLM(cfg).save_pretrained(tmp_path / "neo")
    tok.save_pretrained(tmp_path / "neo")
    lm, tok2, kind = load(tmp_path / "neo")
    scorer = Scorer(lm, tok2, kind, batch_size=4)
    assert kind == "causal" and scorer.body is None
    ref = mc.IncrementalLMScorer(str(tmp_path / "neo"), "cpu").sequence_score(
        SENTS, reduction=lambda x: x.sum(0).item(), bos_token=True)
    np.testing.assert_allclose(scorer.score(SENTS).logp, ref, atol=1e-4, rtol=0)


def test_batch_ids_are_the_tokenizer_calls_ids(models):
    from transformers import AutoTokenizer

    from povstim.scoring.scorer import batch_ids

    texts = SENTS + ["", "  two  spaces ", "Ünïcödé café?", "<s> not special </s>", "x" * 300]
    for kind, special in (("causal", False), ("masked", True), ("masked", False)):
        tok = AutoTokenizer.from_pretrained(str(models[kind]))
        want = tok(texts, add_special_tokens=special)["input_ids"]
        assert batch_ids(tok, texts, special) == want
        # the masked model's special tokens frame each sentence only when asked for
        assert (want[0][0] == tok.cls_token_id) == (kind == "masked" and special)
        # a tokenizer.json that configures truncation: the call switches it off, so batch_ids does too
        tok.backend_tokenizer.enable_truncation(max_length=3)
        assert batch_ids(tok, texts, special) == want and max(map(len, want)) > 3


def test_checkpoints_asked_for_a_model_without_any_is_an_error(models, tmp_path, capsys):
    """`--checkpoints` on a folder without checkpoints: one line naming the folder (it used to score the final
    model with an INFO line); scoring.checkpoints from a config only warns, and scores the final model."""
    import shutil

    suite = _suite(tmp_path, 1)
    model = tmp_path / "model"
    shutil.copytree(models["causal"], model, ignore=shutil.ignore_patterns("checkpoints"))
    out = tmp_path / "x.parquet"
    capsys.readouterr()
    assert main(["score", "--model", str(model), "--suite", str(suite), "--checkpoints", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert f"--checkpoints: {model} has no checkpoints" in err and not out.exists()
