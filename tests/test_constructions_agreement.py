"""Agreement through UD features: a pattern's ``agree:`` / ``disagree:`` and the library's
``subject_verb_agreement_ud`` (constructions/library/crosslingual.yaml).

Every tree here is CoNLL-U written for this test (French, German and English sentences of our own, with
the features UD's guidelines give them: Number/Person on a finite verb or on a periphrastic verb's finite
auxiliary, Number alone on nouns), so the gold answer of each case is what UD's definition of agreement
says, not what the matcher found. Each case runs through the three matchers: the DependencyMatcher path
(the reference), one construction's compiled matcher, and the filter's one plan for all constructions.
"""

from __future__ import annotations

from pathlib import Path

import io

import pytest

from povstim import dpe
from povstim.constructions import fastmatch, library, match, spec
from povstim.io import PovstimError
from povstim.parse.conllu import read

REPO = Path(__file__).resolve().parents[1]  # the checkout: relative construction paths

AGREE = "subject_verb_agreement_ud"


def conllu(rows: str, sid: str) -> str:
    """A sentence from tab-free rows ("form lemma UPOS FEATS head deprel", one token a line)."""
    out = [f"# sent_id = {sid}"]
    for i, line in enumerate(rows.strip().splitlines(), 1):
        form, lemma, upos, feats, head, deprel = line.split()
        out.append("\t".join([str(i), form, lemma, upos, "_", feats, head, deprel, "_", "_"]))
    return "\n".join(out) + "\n\n"


SENTENCES = {
    # French
    "fr-plur": """Les le DET Definite=Def|Number=Plur|PronType=Art 2 det
enfants enfant NOUN Gender=Masc|Number=Plur 3 nsubj
mangent manger VERB Mood=Ind|Number=Plur|Person=3|Tense=Pres|VerbForm=Fin 0 root
une un DET Definite=Ind|Gender=Fem|Number=Sing|PronType=Art 5 det
pomme pomme NOUN Gender=Fem|Number=Sing 3 obj""",
    # the mismatch: a plural subject, a singular verb
    "fr-mismatch": """ils il PRON Gender=Masc|Number=Plur|Person=3|PronType=Prs 2 nsubj
mange manger VERB Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin 0 root
une un DET Definite=Ind|Gender=Fem|Number=Sing|PronType=Art 4 det
pomme pomme NOUN Gender=Fem|Number=Sing 2 obj""",
    # the periphrastic verb: Number/Person on the finite auxiliary, not on the participle
    "fr-aux": """Nous moi PRON Number=Plur|Person=1|PronType=Prs 3 nsubj
avons avoir AUX Mood=Ind|Number=Plur|Person=1|Tense=Pres|VerbForm=Fin 3 aux:tense
mangé manger VERB Gender=Masc|Number=Sing|Tense=Past|VerbForm=Part 0 root""",
    # Person differs, Number the same: tu (2nd) with a 3rd-person verb
    "fr-person": """tu toi PRON Number=Sing|Person=2|PronType=Prs 2 nsubj
mange manger VERB Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin 0 root""",
    # the verb lacks Number (a parser that writes only VerbForm): no agreement can be read
    "fr-lacking": """Le le DET Definite=Def|Gender=Masc|Number=Sing|PronType=Art 2 det
chat chat NOUN Gender=Masc|Number=Sing 3 nsubj
dort dormir VERB Mood=Ind|Tense=Pres|VerbForm=Fin 0 root""",
    # a copula: the predicate adjective heads, the finite copula agrees
    "fr-cop": """Les le DET Definite=Def|Number=Plur|PronType=Art 2 det
chats chat NOUN Gender=Masc|Number=Plur 4 nsubj
sont être AUX Mood=Ind|Number=Plur|Person=3|Tense=Pres|VerbForm=Fin 4 cop
noirs noir ADJ Gender=Masc|Number=Plur 0 root""",
    # fr_core_news_sm's passive subject for être + adjective
    "fr-pass-subj": """Elle lui PRON Gender=Fem|Number=Sing|Person=3|PronType=Prs 3 nsubj:pass
est être AUX Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin 3 cop
contente content ADJ Gender=Fem|Number=Sing 0 root""",
    # a coordinated subject: the first conjunct's Number (plural here) is not the coordination's
    "fr-coord": """Les le DET Definite=Def|Number=Plur|PronType=Art 2 det
filles fille NOUN Gender=Fem|Number=Plur 5 nsubj
et et CCONJ _ 4 cc
Paul Paul PROPN Gender=Masc|Number=Sing 2 conj
chantent chanter VERB Mood=Ind|Number=Plur|Person=3|Tense=Pres|VerbForm=Fin 0 root""",
    # German
    "de-plur": """Die der DET Case=Nom|Definite=Def|Number=Plur|PronType=Art 2 det
Kinder Kind NOUN Case=Nom|Gender=Neut|Number=Plur 3 nsubj
spielen spielen VERB Mood=Ind|Number=Plur|Person=3|Tense=Pres|VerbForm=Fin 0 root""",
    "de-aux": """Der der DET Case=Nom|Definite=Def|Gender=Masc|Number=Sing|PronType=Art 2 det
Hund Hund NOUN Case=Nom|Gender=Masc|Number=Sing 4 nsubj
hat haben AUX Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin 4 aux
gebellt bellen VERB VerbForm=Part 0 root""",
    "de-mismatch": """Die der DET Case=Nom|Definite=Def|Number=Plur|PronType=Art 2 det
Kinder Kind NOUN Case=Nom|Gender=Neut|Number=Plur 3 nsubj
spielt spielen VERB Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin 0 root""",
    "de-cop-person": """Du du PRON Case=Nom|Number=Sing|Person=2|PronType=Prs 3 nsubj
bist sein AUX Mood=Ind|Number=Sing|Person=2|Tense=Pres|VerbForm=Fin 3 cop
müde müde ADJ Degree=Pos 0 root""",
    "de-cop-person-mismatch": """Du du PRON Case=Nom|Number=Sing|Person=2|PronType=Prs 3 nsubj
ist sein AUX Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin 3 cop
müde müde ADJ Degree=Pos 0 root""",
    # English, with en_core_web_sm's features: a 3sg verb carries Number, a plural one (VBP) does not
    "en-sing": """The the DET Definite=Def|PronType=Art 2 det
dog dog NOUN Number=Sing 3 nsubj
barks bark VERB Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin 0 root""",
    "en-plur-vbp": """The the DET Definite=Def|PronType=Art 2 det
dogs dog NOUN Number=Plur 3 nsubj
bark bark VERB Mood=Ind|Tense=Pres|VerbForm=Fin 0 root""",
    "en-mismatch": """The the DET Definite=Def|PronType=Art 2 det
dogs dog NOUN Number=Plur 3 nsubj
barks bark VERB Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin 0 root""",
}

# sentence -> (the pattern that must match in posh, or None; the nodes' forms in the pattern's order)
POSH = {
    "fr-plur": ("finite_verb", ("mangent", "enfants")),
    "fr-mismatch": None,
    "fr-aux": ("auxiliary_person", ("mangé", "Nous", "avons")),
    "fr-person": None,
    "fr-lacking": None,
    "fr-cop": ("auxiliary", ("noirs", "chats", "sont")),
    "de-plur": ("finite_verb", ("spielen", "Kinder")),
    "de-aux": ("auxiliary", ("gebellt", "Hund", "hat")),
    "de-mismatch": None,
    "de-cop-person": ("auxiliary_person", ("müde", "Du", "bist")),
    "de-cop-person-mismatch": None,
    "en-sing": ("finite_verb", ("barks", "dog")),
    "en-plur-vbp": None,
    "en-mismatch": None,
}


@pytest.fixture(scope="module")
def sents():
    return {sid: next(read(io.StringIO(conllu(rows, sid)))) for sid, rows in SENTENCES.items()}


def all_engines(c, mode, s):
    """The match of every engine (they must be one answer): reference, compiled, and the filter's plan."""
    ref = match.match(c, mode, s, engine="spacy")
    assert match.match(c, mode, s) == ref
    plan = fastmatch.Plan([(c.name, match.fast_patterns(c, mode))])
    assert plan.run(s).get(c.name) == ref
    return ref


def forms(got):
    return None if got is None else (got[0], tuple(t.form for t in got[1]))


@pytest.mark.parametrize("sid", sorted(POSH))
def test_subject_verb_agreement_matches_by_ud_features(sents, sid):
    c = library.CONSTRUCTIONS[AGREE]
    assert forms(all_engines(c, "posh", sents[sid])) == POSH[sid]


def test_the_modes_differ_where_they_say(sents):
    c = library.CONSTRUCTIONS[AGREE]
    # conservative compares Number with any head or aux/cop: the tu + 3rd-person verb (Number agrees) is removed
    assert forms(all_engines(c, "conservative", sents["fr-person"])) == ("head", ("mange", "tu"))
    # ... but a Number mismatch or a missing Number never matches, in any mode
    for mode in dpe.MODES:
        for sid in ("fr-mismatch", "de-mismatch", "en-mismatch", "fr-lacking", "en-plur-vbp"):
            assert all_engines(c, mode, sents[sid]) is None, (mode, sid)
    # strict: nsubj only (fr_core_news_sm's nsubj:pass for the subject of être + adjective is posh's), not
    # a coordinated subject
    assert forms(all_engines(c, "posh", sents["fr-pass-subj"])) == ("auxiliary_person", ("contente", "Elle", "est"))
    assert all_engines(c, "strict", sents["fr-pass-subj"]) is None
    assert forms(all_engines(c, "posh", sents["fr-coord"])) == ("finite_verb", ("chantent", "filles"))
    assert all_engines(c, "strict", sents["fr-coord"]) is None
    for sid, want in POSH.items():  # strict is a subset of posh, conservative a superset, on every case here
        if want is None:
            assert all_engines(c, "strict", sents[sid]) is None, sid
        else:
            assert all_engines(c, "conservative", sents[sid]) is not None, sid


def test_find_dpe_runs_it_with_the_other_constructions(sents):
    for sid, want in POSH.items():
        hits = {h.phenomenon: h.rule for h in dpe.find_dpe(sents[sid], "posh", (AGREE, "passive_ud"))}
        assert hits.get(AGREE) == (None if want is None else f"{AGREE}:{want[0]}"), sid


def one(entry: dict):
    return spec.parse_entries([{"targets": {"blimp": ["x"]}, **entry}], spec.Where("test", None), ("test",),
                              REPO)[0]


def test_disagree_is_both_carry_and_some_value_differs(sents):
    c = one({"name": "sv_disagree", "patterns": [{"name": "p", "nodes": {"verb": {"feats": {"VerbForm": "Fin"}},
                                                                         "subj": {"deprel": "nsubj"}},
                                                  "relations": [["verb", ">", "subj"]],
                                                  "disagree": [["subj", "verb", ["Number"]]]}]})
    assert forms(all_engines(c, "posh", sents["fr-mismatch"])) == ("p", ("mange", "ils"))
    assert forms(all_engines(c, "posh", sents["de-mismatch"])) == ("p", ("spielt", "Kinder"))
    for sid in ("fr-plur", "de-plur", "en-sing", "fr-lacking", "en-plur-vbp"):  # agreeing or lacking: no match
        assert all_engines(c, "posh", sents[sid]) is None, sid
    # two features: some value differs (Person), the other equal (Number)
    c2 = one({"name": "sv_disagree2", "patterns": [{"name": "p", "nodes": {"verb": {}, "subj": {"deprel": "nsubj"}},
                                                    "relations": [["verb", ">", "subj"]],
                                                    "disagree": [["subj", "verb", ["Number", "Person"]]]}]})
    assert forms(all_engines(c2, "posh", sents["fr-person"])) == ("p", ("mange", "tu"))
    # the subject noun has no Person: not both carry it, so no disagreement is read
    assert all_engines(c2, "posh", sents["de-mismatch"]) is None


def test_a_multi_valued_feature_agrees_as_a_set():
    text = conllu("""qui qui PRON PronType=Rel,Int 2 nsubj
vient venir VERB PronType=Int,Rel|VerbForm=Fin 0 root""", "m1")
    s = next(read(io.StringIO(text)))
    c = one({"name": "multi", "patterns": [{"name": "p", "nodes": {"verb": {}, "subj": {"deprel": "nsubj"}},
                                            "relations": [["verb", ">", "subj"]],
                                            "agree": [["subj", "verb", "PronType"]]}]})
    assert forms(all_engines(c, "posh", s)) == ("p", ("vient", "qui"))


def test_the_plan_does_not_reuse_a_search_across_other_feature_values(sents):
    # "ils mangent" and "ils mange": the same bits for every node check (no check names Number's values) and
    # the same heads; only the agreement tells them apart, so the cached search must not be shared
    c = library.CONSTRUCTIONS[AGREE]
    plan = fastmatch.Plan([(c.name, match.fast_patterns(c, "posh"))])
    ok = next(read(io.StringIO(conllu("""ils il PRON Gender=Masc|Number=Plur|Person=3|PronType=Prs 2 nsubj
mangent manger VERB Mood=Ind|Number=Plur|Person=3|Tense=Pres|VerbForm=Fin 0 root""", "ok"))))
    bad = next(read(io.StringIO(conllu("""ils il PRON Gender=Masc|Number=Plur|Person=3|PronType=Prs 2 nsubj
mange manger VERB Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin 0 root""", "bad"))))
    assert plan.mask(ok)[1] == plan.mask(bad)[1]
    assert forms(plan.run(ok)[c.name]) == ("finite_verb_person", ("mangent", "ils"))
    assert plan.run(bad) == {} == {k: v for k, v in [(c.name, match.match(c, "posh", bad, engine="spacy"))] if v}


def test_the_fingerprint_and_the_filter_hash_see_agree():
    def fp(key, feats):
        return match.fingerprint(one({"name": "t", "patterns": [{
            "nodes": {"v": {}, "s": {"deprel": "nsubj"}}, "relations": [["v", ">", "s"]], key: [["s", "v", feats]]}]}))

    assert fp("agree", ["Number"]) == fp("agree", ["Number"])
    assert len({fp("agree", ["Number"]), fp("agree", ["Number", "Person"]), fp("disagree", ["Number"])}) == 3
    plain = one({"name": "t", "patterns": [{"nodes": {"v": {}, "s": {"deprel": "nsubj"}},
                                            "relations": [["v", ">", "s"]]}]})
    assert plain.patterns["posh"][0].agree == ()
    # entries without agree keep the fingerprints they had before the key existed (computed with the code of
    # main at 017655f), so the filter hash of a config that runs none of them does not move
    assert match.fingerprint(library.CONSTRUCTIONS["passive_ud"]) == "f76cb66050245910"
    assert match.fingerprint(library.CONSTRUCTIONS["det_noun"]) == "8514aee6128b9d7b"
    assert library.spec_hash([AGREE]) != library.spec_hash(["passive_ud"])


GOOD = """constructions:
  - name: toy_agree
    description: a toy
    targets: {{blimp: [x]}}
    patterns:
      - name: p
        nodes:
          verb: {{}}
          subj: {{deprel: nsubj}}
        relations: [[verb, ">", subj]]
        agree: {agree}
"""


@pytest.mark.parametrize("agree, message", [
    ("[[subject, verb, [Number]]]", r"mine.yaml:11: constructions\[0\].patterns\[0\].agree\[0\]: unknown node "
                                    r"'subject' \(did you mean 'subj'\?\)"),
    ("[[subj, verb, [Numbr]]]", r"mine.yaml:11: constructions\[0\].patterns\[0\].agree\[0\]\[2\]\[0\]: 'Numbr' is "
                                r"not a UD v2 feature \(did you mean 'Number'\?\)"),
    ("[[subj, verb, Persn]]", r"mine.yaml:11: constructions\[0\].patterns\[0\].agree\[0\]\[2\]: 'Persn' is not a UD "
                              r"v2 feature"),
    ("[[subj, verb]]", r"mine.yaml:11: constructions\[0\].patterns\[0\].agree\[0\]: an entry of agree is \[A, B, "
                       r"\[Feature, ...\]\]"),
    ("[subj, verb, [Number]]", r"mine.yaml:11: constructions\[0\].patterns\[0\].agree\[0\]: an entry of agree is"),
    ("{subj: verb}", r"mine.yaml:11: constructions\[0\].patterns\[0\].agree: agree is a list of \[A, B, "),
    ("[[subj, subj, [Number]]]", r"mine.yaml:11: .*agree\[0\]: an entry of agree relates two different nodes"),
    ("[[subj, verb, []]]", r"mine.yaml:11: .*agree\[0\]\[2\]: the features are a non-empty list"),
    ("[[subj, verb, [Number, Number]]]", r"mine.yaml:11: .*agree\[0\]\[2\]: a feature is named twice"),
])
def test_bad_agree_names_file_line_and_key(tmp_path, agree, message):
    p = tmp_path / "mine.yaml"
    p.write_text(GOOD.format(agree=agree), encoding="utf-8")
    with pytest.raises(PovstimError, match=message):
        spec.read_file(p)


def test_disagree_is_checked_like_agree(tmp_path):
    p = tmp_path / "mine.yaml"
    p.write_text(GOOD.format(agree="[[subj, verb, [Number]]]").replace("agree:", "disagree:"), encoding="utf-8")
    (c,) = spec.read_file(p)
    assert c.patterns["posh"][0].disagree == (("subj", "verb", ("Number",)),) and c.patterns["posh"][0].agree == ()
    p.write_text(GOOD.format(agree="[[subj, verbb, [Number]]]").replace("agree:", "disagree:"), encoding="utf-8")
    with pytest.raises(PovstimError, match=r"mine.yaml:11: .*disagree\[0\]: unknown node 'verbb'"):
        spec.read_file(p)


def test_the_library_entry_is_ud_only_and_declared_for_its_languages():
    ph = dpe.PHENOMENA[AGREE]
    assert set(ph.languages) == {"fr", "it", "de"}
    c = library.CONSTRUCTIONS[AGREE]
    for pats in c.patterns.values():  # no word of any language: relations, UPOS and features only
        for p in pats:
            assert p.agree and all("form" not in n.attrs and "lemma" not in n.attrs for n in p.nodes)
