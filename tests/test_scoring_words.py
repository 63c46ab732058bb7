"""Word- and region-level scores: per-word surprisal, critical regions, SLOR and within-word l2r PLL.

Each metric is compared with minicons' value on the same tiny GPT-2 / RoBERTa where minicons has one
(``IncrementalLMScorer.word_score_tokenized`` / ``token_score``, ``MaskedLMScorer`` with ``PLL_metric``), else with
a value computed by hand in the test (regions by character span, SLOR).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
import torch

from helpers import tiny_models as tiny
from povstim.benchmarks import posh, words as lexicon
from povstim.benchmarks.suite import read_suite
from povstim.io import PovstimError
from povstim.scoring import words as W
from povstim.scoring.fast import FastScorer
from povstim.scoring.items import COLUMNS, SENSITIVITY_COLUMNS
from povstim.scoring.prepare import prepare
from povstim.scoring.run import ScoringSettings, score_model, unigram_for
from povstim.scoring.scorer import Scorer, load
from povstim.scoring.tree import TreeScorer
from povstim.settings import build

torch.set_num_threads(1)

# single spaces between words (minicons' word_score_tokenized re-joins the words with one space); words of
# several tokens ("smiling", "zyxwv"), punctuation attached to a word ("happy?"), a one-word sentence
SENTS = [
    "Is the boy who is smiling happy?",
    "The girl said that Tom likes himself.",
    "Who does Mary wanna go?",
    "Mary's dad likes zyxwv himself.",
    "Hi.",
]

PAIRS = [
    {"suite": "t", "paradigm": "binding", "category": "c", "item_id": "1",
     "good": "The girl said that Tom likes himself.", "bad": "The girl said that Tom likes herself.",
     "region": {"good": [29, 37], "bad": [29, 37]}},  # "himself." / "herself." by characters
    {"suite": "t", "paradigm": "binding", "category": "c", "item_id": "2",
     "good": "When does Mary wanna go?", "bad": "Who does Mary wanna go?",
     "region": {"unit": "words", "good": [0, 2], "bad": [0, 2]}},  # "When does" / "Who does" by words
]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    corpus = SENTS * 3 + [p.good for p in posh.generate(lexicon.default_lexicon(), 20, seed=1)]
    return {"causal": tiny.build(root / "gpt2", corpus, "causal", vocab_size=400, seed=1),
            "masked": tiny.build(root / "roberta", corpus, "masked", vocab_size=400, seed=2)}


def _minicons_masked(path):
    from minicons import scorer as mc

    m = mc.MaskedLMScorer(str(path), "cpu")
    # minicons 0.3.39 calls batch_encode_plus, which transformers 5 removed (as tests/test_scoring.py)
    object.__setattr__(m.tokenizer, "batch_encode_plus", m.tokenizer.__call__)
    return m


def _settings(**given):
    return build(ScoringSettings, "scoring", {"checkpoints": False, "device": "cpu", **given})


def _by_ws_words(tok, sentence, token_scores):
    """Sum per-token scores (the sentence's tokens in order, specials left out) over whitespace words, grouping
    by the byte-level BPE marks (a token starting with Ġ starts a word): independent of the offsets povstim
    reads."""
    toks = tok.convert_ids_to_tokens(tok(sentence, add_special_tokens=False)["input_ids"])
    assert len(toks) == len(token_scores)
    out = []
    for t, s in zip(toks, token_scores):
        if t.startswith("Ġ") or not out:
            out.append(0.0)
        out[-1] += s
    assert len(out) == len(sentence.split())
    return out


def _word_logp(scorer, tok, sentences):
    out = W.word_scores(scorer, sentences)
    assert [[w for w, _ in ws] for ws in out] == [s.split() for s in sentences]
    return [np.array([v for _, v in ws]) for ws in out]


# --------------------------------------------------------------------------- per-word surprisal

def test_causal_words_with_bos_equal_minicons_word_score_tokenized(models):
    from minicons import scorer as mc

    lm, tok, kind = load(models["causal"])
    ref = mc.IncrementalLMScorer(str(models["causal"]), "cpu").word_score_tokenized(
        SENTS, tokenize_function=str.split, bos_token=True)
    for cls in (TreeScorer, FastScorer):
        ours = _word_logp(cls(lm, tok, kind, bos=True, batch_size=3), tok, SENTS)
        for s, got, want in zip(SENTS, ours, ref):
            assert [w for w, _ in want] == s.split()
            np.testing.assert_allclose(got, [v for _, v in want], atol=1e-4, rtol=0)


def test_causal_words_without_bos_equal_minicons_token_scores_and_the_first_word_has_none(models):
    """minicons' word_score_tokenized without BOS sums each word's span one token off (its scores start at the
    second token), so the reference is its token_score, summed over the words; the first word's first token
    is not predicted, so povstim gives that word no surprisal (null), not a part of one."""
    from minicons import scorer as mc

    lm, tok, kind = load(models["causal"])
    ref = mc.IncrementalLMScorer(str(models["causal"]), "cpu").token_score(SENTS, bos_token=False)
    ours = _word_logp(TreeScorer(lm, tok, kind, bos=False), tok, SENTS)
    for s, got, want in zip(SENTS, ours, ref):
        assert want[0][1] == 0.0  # minicons' placeholder for the unscored first token
        expect = _by_ws_words(tok, s, [v for _, v in want])
        assert np.isnan(got[0])
        np.testing.assert_allclose(got[1:], expect[1:], atol=1e-4, rtol=0)


@pytest.mark.parametrize("method,metric", [("pll", "original"), ("pll_word_l2r", "within_word_l2r")])
def test_masked_words_equal_minicons_token_scores(models, method, metric):
    lm, tok, kind = load(models["masked"])
    ref = _minicons_masked(models["masked"]).token_score(SENTS, PLL_metric=metric)
    ours = _word_logp(FastScorer(lm, tok, kind, method=method, batch_size=7), tok, SENTS)
    for s, got, want in zip(SENTS, ours, ref):
        np.testing.assert_allclose(got, _by_ws_words(tok, s, [v for _, v in want]), atol=1e-4, rtol=0)


def test_words_columns_are_opt_in_and_leave_the_sentence_columns_alone(models):
    pairs = [{k: v for k, v in p.items() if k != "region"} for p in PAIRS]
    for model in (models["causal"], models["masked"]):
        plain = score_model(pairs, str(model), _settings(), {"arch": "x"})
        assert list(plain.columns) == COLUMNS + SENSITIVITY_COLUMNS
        with_words = score_model(pairs, str(model), _settings(words=True), {"arch": "x"})
        assert list(with_words.columns) == COLUMNS + SENSITIVITY_COLUMNS + [
            "words_good", "words_bad", "word_surprisal_good", "word_surprisal_bad"]
        pd.testing.assert_frame_equal(with_words[plain.columns], plain)  # the same numbers, bit for bit
        words = json.loads(with_words["words_bad"][1])
        surprisal = json.loads(with_words["word_surprisal_bad"][1])
        assert words == ["Who", "does", "Mary", "wanna", "go?"] and len(surprisal) == 5
        # a word's surprisals add up to the sentence's (every token belongs to a word; BOS / specials to none)
        assert sum(surprisal) == pytest.approx(-with_words["sum_bos_bad"][1], abs=1e-4)


def test_token_words_follow_offsets_through_double_spaces_and_unmerged_words(models):
    """Byte-level BPE writes a word's leading space into its first token; a token of whitespace only (the second
    of two spaces, a lone Ġ before a word that does not merge with it) belongs to the word after it."""
    for model, special in ((models["causal"], False), (models["masked"], True)):
        lm, tok, kind = load(model)
        sc = FastScorer(lm, tok, kind, bos=True)
        s = "Mary's dad  likes zyxwv himself."
        p = prepare(tok, sc.framing, [s])
        got = W.token_words(tok, p.framing, [s], p.ids)[0]
        pieces = tok.convert_ids_to_tokens(p.ids[0])
        tokens_of = {}
        for piece, x in zip(pieces, got):
            tokens_of.setdefault(s.split()[x] if x >= 0 else None, []).append(piece)
        # each word's tokens spell it (a lone Ġ of the double space joins "likes", one before an unmerged word
        # joins it), and they are contiguous and in order
        for word in s.split():
            assert "".join(tokens_of[word]).replace("Ġ", "") == word
        assert list(got[got >= 0]) == sorted(got[got >= 0])
        assert tokens_of["likes"][0] == "Ġ"  # the second space
        # BOS (causal) and <s> </s> (masked) belong to no word
        assert tokens_of[None] == ([tok.bos_token] if not special else [tok.cls_token, tok.sep_token])


# --------------------------------------------------------------------------- within-word l2r PLL

def test_pll_word_l2r_sentence_scores_equal_minicons(models):
    lm, tok, kind = load(models["masked"])
    m = _minicons_masked(models["masked"])
    ref = m.sequence_score(SENTS, reduction=lambda x: x.sum(0).item(), PLL_metric="within_word_l2r")
    plain = m.sequence_score(SENTS, reduction=lambda x: x.sum(0).item())
    for cls in (Scorer, FastScorer, TreeScorer):
        for batch in (1, 7, 500):  # rows per forward: chunks split and span sentences
            ours = cls(lm, tok, kind, method="pll_word_l2r", batch_size=batch).score(SENTS)
            np.testing.assert_allclose(ours.logp, ref, atol=1e-4, rtol=0)
    assert not np.allclose(ref, plain, atol=1e-4)  # the multi-token words change it
    # the same through a score job (scoring.mlm: pll_word_l2r)
    df = score_model([{k: v for k, v in p.items() if k != "region"} for p in PAIRS], str(models["masked"]),
                     _settings(mlm="pll_word_l2r", sensitivity=False), {"arch": "x"})
    ref_pairs = m.sequence_score([p["good"] for p in PAIRS] + [p["bad"] for p in PAIRS],
                                 reduction=lambda x: x.sum(0).item(), PLL_metric="within_word_l2r")
    np.testing.assert_allclose(list(df["logp_good"]) + list(df["logp_bad"]), ref_pairs, atol=1e-4, rtol=0)


def test_pll_word_l2r_masks_the_words_tokens_to_the_right():
    ids = np.array([0, 5, 6, 7, 8, 9, 2])  # <s> w0 w1 w1 w1 w2 </s>
    word_ids = np.array([-1, 0, 1, 1, 1, 2, -1])
    assert W.l2r_until(word_ids, [1, 2, 3, 4, 5]) == [2, 5, 5, 5, 6]
    assert len(ids) == len(word_ids)


# --------------------------------------------------------------------------- regions

def _causal_token_logprobs(lm, tok, sentence):
    """log p of every token of ``sentence`` after BOS, by plain torch (the hand computation)."""
    ids = torch.tensor([[tok.bos_token_id] + tok(sentence, add_special_tokens=False)["input_ids"]])
    with torch.no_grad():
        lp = torch.log_softmax(lm(input_ids=ids).logits[0].double(), -1)
    return [lp[j - 1, ids[0, j]].item() for j in range(1, ids.shape[1])], \
        tok.convert_ids_to_tokens(ids[0, 1:].tolist())


def test_region_by_characters_is_the_hand_computed_sum_and_mean(models):
    lm, tok, kind = load(models["causal"])
    item, hand = PAIRS[0], {}
    for side in ("good", "bad"):
        lp, pieces = _causal_token_logprobs(lm, tok, item[side])
        # the region [29, 37) is "himself." / "herself.": the tokens with a letter in it, read from the pieces
        # (the pieces spell " " + the sentence: add_prefix_space)
        text = "".join(pieces).replace("Ġ", " ")
        assert text == " " + item[side]
        keep, at = [], 0
        for k, piece in enumerate(pieces):
            if any(not text[c].isspace() and 29 <= c - 1 < 37 for c in range(at, at + len(piece))):
                keep.append(k)
            at += len(piece)
        assert "".join(pieces[k] for k in keep).replace("Ġ", "") == item[side][29:37]
        hand[side] = (sum(lp[k] for k in keep), len(keep))
    for reduction in ("sum", "mean"):
        df = score_model(PAIRS[:1], str(models["causal"]), _settings(metric="region", reduction=reduction),
                         {"arch": "x"})
        for side in ("good", "bad"):
            total, n = hand[side]
            assert df[f"ntok_{side}"][0] == n
            assert df[f"logp_{side}"][0] == pytest.approx(total / n if reduction == "mean" else total, abs=1e-4)
        assert df["correct"][0] == (df["logp_good"][0] > df["logp_bad"][0])


def test_region_by_words_equals_minicons_word_scores(models):
    from minicons import scorer as mc

    item = PAIRS[1]
    sents = [item["good"], item["bad"]]
    ref = mc.IncrementalLMScorer(str(models["causal"]), "cpu").word_score_tokenized(
        sents, tokenize_function=str.split, bos_token=True)
    df = score_model([item], str(models["causal"]), _settings(metric="region"), {"arch": "x"})
    for side, words in zip(("good", "bad"), ref):
        a, b = item["region"][side]
        assert df[f"logp_{side}"][0] == pytest.approx(sum(v for _, v in words[a:b]), abs=1e-4)
    # the sentence sums stay in the sensitivity columns, unchanged by the metric
    plain = score_model([item], str(models["causal"]), _settings(), {"arch": "x"})
    pd.testing.assert_frame_equal(df[SENSITIVITY_COLUMNS], plain[SENSITIVITY_COLUMNS])


def test_region_of_a_masked_model_sums_its_pll_tokens(models):
    lm, tok, kind = load(models["masked"])
    ref = _minicons_masked(models["masked"]).token_score([PAIRS[1]["good"]])[0]
    df = score_model(PAIRS[1:], str(models["masked"]), _settings(metric="region"), {"arch": "x"})
    words = _by_ws_words(tok, PAIRS[1]["good"], [v for _, v in ref])
    assert df["logp_good"][0] == pytest.approx(sum(words[0:2]), abs=1e-4)


def test_region_errors_name_the_suite_file_and_item(models, tmp_path):
    bad = dict(PAIRS[0], region={"good": [29, 80], "bad": [29, 37]})
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "binding.jsonl").write_text(json.dumps(bad) + "\n")
    with pytest.raises(PovstimError, match=r"binding\.jsonl, line 1 \(item '1'\): region\.good \[29, 80\) is "
                                           r"outside the good sentence \(37 characters"):
        read_suite(suite)
    with pytest.raises(PovstimError, match=r"suite t, file binding\.jsonl, item '1': region\.good"):
        score_model([bad], str(models["causal"]), _settings(metric="region"), {"arch": "x"})
    words = dict(PAIRS[1], region={"unit": "words", "good": [0, 6], "bad": [0, 2]})
    with pytest.raises(PovstimError, match=r"item '2': region\.good \[0, 6\) is outside the good sentence \(5 words"):
        score_model([words], str(models["causal"]), _settings(metric="region"), {"arch": "x"})
    none = {k: v for k, v in PAIRS[0].items() if k != "region"}
    with pytest.raises(PovstimError, match=r"item '1': scoring\.metric: region needs a 'region' field"):
        score_model([none], str(models["causal"]), _settings(metric="region"), {"arch": "x"})
    # without BOS the first token is not scored: a region of only that has nothing to compare
    first = dict(PAIRS[1], region={"unit": "chars", "good": [0, 1], "bad": [0, 1]})
    with pytest.raises(PovstimError, match=r"item '2': the region of the good sentence holds no scored token"):
        score_model([first], str(models["causal"]), _settings(metric="region", bos=False), {"arch": "x"})
    # old suites (no region) stay valid
    (suite / "binding.jsonl").write_text(json.dumps(none) + "\n")
    assert read_suite(suite)[0]["good"] == PAIRS[0]["good"]


def test_unknown_metric_and_mlm_name_the_key():
    with pytest.raises(PovstimError, match=r"'scoring\.metric': 'surprisal' is not one of"):
        _settings(metric="surprisal")
    with pytest.raises(PovstimError, match=r"'scoring\.mlm'"):
        _settings(mlm="within_word")
    with pytest.raises(PovstimError, match=r"scoring\.mlm must be one of pll, pll_word_l2r, holistic"):
        Scorer.__init__(object.__new__(Scorer), None, None, "masked", method="l2r")


# --------------------------------------------------------------------------- SLOR

def test_slor_is_the_hand_computed_value(models, tmp_path):
    corpus = tmp_path / "train.txt"
    corpus.write_text("the girl said that tom likes himself .\nwho does mary like ?\nthe girl .\n")
    # by hand: 16 word tokens, 13 types; add-one: p(w) = (c + 1) / (16 + 13 + 1)
    counts = {"the": 2, "girl": 2, "said": 1, "that": 1, "tom": 1, "likes": 1, "himself": 1, ".": 2, "who": 1,
              "does": 1, "mary": 1, "like": 1, "?": 1}
    total, types = sum(counts.values()), len(counts)
    assert (total, types) == (16, 13)
    item = {k: v for k, v in PAIRS[0].items() if k != "region"}
    settings = _settings(metric="slor")
    df = score_model([item], str(models["causal"]), settings, {"arch": "x"}, unigram=unigram_for(settings, [corpus]))
    for side in ("good", "bad"):
        ws = item[side].lower().replace(".", " .").split()
        uni = sum(math.log((counts.get(w, 0) + 1) / (total + types + 1)) for w in ws)
        model_logp = df[f"sum_bos_{side}"][0]  # the model's summed log-probability of the sentence
        assert df[f"logp_{side}"][0] == pytest.approx((model_logp - uni) / len(ws), abs=1e-9)
    with pytest.raises(PovstimError, match=r"slor needs the condition's unigram model: pass --corpus"):
        score_model([item], str(models["causal"]), settings, {"arch": "x"})


def test_metrics_apply_to_minimal_pairs_only(models):
    item = {"suite": "t", "paradigm": "p", "category": "c", "item_id": "1", "task": "multiple_choice",
            "stimulus": "the dog", "connective": "that is", "options": ["a dog", "a cat"], "answer": "a dog"}
    with pytest.raises(PovstimError, match=r"scoring\.words: true applies to minimal pairs"):
        score_model([item], str(models["causal"]), _settings(words=True), {"arch": "x"})


def test_pll_word_l2r_scores_multiple_choice_sentences_and_refuses_the_option_metric(models):
    item = {"suite": "t", "paradigm": "p", "category": "c", "item_id": "1", "task": "multiple_choice",
            "stimulus": "the dog runs", "connective": "that is", "options": ["a dog runs", "a cat sleeps"],
            "answer": "a dog runs"}
    strings = ["the dog runs that is a dog runs", "the dog runs that is a cat sleeps"]
    ref = _minicons_masked(models["masked"]).sequence_score(strings, reduction=lambda x: x.mean(0).item(),
                                                             PLL_metric="within_word_l2r")
    df = score_model([item], str(models["masked"]), _settings(mlm="pll_word_l2r"), {"arch": "x"})
    assert df["logp_good"][0] == pytest.approx(ref[0], abs=1e-4)  # the answer's mean log-probability
    assert df["logp_bad"][0] == pytest.approx(ref[1], abs=1e-4)
    with pytest.raises(PovstimError, match=r"pll_word_l2r needs the words of whole sentences"):
        score_model([item], str(models["masked"]), _settings(mlm="pll_word_l2r", multiple_choice={"metric": "option"}),
                    {"arch": "x"})


def test_importers_carry_a_region_and_keep_other_region_columns(tmp_path):
    from povstim.benchmarks.importers import import_suite

    (tmp_path / "mine.jsonl").write_text(json.dumps({"ok": "Tom likes himself.", "star": "Tom likes herself.",
                                                     "region": {"good": [10, 18], "bad": [10, 18]}}) + "\n")
    pairs = import_suite("jsonl", tmp_path / "mine.jsonl", "mine", {"good": "ok", "bad": "star"})
    assert pairs[0].to_json()["region"] == {"good": [10, 18], "bad": [10, 18]}
    (tmp_path / "mine.csv").write_text('good,bad,region\nTom likes himself.,Tom likes herself.,'
                                       '"{""unit"": ""words"", ""good"": [2, 3], ""bad"": [2, 3]}"\n')
    assert import_suite("csv", tmp_path / "mine.csv", "mine")[0].to_json()["region"]["unit"] == "words"
    (tmp_path / "out.csv").write_text('good,bad,region\nTom likes himself.,Tom likes herself.,'
                                      '"{""good"": [10, 19], ""bad"": [10, 18]}"\n')
    with pytest.raises(PovstimError, match=r"out\.csv, row 2 \(item '2'\): region\.good \[10, 19\) is outside"):
        import_suite("csv", tmp_path / "out.csv", "mine")
    # a column that happens to be called region (a dialect, say) is another field, kept as it was
    (tmp_path / "geo.csv").write_text("good,bad,region\nTom likes himself.,Tom likes herself.,north\n")
    assert import_suite("csv", tmp_path / "geo.csv", "mine")[0].to_json()["region"] == "north"
