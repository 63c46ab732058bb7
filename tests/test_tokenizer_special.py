"""Saved tokenizers declare their special tokens the way other tools read them.

A povstim-trained masked model's folder must give minicons (and the BabyLM pipeline, whose MLM backend scores what
minicons does) the same whole-sentence PLL as povstim: minicons leaves out exactly the tokenizer's pad, CLS and SEP
ids, so a tokenizer that declared ``<s>``/``</s>`` only as BOS/EOS had them scored as words (12-15 nats per
sentence). The models here are trained by ``povstim train`` itself, not by the test helpers' own wrapper.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from helpers.tiny_models import tiny_corpus
from povstim import cli
from povstim.scoring.scorer import Scorer, load

torch.set_num_threads(1)

SENTS = ["The dog sees the cat.", "Is the boy who is smiling happy?", "who does mary wanna see?", "Hi."]
ARCH = {"n_layer": 2, "n_embd": 32, "n_head": 2, "n_inner": 64}
TRAINING = {"lr": 3e-3, "batch_size": 8, "context": 32, "warmup": 4, "max_steps": 20, "patience": 1000,
            "eval_every": 10, "save_every": 10, "log_every": 5, "dropout": 0.1, "device": "cpu"}


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    root = tmp_path_factory.mktemp("special")
    corpus = tiny_corpus(root)
    out = {}
    for kind, family in (("masked", "roberta"), ("causal", "gpt2")):
        out[kind] = root / family
        args = ["train", "--train", corpus["train"], "--dev", corpus["dev"], "--tokenizer", corpus["tokenizer"],
                "--arch", json.dumps({"family": family, **ARCH}), "--params", json.dumps(TRAINING), "--seed", "1",
                "--out-dir", str(out[kind]), "--threads", "1", "--no-progress"]
        assert cli.main(args) == 0
    out["tokenizer"] = Path(corpus["tokenizer"])
    return out


def _minicons_masked(path):
    from minicons import scorer as mc

    m = mc.MaskedLMScorer(str(path), "cpu")
    # minicons 0.3.39 calls batch_encode_plus, which transformers 5 removed (as tests/test_scoring.py)
    object.__setattr__(m.tokenizer, "batch_encode_plus", m.tokenizer.__call__)
    return m


def test_masked_whole_sentence_pll_equals_minicons(trained):
    lm, tok, kind = load(trained["masked"])
    assert kind == "masked"
    ours = Scorer(lm, tok, kind, method="pll").score(SENTS)
    m = _minicons_masked(trained["masked"])
    ref = m.sequence_score(SENTS, reduction=lambda x: x.sum(0).item())
    np.testing.assert_allclose(ours.logp, ref, atol=1e-4, rtol=0)
    # minicons scores the words only: no <s> or </s> among its tokens, as many tokens as povstim scores
    for s, n, scored in zip(SENTS, ours.ntok, m.token_score(SENTS)):
        assert not {t for t, _ in scored} & {"<s>", "</s>"}, s
        assert len(scored) == n


def test_masked_pll_equals_the_babylm_pipelines_rule(trained):
    """The BabyLM pipeline (2025, sentence_zero_shot, backend mlm) masks each token whose character offsets
    overlap the completion -- the whole sentence here -- and sums log p(token | the rest): the frame's <s>/</s>
    must carry empty offsets, and the mask token must be declared."""
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(trained["masked"])
    model = AutoModelForMaskedLM.from_pretrained(trained["masked"]).eval()
    lm, ptok, kind = load(trained["masked"])
    ours = Scorer(lm, ptok, kind, method="pll").score(SENTS).logp
    for s, got in zip(SENTS, ours):
        enc = tok(s, return_offsets_mapping=True)
        ids = enc["input_ids"]
        targets = [i for i, (_, end) in enumerate(enc["offset_mapping"]) if end > 0]
        assert ids[0] == tok.cls_token_id == tok.bos_token_id and ids[-1] == tok.sep_token_id == tok.eos_token_id
        assert 0 not in targets and len(ids) - 1 not in targets
        rows = torch.tensor([ids] * len(targets))
        rows[range(len(targets)), targets] = tok.mask_token_id
        with torch.no_grad():
            lp = torch.log_softmax(model(input_ids=rows).logits, -1)
        ref = sum(lp[r, t, ids[t]].item() for r, t in enumerate(targets))
        assert got == pytest.approx(ref, abs=1e-4)


def test_causal_sum_equals_minicons_with_bos(trained):
    from minicons import scorer as mc

    lm, tok, kind = load(trained["causal"])
    assert kind == "causal"
    m = mc.IncrementalLMScorer(str(trained["causal"]), "cpu")
    ours = Scorer(lm, tok, kind).score(SENTS).logp
    ref = m.sequence_score(SENTS, reduction=lambda x: x.sum(0).item(), bos_token=True)
    np.testing.assert_allclose(ours, ref, atol=1e-4, rtol=0)
    no_bos = Scorer(lm, tok, kind, bos=False).score(SENTS).logp
    np.testing.assert_allclose(no_bos, m.sequence_score(SENTS, reduction=lambda x: x.sum(0).item()), atol=1e-4,
                               rtol=0)


def test_saved_folders_declare_every_special_token_and_keep_tokenizer_json(trained):
    from transformers import AutoTokenizer

    source = json.loads(trained["tokenizer"].read_text())
    for kind in ("masked", "causal"):
        folder = trained[kind]
        saved = json.loads((folder / "tokenizer.json").read_text())
        # the vocabulary, merges and added tokens are the tokenize stage's: only the frame (post-processor) differs
        assert saved["model"] == source["model"] and saved["added_tokens"] == source["added_tokens"]
        assert {t["content"]: t["special"] for t in saved["added_tokens"]} == dict.fromkeys(
            ["<s>", "<pad>", "</s>", "<unk>", "<mask>"], True)
        tok = AutoTokenizer.from_pretrained(folder)
        assert {tok.bos_token, tok.eos_token, tok.pad_token, tok.unk_token, tok.mask_token} == {
            "<s>", "</s>", "<pad>", "<unk>", "<mask>"}
        assert set(tok.all_special_tokens) >= {"<s>", "</s>", "<pad>", "<unk>", "<mask>"}
        # a special token in text is one token, never split into characters
        assert tok("a <mask> b", add_special_tokens=False)["input_ids"].count(tok.mask_token_id) == 1
    masked = AutoTokenizer.from_pretrained(trained["masked"])
    assert (masked.cls_token, masked.sep_token) == ("<s>", "</s>")
    causal = AutoTokenizer.from_pretrained(trained["causal"])
    assert causal("The dog.")["input_ids"][0] != causal.bos_token_id  # causal: no frame, the scorer adds BOS
