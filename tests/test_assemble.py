"""Corpus assembly: word budget, mixture shares, determinism, nesting, order, errors, stats."""

from __future__ import annotations

import json

import pytest

from povstim.cli import main
from povstim.corpus.assemble import assemble, quotas
from povstim.io import PovstimError


def _source(tag: str, n: int, q_every: int = 4) -> list[str]:
    # lengths 3..9 words; every q_every-th line a question; the line number is in the text
    return [f"{tag} line {i:05d} " + " ".join(["w"] * (i % 7)) + ("?" if i % q_every == 0 else ".")
            for i in range(n)]


A = _source("aa", 4000)
B = _source("bb", 3000, q_every=10**9)
SOURCES = {"a": A, "b": B}
MIX = {"a": 0.7, "b": 0.3}


def _words(lines):
    return sum(len(x.split()) for x in lines)


def test_budget_and_mixture_shares():
    out, stats = assemble(SOURCES, MIX, 10_000, seed=1)
    assert 10_000 <= _words(out) < 10_000 + 2 * 10  # at most one sentence over per source
    wa = _words([x for x in out if x.startswith("aa")])
    wb = _words([x for x in out if x.startswith("bb")])
    assert 7_000 <= wa < 7_010 and 3_000 <= wb < 3_010
    assert stats["sources"]["a"]["words"] == wa and stats["sources"]["b"]["quota_words"] == 3_000
    assert stats["words"] == wa + wb and stats["sentences"] == len(out)


def test_quotas_add_up_and_normalise():
    assert quotas({"x": 2, "y": 1, "z": 1}, 1001) == {"x": 501, "y": 250, "z": 250}
    assert sum(quotas({"x": 1, "y": 1, "z": 1}, 10).values()) == 10
    with pytest.raises(PovstimError, match="positive"):
        quotas({"x": 0}, 10)


def test_deterministic_for_a_seed_and_seed_matters():
    a1, _ = assemble(SOURCES, MIX, 8_000, seed=3)
    a2, _ = assemble(SOURCES, MIX, 8_000, seed=3)
    b, _ = assemble(SOURCES, MIX, 8_000, seed=4)
    assert a1 == a2 and a1 != b


def test_smaller_sizes_are_nested_in_larger_ones():
    sizes = [2_000, 5_000, 12_000, 20_000]
    outs = [set(assemble(SOURCES, MIX, s, seed=7)[0]) for s in sizes]
    for small, big in zip(outs, outs[1:]):
        assert small < big


def test_source_order_is_kept_and_sources_interleave():
    out, _ = assemble(SOURCES, MIX, 9_000, seed=2)
    for tag in ("aa", "bb"):
        nums = [int(x.split()[2]) for x in out if x.startswith(tag)]
        assert nums == sorted(nums) and len(nums) > 100
    # both sources appear in each half of the corpus (interleaved, not concatenated)
    half = len(out) // 2
    assert {x[:2] for x in out[:half]} == {"aa", "bb"} == {x[:2] for x in out[half:]}
    # selection is a sample across the whole source, not its first lines
    nums = [int(x.split()[2]) for x in out if x.startswith("aa")]
    assert nums[-1] > 3_500


def test_too_large_size_names_source_needed_and_available():
    with pytest.raises(PovstimError) as exc:
        assemble(SOURCES, MIX, 100_000, seed=1)
    msg = str(exc.value)
    assert "'a'" in msg and "70,000" in msg and f"{_words(A):,}" in msg


def test_mixture_and_inputs_must_match():
    with pytest.raises(PovstimError, match="no --input gives it"):
        assemble({"a": A}, MIX, 1_000, seed=1)
    with pytest.raises(PovstimError, match="not in the mixture"):
        assemble(SOURCES, {"a": 1.0}, 1_000, seed=1)


def test_stats_match_table4_quantities():
    out, stats = assemble(SOURCES, MIX, 6_000, seed=1)
    n, words = len(out), sum(len(line.split()) for line in out)
    questions = sum(1 for line in out if line.rstrip().endswith("?"))
    assert {k: stats[k] for k in ("sentences", "words", "words_per_sentence", "questions", "question_share")} == {
        "sentences": n, "words": words, "words_per_sentence": round(words / n, 3), "questions": questions,
        "question_share": round(questions / n, 4)}


def test_cli_writes_corpus_and_stats(tmp_path, capsys):
    pa, pb = tmp_path / "a.txt", tmp_path / "b.txt"
    pa.write_text("\n".join(A) + "\n", encoding="utf-8")
    pb.write_text("\n".join(B) + "\n\n", encoding="utf-8")  # a blank line is skipped
    out, stats = tmp_path / "c" / "base.txt", tmp_path / "c" / "stats.json"
    args = ["assemble", "--input", f"a={pa}", f"b={pb}", "--mixture", json.dumps(MIX), "--words", "5k",
            "--seed", "1", "--out", str(out), "--stats", str(stats)]
    assert main(args) == 0
    lines = out.read_text(encoding="utf-8").splitlines()
    st = json.loads(stats.read_text())
    assert lines == assemble(SOURCES, MIX, 5_000, seed=1)[0]
    assert st["sentences"] == len(lines) and st["size"] == "5k" and st["budget_words"] == 5_000
    assert 0 < st["sources"]["a"]["question_share"] < 0.5 and st["sources"]["b"]["question_share"] == 0
    first = out.read_bytes()
    assert main(args) == 0 and out.read_bytes() == first

    # too large: clear error, nothing written
    big = tmp_path / "big.txt"
    args_big = args[:]
    args_big[args_big.index("5k")] = "1M"
    args_big[args_big.index(str(out))] = str(big)
    assert main(args_big) == 1
    err = capsys.readouterr().err
    assert "source 'a'" in err and "700,000" in err and not big.exists()

    assert main(["assemble", "--input", "nopath", "--mixture", "{}", "--words", "1k", "--out", str(big),
                 "--stats", str(stats)]) == 1
    assert "expected NAME=PATH" in capsys.readouterr().err
    assert main(["assemble", "--input", f"a={tmp_path / 'missing.txt'}", "--mixture", '{"a": 1}', "--words", "1k",
                 "--out", str(big), "--stats", str(stats)]) == 1
    assert "does not exist" in capsys.readouterr().err


def test_a_line_that_dominates_the_corpus_is_a_warning(caplog):
    # With max_sentence_words: null one 10,000-word line was 10,000 of a 16k corpus's 16,001 words,
    # silently (within the size tolerance). 1,000 six-word lines + the long line (line 501) = 16,000 words: a
    # 16k budget takes every line, the long one holds 10,000 / 16,000 = 62.5% of the corpus.
    import logging

    lines = [f"short line number {i} is here" for i in range(1000)]
    lines.insert(500, " ".join(["word"] * 10_000))
    caplog.set_level(logging.WARNING, logger="povstim.assemble")
    out, stats = assemble({"mine": lines}, {"mine": 1.0}, 16_000, seed=1, tolerance=0.05)
    assert stats["words"] == 16_000
    assert stats["dominant_line"] == {"source": "mine", "line": 501, "words": 10_000, "share": 0.625}
    msg = " ".join(r.getMessage() for r in caplog.records)
    assert "line 501 of source 'mine'" in msg and "10,000 of the corpus's 16,000 words (62.5%)" in msg
    assert "sources.mine.max_sentence_words" in msg
    # ordinary sentences: no warning, and stats.json as it was (no dominant_line key)
    caplog.clear()
    _, stats = assemble(SOURCES, MIX, 5_000, seed=1)
    assert "dominant_line" not in stats and not caplog.records


def test_preview_says_what_assemble_does_at_every_budget_in_words_and_bytes():
    # povstim plan's per-size check is assemble's own selection without the corpus: at each budget the
    # preview's tolerance error is assemble's PovstimError, and its dominant line is stats.json's record
    from povstim.corpus.assemble import preview

    short = [f"short line number {i} is here" for i in range(400)]
    lines = short[:200] + [" ".join(["word"] * 3_000)] + short[200:]
    seen = set()
    for unit, budgets, langs, lines in (("words", (500, 1_500, 3_000, 4_000, 5_400), None, lines),
                                        ("english_bytes", (5_000, 12_000, 20_000, 25_000), {"mine": "en"}, lines),
                                        ("words", (1_000, 2_400), None, short)):
        for budget in budgets:
            got = preview({"mine": lines}, {"mine": 1.0}, budget, 1, 0.02, unit, langs)
            try:
                _, stats = assemble({"mine": lines}, {"mine": 1.0}, budget, seed=1, tolerance=0.02, unit=unit,
                                    langs=langs, warn=False)
            except PovstimError as exc:
                assert got == {"overshoot": str(exc)}
                seen.add("overshoot")
                continue
            assert "overshoot" not in got and got.get("dominant_line") == stats.get("dominant_line")
            seen.add("dominant" if "dominant_line" in stats else "fine")
    assert seen == {"overshoot", "dominant", "fine"}
