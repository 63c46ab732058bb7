"""`povstim plan` warns when a corpus's casing and a benchmark's disagree while tokenizer.lowercase is
false (lowercased CHILDES against capitalised BLiMP/POSH items, a capitalised corpus against Zorro)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from povstim import config as cfg
from povstim.cli import main
from povstim.preflight import casing

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "tests" / "configs" / "tiny.yaml"
LOWER = ["you want the ball ?", "where did it go ?", "derek is here .", "look at that doggy ."]
CAPS = ["You want the ball?", "Where did it go?", "Derek is here.", "Look at that doggy."]


def independent_share(lines):
    """By regex, not the module's loop: the first letter of the line is an upper-case ASCII letter."""
    lettered = [s for s in lines if re.search("[A-Za-z]", s)]
    return sum(bool(re.match(r"^[^A-Za-z]*[A-Z]", s)) for s in lettered) / len(lettered)


def test_initial_capital_share_by_hand():
    assert casing.initial_capital_share(LOWER) == 0.0
    assert casing.initial_capital_share(CAPS) == 1.0
    # "' tis" starts with a quote, "3 dogs" with a digit: the first letter counts; "..." has none and is left out
    assert casing.initial_capital_share(["' Tis the season.", "3 dogs ran.", "...", "ok then."]) == pytest.approx(1 / 3)
    assert casing.initial_capital_share(["...", ""]) is None


def _config(tmp_path, benchmarks, lowercase=False):
    config = cfg.load(TINY)
    config["tokenizer"]["lowercase"] = lowercase
    config["benchmarks"] = benchmarks
    return config


def test_real_blimp_and_zorro_against_a_lowercased_and_a_capitalised_source(shared_data, tmp_path):
    blimp = shared_data / "blimp" / "data" / "adjunct_island.jsonl"
    zorro = shared_data / "zorro" / "babyberta" / "anaphor_agreement-pronoun_gender.txt"
    config = _config(tmp_path, {"blimp": {"kind": "blimp", "path": str(blimp)},
                                "zorro": {"kind": "zorro", "path": str(zorro)}})
    result = casing.check(config, {"childes": LOWER, "wiki": CAPS}, tmp_path)
    zorro_lines = [line.strip() for line in zorro.read_text().splitlines() if line.strip()]
    assert result["suites"]["blimp"]["share"] == 1.0  # BLiMP: every sentence starts with a capital
    assert result["suites"]["zorro"]["share"] == pytest.approx(independent_share(zorro_lines))
    assert 0 < result["suites"]["zorro"]["share"] < 0.5  # only names are capitalised (1,078 of 4,000 lines)
    (w_blimp, w_zorro) = result["warnings"]
    assert w_blimp.startswith("benchmark blimp: 100% of its sentences start with a capital, but source(s) childes 0%")
    assert "capitals (sentence starts, names) they never saw in a lowercased corpus" in w_blimp
    assert "wiki" not in w_blimp and "set tokenizer.lowercase: true" in w_blimp
    assert "source(s) wiki 100%" in w_zorro and "childes" not in w_zorro
    assert "lowercase sentence starts they did not learn from a capitalised corpus" in w_zorro
    # tokenizer.lowercase true: the tokenizer lowercases both sides, nothing to warn about
    config["tokenizer"]["lowercase"] = True
    assert casing.check(config, {"childes": LOWER, "wiki": CAPS}, tmp_path)["warnings"] == []


def test_generated_posh_items_are_capitalised_and_unreadable_suites_are_not_checked(tmp_path):
    config = _config(tmp_path, {"posh": {"kind": "generated", "pairs_per_paradigm": 10, "top_k_words": 3000,
                                         "seed": 1},
                                "gone": {"kind": "blimp", "path": "nowhere/blimp.jsonl"}})
    result = casing.check(config, {"childes": LOWER}, tmp_path)
    assert result["suites"]["posh"]["share"] == 1.0
    assert result["suites"]["gone"]["share"] is None and result["suites"]["gone"]["from"].startswith("not checked")
    assert len(result["warnings"]) == 1 and result["warnings"][0].startswith("benchmark posh: 100%")
    assert casing.check(config, {"wiki": CAPS}, tmp_path)["warnings"] == []


def test_lowercase_tokenizer_lowercases_benchmark_items_at_scoring(tmp_path):
    """What the advice relies on: the tokenizer.json's normaliser lowercases items through the scorer's wrapper."""
    from povstim.tokenizer.bpe import build, hf_tokenizer, tokenizer_settings

    tok, trainer = build(tokenizer_settings({"vocab_size": 300, "lowercase": True}))
    tok.train_from_iterator(LOWER * 20, trainer)
    hf = hf_tokenizer(tok)
    assert hf("Derek is here.")["input_ids"] == hf("derek is here.")["input_ids"]


def test_plan_prints_the_casing_warning(shared_data, tmp_path, capsys):
    config = yaml.safe_load(TINY.read_text())
    (tmp_path / "cds.txt").write_text("\n".join(LOWER * 300) + "\n")
    config["sources"] = {"cds": {"kind": "local", "format": "lines", "path": str(tmp_path / "cds.txt"),
                                 "style": "babyberta"},
                         "adult": config["sources"]["adult"]}
    config["benchmarks"] = {"blimp": {"kind": "blimp",
                                      "path": str(shared_data / "blimp" / "data" / "adjunct_island.jsonl")}}
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump(config))
    main(["plan", str(path), "--filter-sample", "0"])
    out = capsys.readouterr().out
    assert "Casing (share of sentences that start with a capital letter; tokenizer.lowercase false):" in out
    assert "source cds               0%" in out and "source adult           100%" in out
    assert "-> WARNING: benchmark blimp: 100% of its sentences start with a capital, but source(s) cds 0%" in out
