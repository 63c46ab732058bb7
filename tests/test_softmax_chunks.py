"""On a CPU the scorers compute the vocabulary logits and their log-softmax a chunk of outputs at a time
(Scorer._token_logprobs, ``scorer.SOFTMAX_CHUNK``). Each row's log-softmax is the same function of its logits;
only the head's matrix product may round differently when it has fewer rows (a one-row product is summed in
another order), so chunked scores equal the whole matrix's to fp32 rounding. Scorer and FastScorer chunk
their identical batches alike, so they stay equal byte for byte, and a run repeats its bytes. Checked with
chunks of a few outputs, which the real 16-MB chunks only reach with big vocabularies."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from helpers import tiny_models as tiny
from povstim.benchmarks import posh, words
from povstim.scoring import scorer as scorer_module
from povstim.scoring import tree
from povstim.scoring.fast import FastScorer
from povstim.scoring.scorer import Scorer, load
from povstim.scoring.tree import TreeScorer

torch.set_num_threads(1)

PAIRS = posh.generate(words.default_lexicon(), 6, seed=7)
SENTS = sorted({s for p in PAIRS for s in (p.good, p.bad)})
WHOLE = 1 << 60  # one chunk, whatever the batch


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    return tiny.causal_and_masked(tmp_path_factory.mktemp("models"), SENTS * 2, train_steps=20, vocab_size=300)


def _scores(monkeypatch, chunk, make):
    monkeypatch.setattr(scorer_module, "SOFTMAX_CHUNK", chunk)
    return make().score(SENTS).total


@pytest.mark.parametrize("case", ["Scorer", "FastScorer", "TreeScorer rows 4", "TreeScorer rows 256",
                                  "FastScorer pll", "Scorer pll", "FastScorer holistic"])
def test_chunks_give_the_whole_matrix_numbers(models, monkeypatch, case):
    name, _, rest = case.partition(" ")
    kind_name = "masked" if rest in ("pll", "holistic") else "causal"
    lm, tok, kind = load(models[kind_name])
    if rest.startswith("rows"):
        monkeypatch.setattr(tree, "ROW_NODES", int(rest.split()[1]))
    cls = {"Scorer": Scorer, "FastScorer": FastScorer, "TreeScorer": TreeScorer}[name]
    opts = {"method": rest} if kind_name == "masked" else {}

    def make():
        return cls(lm, tok, kind, batch_size=8, **opts)

    vocab = lm.config.vocab_size
    whole = _scores(monkeypatch, WHOLE, make)
    for per in (1, 3):  # outputs per chunk: one, and chunk ends falling anywhere in a batch
        chunked = _scores(monkeypatch, per * vocab, make)
        assert make()._softmax_rows(50) == per
        np.testing.assert_allclose(chunked, whole, atol=2e-5, rtol=0, err_msg=f"{case}, {per} per chunk")
        assert _scores(monkeypatch, per * vocab, make).tobytes() == chunked.tobytes()  # reproducible
        if per == 3 and name == "FastScorer":  # FastScorer is Scorer's numbers, chunked alike
            reference = _scores(monkeypatch, per * vocab, lambda: Scorer(lm, tok, kind, batch_size=8, **opts))
            assert chunked.tobytes() == reference.tobytes()


def test_chunk_size_follows_the_vocabulary_on_a_cpu_and_is_everything_on_a_gpu(models):
    lm, tok, kind = load(models["causal"])
    vocab = lm.config.vocab_size
    assert Scorer(lm, tok, kind)._softmax_rows(10**6) == scorer_module.SOFTMAX_CHUNK // vocab
    assert Scorer(lm, tok, kind)._softmax_rows(3) >= 3  # a small batch: one chunk
    # a GPU runs one big kernel instead (the scorer only reads its device name here; no CUDA is touched)
    assert Scorer(lm, tok, kind, device="cuda:0")._softmax_rows(10**6) == 10**6


def test_a_tree_chunk_needs_its_targets_sorted_by_output(models, monkeypatch):
    lm, tok, kind = load(models["causal"])
    monkeypatch.setattr(scorer_module, "SOFTMAX_CHUNK", lm.config.vocab_size)  # one output per chunk
    s = Scorer(lm, tok, kind)
    ids = torch.tensor([[0, 5, 6, 7]])
    rows, cols = torch.zeros(2, dtype=torch.long), torch.tensor([0, 1])
    with torch.inference_mode():
        got = s._token_logprobs(ids, None, rows, cols, torch.tensor([5, 6, 6]), position_ids=torch.arange(4)[None],
                                which=torch.tensor([0, 1, 1]))
        ref = torch.log_softmax(lm(ids).logits[0, :2].float(), -1)  # outputs 0 and 1, whole
        torch.testing.assert_close(got, torch.stack([ref[0, 5], ref[1, 6], ref[1, 6]]), atol=2e-5, rtol=0)
        with pytest.raises(ValueError, match="sorted"):
            s._token_logprobs(ids, None, rows, cols, torch.tensor([6, 5]), position_ids=torch.arange(4)[None],
                              which=torch.tensor([1, 0]))
