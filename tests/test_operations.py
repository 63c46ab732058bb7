"""Corpus operations: remove, random_remove, reinsert, add, replace; their audit; token matching;
dose series; config errors before any job."""

from __future__ import annotations

import copy
import json
import subprocess
import sys

import pytest
import yaml

from povstim import config as cfg
from povstim.conditions import operations as O
from povstim.conditions import opsrun, variants
from povstim.conditions.build import build as legacy_build
from povstim.dpe import audit
from povstim.io import PovstimError
from povstim.parse import conllu

ROWS = ["sent_id\tphenomenon\trule\ttokens\tsentence\ttargeted"]


def corpus_lines():
    """3,000 sentences of 3-9 words; every 40th question-formation DPE (targeted), every 50th binding."""
    lines, rows = [], list(ROWS)
    for i in range(3000):
        if i % 40 == 0:
            text = f"Is the boy who is smiling number {i} happy?"
            rows.append(f"{i}\tquestion_formation\tqf\t3:boy\t{text}\ttrue")
        elif i % 50 == 0:
            text = f"The girl said that boy {i} hurt himself."
            rows.append(f"{i}\tbinding\tb\t2:girl\t{text}\ttrue")
        else:
            text = " ".join(["word"] * (3 + (i * 5) % 7)) + f" {i}."
        lines.append(text)
    return lines, rows


@pytest.fixture
def corpus(tmp_path):
    lines, rows = corpus_lines()
    (tmp_path / "base.txt").write_text("\n".join(lines) + "\n")
    (tmp_path / "dpe.tsv").write_text("\n".join(rows) + "\n")
    return tmp_path


def state_for(lines, rows, name="c"):
    parsed = [audit.Row(int(r.split("\t")[0]), *r.split("\t")[1:5], r.split("\t")[5] == "true") for r in rows[1:]]
    return opsrun, parsed


def run(lines, rows, ops, name="c", seed=1):
    _, parsed = state_for(lines, rows)
    return opsrun.build(lines, parsed, ops, seed, name, [])


def test_remove_equals_legacy_filter():
    lines, rows = corpus_lines()
    _, parsed = state_for(lines, rows)
    legacy = legacy_build(len(lines), audit.removed(parsed), {}, 1, audit.targeted(parsed))
    st = run(lines, rows, [{"op": "remove", "constructions": ["question_formation", "binding"]}])
    assert st.ids == legacy.ids
    assert {a[3] for a in st.audit} == set(audit.removed(parsed))
    assert all(a[2] == "removed" and a[1] == "remove" for a in st.audit)


def test_random_remove_matches_sentences_and_words():
    lines, rows = corpus_lines()
    qf = [i for i in range(len(lines)) if i % 40 == 0]
    st = run(lines, rows, [{"op": "random_remove", "of": "x", "constructions": ["question_formation"]}])
    gone = sorted(set(range(len(lines))) - set(st.ids))
    assert len(gone) == len(qf)
    w_qf = sum(len(lines[i].split()) for i in qf)
    w_gone = sum(len(lines[i].split()) for i in gone)
    assert abs(w_gone - w_qf) <= O.WORD_TOLERANCE * sum(len(x.split()) for x in lines)
    assert not any(i % 40 == 0 or i % 50 == 0 for i in gone)  # only sentences without evidence
    assert st.ids == run(lines, rows, [{"op": "random_remove", "of": "x", "constructions": ["question_formation"]}]).ids
    assert st.ids != run(lines, rows, [{"op": "random_remove", "of": "x", "constructions": ["question_formation"]}],
                         seed=2).ids


def test_reinsert_keeps_sentences_and_words_of_the_removal():
    lines, rows = corpus_lines()
    rm = [{"op": "remove", "constructions": ["question_formation", "binding"]}]
    f = run(lines, rows, rm)
    st = run(lines, rows, rm + [{"op": "reinsert", "rates": {"question_formation": 0.01}}])
    ref = st.notes["reference"]
    assert ref["n_sentences"] == len(f.ids) == len(st.ids)
    assert abs(st.n_words() - ref["n_words"]) <= O.WORD_TOLERANCE * ref["n_words"]
    back = [i for i in st.ids if i % 40 == 0]
    assert len(back) == round(0.01 * len(f.ids))
    added = [a for a in st.audit if a[2] == "added"]
    room = [a for a in st.audit if a[1] == "reinsert" and a[2] == "removed"]
    assert len(added) == len(room) == len(back)


def test_add_and_its_pool():
    lines, rows = corpus_lines()
    rm = [{"op": "remove", "constructions": ["question_formation"]}]
    st = run(lines, rows, rm + [{"op": "add", "construction": "question_formation", "n": 7}])
    assert sum(1 for i in st.ids if i % 40 == 0) == 7
    with pytest.raises(PovstimError, match=r"conditions\.few\.operations\[1\]\.n: add 76 .* holds 75"):
        run(lines, rows, rm + [{"op": "add", "construction": "question_formation", "n": 76}], name="few")


QF = """# sent_id = 0
# text = Is the boy who is smiling happy?
1	Is	be	AUX	_	_	7	cop	_	_
2	the	the	DET	_	_	3	det	_	_
3	boy	boy	NOUN	_	Animacy=Anim|Number=Sing	7	nsubj	_	_
4	who	who	PRON	_	PronType=Rel	6	nsubj	_	_
5	is	be	AUX	_	_	6	aux	_	_
6	smiling	smile	VERB	_	_	3	acl:relcl	_	_
7	happy	happy	ADJ	_	_	0	root	_	SpaceAfter=No
8	?	?	PUNCT	_	_	7	punct	_	_

"""
REFL = """# sent_id = 1
# text = The girl said that the boy hurt himself.
1	The	the	DET	_	_	2	det	_	_
2	girl	girl	NOUN	_	Animacy=Anim|Number=Sing	3	nsubj	_	_
3	said	say	VERB	_	_	0	root	_	_
4	that	that	SCONJ	_	_	7	mark	_	_
5	the	the	DET	_	_	6	det	_	_
6	boy	boy	NOUN	_	Animacy=Anim|Number=Sing	7	nsubj	_	_
7	hurt	hurt	VERB	_	_	3	ccomp	_	_
8	himself	himself	PRON	_	Gender=Masc|Number=Sing|Person=3|PronType=Prs|Reflex=Yes	7	obj	_	SpaceAfter=No
9	.	.	PUNCT	_	_	3	punct	_	_

"""


def tree(block):
    import io

    return next(iter(conllu.read(io.StringIO(block))))


def test_linear_rule_variant():
    assert variants.linear_rule(tree(QF)) == "Is the boy who smiling is happy?"
    no_aux = QF.replace("5\tis\tbe\tAUX", "5\tis\tbe\tVERB")
    assert isinstance(variants.linear_rule(tree(no_aux)), variants.Skip)


DO_QF = """# sent_id = 2
# text = Does the boy who is smiling like cats?
1	Does	do	AUX	_	_	7	aux	_	_
2	the	the	DET	_	_	3	det	_	_
3	boy	boy	NOUN	_	Animacy=Anim|Number=Sing	7	nsubj	_	_
4	who	who	PRON	_	PronType=Rel	6	nsubj	_	_
5	is	be	AUX	_	_	6	aux	_	_
6	smiling	smile	VERB	_	_	3	acl:relcl	_	_
7	like	like	VERB	_	_	0	root	_	_
8	cats	cat	NOUN	_	Number=Plur	7	obj	_	SpaceAfter=No
9	?	?	PUNCT	_	_	7	punct	_	_

"""


@pytest.mark.parametrize("lemma", ["do", "_"])  # a parser with lemmas, and gold trees without (the form decides)
def test_linear_rule_skips_do_support(lemma):
    """docs/manipulations.md: a do-support question has no linear-rule variant (its declarative, "The boy who is
    smiling likes cats.", has no main auxiliary): not "Is the boy who smiling does like cats?"."""
    got = variants.linear_rule(tree(DO_QF.replace("Does\tdo\t", f"Does\t{lemma}\t")))
    assert isinstance(got, variants.Skip) and "do-support" in got.reason
    # the same question with a modal is rewritten
    modal = DO_QF.replace("Does\tdo\t", "Can\tcan\t").replace("Does the", "Can the")
    assert variants.linear_rule(tree(modal)) == "Is the boy who smiling can like cats?"


def test_reflexive_swap_variant():
    assert variants.wrong_antecedent(tree(REFL)) == "The girl said that the boy hurt herself."
    same = REFL.replace("girl", "man")
    assert isinstance(variants.wrong_antecedent(tree(same)), variants.Skip)


def test_replace_rewrites_and_audits(tmp_path):
    lines = ["Is the boy who is smiling happy?", "The girl said that the boy hurt himself.", "A dog runs."]
    rows = ROWS + ["0\tquestion_formation\tqf\t3:boy\tx\ttrue", "1\tbinding\tb\t2:girl\tx\ttrue"]
    (tmp_path / "0.conllu").write_text(QF + REFL)
    _, parsed = state_for(lines, rows)
    ops = [{"op": "replace", "construction": "question_formation"}, {"op": "replace", "construction": "binding"}]
    st = opsrun.build(lines, parsed, ops, 1, "cf", [str(tmp_path / "0.conllu")])
    assert st.text == {0: "Is the boy who smiling is happy?", 1: "The girl said that the boy hurt herself."}
    assert [a[2] for a in st.audit] == ["rewritten", "rewritten"]
    assert st.n_words() == sum(len(x.split()) for x in lines)


def test_an_operation_that_changes_nothing_is_a_warning(tmp_path, caplog):
    # An AANN -> ANAN replace on a corpus without AANNs wrote an unchanged copy with no warning
    import logging

    lines, rows = corpus_lines()  # question formation and binding, no AANN
    _, parsed = state_for(lines, rows)
    (tmp_path / "0.conllu").write_text(QF)
    caplog.set_level(logging.WARNING, logger="povstim.condition")
    ops = [{"op": "replace", "construction": "aann"}, {"op": "remove", "constructions": ["aann", "binding"]}]
    st = opsrun.build(lines, parsed, ops, 1, "anan", [str(tmp_path / "0.conllu")])
    assert st.text == {}
    stats = opsrun.stats("base.txt", lines, st, ops, st.ids, [], _split())
    assert stats["warnings"] == [
        "operations[0] replace aann/anan: nothing was changed: the corpus holds no sentence with aann",
        "operations[1] remove: aann matched no sentence of the corpus (NO MATCH: nothing removed for it)"]
    assert [r.getMessage() for r in caplog.records] == [f"conditions.anan: {w}" for w in stats["warnings"]]
    # a replace that rewrites and a remove that removes: no warnings key (condition.json as it was)
    lines2 = ["Is the boy who is smiling happy?", "A dog runs."]
    rows2 = ROWS + ["0\tquestion_formation\tqf\t3:boy\tx\ttrue"]
    _, parsed2 = state_for(lines2, rows2)
    ops2 = [{"op": "replace", "construction": "question_formation"}]
    st2 = opsrun.build(lines2, parsed2, ops2, 1, "cf", [str(tmp_path / "0.conllu")])
    assert st2.text and "warnings" not in opsrun.stats("b", lines2, st2, ops2, st2.ids, [], _split())
    # the report's conditions page says it, in the log too
    from povstim.analysis.tables import conditions_page

    page = tmp_path / "conditions.html"
    conditions_page.write_page([{**stats, "condition": "anan", "size": "8k"}], page, 0.1)
    assert "NOTHING CHANGED: anan 8k: operations[0] replace aann/anan: nothing was changed" in page.read_text()


def _split():
    from povstim.conditions.build import split_settings

    return split_settings({"dev_fraction": 0.05, "seed": 1})


def povstim(*args):
    return subprocess.run([sys.executable, "-m", "povstim", *map(str, args)], capture_output=True, text=True)


def test_cli_operations_byte_identical(corpus):
    ops = [{"op": "remove", "constructions": ["question_formation", "binding"]},
           {"op": "reinsert", "rates": {"question_formation": 0.01}}]
    outs = []
    for k in range(2):
        d = corpus / f"run{k}"
        r = povstim("condition", "--base", corpus / "base.txt", "--dpe", corpus / "dpe.tsv", "--operations",
                    json.dumps(ops), "--condition-name", "baby-dose1e-2", "--split", '{"dev_fraction": 0.1, "seed": 3}',
                    "--out-train", d / "train.txt", "--out-dev", d / "dev.txt", "--stats", d / "condition.json",
                    "--out-audit", d / "operations.tsv")
        assert r.returncode == 0, r.stderr
        outs.append([(d / f).read_bytes() for f in ("train.txt", "dev.txt", "condition.json", "operations.tsv")])
    assert outs[0] == outs[1]
    stats = json.loads(outs[0][2])
    assert stats["sentences_vs_reference"] == 0.0 and abs(stats["words_vs_reference"]) <= O.WORD_TOLERANCE
    header = outs[0][3].decode().splitlines()[0].split("\t")
    assert header == list(O.AUDIT_COLUMNS)


@pytest.fixture
def tiny(repo_root):
    return yaml.safe_load((repo_root / "tests" / "configs" / "tiny.yaml").read_text())


def with_conditions(config, **conds):
    c = copy.deepcopy(config)
    c["conditions"].update(conds)
    return c


def test_dose_series_expands(tiny):
    c = with_conditions(tiny, qf={"from": "baby", "dose": {"construction": "question_formation",
                                                          "rates": [0, 1e-4, 1e-3, 1e-2]}})
    c["archs"]["gpt2-nano"]["conditions"] = ["qf", "wiki"]
    cfg.validate(c)
    names = [n for n in c["conditions"] if n.startswith("qf")]
    assert names == ["qf-dose0", "qf-dose1e-4", "qf-dose1e-3", "qf-dose1e-2"]
    assert c["conditions"]["qf-dose0"]["operations"] == [{"op": "remove", "constructions": ["question_formation"]}]
    assert c["conditions"]["qf-dose1e-3"]["operations"][-1] == {"op": "reinsert",
                                                                "rates": {"question_formation": 0.001}}
    assert c["archs"]["gpt2-nano"]["conditions"] == names + ["wiki"]
    assert O.dose_series(c["conditions"])["qf"]["members"]["qf-dose1e-4"] == 1e-4
    cfg.validate(c)  # idempotent


@pytest.mark.parametrize("cond,match", [
    ({"from": "baby", "dose": {"construction": "question_formation", "rates": [0, 1e-3]}},
     r"conditions\.x\.dose\.rates: a dose series needs at least 3 rates"),
    ({"from": "baby", "dose": {"construction": "question_formation", "rates": [0, 1e-3, 1.5]}},
     r"conditions\.x\.dose\.rates"),
    ({"from": "baby", "operations": [{"op": "remove", "constructions": ["question_formation"]},
                                     {"op": "reinsert", "rates": {"question_formation": 1.0}}]},
     r"conditions\.x\.operations"),
    ({"from": "baby", "operations": [{"op": "replace", "construction": "wanna"}]},
     r"conditions\.x\.operations\[0\]: no counterfactual variant is registered for 'wanna'"),
    ({"from": "baby", "operations": [{"op": "random_remove", "of": "wiki"}]},
     r"conditions\.x\.operations\[0\]\.of: condition 'wiki' removes nothing"),
    ({"from": "baby", "operations": [{"op": "random_remove"}]}, r"conditions\.x\.operations"),
    # A dose series' construction under the key written in the file, not the expanded x-dose0
    ({"from": "baby", "dose": {"construction": "question_formaton", "rates": [0, 1e-3, 1e-2]}},
     r"^config: conditions\.x\.dose\.construction: unknown phenomenon 'question_formaton' \(did you mean "
     r"'question_formation'\?\)"),
    ({"from": "baby", "dose": {"construction": "question_formation", "rates": [0, 1e-3, 1e-2]},
      "operations": [{"op": "remove", "constructions": ["bindng"]}]}, r"^config: conditions\.x\.operations\[0\]: "),
    ({"from": "baby", "operations": [{"op": "add", "construction": "binding", "n": 3}]},
     r"conditions\.x\.operations\[0\]: add puts back sentences an earlier remove"),
])
def test_bad_operations_are_named(tiny, cond, match):
    with pytest.raises(PovstimError, match=match):
        cfg.validate(with_conditions(tiny, x=cond))


def test_dose_construction_typo_names_the_file_line(tiny, tmp_path):
    c = with_conditions(tiny, qf={"from": "baby", "dose": {"construction": "question_formaton",
                                                          "rates": [0, 1e-4, 1e-3]}})
    f = tmp_path / "dose.yaml"
    f.write_text(yaml.safe_dump(c, sort_keys=False, default_flow_style=False))
    line = next(i for i, t in enumerate(f.read_text().splitlines(), 1) if "question_formaton" in t)
    with pytest.raises(PovstimError) as exc:
        cfg.load(f)
    assert str(exc.value).startswith(f"{f}:{line}: conditions.qf.dose.construction: ")
    assert "qf-dose0" not in str(exc.value)


def test_random_remove_of_a_filter_condition_is_valid(tiny):
    c = with_conditions(tiny, ctl={"from": "baby", "operations": [{"op": "random_remove", "of": "baby-f"}]})
    cfg.validate(c)
    ops = O.resolve(c["conditions"], "ctl", ["question_formation", "binding"])
    assert ops == [{"op": "random_remove", "of": "baby-f", "constructions": ["question_formation", "binding"]}]


def ops_only_binding(tiny):
    """tiny.yaml with filter.rules [question_formation]: binding is named only by a dose series and a replace."""
    c = with_conditions(tiny, bind={"from": "baby", "dose": {"construction": "binding", "rates": [0, 1e-3, 1e-2]}},
                        **{"bind-swap": {"from": "baby", "operations": [{"op": "replace", "construction": "binding"}]}})
    c["filter"]["rules"] = ["question_formation"]
    c["conditions"]["baby"]["reinsert"] = {"question_formation": 0.004}
    return c


def test_constructions_named_by_operations_are_filtered(tiny):
    """A construction only operations name is run by the filter without being in filter.rules, and a
    `filter: true` condition still removes filter.rules alone."""
    from povstim.filter.settings import condition_phenomena, filter_rules, removal_rules

    assert condition_phenomena(tiny, tiny["conditions"]["baby-f"]) is None  # nothing extra: every row, as before
    c = ops_only_binding(tiny)
    cfg.validate(c)
    assert filter_rules(c) == ("question_formation", "binding")
    assert removal_rules(c) == ("question_formation",)
    assert condition_phenomena(c, c["conditions"]["baby-f"]) == ("question_formation",)
    assert O.resolve(c["conditions"], "bind-dose1e-3", list(removal_rules(c))) == [
        {"op": "remove", "constructions": ["binding"]}, {"op": "reinsert", "rates": {"binding": 0.001}}]
    # `true` is filter.rules (and filter lists), not what operations added
    c2 = with_conditions(c, all={"from": "baby", "operations": [{"op": "remove", "constructions": True}]})
    cfg.validate(c2)
    assert O.resolve(c2["conditions"], "all", list(removal_rules(c2))) == [
        {"op": "remove", "constructions": ["question_formation"]}]
    # every kind of operation: what the filter runs is removal_rules plus operations.constructions' names
    c3 = with_conditions(c, k={"from": "baby", "operations": [
        {"op": "remove", "constructions": ["binding", "aann"]}, {"op": "add", "construction": "aann", "n": 1},
        {"op": "reinsert", "rates": {"binding": 0.001}}]})
    cfg.validate(c3)
    named = [x for spec in c3["conditions"].values() for x in O.constructions(spec, list(removal_rules(c3)))]
    assert set(filter_rules(c3)) == set(removal_rules(c3)) | set(named) == {"question_formation", "binding", "aann"}
    # the filter stage's code hash does not hold the operations (a variant's edit does not rerun the filter)
    from povstim import codehash

    assert not [m for m in codehash.stage_closure("filter") if m.startswith("povstim.conditions")]
    # an unknown construction is an error naming the operation's key, before any job
    bad = with_conditions(tiny, x={"from": "baby", "operations": [{"op": "remove", "constructions": ["bindng"]}]})
    with pytest.raises(PovstimError, match=r"conditions\.x\.operations\[0\]: unknown phenomenon 'bindng' "
                                           r"\(did you mean 'binding'\?\)"):
        cfg.validate(bad)


def dry_run(tmp_path, config: dict):
    from helpers.project import dry_run as snakemake_dry_run

    return snakemake_dry_run(tmp_path, config).stdout


@pytest.mark.slow
def test_constructions_named_by_operations_dag(tmp_path, tiny):
    """The DAG of ops_only_binding: parse and filter run binding, BABY-F removes question formation only."""
    import re

    out = dry_run(tmp_path, ops_only_binding(tiny))
    parse = [x for x in out.splitlines() if "povstim parse " in x and "--filter-params" in x]
    filt = [x for x in out.splitlines() if "povstim filter " in x]
    assert parse and filt
    assert all('"rules": ["question_formation", "binding"]' in x for x in parse + filt)
    (bf,) = [x for x in out.splitlines() if "povstim condition --base" in x and "corpus/baby-f/8k/train.txt" in x]
    assert "--phenomena question_formation " in bf
    (bd,) = [x for x in out.splitlines() if "--condition-name bind-dose1e-2" in x and "baby/8k/base.txt" in x]
    assert re.search(r'"constructions": \["binding"\]', bd) and '"rates": {"binding": 0.01}' in bd


def test_dose_demo_dag(tmp_path, repo_root):
    """configs/dose-demo.yaml's DAG: 7 conditions (4 series members), replace conditions read the parse
    shards, the dose rule in the default target (dry run)."""
    import os
    import re
    import shutil

    from helpers.project import copy_parts

    copy_parts(tmp_path)
    shutil.copy2(repo_root / "configs" / "dose-demo.yaml", tmp_path / "config.yaml")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([sys.executable, "-m", "snakemake", "-n", "-p", "--workflow-profile", "none", "--cores", "2"],
                       cwd=tmp_path, capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    table = r.stdout.split("Job stats:")[1].split("\n\n")[0]
    jobs = {m[1]: int(m[2]) for m in re.finditer(r"^(\w+)\s+(\d+)$", table, re.M)}
    assert jobs["condition"] == 7 and jobs["train"] == 14 and jobs["dose"] == 1
    assert "--condition-name qf-dose1e-3" in r.stdout
    assert '"rates": {"question_formation": 0.001}' in r.stdout
    assert "--condition-name qf-linear --trees results/dose-demo/parse/baby/30k/0.conllu" in r.stdout
    assert "--audits results/dose-demo/corpus/qf-linear/30k/operations.tsv" in r.stdout


AANN = """# sent_id = 2
# text = We spent a beautiful five days there.
1	We	we	PRON	_	_	2	nsubj	_	_
2	spent	spend	VERB	_	_	0	root	_	_
3	a	a	DET	_	_	6	det	_	_
4	beautiful	beautiful	ADJ	_	_	6	amod	_	_
5	five	five	NUM	_	_	6	nummod	_	_
6	days	day	NOUN	_	Number=Plur	2	obj	_	_
7	there	there	ADV	_	_	2	advmod	_	SpaceAfter=No
8	.	.	PUNCT	_	_	2	punct	_	_

"""


def test_aann_variants():
    assert variants.anan(tree(AANN)) == "We spent a five beautiful days there."
    assert variants.naan(tree(AANN)) == "We spent five a beautiful days there."
    initial = AANN.replace("We\twe", "They\tthey").replace("3\ta\ta", "3\tan\ta").replace(
        "4\tbeautiful\tbeautiful", "4\tamazing\tamazing")
    s = tree(initial)
    s.tokens = s.tokens[2:]  # "an amazing five days there ." heading the sentence
    s.tokens[0].form = "An"
    assert variants.anan(s) == "A five amazing days there."
    assert variants.naan(s) == "Five an amazing days there."
    assert isinstance(variants.anan(tree(QF)), variants.Skip)


def test_a_filter_list_construction_that_matched_nothing_is_in_condition_json(corpus):
    # `filter: [question_formation, aann]` on a corpus without AANNs: condition.json and the log say so
    d = corpus / "det"
    r = povstim("condition", "--base", corpus / "base.txt", "--dpe", corpus / "dpe.tsv", "--phenomena",
                "question_formation,aann", "--reinsert", "{}", "--split", '{"dev_fraction": 0.1, "seed": 3}',
                "--out-train", d / "train.txt", "--out-dev", d / "dev.txt", "--stats", d / "condition.json")
    assert r.returncode == 0, r.stderr
    stats = json.loads((d / "condition.json").read_text())
    assert stats["warnings"] == ["filter: aann matched no sentence of the corpus (NO MATCH: nothing removed for it)"]
    assert stats["dpe_removed"] == {"question_formation": 75}  # every 40th of 3,000
    assert "WARNING" in r.stderr and "aann matched no sentence" in r.stderr
