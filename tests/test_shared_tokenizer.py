"""tokenizer.shared (docs/training.md, "A shared tokenizer"): one tokenizer per size for every condition, so a few
changed sentences cannot reshuffle one condition's vocabulary; POSH's per-condition tokenizers stay the default."""

from __future__ import annotations

import copy
import json
import random

import pytest
import yaml

from povstim import config as cfg
from povstim import plan
from povstim.cli import main
from povstim.io import PovstimError
from povstim.tokenizer import bpe


def corpora(tmp_path):
    """Two corpora of 600 seeded random sentences that differ by 8 sentences (4 out, 4 in), as BABY-F and a BABY
    that swapped 4 sentences; the 4 put in hold words the others never use."""
    rng = random.Random(7)
    words = [f"w{i}{'x' * (i % 5)}" for i in range(300)]
    common = [" ".join(rng.choice(words) for _ in range(rng.randint(3, 9))) for _ in range(596)]
    out_ = [" ".join(rng.choice(words) for _ in range(6)) for _ in range(4)]
    in_ = [f"myself himself herself themselves ourselves {k}" for k in range(4)]
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("\n".join(common + out_) + "\n")
    b.write_text("\n".join(common + in_) + "\n")
    return a, b


def vocab(path):
    return set(json.loads(path.read_text())["model"]["vocab"])


def test_union_counts_a_shared_sentence_once(tmp_path):
    """Hand-counted: a holds x twice and y once; b holds x once, y once and z: the union is x, x, y, z."""
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("x\ny\nx\n")
    b.write_text("x\ny\nz\n")
    assert sorted(bpe.union_sentences([a, b])) == ["x", "x", "y", "z"]


def test_a_shared_tokenizer_does_not_move_with_the_corpus(tmp_path):
    """Per condition (POSH), the 8 changed sentences change the vocabulary; one tokenizer trained on the union
    (the CLI as the rule runs it) is the same file for both conditions, and it holds the words of both."""
    a, b = corpora(tmp_path)
    params = json.dumps({"vocab_size": 400, "min_frequency": 2})
    for name, train in (("a", [a]), ("b", [b]), ("shared", [a, b]), ("shared2", [a, b])):
        assert main(["tokenize", "--train", *map(str, train), "--params", params,
                     "--out", str(tmp_path / name / "tokenizer.json")]) == 0
    va, vb = vocab(tmp_path / "a" / "tokenizer.json"), vocab(tmp_path / "b" / "tokenizer.json")
    assert va != vb  # the per-condition tokenizers differ
    assert (tmp_path / "shared" / "tokenizer.json").read_bytes() == (tmp_path / "shared2" / "tokenizer.json").read_bytes()
    # one corpus alone gives what it gave before the option existed
    assert main(["tokenize", "--train", str(a), "--params", params, "--out", str(tmp_path / "a2.json")]) == 0
    assert (tmp_path / "a2.json").read_bytes() == (tmp_path / "a" / "tokenizer.json").read_bytes()


@pytest.fixture
def default(repo_root):
    c = yaml.safe_load((repo_root / "config.yaml").read_text())
    return c


def test_tokenizer_corpora(default):
    c = copy.deepcopy(default)
    cfg.validate(c)
    assert plan.tokenizer_corpora(c, "baby", "10k") == ["baby"]
    assert "shared" not in plan.tokenizer_params(c)  # the default's tokenize jobs keep their parameters
    c["tokenizer"]["shared"] = True
    cfg.validate(c)
    assert plan.tokenizer_corpora(c, "baby", "10k") == list(c["conditions"])
    c["tokenizer"]["shared"] = "baby-f"
    cfg.validate(c)
    assert plan.tokenizer_corpora(c, "wiki", "30k") == ["baby-f"]


def test_a_bad_shared_name_is_one_line(default):
    c = copy.deepcopy(default)
    c["tokenizer"]["shared"] = "babyf"
    with pytest.raises(PovstimError, match=r"^config: tokenizer\.shared: 'babyf' is not a condition"):
        cfg.validate(c)
    c = copy.deepcopy(default)
    c["conditions"]["baby-f"]["sizes"] = ["10k"]
    c["tokenizer"]["shared"] = "baby-f"
    with pytest.raises(PovstimError, match=r"tokenizer\.shared: condition 'baby-f' has no corpus at size\(s\) 30k"):
        cfg.validate(c)
