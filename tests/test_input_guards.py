"""Bad input in a researcher's own files: every fault is planted, and each test checks the message (file and
line), the exit status and that nothing half-written remains ("Does not hold")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from povstim.cli import main
from povstim.corpus.assemble import assemble
from povstim.io import PovstimError, read_sentences

REPO = Path(__file__).resolve().parents[1]


def _sentences(n: int, start: int = 0) -> list[str]:
    return [f"The child number {i} saw a red ball today." for i in range(start, start + n)]


def _clean(tmp_path: Path, raw: bytes, capsys, **spec) -> tuple[int, Path, Path, str]:
    src = tmp_path / "mine.txt"
    src.write_bytes(raw)
    params = {"kind": "local", "format": "lines", "path": str(src), **spec}
    out, stats = tmp_path / "out" / "mine.txt", tmp_path / "out" / "mine.stats.json"
    code = main(["clean", "--source", "mine", "--params", json.dumps(params), "--out", str(out),
                 "--stats", str(stats)])
    return code, out, stats, capsys.readouterr().err


def test_invalid_utf8_and_nul_lines_are_counted_reported_and_dropped(tmp_path, capsys, caplog):
    lines = [s.encode() for s in _sentences(5)]
    lines[1] = b"The caf\xe9 was full of people today."  # latin-1, not UTF-8
    lines[3] = b"The dog \x00 ate the cake."
    code, out, stats_path, err = _clean(tmp_path, b"\n".join(lines) + b"\n", capsys)
    assert code == 0
    text = out.read_text(encoding="utf-8")
    assert "\ufffd" not in text and "\x00" not in text and "caf" not in text
    assert len(text.splitlines()) == 3
    stats = json.loads(stats_path.read_text())
    assert stats["dropped"]["invalid_bytes"] == 1 and stats["dropped"]["nul_bytes"] == 1
    assert stats["malformed_lines"] == 2
    wheres = [e["where"] for e in stats["malformed_examples"]]
    assert wheres == [f"{tmp_path / 'mine.txt'}:2", f"{tmp_path / 'mine.txt'}:4"]
    assert "0xe9" in stats["malformed_examples"][0]["why"]
    assert "\\xe9" in stats["malformed_examples"][0]["line"]  # shown, not replaced by U+FFFD
    assert "mine.txt:2: not valid utf-8" in caplog.text  # the log warns, naming file and line


def test_invalid_text_fail_stops_naming_file_and_line_and_writes_nothing(tmp_path, capsys):
    raw = b"\n".join(s.encode() for s in _sentences(3)) + b"\nA bad \xff\xfe line here today.\n"
    code, out, stats, err = _clean(tmp_path, raw, capsys, invalid_text="fail")
    assert code == 1
    assert "mine.txt:4" in err and "0xff" in err and "invalid_text" in err
    assert "Traceback" not in err
    assert not out.exists() and not stats.exists()
    assert not list((tmp_path / "out").glob(".*tmp")) if (tmp_path / "out").exists() else True


def test_genuine_replacement_characters_are_dropped_not_trained_on(tmp_path, capsys):
    raw = ("\n".join(_sentences(3)) + "\nThe caf\ufffd was full of people.\n").encode()
    code, out, stats, _ = _clean(tmp_path, raw, capsys)
    assert code == 0
    assert "\ufffd" not in out.read_text(encoding="utf-8")
    assert json.loads(stats.read_text())["dropped"]["replacement_char"] == 1


def test_overlong_lines_are_dropped_by_the_sentence_length_cap(tmp_path, capsys):
    monster = " ".join(["word"] * 10_000) + "."
    raw = ("\n".join(_sentences(4)) + "\n" + monster + "\n").encode()
    code, out, stats_path, _ = _clean(tmp_path, raw, capsys)
    assert code == 0
    stats = json.loads(stats_path.read_text())
    assert stats["dropped"]["over_150_words"] == 1 and stats["longest_dropped_words"] == 10_000
    assert max(len(s.split()) for s in out.read_text().splitlines()) <= 150
    # the cap is a setting: null keeps the line
    code, out, stats_path, _ = _clean(tmp_path, raw, capsys, max_sentence_words=None)
    assert code == 0 and len(out.read_text().splitlines()) == 5


def test_assembled_size_beyond_tolerance_fails_naming_source_and_line():
    lines = _sentences(2000)
    lines[7] = " ".join(["word"] * 10_000) + "."
    # with this seed the long line is selected for an 8k corpus (the original issue's 17,193 words)
    with pytest.raises(PovstimError) as err:
        for seed in range(50):
            out, stats = assemble({"mine": lines}, {"mine": 1.0}, 8000, seed, tolerance=0.02)
    msg = str(err.value)
    assert "line 8 of source 'mine' with 10,000 words" in msg
    assert "8,000" in msg and "max_sentence_words" in msg and "size_tolerance" in msg


def test_assembled_size_within_tolerance_passes_and_is_recorded():
    out, stats = assemble({"mine": _sentences(2000)}, {"mine": 1.0}, 8000, 1, tolerance=0.02)
    assert 8000 <= stats["words"] <= 8000 * 1.02 and stats["size_tolerance"] == 0.02


def test_assemble_cli_over_tolerance_exits_1_and_writes_nothing(tmp_path, capsys):
    src = tmp_path / "mine.txt"
    src.write_text("\n".join([" ".join(["word"] * 5000) + "."] + _sentences(20)) + "\n")
    out, stats = tmp_path / "c" / "base.txt", tmp_path / "c" / "stats.json"
    code = main(["assemble", "--input", f"mine={src}", "--mixture", '{"mine": 1}', "--words", "1000",
                 "--tolerance", "0.02", "--corpus-name", "baby", "--out", str(out), "--stats", str(stats)])
    err = capsys.readouterr().err
    assert code == 1
    assert "corpora.baby.size_tolerance" in err and "line 1 of source 'mine'" in err
    assert not out.exists() and not stats.exists()


def test_project_reader_rejects_nul_bytes_naming_the_line(tmp_path):
    path = tmp_path / "train.txt"
    path.write_text("One good line.\nA bad \x00 line.\n")
    with pytest.raises(PovstimError, match=r"train.txt:2: NUL byte"):
        read_sentences(path)
