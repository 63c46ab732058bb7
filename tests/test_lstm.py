"""The LSTM family: config checks, a plain-PyTorch reference for its scores, Auto-class loading,
exact resume, early stopping, and the same seed semantics as the transformer families."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch
from povstim import config as povstim_config
from povstim import families
from povstim.io import PovstimError
from povstim.scoring import scorer as S
from povstim.train.learner import LSTMLearner, learner_for
from povstim.train.loop import Trainer

from helpers.interrupt import stop_at
from helpers.tiny_models import tiny_corpus
from povstim.train.params import resolve
from torch import nn

LSTM = {"family": "lstm", "n_layer": 2, "n_embd": 24, "n_hidden": 40, "tie_weights": True}
TRAINING = {"lr": 3e-3, "batch_size": 8, "context": 32, "warmup": 4, "max_steps": 30, "patience": 1000,
            "eval_every": 10, "save_every": 10, "log_every": 5, "dropout": 0.1, "device": "cpu"}
SENTENCES = ["the dog sees the cat .", "who did the girl see ?", "a cat", "the boy wants to see the dog ."]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return tiny_corpus(tmp_path_factory.mktemp("corpus"))


def trainer(corpus, out, arch=LSTM, seed=1, **training) -> Trainer:
    a, t = resolve(arch, {**TRAINING, **training})
    return Trainer(arch=a, training=t, seed=seed, out_dir=str(out), threads=1, progress=False, **corpus)


@pytest.fixture(scope="module")
def trained(corpus, tmp_path_factory):
    out = tmp_path_factory.mktemp("lstm") / "m"
    summary = trainer(corpus, out).run()
    return out, summary


# ----------------------------------------------------------------------------- config


def _config(arch: dict) -> dict:
    cfg = povstim_config.load_yaml(Path(__file__).resolve().parents[1] / "config.yaml")
    cfg["archs"]["lstm-tiny"] = arch
    return cfg


def test_the_default_config_takes_an_lstm_and_an_ngram_with_one_entry_each():
    cfg = _config({"family": "lstm", "n_layer": 2, "n_embd": 128, "n_hidden": 256, "tie_weights": True})
    cfg["archs"]["ngram3"] = {"family": "kneser-ney", "order": 3}
    povstim_config.validate(cfg)
    assert families.resolve_arch({"family": "kneser-ney"})["order"] == 3


@pytest.mark.parametrize("arch, key", [
    ({"family": "lstm", "n_embd": 256, "n_hidden": 128, "tie_weights": True}, "archs.lstm-tiny.n_hidden"),
    ({"family": "lstm", "n_head": 4}, "archs.lstm-tiny.n_head"),
    ({"family": "gpt2", "n_hidden": 64}, "archs.lstm-tiny.n_hidden"),
    ({"family": "lstm", "bias": {"recency": {"r": 0.6}}}, "archs.lstm-tiny.bias"),
    ({"family": "kneser-ney", "order": 3, "n_layer": 2}, "archs.lstm-tiny.n_layer"),
    ({"family": "kneser-ney", "order": 0}, "order"),
])
def test_inconsistent_or_foreign_sizes_are_an_error_naming_the_key(arch, key):
    with pytest.raises(PovstimError, match=key.replace(".", r"\.")):
        povstim_config.validate(_config(arch))


def test_untied_sizes_need_not_match():
    families.resolve_arch({"family": "lstm", "n_embd": 256, "n_hidden": 128, "tie_weights": False})


def test_the_lstm_trains_with_its_own_learner():
    assert learner_for(families.get("lstm")) is LSTMLearner
    with pytest.raises(PovstimError, match="corpus model"):
        learner_for(families.get("kneser-ney"))


# ----------------------------------------------------------------------------- scores vs a reference


class Reference(nn.Module):
    """nn.Embedding + nn.LSTM(num_layers) + (tied: bias-free projection) + Linear: the textbook LSTM LM."""

    def __init__(self, model):
        super().__init__()
        c = model.config
        self.embed = nn.Embedding(c.vocab_size, c.n_embd)
        self.lstm = nn.LSTM(c.n_embd, c.n_hidden, num_layers=c.n_layer, batch_first=True)
        self.proj = nn.Linear(c.n_hidden, c.n_embd, bias=False) if model.model.proj is not None else None
        self.out = nn.Linear(c.n_out, c.vocab_size)
        with torch.no_grad():
            self.embed.weight.copy_(model.model.embed.weight)
            for i, layer in enumerate(model.model.layers):
                for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                    getattr(self.lstm, f"{name}_l{i}").copy_(getattr(layer, f"{name}_l0"))
            if self.proj is not None:
                self.proj.weight.copy_(model.model.proj.weight)
            self.out.weight.copy_(model.lm_head.weight)
            self.out.bias.copy_(model.lm_head.bias)

    def logprob(self, ids: list[int], first_scored: int) -> list[float]:
        with torch.no_grad():
            h, _ = self.lstm(self.embed(torch.tensor([ids])))
            if self.proj is not None:
                h = self.proj(h)
            lp = torch.log_softmax(self.out(h)[0].double(), dim=-1)
        return [float(lp[t - 1, ids[t]]) for t in range(first_scored, len(ids))]


@pytest.mark.parametrize("bos", [True, False])
@pytest.mark.parametrize("reduction", ["sum", "mean"])
def test_scores_equal_a_plain_pytorch_lstm_with_the_same_weights(trained, bos, reduction):
    folder, _ = trained
    model, tok, kind = S.load(folder)
    assert kind == "causal" and type(model).__name__ == "LSTMForCausalLM"
    got = S.Scorer(model, tok, kind, bos=bos, reduction=reduction, batch_size=3).score(SENTENCES)
    ref = Reference(model).eval()
    for i, sentence in enumerate(SENTENCES):
        ids = tok(sentence, add_special_tokens=False)["input_ids"]
        if bos:
            ids = [tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id] + ids
        lps = ref.logprob(ids, 1)
        want = math.fsum(lps) / (len(lps) if reduction == "mean" else 1)
        assert got.logp[i] == pytest.approx(want, abs=1e-5)
        assert got.ntok[i] == len(lps)


def test_untied_lstm_scores_equal_the_reference(tmp_path):
    from povstim import lstm

    torch.manual_seed(3)
    model = lstm.LSTMForCausalLM(lstm.LSTMConfig(vocab_size=50, n_embd=16, n_hidden=24, n_layer=3,
                                                 tie_word_embeddings=False)).eval()
    ids = [1, 5, 7, 9, 11, 3]
    with torch.no_grad():
        lp = torch.log_softmax(model(torch.tensor([ids])).logits[0].double(), -1)
    mine = [float(lp[t - 1, ids[t]]) for t in range(1, len(ids))]
    assert mine == pytest.approx(Reference(model).eval().logprob(ids, 1), abs=1e-5)


# ----------------------------------------------------------------------------- save, load, resume, stop


def test_a_saved_lstm_loads_with_auto_model_for_causal_lm(trained):
    from transformers import AutoModelForCausalLM

    folder, summary = trained
    families.register_auto_classes()
    model = AutoModelForCausalLM.from_pretrained(folder).eval()
    assert type(model).__name__ == "LSTMForCausalLM" and model.config.model_type == "povstim-lstm"
    assert model.lm_head.weight is model.model.embed.weight  # tied after loading too
    assert summary["arch"] == "lstm" and summary["stop_reason"] == "max_steps"


def test_the_same_seed_gives_the_same_weights_and_another_seed_others(corpus, trained, tmp_path):
    folder, _ = trained
    again = tmp_path / "again"
    trainer(corpus, again).run()
    assert (again / "model.safetensors").read_bytes() == (folder / "model.safetensors").read_bytes()
    other = tmp_path / "other"
    trainer(corpus, other, seed=2, max_steps=10).run()
    assert (other / "model.safetensors").read_bytes() != (folder / "model.safetensors").read_bytes()


@pytest.mark.parametrize("kill_at", [15, 20])
def test_kill_and_resume_gives_byte_identical_weights(corpus, trained, tmp_path, kill_at):
    folder, _ = trained
    out = tmp_path / "m"
    stop_at(trainer(corpus, out), kill_at)
    summary = trainer(corpus, out).run()
    assert summary["steps"] == 30
    assert (out / "model.safetensors").read_bytes() == (folder / "model.safetensors").read_bytes()


def test_early_stopping_stops_an_lstm(corpus, tmp_path, monkeypatch):
    losses = iter([3.0, 2.0, 2.5, 2.6, 2.7, 2.8])
    monkeypatch.setattr(LSTMLearner, "evaluate", lambda self: next(losses))
    summary = trainer(corpus, tmp_path / "m", max_steps=60, patience=20).run()
    assert summary["stop_reason"] == "early_stopping" and summary["best_step"] == 20 and summary["steps"] == 40
