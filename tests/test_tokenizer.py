"""Byte-level BPE tokenizer: special tokens, options, determinism, HF loading, errors."""

from __future__ import annotations

import random

import pytest

from povstim import cli
from povstim.io import PovstimError
from povstim.tokenizer import bpe


def make_corpus(n: int, seed: int = 0) -> list[str]:
    """A small seeded toy grammar in the corpus convention (capitalised, final punctuation attached)."""
    r = random.Random(seed)
    nouns = ["dog", "cat", "boy", "girl", "man", "woman", "bird", "teacher", "baby", "horse"]
    names = ["Mary", "Tom", "Anna", "Max"]
    verbs_t = ["sees", "likes", "chases", "helps", "finds"]
    verbs_i = ["runs", "sleeps", "smiles", "jumps"]
    adjs = ["happy", "big", "small", "red", "sad"]

    def np_():
        if r.random() < 0.2:
            return r.choice(names)
        adj = (r.choice(adjs) + " ") if r.random() < 0.3 else ""
        return f"the {adj}{r.choice(nouns)}"

    out = []
    for _ in range(n):
        k = r.random()
        if k < 0.4:
            s = f"{np_()} {r.choice(verbs_t)} {np_()}."
        elif k < 0.7:
            s = f"{np_()} {r.choice(verbs_i)}."
        elif k < 0.85:
            s = f"is {np_()} {r.choice(adjs)}?"
        else:
            s = f"{np_()} that {r.choice(verbs_i)} {r.choice(verbs_t)} {np_()}."
        out.append(s[0].upper() + s[1:])
    return out


def write_corpus(path, n, seed=0):
    path.write_text("\n".join(make_corpus(n, seed)) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return write_corpus(tmp_path_factory.mktemp("tok") / "train.txt", 2000)


def test_special_tokens_and_roundtrip(corpus):
    tok = bpe.train_file(corpus, {"vocab_size": 400})
    assert bpe.special_ids(tok) == {"bos": 0, "pad": 1, "eos": 2, "unk": 3, "mask": 4}
    assert tok.get_vocab_size() <= 400
    text = "Is the happy dog that runs big?"
    enc = tok.encode(text)
    assert tok.decode(enc.ids).strip() == text
    # no special token is added by the tokenizer itself (causal scorers prepend <s>)
    assert 0 not in enc.ids and 2 not in enc.ids
    # frequent words become single tokens
    assert "Ġdog" in tok.get_vocab()


def test_add_prefix_space_makes_first_word_like_others(corpus):
    with_space = bpe.train_file(corpus, {"vocab_size": 400, "add_prefix_space": True})
    assert with_space.encode("dog").tokens == with_space.encode("the dog").tokens[1:]
    without = bpe.train_file(corpus, {"vocab_size": 400, "add_prefix_space": False})
    assert without.encode("dog").tokens != without.encode("the dog").tokens[1:]


def test_lowercase(corpus):
    tok = bpe.train_file(corpus, {"vocab_size": 400, "lowercase": True})
    assert tok.encode("The DOG").tokens == tok.encode("the dog").tokens
    # merged tokens never contain capitals (single bytes like "A" stay in the byte alphabet)
    merged = [t for t in tok.get_vocab() if len(t) > 1 and not t.startswith("<")]
    assert merged and not any(c.isascii() and c.isupper() for t in merged for c in t)


def test_cli_is_byte_identical_and_vocab_size_matters(corpus, tmp_path):
    outs = []
    for i, vocab in enumerate([400, 400, 320]):
        out = tmp_path / f"t{i}" / "tokenizer.json"
        rc = cli.main(["tokenize", "--train", str(corpus), "--params", f'{{"vocab_size": {vocab}}}', "--out", str(out)])
        assert rc == 0
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    assert outs[0] != outs[2]


def test_hf_wrapper_loads_with_autotokenizer(corpus, tmp_path):
    from transformers import AutoTokenizer

    tok = bpe.train_file(corpus, {"vocab_size": 400})
    for frame, framed in (("none", False), ("bos_eos", True)):
        folder = tmp_path / frame
        bpe.hf_tokenizer(tok, frame).save_pretrained(folder)
        hf = AutoTokenizer.from_pretrained(folder)
        assert (hf.bos_token, hf.eos_token, hf.pad_token, hf.mask_token) == ("<s>", "</s>", "<pad>", "<mask>")
        ids = hf("The dog runs.")["input_ids"]
        plain = tok.encode("The dog runs.").ids
        assert ids == ([0] + plain + [2] if framed else plain)


def test_errors_name_the_cause(tmp_path, capsys):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n")
    with pytest.raises(PovstimError, match="empty"):
        bpe.train_file(empty, {"vocab_size": 400})
    with pytest.raises(PovstimError, match="vocab_sise"):
        bpe.tokenizer_settings({"vocab_sise": 400})
    with pytest.raises(PovstimError, match="vocab_size"):
        bpe.tokenizer_settings({"vocab_size": 100})
    rc = cli.main(["tokenize", "--train", str(tmp_path / "missing.txt"), "--out", str(tmp_path / "t.json")])
    assert rc == 1
    assert "missing.txt" in capsys.readouterr().err
    assert not (tmp_path / "t.json").exists()
