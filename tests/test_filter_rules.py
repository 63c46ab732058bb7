"""The DPE rules (POSH App. C `posh` mode, the targeted `strict` mode, the `conservative` mode) on
hand-written CoNLL-U.

Each fixture sentence says what each mode must find (``# expect = posh:... strict:... conservative:...``),
including the near misses: a relative clause on the object, a declarative with a subject
relative, a reflexive with one antecedent, a subject relative without an auxiliary.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from povstim.io import PovstimError
from povstim.parse.conllu import Sentence, Token, read_file
from povstim import dpe
from povstim.dpe import PHENOMENA as RULES
from povstim.filter.settings import filter_settings


def Settings(**given):
    """The filter section as the config gives it (the schema's defaults for the rest)."""
    return filter_settings(given)


def find_dpe(sent, settings):
    return settings.find(sent)


def needs_parse(text, rules=("question_formation", "binding")):
    return dpe.needs_parse(text, rules)

FIXTURE = Path(__file__).parent / "fixtures" / "conllu" / "rules.conllu"
SENTS = read_file(FIXTURE)


def expected(sent: Sentence, mode: str) -> set[str]:
    spec = dict(part.split(":") for part in sent.meta["expect"].split())
    return set() if spec[mode] == "-" else set(spec[mode].split(","))


@pytest.mark.parametrize("mode", dpe.MODES)
@pytest.mark.parametrize("sent", SENTS, ids=[s.text for s in SENTS])
def test_rules_on_hand_written_conllu(sent, mode):
    found = {m.phenomenon for m in find_dpe(sent, Settings(mode=mode))}
    assert found == expected(sent, mode), sent.text


def by_text(text: str) -> Sentence:
    return next(s for s in SENTS if s.text == text)


def test_strict_question_formation_needs_an_auxiliary_in_the_subject_relative():
    """"Can the dog the girl saw run?" fronts the only auxiliary there is, so it cannot tell
    "front the first auxiliary" from "front the main one"; "Is the boy who is smiling happy?" can."""
    strict = Settings(mode="strict")
    assert find_dpe(by_text("Can the dog the girl saw run?"), strict) == []
    (m,) = find_dpe(by_text("Is the boy who is smiling happy?"), strict)
    assert m.tokens_str() == "3:boy|6:smiling|5:is"  # subject, relative clause, the auxiliary inside it
    # the same sentence with the relative's auxiliary removed from the tree is no evidence
    s = by_text("What did the boy who is smiling see?")
    (m,) = find_dpe(s, strict)
    assert m.tokens_str() == "4:boy|7:smiling|6:is"
    toks = [t for t in s.tokens if t.id != 6]
    assert find_dpe(Sentence(toks, dict(s.meta)), strict) == []


def test_posh_question_formation_reports_nsubj_and_relcl_tokens():
    (m,) = find_dpe(by_text("Is the boy who is smiling happy?"), Settings())
    assert m.rule == "qf_posh_interrogative_nsubj_before_relcl"
    assert m.tokens_str() == "3:boy|6:smiling"


def test_near_miss_object_relative_is_only_a_posh_removal():
    s = by_text("Did the girl see the dog that is barking?")
    assert [m.phenomenon for m in find_dpe(s, Settings(mode="posh"))] == ["question_formation"]
    assert find_dpe(s, Settings(mode="strict")) == []


def test_near_miss_declarative_subject_relative_is_posh_only_because_of_who():
    s = by_text("The boy who is smiling is happy.")
    assert find_dpe(s, Settings(mode="strict")) == []
    (m,) = find_dpe(s, Settings(mode="posh"))
    assert m.phenomenon == "question_formation"  # App. C: a wh-word anywhere makes it "interrogative"
    # The same declarative with "that" instead of "who" is no question in either mode.
    for t in s.tokens:
        if t.form == "who":
            t.form = t.lemma = "that"
    s.meta["text"] = "The boy that is smiling is happy."
    assert find_dpe(s, Settings(mode="posh")) == []


def test_near_miss_reflexive_with_one_antecedent_is_kept_in_both_modes():
    s = by_text("The boy hurt himself.")
    assert find_dpe(s, Settings(mode="posh")) == find_dpe(s, Settings(mode="strict")) == []


def test_strict_binding_needs_animate_antecedents_posh_counts_any_noun():
    s = by_text("The boy put the ball near himself.")
    (m,) = find_dpe(s, Settings(mode="posh"))
    assert m.tokens_str() == "7:himself|2:boy|5:ball"
    assert find_dpe(s, Settings(mode="strict")) == []
    # Configured animate nouns extend the lexicon: a ball that counts as animate makes it DPE.
    assert [m.phenomenon for m in find_dpe(s, filter_settings({"mode": "strict", "animate_nouns": ["ball"]}))] == ["binding"]


def test_wanna_rule_is_off_by_default_and_switched_on_from_config():
    s = by_text("Who do you wanna see?")
    assert find_dpe(s, Settings()) == []
    (m,) = find_dpe(s, filter_settings({"rules": ["question_formation", "binding", "wanna"]}))
    assert (m.phenomenon, m.rule, m.tokens_str()) == ("wanna", "wanna_wh_question_want_to", "1:Who|4:wanna")


def test_unknown_rule_and_mode_are_clear_errors():
    with pytest.raises(PovstimError, match="unknown phenomenon 'qf'; known: aann, binding, binding_c_command, "):
        filter_settings({"rules": ["qf"]})
    with pytest.raises(PovstimError, match="filter.mode"):
        filter_settings({"mode": "lenient"})


def test_every_phenomenon_has_every_mode_a_surface_test_and_languages():
    assert dpe.MODES == ("posh", "strict", "conservative")
    for name, ph in RULES.items():
        assert set(ph.rules) == set(dpe.MODES), name
        assert ph.surface is not None and ph.languages, name
    # App. C's two sanity checks (questions with two auxiliaries; reflexives) are drawn whatever is filtered;
    # a declarative construction's only when it is filtered
    assert {n for n, ph in RULES.items() if ph.sanity and ph.sanity_always} == {"question_formation", "binding"}
    assert dpe.sanity_names(["question_formation", "binding"]) == ["question_formation", "binding"]
    assert dpe.sanity_names(["aann"]) == ["question_formation", "binding", "aann"]


def test_prefilter_passes_every_fixture_sentence_a_rule_removes():
    all_rules = tuple(RULES)
    for s in SENTS:
        hit = any(find_dpe(s, Settings(mode=m, rules=all_rules)) for m in dpe.MODES)
        if hit:
            assert needs_parse(s.text, all_rules), s.text
    assert not needs_parse("The dog is running.")
    assert not needs_parse("Go!")
    assert needs_parse("Is the boy who is smiling happy?")
    assert needs_parse("The girl said that the boy hurt himself.")


def test_malformed_cyclic_tree_does_not_hang():
    toks = [
        Token(1, "Is", upos="AUX", head=3, deprel="cop"),
        Token(2, "boy", upos="NOUN", head=3, deprel="nsubj"),
        Token(3, "happy", upos="ADJ", head=2, deprel="acl:relcl"),
        Token(4, "?", upos="PUNCT", head=3, deprel="punct"),
    ]
    s = Sentence(toks, {"text": "Is boy happy?"})
    assert find_dpe(s, Settings(mode="strict")) == []
    assert [m.phenomenon for m in find_dpe(s, Settings(mode="posh"))] == ["question_formation"]


# ---------------------------------------------------------------------------- conservative mode
# Hand-written parses the way a parser trained on another scheme (spaCy's ClearNLP labels mapped to UD)
# gets real child-directed speech wrong: each says what each mode must find (# expect) and why (# note).
CONSERVATIVE = read_file(Path(__file__).parent / "fixtures" / "conllu" / "conservative.conllu")


@pytest.mark.parametrize("mode", dpe.MODES)
@pytest.mark.parametrize("sent", CONSERVATIVE, ids=[s.sent_id for s in CONSERVATIVE])
def test_conservative_fixture(sent, mode):
    found = {m.phenomenon for m in find_dpe(sent, Settings(mode=mode))}
    assert found == expected(sent, mode), (sent.text, sent.meta["note"])


def test_conservative_cues_name_themselves_in_the_rule_column():
    by_id = {s.sent_id: s for s in CONSERVATIVE}
    cons = Settings(mode="conservative")
    got = {sid: [(m.rule, m.tokens_str()) for m in find_dpe(by_id[sid], cons)]
           for sid in ("free-1", "free-2", "free-3", "zero-1", "zero-2", "zero-3", "zero-4", "rel-1", "inv-1", "bind-1",
                       "rel-2", "rel-4", "poss-1")}
    assert got == {
        "rel-2": [("qf_conservative_relativizer", "1:Puppy|2:who|3:wants")],
        "rel-4": [("qf_conservative_relativizer", "4:kite|6:which|7:is")],
        "poss-1": [("qf_conservative_wh_clause", "5:what|6:your|10:are")],
        "free-1": [("qf_conservative_wh_clause", "3:what|4:she|5:wants")],
        "free-2": [("qf_conservative_wh_clause", "3:why|4:it|5:broke")],
        "free-3": [("qf_conservative_wh_clause", "3:what|4:goes")],
        "zero-1": [("qf_conservative_zero_relative", "4:whistle|5:your|6:blowing")],
        "zero-2": [("qf_conservative_zero_relative", "4:hat|5:he|6:wore")],
        "zero-3": [("qf_conservative_zero_relative", "4:bark|5:you|6:heard")],
        "zero-4": [("qf_conservative_zero_relative", "4:one|5:Grandpa|6:built")],
        "rel-1": [("qf_conservative_relativizer", "5:sock|6:that|8:lost")],
        "inv-1": [("qf_conservative_relcl", "2:who|3:'s")],
        "bind-1": [("binding_conservative_self_after_two_nominals", "6:themselves|2:Lala|4:Po")],
    }
    # It-clefts on a pronoun, extraposed relatives, free relatives of place and time
    got = {sid: [(m.rule, m.tokens_str()) for m in find_dpe(by_id[sid], cons)]
           for sid in ("cleft-1", "cleft-2", "extra-1", "where-1", "when-1")}
    assert got == {
        "cleft-1": [("qf_conservative_cleft", "2:was|3:it|4:you|5:were")],
        "cleft-2": [("qf_conservative_cleft", "1:It|2:'s|3:you|5:broke")],
        "extra-1": [("qf_conservative_extraposed", "1:What|5:that|6:was")],
        "where-1": [("qf_conservative_wh_clause", "5:where|6:it|7:goes")],
        "when-1": [("qf_conservative_wh_clause", "7:when|8:you|9:were")],
    }
    # App. C's own relcl analysis, kept: the conservative mode names it qf_conservative_relcl
    (m,) = find_dpe(by_text("Is the boy who is smiling happy?"), cons)
    assert (m.rule, m.tokens_str()) == ("qf_conservative_relcl", "3:boy|6:smiling")
