"""Prefix-tree scoring (scoring/tree.py, ``scoring.share_prefixes``): each shared prefix fed once, the
reference scorer's sums to fp32 rounding, and minicons' within 1e-4 (that one in
tests/test_gpu_scoring.py, with FastScorer's).

The packing is checked against a brute-force trie built here from the sentences themselves; the
scores against Scorer (one whole forward per sentence)."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from helpers import tiny_models as tiny
from povstim.benchmarks import posh, words
from povstim.scoring import tree
from povstim.scoring.fast import FastScorer
from povstim.scoring.scorer import Scorer, load
from povstim.scoring.tree import Packing, TreeScorer, supports_tree

torch.set_num_threads(1)

PAIRS = posh.generate(words.default_lexicon(), 40, seed=3)
SENTS = sorted({s for p in PAIRS for s in (p.good, p.bad)}) + [
    "Hi.", "Hi.", "Hi there.",  # a duplicate, and a sentence whose fed prefix is another's whole sentence
    "What did the boy who saw the girl that the dog chased near the big red house like?",
]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    return tiny.causal_and_masked(tmp_path_factory.mktemp("models"), SENTS * 2, train_steps=30, vocab_size=300)


# ----------------------------------------------------------------------------- the packing

def _check_packing(ids, fed, width):
    """Every claim of Packing, checked against the sentences directly."""
    pack = Packing(ids, np.asarray(fed), width)
    rows = len(pack.row_start) - 1
    for i, x in enumerate(ids):
        path = pack.node[i, : fed[i]]
        assert (path >= 0).all() and (pack.node[i, fed[i]:] == -1).all()
        assert pack.token[path].tolist() == x[: fed[i]]  # the nodes feed exactly the sentence's prefix
        assert pack.depth[path].tolist() == list(range(fed[i]))
        lo, hi = pack.row_start[pack.row[i]], pack.row_start[pack.row[i] + 1]
        assert ((path >= lo) & (path < hi)).all()  # the whole path in the sentence's own row
    for r in range(rows):
        assert pack.row_start[r + 1] - pack.row_start[r] <= max(width, max(fed))
        # within a row: no two nodes hold the same prefix, and k is visible from i exactly when k's
        # prefix is a prefix of i's (brute force over the row's nodes)
        members = [i for i in range(len(ids)) if pack.row[i] == r]
        prefix = {}
        for i in members:
            for d in range(fed[i]):
                prefix[int(pack.node[i, d])] = tuple(ids[i][: d + 1])
        nodes = list(range(pack.row_start[r], pack.row_start[r + 1]))
        assert sorted(prefix) == nodes and len(set(prefix.values())) == len(nodes)
        for i in nodes:
            for k in nodes:
                ancestor = prefix[i][: len(prefix[k])] == prefix[k]
                assert (k <= i < pack.end[k]) == ancestor, (i, k)
    return pack


def test_packing_by_hand():
    # fed prefixes [0 5 6], [0 5 6], [0 5], [0], [0 5 6]: a trie of three nodes, (0), (0 5), (0 5 6)
    ids = [[0, 5, 6, 7], [0, 5, 6, 8], [0, 5, 9], [0, 4], [0, 5, 6, 7, 1]]
    fed = [3, 3, 2, 1, 3]
    pack = _check_packing(ids, fed, 256)
    assert pack.token.tolist() == [0, 5, 6] and pack.end.tolist() == [3, 3, 3]
    # two different first words: two branches under BOS, in preorder
    pack = _check_packing([[0, 4, 2, 3], [0, 5, 2, 3]], [3, 3], 256)
    assert pack.token.tolist() == [0, 4, 2, 5, 2] and pack.depth.tolist() == [0, 1, 2, 1, 2]
    assert pack.end.tolist() == [5, 3, 3, 5, 5]


@pytest.mark.parametrize("width", [1, 3, 8, 256])
def test_packing_of_random_sentences_matches_a_brute_force_trie(width):
    g = random.Random(width)
    ids = [[0] + [g.randint(1, 4) for _ in range(g.randint(1, 7))] for _ in range(60)]
    fed = [g.randint(1, len(x)) for x in ids]
    pack = _check_packing(ids, fed, width)
    if width >= 256:  # one row: every distinct fed prefix exactly once
        distinct = {tuple(x[: d + 1]) for x, f in zip(ids, fed) for d in range(f)}
        assert len(pack.token) == len(distinct) and len(pack.row_start) == 2


def test_row_ends_cost_few_extra_nodes():
    """Packed into rows of ROW_NODES, generated POSH pairs feed at most 10% more nodes than their whole trie
    (each row re-feeds only the prefixes its first sentence shares with the row before), and far fewer than
    the tokens of whole sentences."""
    tok = tiny.train_tokenizer(SENTS, "causal", 300)
    ids = [[0] + x for x in tok(SENTS, add_special_tokens=False)["input_ids"]]
    fed = [len(x) - 1 for x in ids]
    pack = Packing(ids, np.array(fed), tree.ROW_NODES)
    trie = {tuple(x[: d + 1]) for x, f in zip(ids, fed) for d in range(f)}
    assert len(trie) <= len(pack.token) <= 1.1 * len(trie) and len(pack.row_start) > 10
    assert len(pack.token) < 0.7 * sum(len(x) for x in ids)


# ----------------------------------------------------------------------------- the scores

@pytest.mark.parametrize("bos,eos", [(True, False), (False, False), (True, True)])
@pytest.mark.parametrize("rows", [4, 256])
def test_tree_scores_are_the_reference_sums(models, bos, eos, rows, monkeypatch):
    monkeypatch.setattr(tree, "ROW_NODES", rows)  # 4: many rows, sentences restarting their prefix
    lm, tok, kind = load(models["causal"])
    want = Scorer(lm, tok, kind, bos=bos, eos=eos, batch_size=5).score(SENTS)
    scorer = TreeScorer(lm, tok, kind, bos=bos, eos=eos, batch_size=5)
    assert scorer.tree
    got = scorer.score(SENTS)
    np.testing.assert_allclose(got.logp, want.logp, atol=1e-5, rtol=0)
    assert (got.ntok == want.ntok).all()
    # and the bytes are reproducible: the packing depends on the suite only
    assert TreeScorer(lm, tok, kind, bos=bos, eos=eos, batch_size=5).score(SENTS).logp.tobytes() == \
        got.logp.tobytes()


def test_real_blimp_pairs_give_the_whole_sentence_verdicts(models, shared_data):
    """15 pairs of each of BLiMP's 67 paradigms (real sentences, ../shared/data): the tree feeds far fewer
    tokens, and every pair's verdict and score is the whole-sentence scorer's."""
    from povstim.benchmarks.importers import import_suite

    pairs = [p for i, p in enumerate(import_suite("blimp", shared_data / "blimp" / "data", "blimp")) if i % 1000 < 15]
    assert len(pairs) == 67 * 15
    sents = [p.good for p in pairs] + [p.bad for p in pairs]
    lm, tok, kind = load(models["causal"])
    scorer = TreeScorer(lm, tok, kind, batch_size=64)
    ids = scorer._encode(sorted(set(sents)))
    fed = Packing(ids, np.array([len(x) - 1 for x in ids]), tree.ROW_NODES)
    assert len(fed.token) < 0.8 * sum(len(x) for x in ids)
    got = scorer.score(sents).logp
    want = Scorer(lm, tok, kind, batch_size=64).score(sents).logp
    np.testing.assert_allclose(got, want, atol=1e-5, rtol=0)
    n = len(pairs)
    assert ((got[:n] > got[n:]) == (want[:n] > want[n:])).all()


@pytest.mark.parametrize("model_type", ["llama", "mistral", "qwen2"])
def test_other_peoples_rotary_models_are_packed(tmp_path, model_type):
    """Hub model types in TREE_HUB_MODELS (rotary positions, taken from the position ids): tiny ones built
    here with transformers' own classes, scored through the tree and whole."""
    from transformers import AutoConfig, AutoModelForCausalLM

    tok = tiny.train_tokenizer(SENTS, "causal", 300)
    cfg = AutoConfig.for_model(model_type, vocab_size=len(tok), hidden_size=32, intermediate_size=64,
                               num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                               max_position_embeddings=128, bos_token_id=tok.bos_token_id,
                               eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    torch.manual_seed(0)
    AutoModelForCausalLM.from_config(cfg).save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    lm, tok, kind = load(tmp_path)
    assert kind == "causal" and lm.config.model_type == model_type
    want = Scorer(lm, tok, kind, batch_size=8).score(SENTS)
    scorer = TreeScorer(lm, tok, kind, batch_size=8)
    assert scorer.tree and scorer.body is not None  # the split head: logits only at the scored nodes
    np.testing.assert_allclose(scorer.score(SENTS).logp, want.logp, atol=1e-5, rtol=0)


def test_eager_attention_takes_the_tree_too(models):
    """Eager attention adds the float mask to its scores as SDPA does."""
    lm, tok, kind = load(models["causal"])
    want = Scorer(lm, tok, kind, batch_size=8).score(SENTS)
    lm.set_attn_implementation("eager")
    scorer = TreeScorer(lm, tok, kind, batch_size=8)
    assert scorer.tree
    np.testing.assert_allclose(scorer.score(SENTS).logp, want.logp, atol=1e-5, rtol=0)


def test_option_targets_score_only_the_option(models):
    """multiple_choice metric: option passes a subset of positions; the tree feeds up to the last one."""
    from povstim.scoring.tasks import option_scores

    lm, tok, kind = load(models["causal"])
    prefixes = ["The dog saw the cat", "The dog saw the cat", "Is the boy"]
    strings = ["The dog saw the cat and ran.", "The dog saw the cat and it ran.", "Is the boy happy?"]
    want = option_scores(prefixes, strings, FastScorer(lm, tok, kind, batch_size=4))
    got = option_scores(prefixes, strings, TreeScorer(lm, tok, kind, batch_size=4))
    np.testing.assert_allclose(got.logp, want.logp, atol=1e-5, rtol=0)
    assert (got.ntok == want.ntok).all()
    # any subset of positions: a sentence is fed only up to its last target
    fast, trees = FastScorer(lm, tok, kind, batch_size=4), TreeScorer(lm, tok, kind, batch_size=4)
    ids = trees._encode(SENTS)
    g = random.Random(1)
    targets = [sorted(g.sample(range(1, len(x)), g.randint(1, len(x) - 1))) for x in ids]
    np.testing.assert_allclose(trees.score_ids(ids, targets), fast.score_ids(ids, targets), atol=1e-5, rtol=0)


def test_switched_off_or_masked_is_the_reference_bit_for_bit(models):
    lm, tok, kind = load(models["causal"])
    off = TreeScorer(lm, tok, kind, batch_size=4, share_prefixes=False)
    assert not off.tree
    assert off.score(SENTS).logp.tobytes() == Scorer(lm, tok, kind, batch_size=4).score(SENTS).logp.tobytes()
    lm, tok, kind = load(models["masked"])
    for method in ("pll", "holistic"):
        masked = TreeScorer(lm, tok, kind, method=method, batch_size=4)
        assert not masked.tree  # bidirectional: no prefix is shared
        assert masked.score(SENTS[:6]).logp.tobytes() == \
            Scorer(lm, tok, kind, method=method, batch_size=4).score(SENTS[:6]).logp.tobytes()


def test_recency_bias_models_are_not_packed(models):
    """The recency bias is a function of the distance between sequence positions, not of position ids:
    packed, a node would be biased by its distance in the row. Its family does not declare
    tree_attention, and this shows why: forced through the tree, its scores change."""
    from test_recency import tiny_model

    model = tiny_model(epoch=0, seed=1)
    _, tok, kind = load(models["causal"])
    assert not supports_tree(model) and not TreeScorer(model, tok, "causal").tree
    g = random.Random(0)
    ids = [[0, 7] + [g.randint(3, 49) for _ in range(6)] for _ in range(12)]
    targets = [list(range(1, len(x))) for x in ids]
    whole = FastScorer(model, tok, "causal", batch_size=4).score_ids(ids, targets)
    forced = TreeScorer(model, tok, "causal", batch_size=4)
    forced.tree = True
    assert np.abs(forced.score_ids(ids, targets) - whole).max() > 1e-3


def test_tree_scoring_makes_no_host_sync(models):
    """On a GPU the host must run ahead of the queued batches: nothing in a batch copies a value back."""
    from test_train_gpu import _host_syncs

    lm, tok, kind = load(models["causal"])
    with torch.inference_mode():
        assert _host_syncs(lambda: TreeScorer(lm, tok, kind, batch_size=3).score(SENTS)) == []


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_tree_scores_on_cuda_equal_the_cpu_reference(models):
    lm, tok, kind = load(models["causal"])
    want = Scorer(lm, tok, kind, batch_size=8).score(SENTS)
    lm, tok, kind = load(models["causal"], device="cuda")
    got = TreeScorer(lm, tok, kind, device="cuda", batch_size=8).score(SENTS)
    np.testing.assert_allclose(got.logp, want.logp, atol=1e-4, rtol=0)


def test_a_sentence_without_targets_scores_zero_as_in_fast_scorer(models):
    lm, tok, kind = load(models["causal"])
    trees, fast = TreeScorer(lm, tok, kind, batch_size=4), FastScorer(lm, tok, kind, batch_size=4)
    ids = trees._encode(SENTS[:5])
    targets = [list(range(1, len(x))) if i % 2 else [] for i, x in enumerate(ids)]
    got = trees.score_ids(ids, targets)
    np.testing.assert_allclose(got, fast.score_ids(ids, targets), atol=1e-5, rtol=0)
    assert got[0] == got[2] == got[4] == 0.0 and (got[1::2] < 0).all()
    assert (trees.score_ids(ids, [[] for _ in ids]) == 0).all()
