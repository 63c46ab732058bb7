"""Tree-Planted Transformer (Yoshida et al. 2024; POSH §7): tree distances, the supervision target, the
subword-to-word mapping, the loss, and that training lowers the divergence."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from povstim import cli
from povstim.biases import tpt as T
from povstim.io import PovstimError
from povstim.tokenizer import bpe

E = math.exp

# "the dog barks": the -> dog, dog -> barks, barks = root. Nodes: <s> the dog barks </s>
HEADS = [2, 3, 0]
# edge counts by hand: <s> and </s> hang off the root "barks"
DIST = [
    # <s> the dog barks </s>
    [0, 3, 2, 1, 2],  # <s>
    [3, 0, 1, 2, 3],  # the
    [2, 1, 0, 1, 2],  # dog
    [1, 2, 1, 0, 1],  # barks
    [2, 3, 2, 1, 0],  # </s>
]


def norm(xs):
    s = sum(xs)
    return [x / s for x in xs]


# row k: the query predicting node k attends to nodes l < k with weights exp(-d(k, l))
TARGET_ROWS = {
    1: norm([E(-3)]),                          # the:   <s>
    2: norm([E(-2), E(-1)]),                   # dog:   <s> the
    3: norm([E(-1), E(-2), E(-1)]),            # barks: <s> the dog
    4: norm([E(-2), E(-3), E(-2), E(-1)]),     # </s>:  <s> the dog barks
}


def test_tree_distances_of_a_hand_made_tree():
    assert T.tree_distances(HEADS).tolist() == DIST


def test_supervision_matrix_of_a_hand_made_tree():
    got = T.target_matrix(np.array(DIST))
    assert got[0].tolist() == [0, 0, 0, 0, 0]  # nothing predicts <s>
    for k, row in TARGET_ROWS.items():
        np.testing.assert_allclose(got[k, :k], row, rtol=1e-12)
        assert (got[k, k:] == 0).all()  # only earlier nodes
    rec = T.target_matrix(np.array(DIST), "reciprocal")
    np.testing.assert_allclose(rec[3, :3], norm([1, 1 / 2, 1]))


def test_not_a_tree_is_detected():
    with pytest.raises(T.NotATree):
        T.tree_distances([0, 0])  # two roots
    with pytest.raises(T.NotATree):
        T.tree_distances([2, 1, 0])  # 1 <-> 2 cycle


def test_subwords_belong_to_the_word_of_their_first_character():
    # byte-level BPE of "I don't know." (offsets as the tokenizer gives them; see below)
    text = "I don't know."
    spans = T.word_spans(text, ["I", "do", "n't", "know", "."])
    assert spans == [(0, 1), (2, 4), (4, 7), (8, 12), (12, 13)]
    offsets = [(0, 1), (0, 1), (1, 5), (5, 7), (7, 8), (8, 9), (9, 10), (10, 11), (11, 12), (12, 13)]
    # tokens: Ġ I Ġdon 't Ġ k n o w .  -- a lone Ġ belongs to the word it precedes
    assert T.token_words(text, offsets, spans).tolist() == [1, 1, 2, 3, 4, 4, 4, 4, 4, 5]
    assert T.word_spans(text, ["I", "do", "not", "know", "."]) is None  # a parse of another text


def test_real_tokenizer_offsets_map_to_words(tmp_path):
    tok = bpe.train(["the dog barks .", "don't go"] * 20, {"vocab_size": 300})
    text = "The doggies barked."
    enc = tok.encode(text, add_special_tokens=False)
    words = T.token_words(text, enc.offsets, T.word_spans(text, ["The", "doggies", "barked", "."]))
    # every word gets its tokens in order, and rebuilding each word from its tokens gives the word back
    for w, form in enumerate(["The", "doggies", "barked", "."], 1):
        pieces = [t for t, ww in zip(enc.tokens, words) if ww == w]
        assert "".join(pieces).replace("Ġ", "") == form
    assert list(words) == sorted(words)


def test_loss_on_a_hand_made_attention_matrix():
    """Tokens <s> the dog bark s </s> (barks = 2 subwords); uniform causal attention, computed by hand."""
    tw = [0, 1, 2, 3, 3, 4]
    t = len(tw)
    attn = torch.zeros(1, 1, t, t)
    for i in range(t):
        attn[0, 0, i, : i + 1] = 1 / (i + 1)
    qword = torch.tensor([tw[1:] + [-1]])  # the query at token i predicts token i+1
    kword = torch.tensor([tw[:-1] + [-1]])
    target = torch.zeros(1, 5, 5)
    for k, row in TARGET_ROWS.items():
        target[0, k, :k] = torch.tensor(row)
    # word-level model attention by hand: rows summed over the queries predicting the word, renormalised
    model_rows = {1: [1.0], 2: [0.5, 0.5], 3: [1 / 3, 1 / 3, 1 / 3], 4: [0.2, 0.2, 0.2, 0.4]}
    kl = [sum(p * math.log(p / q) for p, q in zip(TARGET_ROWS[k], model_rows[k])) for k in range(1, 5)]
    loss, n = T.tpt_loss(attn, qword, kword, target)
    assert n == 4
    assert float(loss) == pytest.approx(sum(kl) / 4, rel=1e-5)


# --------------------------------------------------------------------------- with the trainer

ARCH = {"family": "gpt2", "n_layer": 2, "n_embd": 32, "n_head": 2, "n_inner": 64}
TRAINING = {"lr": 3e-3, "batch_size": 32, "context": 32, "warmup": 0, "max_steps": 60, "patience": 1000,
            "eval_every": 60, "save_every": 60, "log_every": 20, "packing": False, "dropout": 0.0,
            "device": "cpu"}


@pytest.fixture(scope="module")
def parsed(tmp_path_factory):
    """A synthetic corpus with gold parses of every line, as rule tpt_parse makes them."""
    d = tmp_path_factory.mktemp("tpt")
    assert cli.main(["synth", "--register", "child", "--sentences", "1200", "--seed", "3",
                     "--out-text", str(d / "all.txt"), "--out-conllu", str(d / "all.conllu")]) == 0
    lines = (d / "all.txt").read_text().splitlines()
    (d / "train.txt").write_text("\n".join(lines[:1100]) + "\n")
    (d / "dev.txt").write_text("\n".join(lines[1100:]) + "\n")
    for split in ("train", "dev"):
        assert cli.main(["parse", "--input", str(d / f"{split}.txt"), "--gold", str(d / "all.conllu"),
                         "--no-prefilter", "--no-cache", "--out", str(d / f"{split}.conllu")]) == 0
    bpe.save(bpe.train_file(d / "train.txt", {"vocab_size": 400}), d / "tok.json")
    return d


def trainer(d, weight, out):
    from povstim.train.loop import Trainer
    from povstim.train.params import resolve

    arch, training = resolve({**ARCH, "bias": {"tpt": {"weight": weight}}}, TRAINING)
    return Trainer(train=str(d / "train.txt"), dev=str(d / "dev.txt"), tokenizer=str(d / "tok.json"), arch=arch,
                   training=training, seed=1, out_dir=str(d / out), threads=1, progress=False,
                   parses=[str(d / "train.conllu"), str(d / "dev.conllu")])


def test_every_training_sentence_is_supervised(parsed):
    tr = trainer(parsed, 0.5, "check")
    assert tr.learner.bias.tpt_data.n_supervised == 1100  # gold parses of synthetic text: all trees, all aligned
    assert tr.learner.bias.tpt == {"layers": [-1], "heads": [0], "weight": 0.5, "distance": "exponential"}


def test_training_lowers_the_divergence_of_the_supervised_head(parsed):
    tpt = trainer(parsed, 0.5, "tpt")
    before = tpt.learner.bias.dev_divergence(tpt.learner.dev_attentions)
    tpt.run()
    after = tpt.learner.bias.dev_divergence(tpt.learner.dev_attentions)
    lm_only = trainer(parsed, 1e-9, "lm")  # same seed and data, (practically) no tree loss
    lm_only.run()
    baseline = lm_only.learner.bias.dev_divergence(lm_only.learner.dev_attentions)
    # measured: 0.142 -> 0.095 with the tree loss, 0.142 -> 0.140 without it
    assert after < 0.8 * before
    assert after < 0.8 * baseline
    log = [json.loads(x) for x in (parsed / "tpt" / "train_log.jsonl").read_text().splitlines()]
    assert log[-1]["dev_tpt_kl"] == pytest.approx(after, rel=1e-6)
    assert log[0]["tpt_kl"] > log[-1]["tpt_kl"]


def test_unparsed_lines_are_an_error_naming_the_file(parsed, tmp_path):
    blocks = (parsed / "train.conllu").read_text().split("\n\n")
    short = tmp_path / "short.conllu"
    short.write_text("\n\n".join(blocks[:10]) + "\n\n")
    from povstim.train.loop import Trainer
    from povstim.train.params import resolve

    arch, training = resolve({**ARCH, "bias": {"tpt": {}}}, TRAINING)
    with pytest.raises(PovstimError, match="short.conllu.*no parse for line 11"):
        Trainer(train=str(parsed / "train.txt"), dev=str(parsed / "dev.txt"), tokenizer=str(parsed / "tok.json"),
                arch=arch, training=training, seed=1, out_dir=str(tmp_path / "x"), threads=1, progress=False,
                parses=[str(short)])


def test_tpt_and_recency_compose_and_resume_exactly(parsed, monkeypatch):
    """A run interrupted after a checkpoint and rerun gives the same bytes as an uninterrupted one:
    the recency epoch and the TPT batches are functions of the step."""
    from povstim.train.loop import Trainer
    from povstim.train.params import resolve

    arch = {**ARCH, "bias": {"tpt": {}, "recency": {"r": 0.6}}}
    cfg = {**TRAINING, "max_steps": 1000, "epochs": 2, "eval_every": 20, "save_every": 20, "log_every": 10,
           "dropout": 0.1}
    a, t = resolve(arch, cfg)
    assert a["family"] == "gpt2-recency"

    def make(out):
        return Trainer(train=str(parsed / "train.txt"), dev=str(parsed / "dev.txt"), tokenizer=str(parsed / "tok.json"),
                       arch=a, training=t, seed=2, out_dir=str(parsed / out), threads=1, progress=False,
                       parses=[str(parsed / "train.conllu"), str(parsed / "dev.conllu")])

    full = make("full")
    summary = full.run()
    assert summary["steps"] == 2 * 35  # 1100 sentences / 32 = 35 batches per epoch, 2 epochs

    class Crash(Exception):
        pass

    real_save = Trainer.save_checkpoint

    def save_then_crash(self):
        real_save(self)
        if self.state.step == 40:
            raise Crash

    monkeypatch.setattr(Trainer, "save_checkpoint", save_then_crash)
    with pytest.raises(Crash):
        make("resumed").run()
    monkeypatch.setattr(Trainer, "save_checkpoint", real_save)
    again = make("resumed")
    again.run()
    for name in ("model.safetensors", "config.json"):
        assert (parsed / "resumed" / name).read_bytes() == (parsed / "full" / name).read_bytes(), name
    for s in (20, 40, 60, 70):
        assert ((parsed / "resumed" / "checkpoints" / f"step{s}" / "model.safetensors").read_bytes()
                == (parsed / "full" / "checkpoints" / f"step{s}" / "model.safetensors").read_bytes())

    def log_of(run):  # every logged number but the timings
        return [{k: v for k, v in json.loads(x).items() if k not in ("elapsed", "tokens_per_s")}
                for x in (parsed / run / "train_log.jsonl").read_text().splitlines()]

    log = log_of("full")
    assert log_of("resumed") == log
    assert [e["recency_epoch"] for e in log] == [(e["step"] - 1) // 35 for e in log]
    assert all("tpt_kl" in e for e in log)
