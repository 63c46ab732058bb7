"""POSH-BENCH generator: counts, templates, duplicates, contrasts, frequency filter, CLI."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from povstim.benchmarks import posh, words
from povstim.benchmarks.suite import POSH_CATEGORIES, read_suite
from povstim.cli import main
from povstim.io import PovstimError


def _toks(sentence: str) -> list[str]:
    return re.findall(r"\w+|'s|[^\w\s]", sentence.lower())


@pytest.fixture(scope="module")
def suite():
    return posh.generate(words.default_lexicon(), 60, seed=3)


def test_every_paradigm_and_template_is_generated(suite):
    counts = Counter(p.paradigm for p in suite)
    assert counts == {k: 60 for k in POSH_CATEGORIES}
    assert {p.extra["template"] for p in suite} == {t.name for t in posh.TEMPLATES}
    for p in suite:
        assert p.category == POSH_CATEGORIES[p.paradigm]
    # templates share their paradigm's pairs evenly
    per_template = Counter(p.extra["template"] for p in suite)
    for t in posh.TEMPLATES:
        n_templates = sum(u.paradigm == t.paradigm for u in posh.TEMPLATES)
        assert abs(per_template[t.name] - 60 / n_templates) < 1


def test_no_duplicates_and_corpus_orthography(suite):
    sentences = [p.good for p in suite] + [p.bad for p in suite]
    assert len(sentences) == len(set(sentences))
    assert len({p.item_id for p in suite}) == len(suite)
    for s in sentences:
        assert s[0].isupper() and s[-1] in ".?" and not s.endswith((" .", " ?")), s
        assert "  " not in s


def test_pairs_differ_as_their_template_intends(suite):
    for p in suite:
        g, b = _toks(p.good), _toks(p.bad)
        if p.extra["contrast"] == "substitution":
            diff = [(x, y) for x, y in zip(b, g) if x != y]
            assert len(g) == len(b) and len(diff) == 1, p
            bad_word, good_word = diff[0]
            if p.paradigm.startswith("principle_a"):
                assert {bad_word, good_word} <= {"himself", "herself"} or good_word.endswith("ing")
            elif p.paradigm == "wanna":
                assert bad_word in ("who", "what") and good_word in ("when", "how", "why", "where")
            elif p.paradigm == "island_wh":
                assert (bad_word, good_word) in {("whether", "that"), ("who", "he"), ("who", "she")}
        else:
            assert sorted(g) == sorted(b) and g != b, p
    # question formation: the good sentence fronts the main-clause aux, the bad one the embedded aux
    qf = [p for p in suite if p.paradigm.startswith("question_formation")]
    assert all(_toks(p.good)[0] != _toks(p.bad)[0] for p in qf)


def test_objects_fit_their_verbs(suite):
    """Selectional restrictions: things eaten are food, things read are texts."""
    eaten = read = 0
    for p in suite:
        for s in (p.good, p.bad):
            t = _toks(s)
            for verb, allowed in (("eat", words.FOOD), ("read", words.TEXT)):
                for form in (verb, verb + "ing", {"eat": "ate", "read": "read"}[verb]):
                    for i in range(len(t) - 2):
                        if t[i] == form and t[i + 1] in ("the", "a", "an", "this", "that") and t[i + 2] != "?":
                            assert t[i + 2] in allowed, s
                            eaten += verb == "eat"
                            read += verb == "read"
    assert eaten and read


def test_check_pair_rejects_wrong_contrasts():
    assert posh.check_pair(["a", "b"], ["a", "b"], ("sub", "a", "a")) == "bad and good are identical"
    assert posh.check_pair(["x", "b", "c"], ["y", "b", "d"], ("sub", "x", "y")).startswith("expected one")
    assert posh.check_pair(["can", "he", "did", "go"], ["did", "he", "can", "go"], ("move", [["can"], ["did"]])) is None
    assert posh.check_pair(["can", "he", "go"], ["he", "can", "went"], ("move", [["can"]])) is not None


def test_deterministic_for_a_seed():
    a = posh.generate(words.default_lexicon(), 20, seed=7)
    b = posh.generate(words.default_lexicon(), 20, seed=7)
    c = posh.generate(words.default_lexicon(), 20, seed=8)
    assert [p.to_json() for p in a] == [p.to_json() for p in b]
    assert [p.to_json() for p in a] != [p.to_json() for p in c]


def test_words_come_from_the_top_k_intersection(tmp_path):
    lex = words.default_lexicon()
    # Two corpora that share only some nouns: the intersection must bound the nouns used.
    common = "The boy saw the girl . Mary said that John liked the man . The woman thinks he likes the cake ."
    a = tmp_path / "a.txt"
    b = tmp_path / "b.txt"
    a.write_text((common + "\n") * 50 + "The dog chased the ball .\n" * 30)
    b.write_text((common + "\n") * 50 + "The king opened the box .\n" * 30)
    allowed = words.frequent_from_counts([words.word_counts(a), words.word_counts(b)], 3000)
    assert "dog" not in allowed and "king" not in allowed and "boy" in allowed
    restricted = words.default_lexicon(allowed)
    assert restricted.sizes()["noun.human_m"] == 2  # boy, man
    # Not enough verbs/nouns for QF templates: a clear error naming the class
    with pytest.raises(PovstimError, match="no word of class"):
        posh.generate(restricted, 10, seed=1, paradigms=["question_formation_or"])
    # A paradigm whose classes survive but whose word space is tiny: error says how many
    rich = words.default_lexicon(allowed | {"girl", "mary", "john", "said", "liked", "boy", "man", "woman"})
    with pytest.raises(PovstimError, match="distinct pairs"):
        posh.generate(rich, 400, seed=1, paradigms=["principle_a_locality"])
    assert lex.sizes()["noun.human_m"] > 2


def test_top_k_is_deterministic_on_ties(tmp_path):
    f = tmp_path / "c.txt"
    f.write_text("b a c\nc a b\n")
    assert words.top_k(words.word_counts(f), 2) == ["a", "b"]


def test_embedded_synthetic_corpora_leave_enough_pairs(tmp_path):
    """Default-config-sized synthetic corpora (150k words each) give >= 500 pairs per subcategory."""
    synth = pytest.importorskip("povstim.synth.generator")
    paths = []
    for register, seed in (("child", 11), ("adult", 12)):
        lines, n = [], 0
        for text, _, _ in synth.generate(register, 60000, seed):
            lines.append(text)
            n += len(text.split())
            if n >= 150_000:
                break
        paths.append(tmp_path / f"{register}.txt")
        paths[-1].write_text("\n".join(lines) + "\n")
    allowed = words.frequent_from_counts([words.word_counts(p) for p in paths], 3000)
    pairs = posh.generate(words.default_lexicon(allowed), 500, seed=1)
    assert Counter(p.paradigm for p in pairs) == {k: 500 for k in POSH_CATEGORIES}
    used = {w for p in pairs for s in (p.good, p.bad) for w in re.findall(r"[a-z]+", s.lower())}
    frame = {"that", "who", "whether", "wanna", "himself", "herself", "should", "did", "does", "the", "s"}
    assert used - frame <= allowed | frame


def test_cli_writes_suite_and_manifest(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("The boy saw the girl.\n")
    out = tmp_path / "bench" / "posh"
    spec = {"kind": "generated", "pairs_per_paradigm": 12, "top_k_words": 3000, "seed": 1}
    assert main(["benchmark", "--suite", "posh", "--params", json.dumps(spec), "--out-dir", str(out)]) == 0
    files = sorted(p.name for p in out.iterdir())
    assert files == sorted([f"{k}.jsonl" for k in POSH_CATEGORIES] + ["manifest.json"])
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["paradigms"] == {k: 12 for k in POSH_CATEGORIES} and manifest["n_pairs"] == 108
    assert manifest["params"]["frequent_words"] is None
    records = read_suite(out)
    assert len(records) == 108 and all(r["suite"] == "posh" for r in records)
    first = (out / "wanna.jsonl").read_bytes()
    # rerun: byte-identical; with a corpus too small for the templates: error, old suite kept
    assert main(["benchmark", "--suite", "posh", "--params", json.dumps(spec), "--out-dir", str(out)]) == 0
    assert (out / "wanna.jsonl").read_bytes() == first
    assert main(["benchmark", "--suite", "posh", "--params", json.dumps(spec), "--corpus", str(corpus),
                 "--out-dir", str(out)]) == 1
    assert (out / "wanna.jsonl").read_bytes() == first


def test_cli_rejects_bad_params(tmp_path, capsys):
    out = str(tmp_path / "x")
    assert main(["benchmark", "--suite", "s", "--params", "{not json", "--out-dir", out]) == 1
    assert main(["benchmark", "--suite", "s", "--params", '{"kind": "generated", "pairs": 3}', "--out-dir", out]) == 1
    assert main(["benchmark", "--suite", "s", "--params", '{"kind": "blimp"}', "--out-dir", out]) == 1
    err = capsys.readouterr().err
    assert "not valid JSON" in err and "unknown config key 'benchmarks.s.pairs'" in err
    assert "config key 'benchmarks.s': 'path' is a required property" in err
