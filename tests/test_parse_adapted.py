"""The parser adapted to child-directed speech (``parser.backend: childes``, ``povstim train-parser``).

Fast tests: multiword tokens merged onto povstim's tokens (by hand), a folder that is not a parser and
a treebank without trees are errors naming them, the config check, Wilson intervals against scipy.
Slow tests train a tiny parser (300 gold_train sentences, 1 epoch) with the real spaCy trainer and
parse with it through ``povstim parse`` (valid UD trees), and dry-run the DAG that trains it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from povstim import config as povstim_config
from povstim.filter.validate import wilson
from povstim.io import PovstimError
from povstim.parse import adapted
from povstim.parse.conllu import read, read_file

REPO = Path(__file__).resolve().parents[1]

WANNA = """# text = I wanna go.
1\tI\tI\tPRON\tPRP\t_\t2\tnsubj\t_\t_
2-3\twanna\t_\t_\t_\t_\t_\t_\t_\t_
2\twan\twant\tVERB\tVBP\t_\t0\troot\t_\t_
3\tna\tto\tPART\tTO\t_\t4\tmark\t_\t_
4\tgo\tgo\tVERB\tVB\t_\t2\txcomp\t_\tSpaceAfter=No
5\t.\t.\tPUNCT\t.\t_\t2\tpunct\t_\t_

"""


def povstim(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "povstim", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd)


def test_multiword_token_merged_onto_the_tokenizers_tokens():
    """'wanna' is one token to povstim's tokenizer, two words (wan + na) in UD: merged onto the head word
    (wan, whose head lies outside the range); go's head (word 2) becomes token 2; na's mark is gone."""
    sent = next(read(iter(WANNA.splitlines(keepends=True))))
    assert [t.form for t in sent.tokens] == ["I", "wan", "na", "go", "."]
    s = adapted.surface_sentence(sent)
    assert [t.form for t in s.tokens] == ["I", "wanna", "go", "."]
    assert [(t.id, t.head, t.deprel, t.upos) for t in s.tokens] == [
        (1, 2, "nsubj", "PRON"), (2, 0, "root", "VERB"), (3, 2, "xcomp", "VERB"), (4, 2, "punct", "PUNCT")]
    assert s.tokens[1].lemma == "wanna"  # the merged token's lemma is its form, not the head word's


def test_a_sentence_that_cannot_be_aligned_is_left_out():
    text = "# text = Football is fun.\n" + "".join(
        f"{i}\t{w}\t{w}\t{u}\t_\t_\t{h}\t{d}\t_\t_\n" for i, w, u, h, d in (
            (1, "Foot", "NOUN", 2, "compound"), (2, "ball", "NOUN", 4, "nsubj"), (3, "is", "AUX", 4, "cop"),
            (4, "fun", "ADJ", 0, "root"), (5, ".", "PUNCT", 4, "punct"))) + "\n"
    sent = next(read(iter(text.splitlines(keepends=True))))
    assert adapted.surface_sentence(sent) is None
    kept, dropped = adapted.training_sentences([sent])
    assert (kept, dropped) == ([], 1)


def test_a_folder_that_is_not_a_parser_is_an_error_naming_it(tmp_path):
    (tmp_path / "config.cfg").write_text("[nlp]\n")
    with pytest.raises(PovstimError, match=f"{tmp_path}.*is not a parser trained by povstim train-parser"):
        adapted.check_model(tmp_path)
    with pytest.raises(PovstimError, match="no-such-folder is not a folder"):
        adapted.check_model(tmp_path / "no-such-folder")
    (tmp_path / adapted.MARKER).write_text('{"kind": "something else"}')
    with pytest.raises(PovstimError, match="not a povstim childes parser record"):
        adapted.check_model(tmp_path)
    # through the command line: one line, no traceback
    corpus = tmp_path / "base.txt"
    corpus.write_text("where is it ?\n")
    r = povstim("parse", "--input", corpus, "--backend", "childes", "--params",
                json.dumps({"childes_model": str(tmp_path), "cache_dir": None}), "--out", tmp_path / "x.conllu")
    assert r.returncode == 1 and "Traceback" not in r.stderr and str(tmp_path) in r.stderr, r.stderr


def test_a_treebank_without_trees_is_an_error_naming_the_file(tmp_path):
    f = tmp_path / "Ann_Test.conllu"
    f.write_text("# text = hi there\n1\thi\thi\tINTJ\tUH\t_\t_\t_\t_\t_\n2\tthere\tthere\tADV\tRB\t_\t_\t_\t_\t_\n\n")
    with pytest.raises(PovstimError, match=f"{f}"):
        adapted.read_treebank([f])
    (tmp_path / "empty").mkdir()
    with pytest.raises(PovstimError, match="empty holds no"):
        adapted.treebank_files([tmp_path / "empty"])


def test_the_config_asks_for_a_treebank_or_a_model():
    cfg = yaml.safe_load((REPO / "config.yaml").read_text())
    cfg["parser"] = {**cfg.get("parser", {}), "backend": "childes"}
    with pytest.raises(PovstimError, match="parser.childes_treebank"):
        povstim_config.validate(cfg, "config.yaml")


@pytest.mark.parametrize("k,n", [(12, 12), (0, 5), (195, 221), (1, 1), (37, 40)])
def test_wilson_interval_matches_scipy(k, n):
    from scipy.stats import binomtest

    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert wilson(k, n) == pytest.approx([ci.low, ci.high], abs=1e-6)
    assert wilson(0, 0) is None


@pytest.fixture(scope="module")
def tiny_parser(shared_data, tmp_path_factory):
    """A parser trained with the real spaCy trainer on Eve's first 300 gold trees, 1 epoch."""
    root = tmp_path_factory.mktemp("childes")
    eve = shared_data / "ud_childes" / "gold_train" / "Eve_Brown.conllu"
    blocks = eve.read_text(encoding="utf-8").split("\n\n")[:300]
    small = root / "Eve_Brown.conllu"
    small.write_text("\n\n".join(blocks) + "\n\n", encoding="utf-8")
    out = root / "parser"
    r = povstim("train-parser", "--treebank", small, "--params",
                json.dumps({"childes_epochs": 1, "childes_seed": 0}), "--out", out)
    assert r.returncode == 0, r.stderr
    return out, small


@pytest.mark.slow
def test_training_writes_a_loadable_parser(tiny_parser):
    out, small = tiny_parser
    record = adapted.check_model(out)
    assert record["children"] == ["Eve"] and record["n_sentences"] == 300
    assert record["n_train"] + record["n_dev"] + record["n_unaligned_left_out"] == 300
    assert record["settings"]["max_epochs"] == 1 and len(record["fingerprint"]) == 16
    nlp = adapted.load(out)
    assert {"tok2vec", "tagger", "morphologizer", "parser", "lemmatizer"} <= set(nlp.pipe_names)
    # UD labels, as in the gold trees: spaCy's root label aside, and 'dep' for the relations rarer than the
    # parser's min_action_freq (30 actions), which spaCy's transition system folds into 'dep'
    gold_labels = {t.deprel for s in read_file(small) for t in s.tokens}
    assert {lab.split("||")[0] for lab in record["labels"]} <= gold_labels | {"ROOT", "dep"}
    assert "punct" in record["labels"] and len(record["labels"]) >= 3


@pytest.mark.slow
def test_parsing_with_it_yields_valid_ud_trees(tiny_parser, tmp_path):
    out, small = tiny_parser
    texts = ["Where's the doggie going?", "I wanna go outside.", "Do you want some more juice?",
             "Mommy is gonna read the book that you like.", "Look at yourself!"]
    corpus = tmp_path / "base.txt"
    corpus.write_text("\n".join(texts) + "\n")
    conllu = tmp_path / "0.conllu"
    r = povstim("parse", "--input", corpus, "--params", json.dumps(
        {"backend": "childes", "childes_model": str(out), "cache_dir": str(tmp_path / "cache"), "prefilter": False}),
        "--out", conllu)
    assert r.returncode == 0, r.stderr
    sents = read_file(conllu)  # the reader checks ids 1..n, heads inside the sentence, no cycle
    assert [s.text for s in sents] == texts
    ud_labels = {t.deprel for s in read_file(small) for t in s.tokens}
    for s in sents:
        # one root per text: spaCy's parser also segments sentences; the backend presets one sentence per text
        assert sum(t.head == 0 for t in s.tokens) == 1 and all(t.deprel for t in s.tokens)
        assert {t.deprel for t in s.tokens} <= ud_labels | {"dep"}, s.to_block()
        assert all(t.upos not in ("", "_") and t.xpos not in ("", "_") for t in s.tokens)
    assert [t.form for t in sents[1].tokens] == ["I", "wanna", "go", "outside", "."]
    assert sents[4].tokens[2].feat("Reflex") == "Yes"  # reflexives marked by form, as for every backend
    # the second run reads the cache, keyed by the parser's fingerprint: same bytes
    again = tmp_path / "1.conllu"
    r = povstim("parse", "--input", corpus, "--params", json.dumps(
        {"backend": "childes", "childes_model": str(out), "cache_dir": str(tmp_path / "cache"), "prefilter": False}),
        "--out", again)
    assert r.returncode == 0 and "5 sentences reused" in r.stderr, r.stderr
    assert again.read_bytes() == conllu.read_bytes()


@pytest.mark.slow
def test_the_dag_trains_the_parser_when_missing(repo_root, tmp_path):
    """parser.backend: childes with a treebank: rule train_parser builds results/<exp>/parser/childes before
    any parse job, which gets it as input (a dry run)."""
    cfg = yaml.safe_load((repo_root / "config.yaml").read_text())
    cfg["parser"] = {**cfg.get("parser", {}), "backend": "childes", "cache_dir": None,
                     "childes_treebank": str(tmp_path / "gold")}
    (tmp_path / "gold").mkdir()
    (tmp_path / "gold" / "Ann_Test.conllu").write_text("# text = hi .\n1\thi\thi\tINTJ\tUH\t_\t0\troot\t_\t_\n"
                                                       "2\t.\t.\tPUNCT\t.\t_\t1\tpunct\t_\t_\n\n")
    cfg["experiment"] = "childes_dag"
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg))
    r = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "1", "--configfile", str(path),
                        "--quiet", "rules"], cwd=repo_root, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "train_parser" in r.stdout and "parse" in r.stdout, r.stdout


def test_lemma_table_is_the_most_frequent_gold_lemma_per_form_and_upos():
    """The rule lemmatizer leaves AUX forms unlemmatized; the parser's table, learned from its training trees
    (counted by hand: 's as AUX is 'be' twice, 'have' once), sets them; a form it never saw keeps its lemma."""
    text = "".join(f"# text = {t}\n1\t{f}\t{lem}\t{u}\t_\t_\t0\troot\t_\t_\n\n" for t, f, lem, u in (
        ("'s", "'s", "be", "AUX"), ("'s", "'s", "have", "AUX"), ("'S", "'S", "be", "AUX"), ("'s", "'s", "'s", "PART")))
    sents = list(read(iter(text.splitlines(keepends=True))))
    table = adapted.lemma_table(sents)
    assert table == {"'s\tAUX": "be", "'s\tPART": "'s"}

    class NLP:
        meta = {"povstim_lemmas": table}

    parsed = next(read(iter("# text = x 's y\n1\tx\tx\tPRON\t_\t_\t2\tnsubj\t_\t_\n2\t's\t's\tAUX\t_\t_\t0\troot\t_\t_\n"
                            "3\ty\ty\tNOUN\t_\t_\t2\tobj\t_\t_\n\n".splitlines(keepends=True))))
    assert [t.lemma for t in adapted.lemmatize(NLP, parsed).tokens] == ["x", "be", "y"]


@pytest.mark.slow
def test_povstim_filter_parses_with_it(tiny_parser, tmp_path):
    """`povstim filter --parser childes` on a text file: parsed by the adapted parser, then filtered."""
    out, _ = tiny_parser
    corpus = tmp_path / "t.txt"
    corpus.write_text("Is the doggie that is barking hungry?\nLook at the doggie.\n")
    r = povstim("filter", corpus, "--parser", "childes", "--parser-params",
                json.dumps({"childes_model": str(out), "prefilter": False, "cache_dir": None}),
                "--mode", "conservative", "--out", tmp_path / "dpe.tsv", "--summary", tmp_path / "s.json")
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "s.json").read_text())["n_sentences"] == 2
    assert (tmp_path / "dpe.tsv").read_text().startswith("sent_id\tphenomenon")


def test_train_parser_without_spacy_is_one_line(tmp_path):
    """Without the spaCy extra, `povstim train-parser` says what to install (no ModuleNotFoundError traceback)."""
    stub = tmp_path / "nospacy" / "spacy"
    stub.mkdir(parents=True)
    (stub / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'spacy'\", name='spacy')\n")
    tb = tmp_path / "t.conllu"
    tb.write_text("# text = Hi .\n1\tHi\thi\tINTJ\tUH\t_\t0\troot\t_\t_\n2\t.\t.\tPUNCT\t.\t_\t1\tpunct\t_\t_\n\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "nospacy"), str(REPO / "workflow")])}
    r = subprocess.run([sys.executable, "-m", "povstim", "train-parser", "--treebank", str(tb), "--out",
                        str(tmp_path / "p")], capture_output=True, text=True, env=env)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "pip install -e '.[spacy]'" in r.stderr and len(r.stderr.strip().splitlines()) == 1
