"""Corpus baselines: BabyBERTa word frequency and interpolated Kneser-Ney n-grams."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from povstim.cli import main
from povstim.io import PovstimError
from povstim.scoring.baselines import EOS, KneserNey, UnigramFrequency, train_baseline, words

CORPUS = [
    "The boy saw the girl.",
    "The girl saw the dog.",
    "The dog chased the boy.",
    "Mary likes the dog.",
    "The boy likes Mary.",
]


@pytest.mark.parametrize("order", [1, 2, 3, 4])
def test_kneser_ney_is_a_distribution(order):
    lm = KneserNey([words(s) for s in CORPUS], order=order)
    for history in [(), ("the",), ("<s>", "the"), ("saw", "the"), ("zebra", "quux"), ("the", "boy", "saw")]:
        h = history[len(history) - (order - 1):] if order > 1 else ()
        total = sum(lm.prob(w, h) for w in lm.vocab) + lm.prob("<unk-word>", h)
        # every unknown word gets the same mass; the vocabulary plus one unknown sums to 1
        assert total == pytest.approx(1.0, abs=1e-9), (order, history)
    assert lm.prob("zebra", ()) > 0


def test_kneser_ney_prefers_attested_order_and_counts_end_of_sentence():
    lm = KneserNey([words(s) for s in CORPUS], order=3)
    good, bad = lm.score(["The boy saw the girl.", "Boy the the saw girl."]).logp
    assert good > bad
    s = lm.score(["The dog."])
    assert s.ntok[0] == 4  # the, dog, ., </s>
    manual = sum(math.log(lm.prob(w, h)) for w, h in [
        ("the", ("<s>", "<s>")), ("dog", ("<s>", "the")), (".", ("the", "dog")), (EOS, ("dog", "."))])
    assert s.logp[0] == pytest.approx(manual)


def test_unigram_is_the_sum_of_word_frequencies():
    lm = UnigramFrequency([words(s) for s in CORPUS])
    total = sum(len(words(s)) for s in CORPUS)
    (score,) = lm.score(["The dog."]).logp
    assert score == pytest.approx((8 + 3 + 5) / total)  # the x8, dog x3, "." x5


def test_baseline_cli_and_errors(tmp_path):
    corpus = tmp_path / "train.txt"
    corpus.write_text("\n".join(CORPUS) + "\n")
    suite = tmp_path / "s.jsonl"
    suite.write_text(json.dumps({"suite": "t", "paradigm": "order", "category": "c", "item_id": "a",
                                 "good": "The girl saw the boy.", "bad": "The girl the boy saw."}) + "\n")
    out = tmp_path / "n.parquet"
    meta = json.dumps({"arch": "ngram-3", "condition": "baby", "size": "50k", "seed": 1})
    assert main(["score", "--baseline", "ngram", "--corpus", str(corpus), "--suite", str(suite),
                 "--meta", meta, "--out", str(out)]) == 0
    df = pd.read_parquet(out)
    assert df.correct.tolist() == [True] and df.arch.tolist() == ["ngram-3"] and df.final.all()
    assert main(["score", "--baseline", "ngram", "--suite", str(suite), "--out", str(out)]) == 1
    assert main(["score", "--baseline", "ngram", "--model", "x", "--corpus", str(corpus), "--suite", str(suite),
                 "--out", str(out)]) == 1
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with pytest.raises(PovstimError, match="baseline corpus .*empty.txt is empty"):
        train_baseline("unigram", [empty])

