"""`povstim plan` compares each source's final-punctuation spacing ("word ." vs "word.") with each
suite's (Zorro spaced, BLiMP and POSH-BENCH attached) and warns with the fix, as it does for casing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from povstim import config as cfg
from povstim.cli import main
from povstim.preflight import punctuation

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "tests" / "configs" / "tiny.yaml"
SPACED = ["you want the ball ?", "where did it go ?", "derek is here .", "look at that doggy !"]
ATTACHED = ["You want the ball?", "Where did it go?", "Derek is here.", "Look at that doggy!"]


def independent_share(lines):
    """By regex, not the module's loop: a line ending in whitespace + .?! (among the lines ending in .?!)."""
    ending = [s for s in lines if re.search(r"[.?!]\s*$", s)]
    return sum(bool(re.search(r"\s[.?!]+\s*$", s)) for s in ending) / len(ending)


def test_spaced_share_by_hand():
    assert punctuation.spaced_share(SPACED) == 1.0
    assert punctuation.spaced_share(ATTACHED) == 0.0
    # '"no ."' ends in a quote after a spaced terminator (spaced); "ok then" has no terminator and is left out;
    # "wait..." is attached; "3.5" is no sentence end; "?" alone has no word before it
    lines = ['he said " no . "', "ok then", "wait...", "it costs 3.5", "?", "is it , dad ?"]
    assert punctuation.spaced_share(lines) == pytest.approx(2 / 3)
    assert punctuation.spaced_share(["", "no end"]) is None


def _config(benchmarks):
    config = cfg.load(TINY)
    config["benchmarks"] = benchmarks
    return config


def test_real_zorro_and_blimp_against_a_spaced_and_an_attached_source(shared_data, tmp_path):
    blimp = shared_data / "blimp" / "data" / "adjunct_island.jsonl"
    zorro = shared_data / "zorro" / "babyberta" / "anaphor_agreement-pronoun_gender.txt"
    config = _config({"blimp": {"kind": "blimp", "path": str(blimp)}, "zorro": {"kind": "zorro", "path": str(zorro)}})
    result = punctuation.check(config, {"childes": SPACED, "wiki": ATTACHED}, tmp_path)
    zorro_lines = [line.strip() for line in zorro.read_text().splitlines() if line.strip()]
    assert result["suites"]["zorro"]["share"] == pytest.approx(independent_share(zorro_lines)) == 1.0
    assert result["suites"]["blimp"]["share"] == 0.0  # BLiMP attaches every terminator
    w_blimp, w_zorro, w_both = result["warnings"]
    assert w_blimp.startswith("benchmark blimp: 0% of its sentences end in spaced punctuation")
    assert "source(s) childes 100%" in w_blimp and "wiki" not in w_blimp
    assert "set sources.childes.style: posh" in w_blimp
    assert "source(s) wiki 0%" in w_zorro and "childes" not in w_zorro
    assert "set sources.wiki.style: babyberta" in w_zorro and "lowercase: false" in w_zorro
    assert w_both.startswith("the suites disagree among themselves (blimp 0% spaced, zorro 100% spaced)")
    # a source written like the suite: nothing to say about it
    only_zorro = _config({"zorro": {"kind": "zorro", "path": str(zorro)}})
    assert punctuation.check(only_zorro, {"childes": SPACED}, tmp_path)["warnings"] == []


def test_generated_posh_items_are_attached(tmp_path):
    config = _config({"posh": {"kind": "generated", "pairs_per_paradigm": 10, "top_k_words": 3000, "seed": 1}})
    result = punctuation.check(config, {"childes": SPACED, "wiki": ATTACHED}, tmp_path)
    assert result["suites"]["posh"]["share"] == 0.0
    (w,) = result["warnings"]
    assert "source(s) childes 100%" in w and "wiki" not in w


def test_plan_prints_the_spacing_warning_after_cleaning(shared_data, tmp_path, capsys):
    """A spaced, lowercased CSV-like source cleaned in the default posh style comes out attached: against Zorro
    the plan warns, and with style babyberta (lowercase false) it does not."""
    config = yaml.safe_load(TINY.read_text())
    (tmp_path / "cds.txt").write_text("\n".join(SPACED * 300) + "\n")
    zorro = shared_data / "zorro" / "babyberta" / "anaphor_agreement-pronoun_gender.txt"
    config["sources"] = {"cds": {"kind": "local", "format": "lines", "path": str(tmp_path / "cds.txt")},
                         "adult": config["sources"]["adult"]}
    config["benchmarks"] = {"zorro": {"kind": "zorro", "path": str(zorro)}}
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump(config))
    main(["plan", str(path), "--filter-sample", "0"])
    out = capsys.readouterr().out
    assert 'Punctuation spacing (share of sentences whose final punctuation is spaced, "happy ?"):' in out
    assert "source cds               0%" in out  # the posh style attached it
    assert "-> WARNING: benchmark zorro: 100% of its sentences end in spaced punctuation" in out
    assert "source(s) adult 0%, cds 0%" in out and "sources.adult.style, sources.cds.style: babyberta" in out
    config["sources"]["cds"].update(style="babyberta", lowercase=False)
    path.write_text(yaml.safe_dump(config))
    main(["plan", str(path), "--filter-sample", "0"])
    out = capsys.readouterr().out
    assert "source cds             100%" in out
    # the synthetic adult source is rendered attached, like POSH-BENCH: still named, cds no longer
    (warning,) = [line for line in out.splitlines() if "end in spaced punctuation" in line]
    assert "source(s) adult 0%" in warning and "cds" not in warning
