"""``povstim filter`` by hand: CoNLL-U or text input, the audit columns, errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

FIXTURE = Path(__file__).parent / "fixtures" / "conllu" / "rules.conllu"


def povstim(*args):
    return subprocess.run([sys.executable, "-m", "povstim", *map(str, args)], capture_output=True, text=True)


def rows(path):
    return [line.split("\t") for line in Path(path).read_text().splitlines()]


def test_posh_audit_marks_targeted_evidence_and_leaks(tmp_path):
    r = povstim("filter", FIXTURE, "--out", tmp_path / "dpe.tsv", "--summary", tmp_path / "s.json")
    assert r.returncode == 0, r.stderr
    got = rows(tmp_path / "dpe.tsv")
    assert got[0] == ["sent_id", "phenomenon", "rule", "tokens", "sentence", "targeted"]
    assert all("posh" in x[2] for x in got[1:])  # one row per removal, named by the posh rule
    posh = {(int(x[0]), x[1]) for x in got[1:]}
    strict = {(int(x[0]), x[1]) for x in got[1:] if x[5] == "true"}
    assert posh == {(0, "question_formation"), (1, "question_formation"), (2, "question_formation"),
                    (3, "question_formation"), (4, "question_formation"), (10, "question_formation"),
                    (6, "binding"), (7, "binding"), (8, "binding")}
    # "Can the dog the girl saw run?" (1) is no targeted evidence: its relative clause has no auxiliary
    assert strict == {(0, "question_formation"), (10, "question_formation"), (6, "binding"), (7, "binding")}
    s = json.loads((tmp_path / "s.json").read_text())
    assert s["n_removed"] == 9 and s["per_phenomenon"] == {"question_formation": 6, "binding": 3}
    assert s["targeted"]["also_strict"] == {"question_formation": 2, "binding": 2}
    assert s["targeted"]["strict_not_removed_ids"] == []
    assert s["gold"]["strict"]["any"] == {"tp": 4, "fp": 0, "fn": 0, "n_gold": 4, "precision": 1.0, "recall": 1.0}
    assert s["gold"]["posh"]["any"] == {"tp": 4, "fp": 5, "fn": 0, "n_gold": 4, "precision": 0.444444, "recall": 1.0}
    assert s["gold"]["conservative"]["any"] == s["gold"]["posh"]["any"]  # on these gold trees they agree


def test_mode_and_rules_flags_override_params(tmp_path):
    r = povstim("filter", FIXTURE, "--params", '{"mode": "posh"}', "--mode", "strict", "--rules", "binding,wanna",
                "--out", tmp_path / "dpe.tsv", "--summary", tmp_path / "s.json")
    assert r.returncode == 0, r.stderr
    got = rows(tmp_path / "dpe.tsv")[1:]
    assert {(int(x[0]), x[1], x[2]) for x in got} == {
        (6, "binding", "binding_strict_two_animate_antecedents"),
        (7, "binding", "binding_strict_two_animate_antecedents"),
        (11, "wanna", "wanna_wh_question_want_to"),
    }
    s = json.loads((tmp_path / "s.json").read_text())
    assert s["mode"] == "strict" and s["rules"] == ["binding", "wanna"] and s["targeted"]["also_strict"] is None


def test_text_input_with_gold_parser(tmp_path):
    (tmp_path / "in.txt").write_text("The dog is running.\nMary's dad likes himself.\n")
    r = povstim("filter", tmp_path / "in.txt", "--parser", "gold", "--gold", FIXTURE, "--mode", "strict",
                "--out", tmp_path / "dpe.tsv", "--summary", tmp_path / "s.json")
    assert r.returncode == 0, r.stderr
    assert rows(tmp_path / "dpe.tsv")[1:] == [
        ["1", "binding", "binding_strict_two_animate_antecedents", "5:himself|1:Mary|3:dad", "Mary's dad likes himself.",
         "true"]]
    s = json.loads((tmp_path / "s.json").read_text())
    assert s["n_sentences"] == 2 and s["n_parsed"] == 1 and s["parse"]["backend"] == "gold"


def test_bad_inputs_are_clear_errors(tmp_path):
    r = povstim("filter", tmp_path / "missing.conllu", "--out", tmp_path / "dpe.tsv")
    assert r.returncode == 1 and "missing.conllu does not exist" in r.stderr
    (tmp_path / "bad.conllu").write_text("# sent_id = 0\n1\tword\t_\n\n")
    r = povstim("filter", tmp_path / "bad.conllu", "--out", tmp_path / "dpe.tsv")
    assert r.returncode == 1 and "bad.conllu:2" in r.stderr and "10 tab-separated" in r.stderr
    r = povstim("filter", FIXTURE, "--params", '{"rules": ["qf"]}', "--out", tmp_path / "dpe.tsv")
    assert r.returncode == 1 and "filter.rules: unknown phenomenon 'qf'" in r.stderr
    r = povstim("filter", FIXTURE, "--params", "{mode: posh}", "--out", tmp_path / "dpe.tsv")
    assert r.returncode == 1 and "--params: not valid JSON" in r.stderr
    assert not (tmp_path / "dpe.tsv").exists()


def test_a_rule_shared_by_both_modes_gives_one_row(tmp_path):
    r = povstim("filter", FIXTURE, "--rules", "wanna", "--out", tmp_path / "dpe.tsv", "--summary", tmp_path / "s.json")
    assert r.returncode == 0, r.stderr
    assert [x[:3] + x[5:] for x in rows(tmp_path / "dpe.tsv")[1:]] == [
        ["11", "wanna", "wanna_wh_question_want_to", "true"]]
    # every wanna removal is targeted evidence: the one rule serves both modes
    assert json.loads((tmp_path / "s.json").read_text())["targeted"]["also_strict"] == {"wanna": 1}


def test_a_construction_that_matches_nothing_is_a_warning(tmp_path):
    # A construction that matches no sentence was an INFO line's 0; now a WARNING and summary.json's
    # no_match (App. C's Python phenomena aside: wanna's 0 here is a fact about these sentences)
    r = povstim("filter", FIXTURE, "--rules", "question_formation,aann,det_noun", "--out", tmp_path / "dpe.tsv",
                "--summary", tmp_path / "s.json")
    assert r.returncode == 0, r.stderr
    s = json.loads((tmp_path / "s.json").read_text())
    assert s["per_phenomenon"]["aann"] == 0 and s["per_phenomenon"]["question_formation"] > 0
    zero = [p for p in ("det_noun",) if s["per_phenomenon"][p] == 0]
    assert s["no_match"] == ["aann", *zero]
    assert "WARNING: NO MATCH: construction(s) aann" in r.stderr
    # nothing to warn about: the key stays out (summaries of App. C's rules are as they were)
    r = povstim("filter", FIXTURE, "--rules", "question_formation,wanna", "--out", tmp_path / "dpe2.tsv",
                "--summary", tmp_path / "s2.json")
    assert r.returncode == 0 and "no_match" not in json.loads((tmp_path / "s2.json").read_text())
    assert "NO MATCH" not in r.stderr


def test_the_childes_parser_is_a_parser_choice(tmp_path):
    """`--parser childes` is a backend like the others (it needs a trained parser, named in the error), and a
    --parser that contradicts --parser-params' backend is an error, not a silent override."""
    text = tmp_path / "t.txt"
    text.write_text("Where is the doggie going?\nLook at the doggie.\n")
    r = povstim("filter", text, "--parser", "childes", "--out", tmp_path / "dpe.tsv")
    assert r.returncode == 1 and "invalid choice" not in r.stderr
    assert "parser.childes_model is not set" in r.stderr and "Traceback" not in r.stderr
    r = povstim("filter", text, "--parser", "spacy", "--parser-params", '{"backend": "childes"}',
                "--out", tmp_path / "dpe.tsv")
    assert r.returncode == 1 and "--parser spacy contradicts --parser-params' backend 'childes'" in r.stderr
    assert not (tmp_path / "dpe.tsv").exists()
    h = povstim("filter", "--help").stdout
    assert "childes_model" in h and "childes" in h.split("--parser ")[1]
