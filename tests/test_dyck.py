"""Shuffled k-Dyck generator (Hu et al. 2025) and the pre-pretraining hand-over to a condition (POSH §7)."""

from __future__ import annotations

import json

import pytest

from povstim import cli
from povstim.formal import dyck
from povstim.io import PovstimError
from povstim.tokenizer import bpe
from test_tokenizer import write_corpus


def replay(seq, k):
    """Independent checker: per-type open counts after each symbol; fails on a close without an open."""
    counts = [0] * k
    depths = []
    for s in seq:
        assert 0 <= s < 2 * k, f"symbol {s} outside the 2k brackets"
        if s < k:
            counts[s] += 1
        else:
            assert counts[s - k] > 0, f"closing {s} closes a type with no open bracket"
            counts[s - k] -= 1
        depths.append(sum(counts))
    return counts, depths


def test_complete_sequences_are_balanced_over_k_types():
    spec = dyck.DyckSpec(k=4, length=32, p_open=0.5, max_depth=8, complete=True)
    seqs = list(dyck.generate(spec, 400, seed=3))
    for seq in seqs:
        assert len(seq) == 32
        counts, depths = replay(seq, 4)
        assert counts == [0, 0, 0, 0]  # every bracket opened is closed by one of its own type
        assert max(depths) <= 8
    # all k opening and k closing symbols are used
    assert {s for seq in seqs for s in seq} == set(range(8))


def test_truncated_sequences_are_valid_prefixes_as_in_hu_et_al():
    spec = dyck.DyckSpec(k=3, length=20, p_open=0.5, max_depth=5, complete=False)
    seqs = list(dyck.generate(spec, 300, seed=1))
    ends_open = 0
    for seq in seqs:
        counts, depths = replay(seq, 3)  # never closes what is not open
        assert max(depths) <= 5
        ends_open += sum(counts) > 0
    assert ends_open > 0  # cut at the length, most words are unfinished ("may be invalid due to truncation")


def test_shuffled_variant_has_crossing_dependencies():
    """Unlike k-Dyck, a bracket may close while a later-opened one of another type is still open."""
    spec = dyck.DyckSpec(k=2, length=16, complete=True)
    crossing = 0
    for seq in dyck.generate(spec, 200, seed=5):
        stack = []
        for s in seq:
            if s < 2:
                stack.append(s)
            else:
                if stack[-1] != s - 2:
                    crossing += 1
                stack.reverse()
                stack.remove(s - 2)  # the most recent open bracket of that type
                stack.reverse()
    assert crossing > 0


def test_open_probability_matches_p_open():
    """Where the generator may choose (0 < depth < max_depth), it opens with probability p_open."""
    spec = dyck.DyckSpec(k=5, length=64, p_open=0.3, max_depth=60, complete=False)
    opens = choices = 0
    for seq in dyck.generate(spec, 400, seed=2):
        depth = 0
        for s in seq:
            if 0 < depth < 60:
                choices += 1
                opens += s < 5
            depth += 1 if s < 5 else -1
    assert abs(opens / choices - 0.3) < 0.02


def test_deterministic_per_seed_and_split():
    spec = dyck.DyckSpec(k=8, length=24)
    a = list(dyck.generate(spec, 50, seed=7))
    assert a == list(dyck.generate(spec, 50, seed=7))
    assert a != list(dyck.generate(spec, 50, seed=8))
    assert a != list(dyck.generate(spec, 50, seed=7, split="dev"))


def test_bad_spec_is_an_error():
    with pytest.raises(PovstimError, match="k must be"):
        dyck.DyckSpec(k=0).check()
    with pytest.raises(PovstimError, match="even length"):
        dyck.DyckSpec(k=2, length=7, complete=True).check()


def test_cli_generate_is_byte_identical(tmp_path):
    params = json.dumps({"k": 6, "length": 16, "p_open": 0.5, "max_depth": 4, "complete": False,
                         "sequences": 100, "dev_sequences": 10, "seed": 1})
    outs = []
    for run in ("a", "b"):
        d = tmp_path / run
        assert cli.main(["dyck", "generate", "--params", params, "--out-train", str(d / "train.txt"),
                         "--out-dev", str(d / "dev.txt"), "--stats", str(d / "stats.json")]) == 0
        outs.append((d / "train.txt").read_bytes() + (d / "dev.txt").read_bytes())
    assert outs[0] == outs[1]
    seqs = dyck.read_sequences(tmp_path / "a" / "train.txt", 6)
    assert len(seqs) == 100 and all(len(s) == 16 for s in seqs)


# --------------------------------------------------------------------------- pre-pretraining

ARCH = {"family": "gpt2", "n_layer": 2, "n_embd": 32, "n_head": 2, "n_inner": 64}
TRAINING = {"lr": 3e-3, "batch_size": 8, "context": 16, "warmup": 0, "max_steps": 6, "patience": 100,
            "eval_every": 3, "save_every": 3, "log_every": 3, "packing": False, "device": "cpu"}


@pytest.fixture(scope="module")
def pretrained(tmp_path_factory):
    d = tmp_path_factory.mktemp("dyck")
    params = json.dumps({"k": 4, "length": 16, "p_open": 0.5, "max_depth": 4, "complete": False,
                         "sequences": 80, "dev_sequences": 8, "seed": 1})
    assert cli.main(["dyck", "generate", "--params", params, "--out-train", str(d / "dtrain.txt"),
                     "--out-dev", str(d / "ddev.txt")]) == 0
    assert cli.main(["dyck", "pretrain", "--train", str(d / "dtrain.txt"), "--dev", str(d / "ddev.txt"),
                     "--arch", json.dumps(ARCH), "--params", json.dumps(TRAINING),
                     "--dyck", json.dumps({"k": 4, "steps": 5}), "--vocab-size", "400", "--seed", "1",
                     "--out-dir", str(d / "ckpt"), "--threads", "1", "--no-progress"]) == 0
    train = write_corpus(d / "train.txt", 300, seed=1)
    write_corpus(d / "dev.txt", 30, seed=2)
    bpe.save(bpe.train_file(train, {"vocab_size": 350}), d / "tok.json")
    return d


def test_pretraining_runs_exactly_steps_and_keeps_last_weights(pretrained):
    summary = json.loads((pretrained / "ckpt" / "train_summary.json").read_text())
    assert summary["steps"] == 5 and summary["best_step"] == 5
    cfg = json.loads((pretrained / "ckpt" / "config.json").read_text())
    assert cfg["vocab_size"] == 400 and cfg["model_type"] == "gpt2"
    assert json.loads((pretrained / "ckpt" / "dyck_vocab.json").read_text())["offset"] == 5


def test_target_run_starts_from_the_dyck_weights(pretrained):
    import torch
    from safetensors.torch import load_file

    from povstim.train.loop import Trainer
    from povstim.train.params import resolve

    dyck_w = load_file(str(pretrained / "ckpt" / "model.safetensors"))

    def trainer(arch, out, **kw):
        a, t = resolve(arch, TRAINING)
        return Trainer(train=str(pretrained / "train.txt"), dev=str(pretrained / "dev.txt"),
                       tokenizer=str(pretrained / "tok.json"), arch=a, training=t, seed=1,
                       out_dir=str(pretrained / out), threads=1, progress=False, **kw)

    biased = {**ARCH, "bias": {"dyck": {"k": 4, "steps": 5}}}
    tr = trainer(biased, "target", init_from=str(pretrained / "ckpt"))
    own = tr.learner.raw_model.state_dict()
    vocab = tr.corpora.vocab_size
    assert vocab < 400  # the condition's tokenizer is smaller than the Dyck model's vocabulary
    for name, w in dyck_w.items():
        expected = w[:vocab] if name.endswith("wte.weight") else w
        assert torch.equal(own[name], expected), name
    assert torch.equal(own["lm_head.weight"], dyck_w["transformer.wte.weight"][:vocab])  # still tied
    # a model of the same seed without the checkpoint starts elsewhere
    plain = trainer(ARCH, "plain").learner.raw_model.state_dict()
    assert not torch.equal(plain["transformer.h.0.attn.c_attn.weight"], own["transformer.h.0.attn.c_attn.weight"])
    # and the continued run trains from there
    summary = tr.run()
    assert summary["steps"] == 6


def test_dyck_arch_without_checkpoint_or_checkpoint_without_dyck_is_an_error(pretrained, capsys):
    base = ["train", "--train", str(pretrained / "train.txt"), "--dev", str(pretrained / "dev.txt"),
            "--tokenizer", str(pretrained / "tok.json"), "--params", json.dumps(TRAINING),
            "--out-dir", str(pretrained / "x"), "--no-progress", "--seed", "1"]
    biased = {**ARCH, "bias": {"dyck": {"k": 4}}}
    assert cli.main(base + ["--arch", json.dumps(biased)]) == 1
    assert "--init-from" in capsys.readouterr().err
    assert cli.main(base + ["--arch", json.dumps(ARCH), "--init-from", str(pretrained / "ckpt")]) == 1
    assert "bias.dyck" in capsys.readouterr().err
