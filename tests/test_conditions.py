"""BABY-F / BABY / WIKI conditions and the train/dev split."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from povstim.analysis.tables.conditions_page import write_page
from povstim.analysis.guardrails.checks import read_condition
from povstim.conditions.build import split
from povstim.io import PovstimError


def povstim(*args):
    return subprocess.run([sys.executable, "-m", "povstim", *map(str, args)], capture_output=True, text=True)


@pytest.fixture
def corpus(tmp_path):
    """2,000 sentences; every 40th is question-formation DPE (9 words), every 50th (not 40th) binding DPE
    (8 words), all of it targeted (the strict rule also flags it); the others have 4-10 words."""
    lines, rows = [], ["sent_id\tphenomenon\trule\ttokens\tsentence\ttargeted"]
    for i in range(2000):
        if i % 40 == 0:
            text = f"Is the boy who is smiling number {i} happy?"
            rows.append(f"{i}\tquestion_formation\tqf\t3:boy|6:smiling\t{text}\ttrue")
        elif i % 50 == 0:
            text = f"The girl said that boy {i} hurt himself."
            rows.append(f"{i}\tbinding\tb\t2:girl\t{text}\ttrue")
        else:
            text = "Plain " + "short " * (i % 7) + f"sentence number {i}."
        lines.append(text)
    (tmp_path / "base.txt").write_text("\n".join(lines) + "\n")
    (tmp_path / "dpe.tsv").write_text("\n".join(rows) + "\n")
    return tmp_path


def make(corpus, name, *extra):
    d = corpus / name
    r = povstim("condition", "--base", corpus / "base.txt", *extra, "--split", '{"dev_fraction": 0.1, "seed": 3}',
                "--out-train", d / "train.txt", "--out-dev", d / "dev.txt", "--stats", d / "condition.json")
    assert r.returncode == 0, r.stderr
    return (d / "train.txt").read_text().splitlines(), (d / "dev.txt").read_text().splitlines(), \
        json.loads((d / "condition.json").read_text())


def test_baby_f_baby_wiki(corpus):
    rates = {"question_formation": 0.01, "binding": 0.004}
    ftrain, fdev, fstats = make(corpus, "baby-f", "--dpe", corpus / "dpe.tsv")
    btrain, bdev, bstats = make(corpus, "baby", "--dpe", corpus / "dpe.tsv", "--reinsert", json.dumps(rates))
    wtrain, wdev, wstats = make(corpus, "wiki")
    n_dpe = 50 + 30
    assert fstats["n_sentences"] == 2000 - n_dpe == len(ftrain) + len(fdev)
    assert not any("smiling" in s or "himself" in s for s in ftrain + fdev)
    # BABY: same sentence count as BABY-F, DPE rate as configured.
    assert bstats["n_sentences"] == fstats["n_sentences"] == len(btrain) + len(bdev)
    n = bstats["n_sentences"]
    baby = btrain + bdev
    assert sum("smiling" in s for s in baby) == round(0.01 * n) == bstats["dpe_count"]["question_formation"]
    assert sum("himself" in s for s in baby) == round(0.004 * n)
    for phen, rate in rates.items():
        assert abs(bstats["dpe_rate"][phen] - rate) <= 0.5 / n
    assert bstats["n_replaced"] == sum(bstats["reinserted"].values())
    # WIKI: the base as is; splits are deterministic, disjoint and of the configured size.
    assert sorted(wtrain + wdev) == sorted((corpus / "base.txt").read_text().splitlines())
    assert len(wdev) == 200 and not set(wdev) & set(wtrain)
    # BABY and BABY-F share the dev sentences they have in common (hash-ranked split).
    assert len(set(fdev) & set(bdev)) >= 0.9 * len(fdev)
    again = make(corpus, "baby2", "--dpe", corpus / "dpe.tsv", "--reinsert", json.dumps(rates))
    assert again[:2] == (btrain, bdev)


def words(lines):
    return sum(len(x.split()) for x in lines)


def test_baby_matches_baby_f_in_words(corpus):
    """The old-style reinsert key replaces sentences whose words add up to the words put back, so
    BABY has BABY-F's sentences and words; condition.json says so against its reference (BABY-F)."""
    rates = {"question_formation": 0.01, "binding": 0.004}
    ftrain, fdev, _ = make(corpus, "baby-f", "--dpe", corpus / "dpe.tsv")
    btrain, bdev, bstats = make(corpus, "baby", "--dpe", corpus / "dpe.tsv", "--reinsert", json.dumps(rates))
    base = (corpus / "base.txt").read_text().splitlines()
    assert len(btrain + bdev) == len(ftrain + fdev) == 1920
    assert words(btrain + bdev) == words(ftrain + fdev)  # exact here: many sentence lengths to swap among
    # 19 question-formation sentences (9 words) and 8 binding ones (8 words) went back
    put_back = [s for s in btrain + bdev if "smiling" in s or "himself" in s]
    assert words(put_back) == 19 * 9 + 8 * 8
    assert bstats["reference"] == {"after_step": 0, "n_sentences": 1920, "n_words": words(ftrain + fdev)}
    assert bstats["words_vs_reference"] == bstats["sentences_vs_reference"] == 0.0
    assert bstats["n_base_words"] == words(base)
    assert bstats["words_vs_base"] == round(words(btrain + bdev) / words(base) - 1, 8)
    _, _, wstats = make(corpus, "wiki")
    assert wstats["reference"]["n_words"] == words(base) and wstats["words_vs_reference"] == 0.0
    # a rerun writes the same bytes (train, dev and the condition.json with its new keys)
    make(corpus, "baby-again", "--dpe", corpus / "dpe.tsv", "--reinsert", json.dumps(rates))
    for f in ("train.txt", "dev.txt", "condition.json"):
        assert (corpus / "baby-again" / f).read_bytes() == (corpus / "baby" / f).read_bytes(), f


def test_baby_words_that_cannot_be_matched_are_a_warning(corpus):
    """Every evidence-free sentence has 4 words, every put-back one 9: no swap reaches the words put back.
    The old-style key still builds BABY (sentences matched), warns and records the difference."""
    base = (corpus / "base.txt").read_text().splitlines()
    (corpus / "base.txt").write_text("\n".join(s if "smiling" in s or "himself" in s else f"Plain sentence {i} here."
                                               for i, s in enumerate(base)) + "\n")
    d = corpus / "baby"
    r = povstim("condition", "--base", corpus / "base.txt", "--dpe", corpus / "dpe.tsv", "--reinsert",
                '{"question_formation": 0.01}', "--out-train", d / "t", "--out-dev", d / "d", "--stats", d / "s.json")
    assert r.returncode == 0, r.stderr
    assert "WORDS NOT MATCHED: no 19 sentences without evidence add up to 171 words" in r.stderr
    stats = json.loads((d / "s.json").read_text())
    # 19 sentences of 9 words in place of 19 of 4: +95 words on BABY-F's 1,920 x 4 - 0 = 7,680 words
    assert stats["sentences_vs_reference"] == 0.0 and stats["reference"]["n_words"] == 7680
    assert stats["n_words"] == 7680 + 95 and stats["words_vs_reference"] == round(95 / 7680, 8)


def test_too_little_evidence_is_a_reported_shortfall_not_a_fill_up(corpus):
    train, dev, stats = make(corpus, "x", "--dpe", corpus / "dpe.tsv", "--reinsert", '{"binding": 0.05}')
    # 0.05 x 1920 = 96 sentences needed, 30 removed for binding alone: all 30 go back, no more
    assert stats["reinsert_shortfall"] == {"binding": {"needed": 96, "available": 30}}
    assert stats["reinserted"] == {"binding": 30} and stats["n_replaced"] == 30
    assert stats["n_sentences"] == 2000 - 80 and sum("himself" in s for s in train + dev) == 30
    assert stats["dpe_rate"]["binding"] == stats["dpe_rate_targeted"]["binding"] == round(30 / 1920, 8)
    d = corpus / "y"
    r = povstim("condition", "--base", corpus / "base.txt", "--dpe", corpus / "dpe.tsv",
                "--reinsert", '{"binding": 0.05}', "--out-train", d / "t", "--out-dev", d / "d", "--stats", d / "s")
    assert r.returncode == 0 and "SHORTFALL reinsert.binding=0.05" in r.stderr
    assert "needs 96 sentences of disambiguating evidence, but only 30" in r.stderr


def test_bad_dpe_audit_names_the_line(corpus):
    (corpus / "bad.tsv").write_text("sent_id\tphenomenon\trule\ttokens\tsentence\ttargeted\n"
                                    "99999\tbinding\tb\tx\ty\tfalse\n")
    r = povstim("condition", "--base", corpus / "base.txt", "--dpe", corpus / "bad.tsv",
                "--out-train", corpus / "t", "--out-dev", corpus / "d", "--stats", corpus / "s")
    assert r.returncode == 1 and "bad.tsv:2" in r.stderr and "99999" in r.stderr


def test_split_is_exact_and_seeded():
    ids = list(range(1000))
    train, dev = split(ids, 0.05, 1)
    assert len(dev) == 50 and sorted(train + dev) == ids and train == sorted(train)
    assert split(ids, 0.05, 1) == (train, dev) and split(ids, 0.05, 2)[1] != dev
    with pytest.raises(PovstimError, match="at least 2"):
        split([4], 0.1, 0)


def test_baby_puts_back_only_targeted_evidence(corpus):
    """BABY never puts back a removal the strict rule rejects (App. C's false positives)."""
    rows = (corpus / "dpe.tsv").read_text().splitlines()
    marked = [r if int(r.split("\t")[0]) % 80 == 0 else r[: -len("true")] + "false" for r in rows[1:]]
    (corpus / "dpe.tsv").write_text("\n".join(rows[:1] + marked) + "\n")
    train, dev, stats = make(corpus, "baby", "--dpe", corpus / "dpe.tsv", "--reinsert", '{"question_formation": 0.01}')
    assert stats["reinsert_pool"] == {"question_formation": {"targeted": 25, "other": 25}}
    back = [int(s.split()[-2]) for s in train + dev if "smiling" in s]
    assert len(back) == 19 == round(0.01 * stats["n_sentences"]) and all(i % 80 == 0 for i in back)
    assert stats["reinserted_targeted"] == {"question_formation": 19} and stats["reinsert_shortfall"] == {}
    assert stats["dpe_rate_targeted"]["question_formation"] == stats["dpe_rate"]["question_formation"]
    # More than the targeted evidence: all of it and nothing else, and the shortfall is reported.
    train, dev, stats = make(corpus, "baby2", "--dpe", corpus / "dpe.tsv", "--reinsert", '{"question_formation": 0.02}')
    back = [int(s.split()[-2]) for s in train + dev if "smiling" in s]
    assert len(back) == 25 and all(i % 80 == 0 for i in back)
    assert stats["reinsert_shortfall"] == {"question_formation": {"needed": 38, "available": 25}}
    assert stats["n_sentences"] == 2000 - 80  # still as many sentences as BABY-F


def test_condition_table_gathers_counts_and_rates(corpus):
    rates = '{"question_formation": 0.01}'
    make(corpus, "baby-f/20k", "--dpe", corpus / "dpe.tsv")
    make(corpus, "baby/20k", "--dpe", corpus / "dpe.tsv", "--reinsert", rates)
    r = povstim("condition", "--table", corpus / "baby/20k/condition.json", corpus / "baby-f/20k/condition.json",
                "--out-table", corpus / "conditions.tsv")
    assert r.returncode == 0, r.stderr
    head, *rows = [line.split("\t") for line in (corpus / "conditions.tsv").read_text().splitlines()]
    table = {(row[0], row[1]): dict(zip(head, row)) for row in rows}
    assert set(table) == {("baby", "20k"), ("baby-f", "20k")}
    assert table["baby", "20k"]["n_sentences"] == table["baby-f", "20k"]["n_sentences"] == "1920"
    assert float(table["baby", "20k"]["dpe_rate_question_formation"]) == round(19 / 1920, 8)
    assert table["baby", "20k"]["config_rate_question_formation"] == "0.01"
    assert float(table["baby-f", "20k"]["dpe_rate_question_formation"]) == 0.0
    assert float(table["baby", "20k"]["targeted_rate_question_formation"]) == round(19 / 1920, 8)
    assert table["baby", "20k"]["shortfall_question_formation"] == ""


def test_conditions_page_marks_the_shortfall(corpus, caplog):
    """The report's conditions table shows BABY's shortfall. The dpe.tsv of the fixture marks
    every removal targeted: every 40th of 2000 sentences is question formation (50), every 50th-not-40th
    binding (30), so BABY-F has 1920; a rate of 0.05 needs round(0.05 x 1920) = 96 sentences, only 50 exist
    -> all 50 go back, shortfall 96/50."""
    make(corpus, "baby-f/20k", "--dpe", corpus / "dpe.tsv")
    make(corpus, "baby/20k", "--dpe", corpus / "dpe.tsv", "--reinsert", '{"question_formation": 0.05}')
    r = povstim("condition", "--table", corpus / "baby/20k/condition.json", corpus / "baby-f/20k/condition.json",
                "--out-table", corpus / "conditions.tsv")
    assert r.returncode == 0, r.stderr
    # the report's page (rendered by the guardrails stage) from the same condition.json files
    stats = [read_condition(corpus / c / "20k" / "condition.json") for c in ("baby", "baby-f")]
    with caplog.at_level("WARNING"):
        write_page(stats, corpus / "conditions.html", 0.02)
    page = (corpus / "conditions.html").read_text()
    assert "<td class='short'>96/50</td>" in page
    # one term, the docs': n_replaced is "put back" in the header and the legend, nowhere "reinserted"
    assert "<th>put back</th>" in page and "<b>put back</b>" in page and "reinserted" not in page.lower()
    assert "baby 20k: question_formation needed 96 targeted sentences at rate 0.05 but the filter removed 50" in page
    # measured targeted rate 50 / 1920 = 0.02604
    assert "the measured targeted rate is 0.02604" in page
    assert "SHORTFALL baby 20k" in caplog.text
    tsv = dict(zip(*[line.split("\t") for line in (corpus / "conditions.tsv").read_text().splitlines()[:2]]))
    assert tsv["condition"] == "baby" and tsv["shortfall_question_formation"] == "96/50"
