"""Dynamic recency bias (Mita et al. 2025; POSH §7): the bias matrix, its decay, and save -> load fidelity."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from povstim import cli, families
from povstim.biases import recency as R
from povstim.train.params import resolve
from povstim.tokenizer import bpe
from test_tokenizer import write_corpus

ARCH = {"family": "gpt2", "n_layer": 2, "n_embd": 32, "n_head": 2, "n_inner": 64, "bias": {"recency": {"r": 0.6}}}
NEG = float("-inf")


def test_bias_matrix_on_four_tokens_is_r_to_the_t_times_minus_distance():
    # b_i = [-(i-1), ..., 0] for query i (1-based), scaled by r^t; written out by hand
    hand = {
        0: [[0, 0, 0, 0], [-1, 0, 0, 0], [-2, -1, 0, 0], [-3, -2, -1, 0]],
        1: [[0, 0, 0, 0], [-0.6, 0, 0, 0], [-1.2, -0.6, 0, 0], [-1.8, -1.2, -0.6, 0]],
        2: [[0, 0, 0, 0], [-0.36, 0, 0, 0], [-0.72, -0.36, 0, 0], [-1.08, -0.72, -0.36, 0]],
    }
    for t, rows in hand.items():
        got = R.recency_bias(4, 4, 0.6, t)
        assert torch.equal(got, torch.tensor(rows, dtype=torch.float32)), t


def test_decay_over_ten_epochs():
    """The penalty of the most distant key falls as r^t: 3, 1.8, 1.08, ... down to 3 * 0.6^9 ~ 0.03."""
    far = [-float(R.recency_bias(4, 4, 0.6, t)[3, 0]) for t in range(10)]
    assert far == pytest.approx([3 * 0.6 ** t for t in range(10)], rel=1e-6)
    assert all(a > b for a, b in zip(far, far[1:]))
    assert far[9] == pytest.approx(0.030233088, rel=1e-6)


def test_queries_after_a_cache_use_absolute_distances():
    # the last 2 queries of 5 positions: rows 3 and 4 of the full matrix
    assert torch.equal(R.recency_bias(2, 5, 0.5, 1), R.recency_bias(5, 5, 0.5, 1)[3:])


def tiny_model(epoch=0, seed=0, attn="sdpa"):
    families.register_auto_classes()
    arch, training = resolve(ARCH, {"context": 16, "dropout": 0.0, "device": "cpu"})
    assert arch["family"] == "gpt2-recency"  # gpt2 + bias.recency trains the recency family
    cfg = families.get(arch["family"]).build_config(arch, training, 50, {"bos": 0, "eos": 2, "pad": 1})
    torch.manual_seed(seed)
    model = families.get(arch["family"]).model_class()(cfg).eval()
    model.set_recency_epoch(epoch)
    model.set_attn_implementation(attn)
    return model


def test_attention_is_softmax_of_the_bias_when_content_is_blind():
    """With q = k = 0 every logit is the bias, so attention = softmax(r^t b_i) over keys 1..i."""
    for t in (0, 1, 4):
        model = tiny_model(epoch=t, attn="eager")
        with torch.no_grad():
            for block in model.transformer.h:
                block.attn.c_attn.weight[:, :64] = 0  # query and key projections
                block.attn.c_attn.bias[:64] = 0
        out = model(input_ids=torch.tensor([[5, 6, 7, 8]]), output_attentions=True)
        att = out.attentions[0][0, 0].detach().numpy()
        for i in range(4):
            logits = [-(0.6 ** t) * (i - j) for j in range(i + 1)]
            z = sum(math.exp(x) for x in logits)
            expected = [math.exp(x) / z for x in logits] + [0.0] * (3 - i)
            np.testing.assert_allclose(att[i], expected, rtol=1e-5, atol=1e-7)


def test_same_seed_same_initial_weights_as_plain_gpt2():
    from transformers import GPT2LMHeadModel

    rec = tiny_model(seed=3)
    torch.manual_seed(3)
    plain = GPT2LMHeadModel(rec.config)
    for (n, a), (_, b) in zip(rec.state_dict().items(), plain.state_dict().items()):
        assert torch.equal(a, b), n


def test_saved_then_loaded_model_reproduces_the_trained_logits(tmp_path):
    from transformers import AutoModelForCausalLM, GPT2LMHeadModel

    model = tiny_model(epoch=2, seed=1)
    ids = torch.tensor([[0, 5, 9, 13, 7, 2], [0, 8, 6, 1, 1, 1]])
    mask = torch.tensor([[1, 1, 1, 1, 1, 1], [1, 1, 1, 0, 0, 0]])
    with torch.no_grad():
        ref = model(input_ids=ids, attention_mask=mask).logits
    model.save_pretrained(tmp_path)
    cfg = json.loads((tmp_path / "config.json").read_text())
    assert cfg["model_type"] == "gpt2-recency" and cfg["recency_epoch"] == 2 and cfg["recency_r"] == 0.6
    loaded = AutoModelForCausalLM.from_pretrained(tmp_path).eval()
    assert type(loaded).__name__ == "GPT2RecencyLMHeadModel"
    with torch.no_grad():
        got = loaded(input_ids=ids, attention_mask=mask).logits
        # the scorer's split-head path (transformer body, then lm_head) gives the same numbers
        body = loaded.transformer(input_ids=ids, attention_mask=mask).last_hidden_state
        split = loaded.lm_head(body)
    assert torch.equal(got, ref)
    assert torch.equal(split, ref)
    assert families.for_model_type("gpt2-recency").split_head == ("transformer", "lm_head")
    # the bias really is active: the same weights without it give other logits
    plain = GPT2LMHeadModel.from_pretrained(tmp_path).eval()
    with torch.no_grad():
        assert not torch.allclose(plain(input_ids=ids, attention_mask=mask).logits, ref)
    # and the eager and SDPA attention implementations agree
    eager = AutoModelForCausalLM.from_pretrained(tmp_path, attn_implementation="eager").eval()
    with torch.no_grad():
        torch.testing.assert_close(eager(input_ids=ids, attention_mask=mask).logits, ref, rtol=1e-5, atol=1e-5)


def test_training_sets_the_epoch_from_the_step_and_saves_it(tmp_path):
    train = write_corpus(tmp_path / "train.txt", 200, seed=1)
    dev = write_corpus(tmp_path / "dev.txt", 20, seed=2)
    bpe.save(bpe.train_file(train, {"vocab_size": 320}), tmp_path / "tok.json")
    training = {"lr": 3e-3, "batch_size": 50, "context": 16, "warmup": 0, "epochs": 3, "patience": 100,
                "eval_every": 4, "save_every": 4, "log_every": 1, "packing": False, "device": "cpu"}
    out = tmp_path / "m"
    assert cli.main(["train", "--train", str(train), "--dev", str(dev), "--tokenizer", str(tmp_path / "tok.json"),
                     "--arch", json.dumps(ARCH), "--params", json.dumps(training), "--out-dir", str(out),
                     "--threads", "1", "--no-progress", "--seed", "1"]) == 0
    log = [json.loads(x) for x in (out / "train_log.jsonl").read_text().splitlines()]
    # 200 sentences / 50 = 4 batches per epoch, 3 epochs = exactly 12 steps
    assert [e["step"] for e in log] == list(range(1, 13))
    assert [e["recency_epoch"] for e in log] == [(s - 1) // 4 for s in range(1, 13)]
    summary = json.loads((out / "train_summary.json").read_text())
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["recency_epoch"] == (summary["best_step"] - 1) // 4
    ckpt = json.loads((out / "checkpoints" / "step8" / "config.json").read_text())
    assert ckpt["recency_epoch"] == 1




def test_trained_model_scores_the_same_after_saving_and_loading(tmp_path):
    """The in-memory model at the end of training and the folder the scorer loads give the same logits."""
    from povstim.scoring.scorer import Scorer, load
    from povstim.train.loop import Trainer

    train = write_corpus(tmp_path / "train.txt", 200, seed=1)
    dev = write_corpus(tmp_path / "dev.txt", 20, seed=2)
    bpe.save(bpe.train_file(train, {"vocab_size": 320}), tmp_path / "tok.json")
    arch, training = resolve(ARCH, {"lr": 3e-3, "batch_size": 50, "context": 48, "warmup": 0, "epochs": 3,
                                    "patience": 100, "eval_every": 1000, "save_every": 1000, "packing": False,
                                    "device": "cpu"})
    tr = Trainer(train=str(train), dev=str(dev), tokenizer=str(tmp_path / "tok.json"), arch=arch, training=training,
                 seed=1, out_dir=str(tmp_path / "m"), threads=1, progress=False)
    summary = tr.run()
    assert summary["best_step"] == summary["steps"] == 12  # one evaluation, at the end: the final model is the last
    trained = tr.learner.raw_model.eval()
    assert trained.recency_epoch == 2
    model, tok, kind = load(tmp_path / "m")
    assert type(model).__name__ == "GPT2RecencyLMHeadModel" and kind == "causal"
    sentences = ["The dog sees the cat.", "Is the happy boy that runs big?"]
    ids = tok(sentences, add_special_tokens=False, padding=True, return_tensors="pt")
    with torch.no_grad():
        assert torch.equal(model(**ids).logits, trained(**ids).logits)
    # the scorer's log-probabilities equal log-softmax of the trained model's logits, computed here
    scores = Scorer(model, tok, kind, bos=True, batch_size=8).score(sentences)
    for s, logp in zip(sentences, scores.logp):
        x = torch.tensor([[tok.bos_token_id] + tok(s, add_special_tokens=False)["input_ids"]])
        with torch.no_grad():
            lp = torch.log_softmax(trained(input_ids=x).logits[0, :-1].double(), -1)
        assert logp == pytest.approx(float(lp.gather(1, x[0, 1:, None]).sum()), abs=1e-4)
