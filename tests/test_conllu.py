"""Any standard CoNLL-U is a filter input: UD treebank ids, multiword tokens, empty nodes, relation
subtypes, UD v1 labels, and malformed lines reported with file and line (or skipped and counted)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from povstim import dpe
from povstim.filter.settings import filter_settings
from povstim.io import PovstimError
from povstim.parse import conllu
from povstim.parse.conllu import read, read_file, ud2_deprel

FIXTURES = Path(__file__).parent / "fixtures" / "conllu"
UD = FIXTURES / "ud_treebank.conllu"


def povstim(*args):
    return subprocess.run([sys.executable, "-m", "povstim", *map(str, args)], capture_output=True, text=True)


def expected(sent, mode):
    spec = dict(part.split(":") for part in sent.meta["expect"].split())
    return set() if spec[mode] == "-" else set(spec[mode].split(","))


def test_ud_treebank_reads_with_string_ids_multiword_tokens_and_empty_nodes():
    sents = read_file(UD)
    assert [s.sent_id for s in sents] == ["eve01-12", "eve01-13", "eve01-14", "eve01-15", "eve01-16", "eve01-17"]
    first = sents[0]
    # "Isn't" (1-2) and "who's" (5-6) are multiword tokens: their words are the syntactic tokens
    assert [t.form for t in first.tokens] == ["Is", "n't", "the", "girl", "who", "'s", "singing", "happy", "?"]
    assert [t.id for t in first.tokens] == list(range(1, 10))
    # the empty node 5.1 is not a word of the basic tree
    assert [t.form for t in sents[4].tokens] == ["Adam", "ate", "an", "apple", "and", "Eve", "a", "pear", "."]
    # the surface text is rebuilt from the multiword tokens, as written in '# text'
    assert all(s.surface() == s.meta["text"] for s in sents)
    assert first.meta["speaker_role"] == "Mother" and first.meta["newdoc id"] == "eve01"


def test_a_sentence_writes_back_exactly_as_it_was_read():
    """Multiword tokens and empty nodes go back where they were; only UD v1 labels come back as v2."""
    blocks = [b + "\n" for b in UD.read_text().rstrip("\n").split("\n\n")]
    v1 = {"nsubjpass": "nsubj:pass", "auxpass": "aux:pass", "dobj": "obj"}
    for block, sent in zip(blocks, read_file(UD), strict=True):
        want = block
        for a, b in v1.items():
            want = want.replace(f"\t{a}\t", f"\t{b}\t")
        assert sent.to_block() == want + "\n"


def test_real_ud_childes_treebank_round_trips(shared_data):
    path = shared_data / "ud_childes" / "en_childes-ud-dev.conllu"
    sents = read_file(path)
    assert len(sents) == 2715 and sum(bool(s.extra) for s in sents) > 100  # many multiword tokens
    out = io.StringIO()
    conllu.write(out, sents)
    assert out.getvalue() == path.read_text(encoding="utf-8")
    assert all(s.surface() == s.meta["text"] for s in sents)


@pytest.mark.parametrize("v1,v2", [
    ("dobj", "obj"), ("nsubjpass", "nsubj:pass"), ("csubjpass", "csubj:pass"), ("auxpass", "aux:pass"),
    ("neg", "advmod"), ("name", "flat"), ("mwe", "fixed"), ("foreign", "flat:foreign"), ("remnant", "orphan"),
    ("nsubjpass:xsubj", "nsubj:pass:xsubj"),
    # v2 labels, subtypes included, are read as they are
    ("obj", "obj"), ("nsubj:pass", "nsubj:pass"), ("acl:relcl:subj", "acl:relcl:subj"), ("nmod", "nmod"),
])
def test_ud_v1_labels_map_to_v2(v1, v2):
    assert ud2_deprel(v1) == v2


def test_v1_labels_are_mapped_when_read():
    sents = {s.sent_id: s for s in read_file(UD)}
    assert [t.deprel for t in sents["eve01-14"].tokens][:3] == ["det", "nsubj:pass", "aux:pass"]
    assert sents["eve01-15"].tokens[5].deprel == "obj"


@pytest.mark.parametrize("mode", dpe.MODES)
def test_rules_on_the_ud_fixture(mode):
    for s in read_file(UD):
        found = {m.phenomenon for m in filter_settings({"mode": mode}).find(s)}
        assert found == expected(s, mode), (mode, s.text)


def test_relation_subtypes_are_matched():
    """acl:relcl:subj / acl:relcl:obj (real CHILDES treebanks) are relative clauses; nsubj:* is a subject."""
    s = read_file(UD)[0]
    posh = filter_settings({"mode": "posh"})
    (m,) = posh.find(s)
    assert (m.phenomenon, m.tokens_str()) == ("question_formation", "4:girl|7:singing")
    (m,) = filter_settings({"mode": "strict"}).find(s)
    assert m.tokens_str() == "4:girl|7:singing|6:'s"
    # teeth: the same tree with a participial acl instead of the relcl subtype is no evidence
    s.tokens[6].deprel = "acl"
    assert posh.find(s) == []
    # a subject subtype (nsubj:outer, as UD CHILDES uses) is a subject
    s.tokens[6].deprel = "acl:relcl:subj"
    s.tokens[3].deprel = "nsubj:outer"
    assert [m.phenomenon for m in posh.find(s)] == ["question_formation"]


def test_filter_takes_a_ud_treebank_without_reparsing(tmp_path):
    r = povstim("filter", UD, "--mode", "posh", "--out", tmp_path / "dpe.tsv", "--summary", tmp_path / "s.json")
    assert r.returncode == 0, r.stderr
    lines = (tmp_path / "dpe.tsv").read_text().splitlines()
    assert lines[0].split("\t") == ["sent_id", "phenomenon", "rule", "tokens", "sentence", "targeted", "source_id"]
    rows = [line.split("\t") for line in lines[1:]]
    # sentences numbered by position, the treebank's own ids kept
    assert [(r[0], r[1], r[5], r[6]) for r in rows] == [
        ("0", "question_formation", "true", "eve01-12"),
        ("1", "question_formation", "false", "eve01-13"),
        ("3", "binding", "true", "eve01-15"),
        ("5", "question_formation", "false", "eve01-17"),
    ]
    s = json.loads((tmp_path / "s.json").read_text())
    assert s["n_sentences"] == 6 and s["n_removed"] == 4
    # the one reader of dpe.tsv reads the extra column back
    from povstim.dpe import audit

    assert [r.source_id for r in audit.read(tmp_path / "dpe.tsv")] == ["eve01-12", "eve01-13", "eve01-15", "eve01-17"]


def test_pipeline_shards_keep_their_integer_ids_and_no_source_column(tmp_path):
    r = povstim("filter", FIXTURES / "rules.conllu", "--out", tmp_path / "dpe.tsv")
    assert r.returncode == 0, r.stderr
    lines = (tmp_path / "dpe.tsv").read_text().splitlines()
    assert lines[0].split("\t")[-1] == "targeted" and lines[1].split("\t")[0] == "0"


def test_string_ids_against_a_base_corpus_are_an_error(tmp_path):
    (tmp_path / "base.txt").write_text("\n".join(s.meta["text"] for s in read_file(UD)) + "\n")
    r = povstim("filter", UD, "--base", tmp_path / "base.txt", "--out", tmp_path / "dpe.tsv")
    assert r.returncode == 1
    assert "non-integer '# sent_id = eve01-12'" in r.stderr and "Traceback" not in r.stderr


GOOD = (
    "# sent_id = a\n# text = Is it?\n"
    "1\tIs\tbe\tAUX\tVBZ\t_\t0\troot\t_\t_\n"
    "2\tit\tit\tPRON\tPRP\t_\t1\tnsubj\t_\tSpaceAfter=No\n"
    "3\t?\t?\tPUNCT\t.\t_\t1\tpunct\t_\t_\n\n"
)


def _bad(line2: str) -> str:
    """A two-sentence file: a malformed sentence (its token 2 replaced by ``line2``, on line 4), then GOOD."""
    return ("# sent_id = bad\n# text = Is it?\n"
            "1\tIs\tbe\tAUX\tVBZ\t_\t0\troot\t_\t_\n"
            f"{line2}\n"
            "3\t?\t?\tPUNCT\t.\t_\t1\tpunct\t_\t_\n\n") + GOOD


MALFORMED = {
    "columns": ("2\tit\tit\tPRON\tPRP\t_\t1\tnsubj\t_", 4, "expected 10 tab-separated columns, found 9"),
    "id": ("two\tit\tit\tPRON\tPRP\t_\t1\tnsubj\t_\t_", 4, "token id 'two' is not an integer"),
    "head": ("2\tit\tit\tPRON\tPRP\t_\t7\tnsubj\t_\t_", 4, "head 7 is outside the sentence (0..3)"),
    "cycle": ("2\tit\tit\tPRON\tPRP\t_\t2\tnsubj\t_\t_", 4, "token 2 is on a head cycle (2 -> 2)"),
    "order": ("4\tit\tit\tPRON\tPRP\t_\t1\tnsubj\t_\t_", 4, "token id 4 where 2 was expected"),
    "no_head": ("2\tit\tit\tPRON\tPRP\t_\t_\tnsubj\t_\t_", 4, "has no HEAD"),
}


@pytest.mark.parametrize("kind", MALFORMED)
def test_malformed_line_is_an_error_naming_file_and_line(kind):
    line, lineno, reason = MALFORMED[kind]
    with pytest.raises(PovstimError) as exc:
        list(read(io.StringIO(_bad(line)), "my.conllu"))
    assert f"my.conllu:{lineno}: malformed CoNLL-U" in str(exc.value) and reason in str(exc.value)


def test_longer_cycle_names_the_cycle():
    text = ("1\ta\ta\tX\tX\t_\t0\troot\t_\t_\n2\tb\tb\tX\tX\t_\t3\tdep\t_\t_\n"
            "3\tc\tc\tX\tX\t_\t4\tdep\t_\t_\n4\td\td\tX\tX\t_\t2\tdep\t_\t_\n\n")
    with pytest.raises(PovstimError, match=r"x.conllu:2: .*cycle \(2 -> 3 -> 4 -> 2\)"):
        list(read(io.StringIO(text), "x.conllu"))


@pytest.mark.parametrize("kind", MALFORMED)
def test_malformed_sentence_is_skipped_and_counted_by_choice(kind):
    line, lineno, reason = MALFORMED[kind]
    skipped = []
    sents = list(read(io.StringIO(_bad(line)), "my.conllu", on_error="skip", skipped=skipped))
    assert [s.sent_id for s in sents] == ["a"]  # the good sentence after it is still read
    assert len(skipped) == 1 and str(skipped[0]).startswith(f"my.conllu:{lineno}: ") and reason in str(skipped[0])


def test_filter_cli_malformed_input_error_or_reported_skip(tmp_path):
    path = tmp_path / "bad.conllu"
    path.write_text(_bad(MALFORMED["head"][0]))
    r = povstim("filter", path, "--out", tmp_path / "dpe.tsv")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert f"{path}:4: malformed CoNLL-U: token 2: head 7 is outside the sentence" in r.stderr
    assert not (tmp_path / "dpe.tsv").exists()
    # by config (filter.on_malformed: skip) or flag: a counted, reported skip
    for how in (["--params", '{"on_malformed": "skip"}'], ["--skip-malformed"]):
        r = povstim("filter", path, *how, "--out", tmp_path / "dpe.tsv", "--summary", tmp_path / "s.json")
        assert r.returncode == 0, r.stderr
        assert "SKIPPED 1 malformed CoNLL-U sentence" in r.stderr
        s = json.loads((tmp_path / "s.json").read_text())
        assert s["n_sentences"] == 1 and s["input"]["n_skipped"] == 1
        assert s["input"]["skipped"] == [f"{path}:4: token 2: head 7 is outside the sentence (0..3) (sent_id bad)"]
