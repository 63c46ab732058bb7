"""The sentence-level parse cache: reruns parse only sentences not seen before."""

from __future__ import annotations

import pytest

from povstim.parse import cache as parse_cache
from povstim.parse.conllu import Sentence, Token


def fake_parse(calls):
    def parse(texts):
        calls.append(list(texts))
        return [
            Sentence([Token(i + 1, w, upos="X", head=0 if i == 0 else 1, deprel="root" if i == 0 else "dep")
                      for i, w in enumerate(t.split())])
            for t in texts
        ]
    return parse


def test_second_run_parses_only_new_sentences(tmp_path):
    ns = parse_cache.namespace("spacy", "m")
    calls: list[list[str]] = []
    c = parse_cache.ParseCache(tmp_path / "spacy.sqlite", ns)
    first = parse_cache.parse_with_cache(["a b", "c d e"], fake_parse(calls), c)
    c.close()
    c = parse_cache.ParseCache(tmp_path / "spacy.sqlite", ns)
    second = parse_cache.parse_with_cache(["c d e", "f g", "a b"], fake_parse(calls), c)
    assert calls == [["a b", "c d e"], ["f g"]]
    assert (c.hits, c.misses) == (2, 1)
    c.close()
    # cached parses come back identical, in the caller's order
    assert second[0].to_block() == first[1].to_block()
    assert second[2].to_block() == first[0].to_block()
    assert [t.form for t in second[1].tokens] == ["f", "g"]


def test_another_model_does_not_reuse_parses(tmp_path):
    calls: list[list[str]] = []
    c = parse_cache.ParseCache(tmp_path / "x.sqlite", parse_cache.namespace("spacy", "m1"))
    parse_cache.parse_with_cache(["a b"], fake_parse(calls), c)
    c.close()
    c = parse_cache.ParseCache(tmp_path / "x.sqlite", parse_cache.namespace("spacy", "m2"))
    parse_cache.parse_with_cache(["a b"], fake_parse(calls), c)
    c.close()
    assert calls == [["a b"], ["a b"]]


def test_spacy_shard_rerun_reuses_the_cache(tmp_path):
    pytest.importorskip("spacy")
    from povstim.cli import main

    base = tmp_path / "base.txt"
    base.write_text("Is the boy who is smiling happy?\nThe girl said that the boy hurt himself.\n")
    out = tmp_path / "0.conllu"
    args = ["parse", "--input", str(base), "--params", '{"backend": "spacy", "prefilter": false}',
            "--cache-dir", str(tmp_path / "cache"), "--out", str(out)]
    assert main(args) == 0
    first = out.read_text()
    base.write_text(base.read_text() + "Can the dog that the girl saw run?\n")
    assert main(args) == 0
    second = out.read_text()
    assert second.startswith(first)  # unchanged sentences: identical parses
    c = parse_cache.ParseCache(tmp_path / "cache" / "spacy.sqlite", "")
    n = c.db.execute("SELECT COUNT(*) FROM parses").fetchone()[0]
    c.close()
    assert n == 3
