"""Budgets in English-equivalent bytes (size_unit: english_bytes; BabyLM 2026's multilingual track).

Expected quotas are computed here by hand from the byte premiums of Arnett et al. (2024)'s table as
tests/test_languages.py pins them (fr 1.1739790347939143); bytes are measured independently on the written
file (os.path.getsize), words by str.split.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from povstim import config as povstim_config, plan
from povstim.corpus.assemble import assemble
from povstim.io import PovstimError, write_lines
from povstim.preflight.plan import SourceCount, size_lines, size_table

REPO = Path(__file__).resolve().parents[1]
FR = 1.1739790347939143
EN_LINES = [f"the cat number {k} sat on the mat ." for k in range(400)]
FR_LINES = [f"le chat numéro {k} est assis sur le tapis ." for k in range(400)]


def test_a_bilingual_mixture_budgets_each_source_by_its_own_premium(tmp_path):
    lines, st = assemble({"en": EN_LINES, "fr": FR_LINES}, {"en": 1, "fr": 1}, 4000, 3, 0.05, "english_bytes",
                         {"en": "en", "fr": "fr"})
    assert st["sources"]["en"]["quota_bytes"] == 2000 and st["sources"]["fr"]["quota_bytes"] == round(2000 * FR)
    for name, src in (("en", EN_LINES), ("fr", FR_LINES)):
        got = [ln for ln in lines if ln in set(src)]
        size = sum(len(ln.encode("utf-8")) + 1 for ln in got)
        assert size == st["sources"][name]["bytes"] and size >= st["sources"][name]["quota_bytes"]
        assert size - max(len(ln.encode("utf-8")) + 1 for ln in got) < st["sources"][name]["quota_bytes"]  # shortest
    out = tmp_path / "base.txt"
    write_lines(out, lines)
    assert os.path.getsize(out) == st["bytes"]  # a line's bytes are its UTF-8 text and its newline
    assert st["words"] == sum(len(ln.split()) for ln in lines)
    assert st["english_equivalent_bytes"] == pytest.approx(st["sources"]["en"]["bytes"] + st["sources"]["fr"]["bytes"] / FR, abs=0.2)
    # nested sizes, as with words
    smaller, _ = assemble({"en": EN_LINES, "fr": FR_LINES}, {"en": 1, "fr": 1}, 2000, 3, 0.05, "english_bytes",
                          {"en": "en", "fr": "fr"})
    assert set(smaller) < set(lines)


def test_words_stay_words():
    _, st = assemble({"en": EN_LINES}, {"en": 1}, 300, 3, 0.05)
    assert "size_unit" not in st and "bytes" not in st and st["budget_words"] == 300
    assert set(st["sources"]["en"]) == {"sentences", "words", "words_per_sentence", "questions", "question_share",
                                        "share", "quota_words", "available_words", "available_sentences"}


def _config(unit):
    return {"experiment": "x", "language": "fr", "size_unit": unit, "sizes": ["6k"],
            "sources": {"cds_fr": {"kind": "local"}, "cds_en": {"kind": "local", "language": "en"}},
            "corpora": {"mix": {"mixture": {"cds_fr": 0.5, "cds_en": 0.5}, "seed": 1}}}


def test_plan_shows_the_conversion():
    counts = {"cds_fr": SourceCount("cds_fr", "local", lines=FR_LINES, words=9 * 400),
              "cds_en": SourceCount("cds_en", "local", lines=EN_LINES, words=8 * 400)}
    (row,) = size_table(_config("english_bytes"), counts)
    fr = row["sources"]["cds_fr"]
    assert fr["needs"] == round(3000 * FR) and fr["english_bytes"] == 3000 and fr["language"] == "fr"
    assert fr["has"] == sum(len(ln.encode()) + 1 for ln in FR_LINES)
    text = "\n".join(size_lines([row]))
    assert f"cds_fr [fr] 3,000 x 1.1740 = {round(3000 * FR):,}/" in text and "cds_en [en] 3,000 x 1.0000 = 3,000/" in text
    assert "English-equivalent bytes" in text
    (words_row,) = size_table(_config("words"), counts)
    assert words_row["sources"]["cds_fr"] == {"needs": 3000, "has": 3600, "ok": True} and "unit" not in words_row
    assert plan.assemble_unit_args(_config("words"), "mix") == "--unit words"
    assert plan.assemble_unit_args(_config("english_bytes"), "mix") == (
        "--unit english_bytes --languages '{\"cds_en\": \"en\", \"cds_fr\": \"fr\"}'")


def test_bad_input_names_the_key(tmp_path):
    cfg = yaml.safe_load((REPO / "configs" / "french-demo.yaml").read_text(encoding="utf-8"))
    cfg["size_unit"] = "bytes"
    with pytest.raises(PovstimError, match="size_unit"):
        povstim_config.validate(cfg)
    cfg["size_unit"] = "english_bytes"
    cfg["sizes"] = ["10MB_en"]
    with pytest.raises(PovstimError, match="sizes"):
        povstim_config.validate(cfg)
    src = tmp_path / "fr.txt"
    write_lines(src, FR_LINES)
    env = {**os.environ, "PYTHONPATH": str(REPO / "workflow")}
    r = subprocess.run([sys.executable, "-m", "povstim", "assemble", "--input", f"cds_fr={src}", "--mixture",
                        json.dumps({"cds_fr": 1}), "--words", "1k", "--unit", "english_bytes", "--out",
                        tmp_path / "b.txt", "--stats", tmp_path / "s.json"], capture_output=True, text=True, env=env)
    assert r.returncode == 1 and "english_bytes needs the language of source 'cds_fr'" in r.stderr
    assert "Traceback" not in r.stderr and not (tmp_path / "b.txt").exists()
