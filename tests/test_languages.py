"""A language is one registry entry: its cleaning conventions, parsers and stop-word profile.

Expected cleaned lines are worked out by hand from French orthography (elision, hyphenated
subject clitics in inversion), never from the code under test.
"""

from __future__ import annotations

import csv
import json

import pytest

from povstim import languages
from povstim.io import PovstimError
from povstim.sources.clean import clean_source
from povstim.sources.normalize import CleanStats, Style, finish


def test_every_entry_holds_its_language_as_data():
    for code, lang in languages.LANGUAGES.items():
        assert lang.code == code and len(lang.chat) == 3 and lang.spacy_models and lang.spacy_install
        assert len(lang.stopwords) >= 20, code
        # a profile word of one language may be another's (fr "la", it "la"), but no two profiles coincide
        for other, olang in languages.LANGUAGES.items():
            if other != code:
                assert len(lang.stopwords & olang.stopwords) < len(lang.stopwords) / 3, (code, other)
    assert not languages.LANGUAGES["en"].elisions  # English keeps normalize.py's own code path
    assert languages.get("fr").chat == "fra" and languages.get("de").chat == "deu"


def test_unknown_language_lists_the_known_ones():
    with pytest.raises(PovstimError, match=r"benchmarks\.x\.language: unknown language 'nl' \(known: de, en, fr, it\)"):
        languages.get("nl", "benchmarks.x.language")


@pytest.mark.parametrize("raw, expected", [
    ("qu' est ce que c' est", "Qu'est ce que c'est."),       # elided que, ce joined to their word
    ("l' enfant mange -t- il sa soupe", "L'enfant mange-t-il sa soupe."),  # euphonic t closed up
    ("veut - il du pain ?", "Veut-il du pain?"),             # inverted subject clitic
    ("est -ce que tu viens ?", "Est-ce que tu viens?"),
    ("est ce que tu viens ?", "Est ce que tu viens?"),       # no hyphen written: none invented
    ("les grands-parents sont là", "Les grands-parents sont là."),
    ("j’ai vu l’oiseau", "J'ai vu l'oiseau."),               # typographic apostrophes
    ("e\u0301cole maternelle", "École maternelle."),            # NFC: e + combining acute is one letter
])
def test_french_cleaning_conventions(raw, expected):
    style = Style(language="fr", min_words=1)
    assert finish(raw, style, CleanStats()) == expected


def test_french_question_heuristic_never_runs():
    with pytest.raises(PovstimError, match="question heuristic"):
        Style.from_params({"style": "posh", "min_words": 3, "language": "fr", "fix_questions": True})
    style = Style.from_params({"style": "posh", "min_words": 3, "language": "fr"}, spoken=True)
    assert not style.fix_questions


def _french_rows(shared_data, n=600):
    path = shared_data / "childes_vs_wiki_fr" / "cds_validation_random.csv"
    with open(path, encoding="utf-8", newline="") as fh:
        return [r["text"] for _, r in zip(range(n), csv.DictReader(fh))]


def test_stop_word_profile_tells_the_shared_corpora_apart(shared_data):
    fr = " ".join(_french_rows(shared_data)).split()
    assert languages.guess(fr)[0] == "fr"
    path = shared_data / "clams" / "clams" / "de_evalset" / "subj_rel.txt"
    de = " ".join(line.split("\t")[1] for line in path.read_text(encoding="utf-8").splitlines()[:400]).split()
    assert languages.guess(de)[0] == "de"
    zorro = next((shared_data / "zorro" / "babyberta").iterdir()).read_text(encoding="utf-8").split()[:5000]
    assert languages.guess(zorro)[0] == "en"
    assert languages.guess(["le", "chat"])[0] is None  # too few words to judge


def test_french_text_said_to_be_english_is_an_error_naming_the_key(tmp_path, shared_data):
    src = tmp_path / "fr.csv"
    with open(src, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["text"])
        w.writerows([r] for r in _french_rows(shared_data))
    out, stats = tmp_path / "out.txt", tmp_path / "stats.json"
    spec = {"kind": "local", "format": "csv", "path": str(src), "text_column": "text"}
    with pytest.raises(PovstimError, match=r"sources\.cds\.language: .*English \(en\) but reads as French"):
        clean_source("cds", dict(spec, language="en"), out, stats)
    assert not out.exists() and not stats.exists()  # nothing half-made left behind
    clean_source("cds", dict(spec, language="fr"), out, stats)
    lines = out.read_text(encoding="utf-8").splitlines()
    assert json.loads(stats.read_text())["language"] == "fr"
    assert len(lines) > 400
    assert not any(gap in ln.lower() for ln in lines for gap in ("c' est", "qu' est", "n' a ", "t' as"))


def test_byte_premiums_are_the_published_table():
    # Arnett et al. 2024's released table (byte-premium-tool all_merged_20240223.tsv, byte_coef, NLLB rows)
    expected = {"en": 1.0, "it": 1.0668869315487413, "fr": 1.1739790347939143, "de": 1.053648017719111}
    assert {c: lang.byte_premium for c, lang in languages.LANGUAGES.items()} == expected
    assert languages.budget_bytes(1_000_000, "fr") == 1_173_979  # 1 MB of English is 1.17 MB of French
    assert languages.english_equivalent_bytes(1_173_979, "fr") == pytest.approx(1_000_000, abs=1)
    with pytest.raises(PovstimError, match="unknown language 'zz'"):
        languages.budget_bytes(1, "zz")


def test_plan_refuses_french_sources_declared_english(tmp_path, shared_data, capsys):
    from pathlib import Path

    from povstim.cli import main

    repo = Path(__file__).resolve().parents[1]
    text = (repo / "configs" / "french-demo.yaml").read_text(encoding="utf-8")
    text = text.replace("../shared/data", str(shared_data)).replace("language: fr", "language: en")
    text = text.replace("rules: [question_formation_fr, binding_fr], ", "")  # the English default rules
    # an English suite (the CLAMS-fr suites would be refused first: a suite in another language)
    text = text[:text.index("benchmarks:")] + "benchmarks:\n  posh: {kind: generated, seed: 1}\n\n" + \
        text[text.index("scoring:"):]
    cfg = tmp_path / "fr-as-en.yaml"
    cfg.write_text(text, encoding="utf-8")
    assert main(["plan", str(cfg)]) == 1  # the issue: plan used to report English QF removals on French text
    err = capsys.readouterr().err
    assert "sources.cds_fr.language: the text is said to be English (en) but reads as French" in err
