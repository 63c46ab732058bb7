"""Italian text end to end: CHAT cleaning of a hand-written `@Languages: ita` transcript,
per-language normalisation and sentence splitting, the English question heuristic kept off
Italian, the tokenizer and scorer on accents and apostrophes, and parser errors naming the
install command."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from povstim.io import PovstimError
from povstim.sources.clean import clean_source
from povstim.sources.normalize import CleanStats, Style, finish, split_sentences

FIXTURES = Path(__file__).parent / "fixtures" / "sources"
CHAT = FIXTURES / "italian.cha"

# What the cleaner must make of tests/fixtures/sources/italian.cha (worked out by hand from
# the CHAT manual): adult main tiers only, codes gone, elisions and accents intact.
EXPECTED = [
    "Guarda Lorenzo, c'è l'acqua nel bicchiere.",
    "Vuoi l'acqua fresca?",                           # <vuoi l'> [/] retracing removed
    "Dov'è il tuo orsacchiotto?",                     # &-ehm filler gone; "dov' è" joined (elision)
    "È caduto sotto il letto poverino.",              # <è andato> [//] and the pause (.) gone
    "Perché piangi, amore mio?",
    "Un po' di pane con la marmellata.",              # apocope po' keeps its space; +... -> .
    "Adesso andiamo a fare il bagnetto.",             # [!] gone
    "Dai che ti metto il pigiama.",                   # overlap [>] gone
    "Sì, prima però laviamo i denti.",                # <sì> [<] keeps its word
    "Bau bau fa il cane.",                            # bau@o -> bau
    "Di' ciao alla zia.",                             # imperative di' is not an elision
    "È l'ora della nanna.",                           # typographic apostrophe -> '
    "Quant'è bello il mare.",                         # [= explanation] gone
    "È ora di cena, bambini.",                        # decomposed e + U+0300 -> precomposed È
    "La mamma mette la giacca a Lorenzo perché fuori fa freddo e piove.",   # wrapped tier joined
    "Mamma mia che disordine!",                       # postcode [+ EXC] gone
    "Vuoi il latte.",                                 # no inversion in Italian: not made a question
    "Do i biscotti al cane.",                         # "do i" would fool the English heuristic
]


def _clean(tmp_path, **spec):
    spec = {"kind": "local", "format": "chat", "path": str(CHAT), **spec}
    out, stats = tmp_path / "out.txt", tmp_path / "stats.json"
    clean_source("it", spec, out, stats)
    return out.read_text(encoding="utf-8").splitlines(), json.loads(stats.read_text())


def test_italian_chat_fixture_cleans_as_worked_out_by_hand(tmp_path):
    lines, stats = _clean(tmp_path, language="it", languages=["ita"])
    assert lines == EXPECTED
    assert all(unicodedata.is_normalized("NFC", line) for line in lines)
    assert stats["dropped"] == {"child_speaker": 4, "untranscribed": 1}  # CHI x3 and the 5-year-old sister
    assert stats["questions_fixed"] == 0 and stats["language"] == "it"
    assert not any(c in "".join(lines) for c in "[]<>&@\u2019\x15")


def test_chat_language_selection(tmp_path):
    with pytest.raises(PovstimError, match="kept no lines"):
        _clean(tmp_path, language="it", languages=["eng"])  # an Italian transcript is not English


def test_english_cleaning_would_damage_italian(tmp_path):
    """The Italian profile matters: English cleaning misreads the same transcript."""
    lines, stats = _clean(tmp_path, language="en", languages=["ita"])
    assert "Do i biscotti al cane?" in lines and stats["questions_fixed"] == 1   # English heuristic fired
    assert "Dov' è il tuo orsacchiotto?" in lines                               # elision left apart
    assert not all(unicodedata.is_normalized("NFC", line) for line in lines)


def test_fix_questions_cannot_be_switched_on_for_italian(tmp_path):
    with pytest.raises(PovstimError, match=r"sources\.it\.fix_questions: the question heuristic reads English word order"):
        _clean(tmp_path, language="it", fix_questions=True)


def test_unknown_language_names_the_key(tmp_path):
    with pytest.raises(PovstimError, match=r"config key 'sources\.it\.language': 'xx' is not one of \['en', 'it', 'fr', 'de'\]"):
        _clean(tmp_path, language="xx")


@pytest.mark.parametrize("raw, expected", [
    ("l' acqua è fresca", "L'acqua è fresca."),
    ("dell' albero cade una foglia", "Dell'albero cade una foglia."),
    ("un po' di latte per te", "Un po' di latte per te."),
    ("'sto gatto è matto", "'Sto gatto è matto."),
    ("e\u0300 arrivato il papà", "È arrivato il papà."),
    ("c’è un’altra mela", "C'è un'altra mela."),
])
def test_italian_finish(raw, expected):
    assert finish(raw, Style(language="it"), CleanStats()) == expected


def test_italian_babyberta_style_lowercases_accents():
    assert finish("È l'ora della nanna", Style(style="babyberta", lowercase=True, language="it"),
                  CleanStats()) == "è l'ora della nanna ."


def test_italian_sentence_splitting():
    text = ("Il sig. Rossi è arrivato. È tardi, ecc. ma non importa! «Vieni?» chiese la prof.ssa Neri. "
            "Poi andò via.")
    assert split_sentences(text, "it") == [
        "Il sig. Rossi è arrivato.",
        "È tardi, ecc. ma non importa!",
        "«Vieni?» chiese la prof.ssa Neri.",
        "Poi andò via.",
    ]
    # English splitting is unchanged (and does not know Italian capitals).
    assert split_sentences("It is late. È tardi.") == ["It is late. È tardi."]


def test_tokenizer_and_scorer_on_italian(tmp_path):
    import torch

    from helpers import tiny_models as tiny
    from povstim.scoring.scorer import Scorer, load
    from povstim.tokenizer import bpe

    lines = EXPECTED * 5
    tok = bpe.train(lines, {"vocab_size": 300})
    for text in ("C'è l'acqua.", "Perché piangi?", "È l'ora della nanna."):
        assert tok.decode(tok.encode(text).ids).strip() == text  # bytes in, same bytes out
    low = bpe.train(lines, {"vocab_size": 300, "lowercase": True})
    assert low.encode("È").tokens == low.encode("è").tokens
    torch.set_num_threads(1)
    model = tiny.build(tmp_path / "m", lines, "causal", vocab_size=300, seed=1, train_steps=10)
    lm, hf, kind = load(model)
    s = Scorer(lm, hf, kind).score(["C'è l'acqua.", "C'è l’acqua.", "E\u0300 tardi.", "È tardi."])
    assert all(x < 0 for x in s.logp)
    assert s.ntok[2] > s.ntok[3]  # a decomposed accent is an extra byte: why the cleaner normalises to NFC


def test_parsers_name_the_install_command_for_italian(tmp_path):
    pytest.importorskip("spacy")
    from povstim.parse import backends

    with pytest.raises(PovstimError) as exc:
        backends.load_spacy(language="it")
    assert "it_core_news_sm" in str(exc.value) and "spacy download it_core_news_sm" in str(exc.value)
    # stanza: a model folder with English models only
    (tmp_path / "en").mkdir()
    (tmp_path / "resources.json").write_text("{}")
    backends.check_stanza_models(tmp_path, "en")
    with pytest.raises(PovstimError) as exc:
        backends.check_stanza_models(tmp_path, "it")
    msg = str(exc.value)
    assert "Italian" in msg and str(tmp_path / "it") in msg and "stanza.download('it'" in msg


def test_parse_cli_passes_the_language(tmp_path, capsys):
    from povstim.cli import main

    corpus = tmp_path / "base.txt"
    corpus.write_text("Chi è il bambino che ride?\n", encoding="utf-8")
    rc = main(["parse", "--input", str(corpus), "--backend", "stanza", "--model-dir", str(tmp_path / "none"),
               "--language", "it", "--no-cache", "--no-prefilter", "--out", str(tmp_path / "x.conllu")])
    assert rc != 0 and "stanza Italian models" in capsys.readouterr().err
