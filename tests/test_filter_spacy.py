"""The real-parser path: spaCy (en_core_web_sm) parses and filters real CHILDES utterances."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest


def childes_utterances(shared_data, n_plain=200, n_self=30, n_rel=50):
    """Adult utterances from AO-CHILDES exports, in orthographic form (capital, final punctuation)."""
    plain, refl, rel = [], [], []
    for name in ("Bates.csv", "Bernstein.csv", "Sachs.csv"):
        with open(shared_data / "aochildes" / "original_transcripts_csv" / name, newline="", encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                if row["speaker_role"] in ("Target_Child", "Child"):
                    continue
                gloss = " ".join(row["gloss"].split())
                if not gloss or "xxx" in gloss or "yyy" in gloss or "www" in gloss:
                    continue
                text = gloss[0].upper() + gloss[1:] + ("?" if "question" in row["type"] else ".")
                words = gloss.split()
                if any(w.endswith(("self", "selves")) for w in words) and len(refl) < n_self:
                    refl.append(text)
                elif text.endswith("?") and len(words) >= 6 and ("that" in words or "who" in words) and len(rel) < n_rel:
                    rel.append(text)
                elif len(plain) < n_plain:
                    plain.append(text)
    return plain + refl + rel


@pytest.mark.slow
def test_spacy_filters_real_childes(shared_data, tmp_path):
    texts = childes_utterances(shared_data)
    assert len(texts) >= 250
    (tmp_path / "childes.txt").write_text("\n".join(texts) + "\n")
    results = {}
    for name, pparams in (("pre", "{}"), ("all", '{"prefilter": false}')):
        out, summary = tmp_path / f"{name}.tsv", tmp_path / f"{name}.json"
        r = subprocess.run(
            [sys.executable, "-m", "povstim", "filter", tmp_path / "childes.txt", "--parser", "spacy",
             "--parser-params", pparams, "--mode", "posh", "--out", out, "--summary", summary],
            capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        rows = [line.split("\t") for line in out.read_text().splitlines()[1:]]
        results[name] = (rows, json.loads(summary.read_text()))
    rows, s = results["pre"]
    assert s["n_sentences"] == len(texts)
    assert 0 < s["n_parsed"] < len(texts) and s["prefilter"]["n_spared"] == len(texts) - s["n_parsed"]
    phen = {r[1] for r in rows}
    assert phen == {"question_formation", "binding"}, rows
    for sid, _, rule, toks, text, targeted in rows:
        assert texts[int(sid)] == text
        assert rule in ("qf_posh_interrogative_nsubj_before_relcl", "binding_posh_self_after_two_nominals",
                        "qf_strict_subject_relative_question", "binding_strict_two_animate_antecedents")
    assert s["n_removed"] == len({r[0] for r in rows})
    # The prefilter changes nothing about what is removed, on real text and a real parser.
    all_rows, s_all = results["all"]
    assert s_all["n_parsed"] == len(texts)
    assert sorted(map(tuple, rows)) == sorted(map(tuple, all_rows))


# Invented sentences of the structures App. C removes on a UD gold tree (an nsubj before an acl:relcl; the
# interrogative test passes) that a parser trained on another scheme often does not analyse as relative
# clauses ("that's why/where/what + clause", free relatives, zero and that-relatives on a
# question's subject or object). None is a sentence of the validation treebank.
MISSED_STRUCTURES = [
    "That's why he cried.",
    "That's where the ducks live.",
    "Is that where you put it?",
    "That's what happens when you drop it.",
    "Is that what goes in here?",
    "This is what the doggie wants.",
    "Here's what we'll do.",
    "What happened to the car Grandpa bought?",
    "Where's the truck that Daddy fixed?",
    "What's the thing you're holding?",
    "Where did the ball you threw go?",
    "Is this the kind you like?",
]
# Questions and declaratives without a relative clause: conservative mode keeps them.
NO_RELATIVE = [
    "What is she building?",
    "Where did you put it?",
    "Is that your ball?",
    "Grandma what happened?",
    "Do you know what that is?",
    "Tell me who broke it.",
    "Who is the boy sitting there?",
    "Which one do you want?",
]


def test_conservative_mode_on_spacy_parses_of_the_structures_the_literal_rules_miss():
    from povstim.dpe import Context, PHENOMENA
    from povstim.parse.backends import parse_spacy

    qf = PHENOMENA["question_formation"].rules
    sents = parse_spacy(MISSED_STRUCTURES + NO_RELATIVE)
    for text, s in zip(MISSED_STRUCTURES + NO_RELATIVE, sents):
        s.meta["text"] = text
    found = {s.meta["text"]: bool(qf["conservative"](s, Context())) for s in sents}
    literal = {s.meta["text"]: bool(qf["posh"](s, Context())) for s in sents}
    assert [t for t in MISSED_STRUCTURES if not found[t]] == []
    assert [t for t in NO_RELATIVE if found[t]] == []
    assert sum(not literal[t] for t in MISSED_STRUCTURES) >= 6  # what the literal rules miss on these parses
