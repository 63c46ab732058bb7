"""POSH-BENCH's published scoring, reproduced item for item, and the metric-sensitivity columns.

POSH scored every pair with minicons (xiulinyang/posh-bench, benchmark_eval.py)::

    s_bad, s_good = IncrementalLMScorer(model).sequence_score([bad, good], reduction=lambda x: -x.mean(0).item())
    correct += s_bad > s_good            # mean surprisal, no BOS token: the first token is not scored

``scoring: {reduction: mean, bos: false}`` must give the same verdict on every item. The gold
verdicts here come from minicons itself, called exactly that way, one pair per call.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import torch

from helpers import tiny_models as tiny
from povstim.benchmarks import posh, words
from povstim.benchmarks.suite import write_suite
from povstim.cli import main
from povstim.scoring.items import COLUMNS, SENSITIVITY_COLUMNS

torch.set_num_threads(1)

PAIRS_PER_PARADIGM = 30  # 270 pairs, every template of Table 13


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A tiny GPT-2 trained briefly on the suite's good sentences (so verdicts are not coin flips)
    and the suite folder it is scored on."""
    root = tmp_path_factory.mktemp("posh_scoring")
    pairs = posh.generate(words.default_lexicon(), PAIRS_PER_PARADIGM, seed=3)
    suite = root / "suite"
    write_suite(suite, pairs, {"kind": "generated"})
    corpus = [p.good for p in posh.generate(words.default_lexicon(), 60, seed=4)]
    model = tiny.build(root / "gpt2", corpus, "causal", vocab_size=500, layers=2, hidden=64, heads=2,
                       train_steps=120, lr=3e-3, seed=1)
    return model, suite, pairs


def _score(model, suite, out, *flags):
    rc = main(["score", "--model", str(model), "--suite", str(suite), "--out", str(out), "--device", "cpu",
               "--batch-size", "16", *flags])
    assert rc == 0
    return pd.read_parquet(out)


def test_mean_no_bos_reproduces_posh_minicons_verdicts_item_for_item(trained, tmp_path):
    from minicons import scorer as mc

    model, suite, pairs = trained
    df = _score(model, suite, tmp_path / "s.parquet", "--reduction", "mean", "--no-bos")
    mi = mc.IncrementalLMScorer(str(model), "cpu")
    by_id = df.set_index("item_id")
    assert len(by_id) == len(pairs) == 9 * PAIRS_PER_PARADIGM
    disagree, max_diff = [], 0.0
    for p in pairs:
        s_bad, s_good = mi.sequence_score([p.bad, p.good], reduction=lambda x: -x.mean(0).item())
        row = by_id.loc[p.item_id]
        # our scores are mean log-probabilities = minus POSH's mean surprisal
        max_diff = max(max_diff, abs(-row["logp_good"] - s_good), abs(-row["logp_bad"] - s_bad))
        if bool(row["correct"]) != (s_bad > s_good):
            disagree.append(p.item_id)
    assert max_diff < 1e-5
    assert not disagree, f"{len(disagree)} verdicts differ from POSH's minicons scoring: {disagree[:5]}"
    # not a degenerate model: it gets some right and some wrong
    assert 0.2 < df["correct"].mean() < 0.98


def test_sensitivity_columns_hold_every_metric_exactly(trained, tmp_path):
    from minicons import scorer as mc

    model, suite, pairs = trained
    df = _score(model, suite, tmp_path / "s.parquet", "--reduction", "mean", "--no-bos")
    assert list(df.columns) == COLUMNS + SENSITIVITY_COLUMNS
    # the primary metric (mean, no BOS) is exactly sum / ntok of its own columns ...
    np.testing.assert_array_equal(df["logp_good"], df["sum_nobos_good"] / df["ntok_nobos_good"])
    np.testing.assert_array_equal(df["ntok_good"], df["ntok_nobos_good"])
    # ... and the other pass is the BOS-inclusive sum minicons computes with bos_token=True
    mi = mc.IncrementalLMScorer(str(model), "cpu")
    sents = [p.good for p in pairs[:40]]
    ref = mi.sequence_score(sents, reduction=lambda x: x.sum(0).item(), bos_token=True)
    got = df.set_index("item_id").loc[[p.item_id for p in pairs[:40]], "sum_bos_good"].to_numpy()
    np.testing.assert_allclose(got, ref, atol=1e-4, rtol=0)
    # with BOS every token is scored: one more than without
    assert (df["ntok_bos_good"] == df["ntok_nobos_good"] + 1).all()
    # the default metric (sum, BOS) scored separately equals the columns of this run
    dflt = _score(model, suite, tmp_path / "d.parquet")
    np.testing.assert_allclose(dflt["logp_good"], df["sum_bos_good"], atol=1e-9, rtol=0)
    np.testing.assert_array_equal(dflt["sum_nobos_bad"], df["sum_nobos_bad"])


def test_without_sensitivity_the_score_file_is_unchanged(trained, tmp_path):
    model, suite, _ = trained
    params = json.dumps({"sensitivity": False, "checkpoints": False})
    df = _score(model, suite, tmp_path / "s.parquet", "--params", params)
    assert list(df.columns) == COLUMNS
