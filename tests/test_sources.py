"""Cleaning real sources: childes-db CSVs, text formats, parquet, normalisation, errors."""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
import subprocess
import sys
import tarfile
import zipfile
from collections import Counter
from pathlib import Path

import pytest

from povstim.io import PovstimError
from povstim.sources import childes_csv
from povstim.sources.clean import clean_source
from povstim.sources.normalize import CleanStats, Style, finish, looks_like_question, split_sentences

FIXTURES = Path(__file__).parent / "fixtures" / "sources"


def _clean(tmp_path, spec, input_dir=None, name="src"):
    out, stats = tmp_path / f"{name}.txt", tmp_path / f"{name}.stats.json"
    result = clean_source(name, spec, out, stats, input_dir=input_dir)
    assert json.loads(stats.read_text()) == json.loads(json.dumps(result))
    return out.read_text().splitlines(), result


# ---- normalisation ----

@pytest.mark.parametrize(
    "style, text, terminator, expected",
    [
        ("posh", "is the boy who is smiling happy", "?", "Is the boy who is smiling happy?"),
        ("babyberta", "Is the boy who is smiling happy", "?", "is the boy who is smiling happy ?"),
        ("posh", "the girl said that Tom likes himself .", None, "The girl said that Tom likes himself."),
        ("posh", "the dog , the cat and the bird", None, "The dog, the cat and the bird."),
        ("posh", "what a lovely day !", None, "What a lovely day!"),
        ("babyberta", "The dog barked.", None, "the dog barked ."),
    ],
)
def test_finish_styles(style, text, terminator, expected):
    stats = CleanStats()
    assert finish(text, Style(style=style, lowercase=style == "babyberta"), stats, terminator) == expected
    assert stats.lines_out == 1 and stats.words == len(expected.split()) - (style == "babyberta")


def test_finish_drops_short_and_empty_lines_with_reasons():
    stats = CleanStats()
    style = Style()
    assert finish("hi there", style, stats) is None
    assert finish(" . ", style, stats) is None
    assert finish("one two three", Style(min_words=4), stats) is None
    assert dict(stats.dropped) == {"under_3_words": 1, "empty": 1, "under_4_words": 1}
    assert stats.lines_out == 0


def test_period_final_questions_are_fixed_only_when_clear():
    assert looks_like_question("does it fit your mouth".split())
    assert looks_like_question("where did it go".split())
    assert not looks_like_question("have some juice".split())
    assert not looks_like_question("what a mess".split())
    stats = CleanStats()
    assert finish("does it fit", Style(fix_questions=True), stats, ".") == "Does it fit?"
    assert finish("does it fit", Style(fix_questions=False), stats, ".") == "Does it fit."
    assert stats.questions_fixed == 1 and stats.questions == 1


def test_sentence_splitting():
    text = 'Mr. Smith saw J. Doe at 5 p.m. yesterday. "Is it raining?" she asked. It was! Then they left.'
    assert split_sentences(text) == [
        "Mr. Smith saw J. Doe at 5 p.m. yesterday.",
        '"Is it raining?" she asked.',  # a lowercase word after '?' continues the sentence
        "It was!",
        "Then they left.",
    ]


# ---- childes-db CSV (AO-CHILDES) ----

def test_csv_fixture_adults_only_type_terminators_and_age_order(tmp_path):
    spec = {"kind": "local", "format": "childes_csv", "path": str(FIXTURES / "mini_childes.csv"), "age_order": True}
    lines, stats = _clean(tmp_path, spec)
    assert lines == [
        "Do you want some juice?",  # age 600, transcript 100; period fixed to '?'
        "Put the cup on the table!",  # imperative
        "Where is the kitty?",  # age 900.5, type question
        "The kitty went outside.",
        "The old teddy bear is here.",  # age 2500
        "That is a big bad wolf.",  # no age: last
    ]
    assert stats["dropped"] == {"child_speaker": 2, "untranscribed": 1, "under_3_words": 1}
    assert stats["lines_in"] == 10 and stats["questions_fixed"] == 1
    # The statistics file says the order was applied, by what and over which ages (by hand: the adult,
    # transcribed rows are 600 x3, 900.5 x2, 2500 and one NA)
    assert json.loads((tmp_path / "src.stats.json").read_text())["age_order"] == {
        "applied": True, "by": "column 'target_child_age' (days)", "youngest": 600.0, "oldest": 2500.0,
        "without_age": 1}


def test_csv_file_order_and_filters(tmp_path):
    spec = {
        "kind": "local", "format": "childes_csv", "path": str(FIXTURES / "mini_childes.csv"),
        "max_age_days": 2000, "collections": ["Eng-NA"], "style": "babyberta",
    }
    lines, stats = _clean(tmp_path, spec)
    assert lines == [
        "where is the kitty ?",
        "the kitty went outside .",
        "do you want some juice ?",
        "put the cup on the table !",
        "that is a big bad wolf .",
    ]
    assert stats["dropped"]["child_too_old"] == 1


def test_csv_missing_columns_is_named(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("id,text\n1,hello there you\n")
    with pytest.raises(PovstimError, match=r"bad\.csv.*missing column\(s\) gloss, speaker_role"):
        _clean(tmp_path, {"kind": "local", "format": "childes_csv", "path": str(bad)})


def test_shared_csvs_clean_to_adult_utterances_only(shared_data, tmp_path):
    folder = shared_data / "aochildes" / "original_transcripts_csv"
    roles, child_glosses, adult_glosses, n_rows = Counter(), set(), set(), 0
    for path in sorted(folder.glob("*.csv")):
        with open(path, encoding="utf-8", newline="") as fh:
            for row in csv.DictReader(fh):
                n_rows += 1
                roles[row["speaker_role"]] += 1
                (child_glosses if row["speaker_role"] in ("Target_Child", "Child") else adult_glosses).add(row["gloss"])
    lines, stats = _clean(tmp_path, {"kind": "local", "format": "childes_csv", "path": str(folder), "age_order": True})
    assert stats["files"] == 20 and stats["lines_in"] == n_rows == 186888
    assert stats["dropped"]["child_speaker"] == roles["Target_Child"] + roles["Child"] > 0
    # No line comes from a child row: glosses only children ever said are absent.
    only_child = {g for g in child_glosses - adult_glosses if len(g.split()) >= 3 and "xxx" not in g and "yyy" not in g}
    assert len(only_child) > 100
    produced = {line.rstrip(".?!").lower() for line in lines}
    assert not produced & {g.lower().replace("_", " ").replace("+", " ") for g in only_child}
    assert not any(re.search(r"\b(xxx|yyy|www)\b", line) for line in lines)
    assert stats["lines_out"] == len(lines) > 100000
    assert 0.2 < stats["question_share"] < 0.6


def test_age_order_actually_orders(tmp_path):
    rows = [("a b c d", "3000"), ("e f g h", "100"), ("i j k l", "NA"), ("m n o p", "1000")]
    path = tmp_path / "x.csv"
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["gloss", "speaker_role", "target_child_age", "transcript_id", "utterance_order", "type"])
        for i, (g, age) in enumerate(rows):
            w.writerow([g, "Mother", age, i, 1, "declarative"])
    stats = CleanStats()
    got = [w for w, _ in childes_csv.utterances([(path.name, open(path, newline=""))], {"age_order": True}, stats)]
    assert got == ["e f g h", "m n o p", "a b c d", "i j k l"]


# ---- text formats ----

def test_gutenberg_header_footer_and_headings_removed(tmp_path):
    lines, stats = _clean(tmp_path, {"kind": "local", "format": "gutenberg", "path": str(FIXTURES / "gutenberg.txt")})
    assert lines == [
        "Mr. Brown walked to the old mill.",
        "He saw a dog that was barking at the moon.",
        '"Is the dog hungry?" asked the girl.',
        "The end came soon.",
        "It was late!",
    ]
    assert stats["dropped"]["unterminated_paragraph"] == 1  # CHAPTER I


def test_switchboard_transcripts(tmp_path):
    lines, _ = _clean(tmp_path, {"kind": "local", "format": "switchboard", "path": str(FIXTURES / "sw-ms98-trans.text")})
    assert lines == [
        "Hi um yeah i'd like to talk about how you dress for work.",
        "And and i mean what do you wear to the office.",
        "I guess it's a bucket of fun.",
    ]


def test_bnc_xml_opensubtitles_tinystories(tmp_path):
    bnc, _ = _clean(tmp_path, {"kind": "local", "format": "bnc_xml", "path": str(FIXTURES / "bnc_sample.xml")})
    assert bnc == ["The cat sat on the mat.", "Is it happy?"]
    subs, _ = _clean(tmp_path, {"kind": "local", "format": "opensubtitles", "path": str(FIXTURES / "subtitles.txt")})
    assert subs == ["Where are you going?", "To the store, I think.", "We have to leave now."]
    ts, stats = _clean(tmp_path, {"kind": "local", "format": "tinystories", "path": str(FIXTURES / "tinystories.txt")})
    assert ts == [
        "Once upon a time there was a little cat.",
        "The cat liked milk.",
        "Tom had a red ball.",
        "He threw it high!",
    ]
    assert stats["question_share"] == 0


def _archive_dir(tmp_path):
    """A download folder with a .zip, a .tar.gz and a .gz, as the manifest lists them."""
    d = tmp_path / "dl"
    d.mkdir()
    with zipfile.ZipFile(d / "corpus.zip", "w") as zf:
        zf.writestr("Eng/b.cha", (FIXTURES / "older.cha").read_text())
        zf.writestr("Eng/a.cha", (FIXTURES / "mini.cha").read_text())
        zf.writestr("Eng/0metadata.cdc", "not chat")
    with tarfile.open(d / "more.tar.gz", "w:gz") as tf:
        data = "The first line is here.\nAnd a second line too?\n".encode()
        info = tarfile.TarInfo("docs/x.txt")
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
    (d / "extra.txt.gz").write_bytes(gzip.compress(b"A gzipped line of text.\n", mtime=0))
    files = [{"name": n, "url": f"http://127.0.0.1/{n}", "bytes": 0, "sha256": "0" * 64}
             for n in ("corpus.zip", "more.tar.gz", "extra.txt.gz")]
    (d / "manifest.json").write_text(json.dumps({"files": files}))
    return d


def test_archives_members_in_sorted_order_with_include(tmp_path):
    d = _archive_dir(tmp_path)
    chat_lines, stats = _clean(tmp_path, {"kind": "childes_chat", "url": "http://127.0.0.1/corpus.zip"}, input_dir=d)
    # a.cha (mini) before b.cha (older); the .cdc member is skipped by the default *.cha.
    assert chat_lines[0] == "Do you want another cookie?"
    assert chat_lines[-1] == "Does he ever chase the red ball?"
    assert stats["files"] == 2
    text_lines, _ = _clean(
        tmp_path, {"kind": "text_url", "format": "lines", "url": "http://x/y", "include": "*.txt"}, input_dir=d, name="t"
    )
    assert text_lines == ["The first line is here.", "And a second line too?", "A gzipped line of text."]


def test_parquet_text_column(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "wiki.parquet"
    table = pa.table({
        "id": ["1", "2"],
        "title": ["Dog", "Cat"],
        "text": ["Dog\nThe dog is a domesticated animal. It barks loudly.\nSee also", "Cats purr when they are happy."],
    })
    pq.write_table(table, path, row_group_size=1)
    lines, stats = _clean(tmp_path, {"kind": "local", "format": "parquet", "path": str(path)})
    assert lines == ["The dog is a domesticated animal.", "It barks loudly.", "Cats purr when they are happy."]
    assert stats["dropped"]["unterminated_paragraph"] == 2
    with pytest.raises(PovstimError, match="no column 'content'.*id, title, text"):
        _clean(tmp_path, {"kind": "local", "format": "parquet", "path": str(path), "column": "content"})


def test_max_words_stops_early_and_lowercase(tmp_path):
    src = tmp_path / "many.txt"
    src.write_text("".join(f"The dog number {i} barks.\n" for i in range(100)))
    lines, stats = _clean(tmp_path, {"kind": "local", "format": "lines", "path": str(src), "max_words": 12,
                                     "lowercase": True})
    assert lines == ["the dog number 0 barks.", "the dog number 1 barks.", "the dog number 2 barks."]
    assert stats["stopped_at_max_words"] == 12 and stats["words"] == 15


# ---- errors and the CLI ----

def test_local_path_missing_names_the_key(tmp_path):
    with pytest.raises(PovstimError, match=r"sources\.bnc\.path: .*does not exist"):
        _clean(tmp_path, {"kind": "local", "format": "bnc_xml", "path": str(tmp_path / "nope")}, name="bnc")


def test_missing_manifest_says_to_download(tmp_path):
    with pytest.raises(PovstimError, match="manifest.json: missing; run `povstim download --source gut"):
        _clean(tmp_path, {"kind": "text_url", "url": "http://x/y"}, input_dir=tmp_path, name="gut")


def test_nothing_kept_is_an_error_and_writes_nothing(tmp_path):
    src = tmp_path / "short.txt"
    src.write_text("hi\nok then\n")
    with pytest.raises(PovstimError, match="kept no lines"):
        _clean(tmp_path, {"kind": "local", "format": "lines", "path": str(src)}, name="short")
    assert not (tmp_path / "short.txt.txt").exists() and not (tmp_path / "short.stats.json").exists()


def test_cli_is_deterministic_and_resolves_base_dir(tmp_path):
    spec = json.dumps({"kind": "local", "format": "chat", "path": "sources/mini.cha"})

    def run(out):
        return subprocess.run(
            [sys.executable, "-m", "povstim", "clean", "--source", "mini", "--params", spec,
             "--base-dir", str(FIXTURES.parent), "--out", str(out), "--stats", str(out.with_suffix(".json"))],
            capture_output=True, text=True,
        )

    r1, r2 = run(tmp_path / "a.txt"), run(tmp_path / "b.txt")
    assert r1.returncode == 0 and r2.returncode == 0, r1.stderr
    assert (tmp_path / "a.txt").read_bytes() == (tmp_path / "b.txt").read_bytes()
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    bad = subprocess.run(
        [sys.executable, "-m", "povstim", "clean", "--source", "x", "--params", '{"kind": "local", "format": "chat"',
         "--out", str(tmp_path / "x.txt"), "--stats", str(tmp_path / "x.json")],
        capture_output=True, text=True,
    )
    assert bad.returncode == 1 and "--params: not valid JSON" in bad.stderr and "Traceback" not in bad.stderr


# ---- config schema of real sources ----

def test_source_schema_names_bad_keys(repo_root):
    import yaml

    from povstim import config as cfg

    base = yaml.safe_load((repo_root / "configs" / "childes-local.yaml").read_text())
    cfg.validate(base)
    bad = json.loads(json.dumps(base))
    bad["sources"]["aochildes"]["age_ordr"] = True
    with pytest.raises(PovstimError, match=r"sources\.aochildes\.age_ordr' \(did you mean 'age_order'\?\)"):
        cfg.validate(bad)
    bad = json.loads(json.dumps(base))
    del bad["sources"]["childes_chat"]["path"]
    with pytest.raises(PovstimError, match=r"sources\.childes_chat.*'path' is a required property"):
        cfg.validate(bad)
    bad = json.loads(json.dumps(base))
    bad["sources"]["web"] = {"kind": "text_url", "format": "gutenberg"}
    with pytest.raises(PovstimError, match=r"sources\.web.*'files' is a required property"):
        cfg.validate(bad)
    bad["sources"]["web"] = {"kind": "text_url", "url": "https://x.org/a.txt", "sha256": "abc"}
    with pytest.raises(PovstimError, match=r"sources\.web\.sha256"):
        cfg.validate(bad)
