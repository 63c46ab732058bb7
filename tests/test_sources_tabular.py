"""Any CSV or TSV as a source (`format: csv` / `tsv`), with planted files and outputs
worked out by hand."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from povstim.io import PovstimError
from povstim.settings import section
from povstim.sources.clean import clean_source


def _clean(tmp_path, name="src", **spec):
    spec = {"kind": "local", **spec}
    out, stats = tmp_path / f"{name}.txt", tmp_path / f"{name}.stats.json"
    result = clean_source(name, spec, out, stats, base_dir=tmp_path)
    return out.read_text().splitlines(), result


# The researcher: text, transcript_id, age_in_months (no gloss, no speaker_role).
CDS = (
    "text,transcript_id,age_in_months\n"
    "where did the ball go,t3,30\n"
    '"look, a big dog",t1,24\n'
    "do you want some juice,t2,18\n"
    "is that your teddy bear,t1,24\n"
    "what a mess,t2,18\n"
    "hi,t2,18\n"                      # 1 word: dropped (min_words 3)
    ",t3,30\n"                        # no text: dropped (empty)
    "can you see the moon,t4,\n"      # no age: last under age_order
)


def test_csv_with_a_text_column_in_file_order(tmp_path):
    (tmp_path / "cds.csv").write_text(CDS)
    lines, stats = _clean(tmp_path, format="csv", path="cds.csv", fix_questions=True)
    assert lines == ["Where did the ball go?", "Look, a big dog.", "Do you want some juice?",
                     "Is that your teddy bear?", "What a mess.", "Can you see the moon?"]
    assert stats["format"] == "csv" and stats["lines_in"] == 8
    assert stats["dropped"] == {"empty": 1, "under_3_words": 1}


def test_age_order_sorts_by_the_age_column_keeping_transcripts_together(tmp_path):
    (tmp_path / "cds.csv").write_text(CDS)
    lines, stats = _clean(tmp_path, format="csv", path="cds.csv", age_column="age_in_months",
                          transcript_column="transcript_id", age_order=True)
    # t2 at 18 months (file rows 3 and 5), t1 at 24 (rows 2 and 4), t3 at 30 (row 1), then no age (row 8)
    assert lines == ["Do you want some juice.", "What a mess.", "Look, a big dog.",
                     "Is that your teddy bear.", "Where did the ball go.", "Can you see the moon."]
    assert stats["rows_without_age"] == 1
    # The statistics file records that the order was applied, the column and the ages' range (by hand:
    # the rows with text are 30, 24, 18, 24, 18, 18 months and one without an age)
    import json
    assert json.loads((tmp_path / "src.stats.json").read_text())["age_order"] == {
        "applied": True, "by": "column 'age_in_months' (sources.src.age_column, its own unit)", "youngest": 18.0,
        "oldest": 30.0, "without_age": 1}
    _, plain = _clean(tmp_path, name="plain", format="csv", path="cds.csv", age_column="age_in_months")
    assert "age_order" not in plain  # file order: nothing claimed


def test_age_order_keeps_a_transcript_whole_at_its_youngest_age(tmp_path):
    # transcript a: rows at 20 and 40 months; b: 30. By row age alone b's row would split a; by the
    # transcript's youngest age (a 20, b 30) a comes first, whole.
    (tmp_path / "t.csv").write_text("text,tr,age\none two three,a,20\nfour five six,b,30\nseven eight nine,a,40\n")
    lines, _ = _clean(tmp_path, format="csv", path="t.csv", age_column="age", transcript_column="tr",
                      age_order=True)
    assert lines == ["One two three.", "Seven eight nine.", "Four five six."]
    lines, _ = _clean(tmp_path, name="b", format="csv", path="t.csv", age_column="age", age_order=True)
    assert lines == ["One two three.", "Four five six.", "Seven eight nine."]


def test_tsv_by_format_by_extension_and_by_delimiter(tmp_path):
    body = "utt\tspeaker\nwhere is the cat\tMOT\nme want cookie now\tCHI\nshall we read a book\tFAT\n"
    (tmp_path / "a.tsv").write_text(body)
    (tmp_path / "b.txt").write_text(body)
    with gzip.open(tmp_path / "c.tsv.gz", "wt") as fh:
        fh.write(body)
    (tmp_path / "d.csv").write_text(body.replace("\t", ";"))
    expected = ["Where is the cat.", "Shall we read a book."]
    for name, spec in (("a", {"format": "csv", "path": "a.tsv"}),            # .tsv -> tab
                       ("b", {"format": "tsv", "path": "b.txt"}),            # format tsv -> tab
                       ("c", {"format": "csv", "path": "c.tsv.gz"}),         # .tsv inside .gz
                       ("d", {"format": "csv", "path": "d.csv", "delimiter": ";"})):
        lines, stats = _clean(tmp_path, name=name, text_column="utt", speaker_column="speaker",
                              drop_speakers=["CHI"], **spec)
        assert lines == expected, name
        assert stats["dropped"] == {"other_speaker": 1}, name


def test_keep_speakers(tmp_path):
    (tmp_path / "s.csv").write_text("text,who\nwhere is the cat,MOT\nme want cookie now,CHI\n"
                                    "shall we read a book,FAT\nthe dog is barking,INV\n")
    lines, stats = _clean(tmp_path, format="csv", path="s.csv", speaker_column="who", keep_speakers=["MOT", "FAT"])
    assert lines == ["Where is the cat.", "Shall we read a book."]
    assert stats["dropped"] == {"other_speaker": 2}


def test_missing_column_names_file_line_column_and_lists_the_columns(tmp_path):
    (tmp_path / "cds.csv").write_text(CDS)
    with pytest.raises(PovstimError) as e:
        _clean(tmp_path, format="csv", path="cds.csv", text_column="utterance")
    assert str(e.value) == ("cds.csv: line 1: no column 'utterance' (sources.src.text_column); the header has: "
                            "'text', 'transcript_id', 'age_in_months'")
    with pytest.raises(PovstimError, match=r"no column 'age' \(sources.src.age_column\)"):
        _clean(tmp_path, format="csv", path="cds.csv", age_column="age", age_order=True)


def test_bad_age_and_bad_row_name_line_and_column(tmp_path):
    (tmp_path / "a.csv").write_text("text,age\none two three,24\nfour five six,two years\n")
    with pytest.raises(PovstimError) as e:
        _clean(tmp_path, format="csv", path="a.csv", age_column="age", age_order=True)
    assert str(e.value).startswith("a.csv: line 3: column 'age': 'two years' is not a number")
    # an unquoted comma: 3 fields where the header has 2
    (tmp_path / "b.csv").write_text("text,age\none two three,24\nlook, a dog,24\n")
    with pytest.raises(PovstimError) as e:
        _clean(tmp_path, format="csv", path="b.csv")
    assert str(e.value).startswith("b.csv: line 3: 3 fields where the header has 2 ('text', 'age'); "
                                   "is the delimiter ',' right")


def test_settings_that_cannot_work(tmp_path):
    (tmp_path / "cds.csv").write_text(CDS)
    with pytest.raises(PovstimError, match=r"sources.src.age_order: .* set sources.src.age_column"):
        _clean(tmp_path, format="csv", path="cds.csv", age_order=True)
    with pytest.raises(PovstimError, match="'speaker_column' is a dependency of 'drop_speakers'"):
        _clean(tmp_path, format="csv", path="cds.csv", drop_speakers=["CHI"])


def test_schema_default_text_column_only_for_csv_and_tsv():
    filled = section("sources", {"a": {"kind": "local", "format": "csv", "path": "x.csv"},
                                 "b": {"kind": "local", "format": "lines", "path": "x.txt"}})
    assert filled["a"]["text_column"] == "text"
    assert "text_column" not in filled["b"]  # other sources' specs (and their jobs' params) are unchanged


def test_plan_counts_a_csv_source(tmp_path):
    """`povstim plan` reads the source through the same code: words and sentences of the planted file."""
    from povstim.preflight.plan import count_source

    (tmp_path / "cds.csv").write_text(CDS)
    c = count_source("cds", {"kind": "local", "format": "csv", "path": "cds.csv"}, tmp_path, tmp_path)
    # 6 kept rows: 5 + 4 + 5 + 5 + 3 + 5 = 27 words
    assert c.status == "ok" and c.sentences == 6 and c.words == 27
    assert c.dropped == {"empty": 1, "under_3_words": 1}


def _check_config(tmp_path, **spec):
    import yaml

    from povstim import cli

    config = yaml.safe_load((Path(__file__).parent / "configs" / "tiny.yaml").read_text())
    config["sources"]["cds"] = {"kind": "local", "format": "csv", "path": str(tmp_path / "cds.csv"), **spec}
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump(config))
    return cli.main(["check", str(path)])


def test_check_reads_the_header_and_names_a_missing_column(tmp_path, capsys):
    """`povstim check` catches a column the file lacks (only plan and the clean job did), with the clean job's
    message; a file that is not there yet stays a warning."""
    (tmp_path / "cds.csv").write_text(CDS)
    assert _check_config(tmp_path) == 0  # text_column: text (the default) is there
    capsys.readouterr()
    for key, col in (("text_column", "utterance"), ("age_column", "age"), ("transcript_column", "tr"),
                     ("speaker_column", "who")):
        assert _check_config(tmp_path, **{key: col}) == 1
        out, err = capsys.readouterr()
        assert "OK" not in out  # no "OK" line before the error (exit 1)
        assert (f"cds.csv: line 1: no column {col!r} (sources.cds.{key}); the header has: 'text', 'transcript_id', "
                "'age_in_months'") in err, err
        assert "Traceback" not in err
    (tmp_path / "cds.csv").unlink()
    assert _check_config(tmp_path, text_column="utterance") == 0
    out = capsys.readouterr().out
    assert "warning: sources.cds.path" in out and "does not exist yet" in out
    (tmp_path / "cds.csv").write_text("")  # an empty file is said to be empty, not to be downloaded
    assert _check_config(tmp_path) == 0
    out = capsys.readouterr().out
    assert "sources.cds.path" in out and "is empty (0 bytes" in out and "download" not in out


def test_a_semicolon_csv_names_the_delimiter_to_set(tmp_path):
    from povstim.io import PovstimError
    from povstim.sources import tabular

    f = tmp_path / "cds.csv"
    f.write_text("text;speaker_role\nhallo da;Mother\n")
    with pytest.raises(PovstimError) as e:
        tabular.check_columns("csv", [(str(f), f.open())], {"text_column": "text"}, "cds")
    assert "no column 'text' (sources.cds.text_column)" in str(e.value)
    assert "separated by ';', so set sources.cds.delimiter: ';'" in str(e.value)
