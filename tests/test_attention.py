"""povstim/attention.py: causal attention with no mask tensor where no padding precedes a real token
(packed training blocks: tests/test_train_gpu.py; right-padded scoring batches: here). Gold answers are
the masked path transformers takes by itself: same scores bit for bit on the CPU, minus its host sync."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

from helpers import tiny_models as tiny
from povstim import attention
from povstim.scoring import scorer as S
from povstim.scoring.fast import FastScorer
from test_train_gpu import _host_syncs

SENTENCES = ["the cat sleeps .", "a dog that the cats chase barks loudly .", "who left ?",
             "the children who the teacher praised sang a very long song yesterday .", "it rains ."]


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory):
    folder = tiny.build(tmp_path_factory.mktemp("gpt2"), SENTENCES * 20, "causal", vocab_size=300, train_steps=20)
    return S.load(str(folder))


@contextlib.contextmanager
def _masked(model, on=True):  # the scorer as it was: transformers' own mask
    yield False


@pytest.mark.parametrize("cls", [S.Scorer, FastScorer], ids=["Scorer", "FastScorer"])
def test_right_padded_causal_scores_equal_the_masked_path(gpt2, monkeypatch, cls):
    lm, tok, kind = gpt2
    # batch_size 3: batches mix lengths, so rows are padded
    new = cls(lm, tok, kind, bos=True, batch_size=3).score(SENTENCES)
    monkeypatch.setattr(S, "unmasked_causal", _masked)
    old = cls(lm, tok, kind, bos=True, batch_size=3).score(SENTENCES)
    assert np.array_equal(new.total, old.total) and np.array_equal(new.ntok, old.ntok)
    assert lm.config._attn_implementation == "sdpa"  # the caller's model is left as it was


def test_a_padded_scoring_forward_makes_no_host_sync(gpt2, monkeypatch):
    import torch

    lm, tok, kind = gpt2
    # as in povstim's models: a config that names the padding token, so transformers' forward checks for padding
    assert tok.pad_token_id is not None
    monkeypatch.setattr(lm.config, "pad_token_id", tok.pad_token_id)
    sc = S.Scorer(lm, tok, kind, bos=True)
    ids, mask = sc._pad([[1, 5, 6, 7], [1, 8]])
    rows, cols, targets = torch.tensor([0, 1]), torch.tensor([2, 0]), torch.tensor([7, 8])
    assert bool((mask == 0).any())  # really padded
    with torch.inference_mode():
        assert _host_syncs(lambda: sc._token_logprobs(ids, mask, rows, cols, targets)) == []
        monkeypatch.setattr(S, "unmasked_causal", _masked)
        # transformers turns tensors of the padding mask into Python bools (host syncs) while building its mask
        assert _host_syncs(lambda: sc._token_logprobs(ids, mask, rows, cols, targets)) == ["__bool__", "__bool__"]


def test_only_plain_sdpa_models_are_switched_and_always_switched_back(gpt2):
    lm = gpt2[0]
    with attention.unmasked_causal(lm) as switched:
        assert switched and lm.config._attn_implementation == attention.UNMASKED_CAUSAL
    assert lm.config._attn_implementation == "sdpa"
    with pytest.raises(RuntimeError):
        with attention.unmasked_causal(lm):
            raise RuntimeError("a failing forward")
    assert lm.config._attn_implementation == "sdpa"
    with attention.unmasked_causal(lm, on=False) as switched:
        assert not switched and lm.config._attn_implementation == "sdpa"
    lm.config._attn_implementation = "eager"  # e.g. TPT's attention maps: not plain SDPA, left alone
    try:
        with attention.unmasked_causal(lm) as switched:
            assert not switched and lm.config._attn_implementation == "eager"
    finally:
        lm.config._attn_implementation = "sdpa"
