"""The n-gram learner in the grid: scoring/baselines.py's Kneser-Ney against probabilities
computed by hand on a toy corpus, and the plan's one model per arch x condition x size."""

from __future__ import annotations

import math

import pytest

from povstim import families, plan
from povstim.scoring.baselines import KneserNey, words

# Toy corpus "a b" / "b a", order 2, discount 0.75. Padded: <s> a b </s>, <s> b a </s>.
# Bigram counts: (<s>,a) (a,b) (b,</s>) (<s>,b) (b,a) (a,</s>), each 1.
# Unigram continuation counts N1+(. w): a 2, b 2, </s> 2; total 6 over 3 types; uniform floor 1/(3 + 1).
# p1(w) = (2 - .75)/6 + .75 * 3/6 * 1/4 = 0.3020833...
# p(b | a) = (1 - .75)/2 + .75 * 2/2 * p1(b) = 0.125 + 0.75 * 0.3020833 = 0.3515625
# p(a | a) = 0 + 0.75 * p1(a) = 0.2265625;  p(unk | a) = 0.75 * (.75 * 3/6 * 1/4) = 0.0703125
P1 = (2 - 0.75) / 6 + 0.75 * 3 / 6 / 4
P_SEEN = 0.25 / 2 + 0.75 * P1


@pytest.fixture
def toy():
    return KneserNey([words("a b"), words("b a")], order=2, discount=0.75)


def test_kneser_ney_matches_hand_computed_probabilities(toy):
    assert P1 == pytest.approx(0.30208333333)
    assert toy.prob("b", ("a",)) == pytest.approx(0.3515625, abs=1e-12)
    assert toy.prob("a", ("<s>",)) == pytest.approx(P_SEEN, abs=1e-12)
    assert toy.prob("</s>", ("b",)) == pytest.approx(P_SEEN, abs=1e-12)
    assert toy.prob("a", ("a",)) == pytest.approx(0.2265625, abs=1e-12)
    assert toy.prob("zebra", ("a",)) == pytest.approx(0.0703125, abs=1e-12)
    # a distribution over the vocabulary and the unknown word
    assert sum(toy.prob(w, ("a",)) for w in ("a", "b", "</s>", "zebra")) == pytest.approx(1.0, abs=1e-12)
    s = toy.score(["a b", "a a"])
    assert s.logp[0] == pytest.approx(3 * math.log(0.3515625), abs=1e-12)  # p(a|<s>) p(b|a) p(</s>|b)
    assert s.logp[1] == pytest.approx(math.log(P_SEEN) + math.log(0.2265625) + math.log(P_SEEN), abs=1e-12)
    assert list(s.ntok) == [3, 3]  # two words and the end of the sentence


def _config(seeds=(1, 2, 3)):
    return {"seeds": list(seeds), "sizes": ["50k", "150k"],
            "conditions": {"baby-f": {"from": "baby"}, "wiki": {"from": "wiki", "sizes": ["50k"]}},
            "archs": {"gpt2-tiny": {"family": "gpt2"}, "lstm-tiny": {"family": "lstm"},
                      "ngram3": {"family": "kneser-ney", "order": 3}, "ngram5": {"family": "kneser-ney", "order": 5,
                                                                                  "conditions": ["wiki"]}}}


def test_the_plan_trains_no_ngram_and_scores_one_per_condition_and_size():
    cfg = _config(seeds=(7, 2, 3))
    trained = plan.models(cfg)
    assert {m.arch for m in trained} == {"gpt2-tiny", "lstm-tiny"} and len(trained) == 2 * 3 * 3
    corpus = plan.corpus_models(cfg)
    assert [(m.arch, m.condition, m.size, m.seed) for m in corpus] == [
        ("ngram3", "baby-f", "50k", 7), ("ngram3", "baby-f", "150k", 7), ("ngram3", "wiki", "50k", 7),
        ("ngram5", "wiki", "50k", 7)]  # the first seed: the rows join an existing seed group
    assert plan.scored_models(cfg) == trained + corpus
    assert plan.corpus_model_order(cfg, "ngram5") == 5 and plan.corpus_model_order(
        {"archs": {"n": {"family": "kneser-ney"}}}, "n") == 3


def test_the_lstm_gpu_memory_estimate_reads_transformer_sizes():
    cfg = {**_config(), "training": {"context": 64, "batch_size": 16}, "tokenizer": {"vocab_size": 2048}}
    sizes = plan._arch_sizes(cfg, "lstm-tiny")
    lstm = families.resolve_arch({"family": "lstm"})
    assert sizes["n_embd"] == max(lstm["n_embd"], lstm["n_hidden"]) and sizes["n_head"] == 1
    assert plan.train_memory_gb(cfg, "lstm-tiny") > 0 and plan.score_memory_gb(cfg, "lstm-tiny") > 0
