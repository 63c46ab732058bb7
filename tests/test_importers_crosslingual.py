"""CLAMS, FIT-CLAMS and MultiBLiMP importers, and suites that carry their language.

Gold answers: the hand-written fixtures' own pairs (tests/fixtures/suites/README.md) and, for the real
releases in ../shared/data/clams, line counts read off the files (a pair is two lines or rows).
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from povstim import config as povstim_config
from povstim.benchmarks.importers import import_suite, suite_language
from povstim.io import PovstimError

SUITES = Path(__file__).parent / "fixtures" / "suites"
ROOT = Path(__file__).resolve().parents[1]


def test_multiblimp_tsv_pairs_by_phenomenon():
    pairs = import_suite("multiblimp", SUITES / "multiblimp" / "fra", "mb", language="fr")
    assert [(p.paradigm, p.good, p.bad) for p in pairs[:2]] == [
        ("SV-#", "Le chat dort sur le lit .", "Le chat dorment sur le lit ."),
        ("SV-#", "Les enfants jouent dans le jardin .", "Les enfants joue dans le jardin ."),
    ]
    assert [p.paradigm for p in pairs] == ["SV-#", "SV-#", "SV-P", "SV-P", "SP-G"]
    assert pairs[4].extra["feature_vals"] == "FEM -> MASC" and pairs[4].extra["lang"] == "fra"
    assert suite_language({"kind": "multiblimp", "path": str(SUITES / "multiblimp" / "fra")}, "b") == "fr"


def test_multiblimp_bad_input_names_file_and_row(tmp_path):
    with pytest.raises(PovstimError, match=r"row 2: lang 'fra', but the suite's language is de"):
        import_suite("multiblimp", SUITES / "multiblimp" / "fra", "mb", language="de")
    f = tmp_path / "data.tsv"
    f.write_text("sen\tgood\nLe chat dort .\tx\n", encoding="utf-8")
    with pytest.raises(PovstimError, match=r"data.tsv, row 1: the MultiBLiMP header lacks wrong_sen"):
        import_suite("multiblimp", f, "mb")
    f.write_text("sen\twrong_sen\nLe chat dort .\t\n", encoding="utf-8")
    with pytest.raises(PovstimError, match=r"data.tsv, row 2: no value in column 'wrong_sen'"):
        import_suite("multiblimp", f, "mb")


def test_clams_pairs_each_true_line_with_the_next_false_line(tmp_path):
    pairs = import_suite("clams", SUITES / "clams" / "fr_evalset", "clams")
    assert [(p.paradigm, p.good, p.bad) for p in pairs] == [
        ("simple_agrmt", "le garçon dort", "le garçon dorment"),
        ("simple_agrmt", "les filles chantent", "les filles chante"),
        ("vp_coord", "le chien court et saute", "le chien court et sautent"),
    ]
    f = tmp_path / "x.txt"
    f.write_text("True\ta\nTrue\tb\n", encoding="utf-8")
    with pytest.raises(PovstimError, match=r"x.txt, line 2: a True line where CLAMS pairs"):
        import_suite("clams", f, "clams")
    f.write_text("True\ta\nFalse b\n", encoding="utf-8")
    with pytest.raises(PovstimError, match=r"x.txt, line 2: expected 'True<TAB>sentence'"):
        import_suite("clams", f, "clams")


def test_fit_clams_one_paradigm_per_domain_and_file():
    pairs = import_suite("fit_clams", SUITES / "fit_clams" / "fr_", "fit")
    assert [(p.paradigm, p.category, p.good, p.bad) for p in pairs] == [
        ("childes_simple_agrmt", pairs[0].category, "le bébé pleure", "les bébés pleure"),
        ("childes_simple_agrmt", pairs[0].category, "les bébés pleurent", "le bébé pleurent"),
        ("wiki_subj_rel", pairs[2].category, "le maire , qui aime le juge , parle",
         "les maires , qui aiment le juge , parle"),  # a quoted CSV row keeps its commas
    ]
    assert pairs[0].extra["domain"] == "childes"
    one = import_suite("fit_clams", SUITES / "fit_clams" / "fr_" / "wiki", "fit")
    assert [p.paradigm for p in one] == ["subj_rel"]


@pytest.mark.slow  # ~30 s: every pair of the three languages' releases
def test_real_clams_and_fit_clams_releases(shared_data):
    clams = shared_data / "clams"
    for lang in ("en", "fr", "de"):
        folder = clams / "clams" / f"{lang}_evalset"
        pairs = import_suite("clams", folder, "clams")
        lines = sum(len(f.read_text(encoding="utf-8").splitlines()) for f in folder.glob("*.txt"))
        assert len(pairs) == lines // 2
        assert suite_language({"kind": "clams", "path": str(folder)}, "b") == lang
        fit = import_suite("fit_clams", clams / "fit_clams" / f"{lang}_", "fit")
        rows = sum(len(f.read_text(encoding="utf-8").splitlines()) for f in (clams / "fit_clams" / f"{lang}_").rglob("*.csv"))
        assert len(fit) == rows // 2 and len({p.paradigm for p in fit}) == 14  # 7 paradigms x 2 domains
    fr = import_suite("clams", clams / "clams" / "fr_evalset", "clams")
    assert (fr[0].good, fr[0].bad) == (
        "l' auteur connaît beaucoup de langues étrangères et connaît beaucoup de langues étrangères",
        "l' auteur connaît beaucoup de langues étrangères et connaissent beaucoup de langues étrangères")


def _italian_demo():
    return yaml.safe_load((ROOT / "configs" / "italian-demo.yaml").read_text(encoding="utf-8"))


def test_a_suite_in_another_language_than_the_corpora_is_an_error_naming_the_key():
    raw = _italian_demo()  # Italian corpora
    bad = copy.deepcopy(raw)
    bad["benchmarks"]["clams"] = {"kind": "clams", "path": str(SUITES / "clams" / "fr_evalset")}
    with pytest.raises(PovstimError, match=r"benchmarks\.clams\.language: the suite is in French \(fr\), but the "
                                           r"models train on Italian \(it\) corpora"):
        povstim_config.validate(bad)
    bad["benchmarks"]["clams"] = {"kind": "blimp", "path": "x"}
    with pytest.raises(PovstimError, match=r"benchmarks\.clams\.kind: the suite is in English \(en\)"):
        povstim_config.validate(bad)
    bad["benchmarks"]["clams"] = {"kind": "clams", "path": "/data/my-clams"}
    with pytest.raises(PovstimError, match=r"benchmarks\.clams\.language: say which language"):
        povstim_config.validate(bad)
    ok = copy.deepcopy(raw)
    ok["benchmarks"]["mb"] = {"kind": "multiblimp", "path": "/data/ita", "language": "it"}
    povstim_config.validate(ok)
