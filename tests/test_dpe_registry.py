"""The DPE phenomenon registry: every rule's surface pre-test is a necessary condition of the rule,
checked on real parses (spaCy en_core_web_sm on adult CHILDES utterances), and the check has teeth."""

from __future__ import annotations

import csv

import pytest

from povstim import dpe
from povstim.parse.backends import parse_spacy
from povstim.parse.tokenize import tokenize


def adult_utterances(shared_data, n: int, n_refl: int, n_wh: int) -> list[str]:
    """The first ``n`` usable adult utterances of several AO-CHILDES exports (in corpus orthography),
    plus up to ``n_refl`` with a reflexive and ``n_wh`` questions with who/that/want from the rest:
    the rare sentences a rule fires on, so the check sees many positives."""
    out, refl, wh = [], [], []
    for name in sorted(p.name for p in (shared_data / "aochildes" / "original_transcripts_csv").glob("*.csv")):
        path = shared_data / "aochildes" / "original_transcripts_csv" / name
        if not path.exists():
            continue
        with open(path, newline="", encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                gloss = " ".join(row["gloss"].split())
                if row["speaker_role"] in ("Target_Child", "Child") or not gloss:
                    continue
                if any(x in gloss for x in ("xxx", "yyy", "www")) or len(gloss.split()) < 2:
                    continue
                text = gloss[0].upper() + gloss[1:] + ("?" if "question" in row["type"] else ".")
                words = gloss.lower().split()
                if len(out) < n:
                    out.append(text)
                elif any(w.endswith(("self", "selves")) for w in words) and len(refl) < n_refl:
                    refl.append(text)
                elif text.endswith("?") and {"who", "that", "want", "wanna"} & set(words) and len(wh) < n_wh:
                    wh.append(text)
                if len(out) == n and len(refl) == n_refl and len(wh) == n_wh:
                    return out + refl + wh
    return out + refl + wh


def pretest_violations(sentences, names) -> dict[str, list[str]]:
    """Per phenomenon: sentences a rule (either mode) flags although its pre-test would have spared them."""
    out: dict[str, list[str]] = {n: [] for n in names}
    for s in sentences:
        words = tokenize(s.text)[0]
        for name in names:
            ph = dpe.PHENOMENA[name]
            if any(ph.rules[m](s, dpe.Context()) for m in dpe.MODES) and not ph.surface(words, s.text):
                out[name].append(s.text)
    return out


@pytest.fixture(scope="module")
def parsed(shared_data):
    texts = adult_utterances(shared_data, 3000, 300, 600)
    assert len(texts) == 3900
    sents = parse_spacy(texts)
    for t, s in zip(texts, sents):
        s.meta["text"] = t
    return sents


@pytest.mark.slow
def test_no_pretest_spares_a_sentence_its_rule_flags_on_real_parses(parsed):
    names = tuple(dpe.PHENOMENA)
    assert pretest_violations(parsed, names) == {n: [] for n in names}
    # and the rules really fire on this sample, so the check is not vacuous
    hits = {n: sum(bool(dpe.PHENOMENA[n].rules["posh"](s, dpe.Context())) for s in parsed) for n in names}
    assert hits["question_formation"] >= 30 and hits["binding"] >= 100 and hits["wanna"] >= 10, hits


@pytest.mark.slow
def test_a_rule_widened_beyond_its_pretest_is_caught(parsed, monkeypatch):
    """Plant the hazard: a question-formation rule that no longer needs a question (any subject relative)."""
    from povstim.dpe import question_formation as qf
    from povstim.dpe.tree import base_rel

    def widened(sent, ctx):
        subj = next((t for t in sent.tokens if base_rel(t) == "nsubj"), None)
        rel = next((t for t in sent.tokens if t.deprel == "acl:relcl"), None)
        return (subj, rel) if subj is not None and rel is not None else None

    wide = dpe.Phenomenon("qf_wide", {m: widened for m in dpe.MODES}, qf.surface)
    monkeypatch.setitem(dpe.PHENOMENA, "qf_wide", wide)
    assert pretest_violations(parsed, ("qf_wide",))["qf_wide"], "the widened rule should escape its pre-test"


def test_registry_declares_languages_and_a_stable_parse_hash():
    assert dpe.languages(["question_formation", "binding"]) == {"en"}
    h = dpe.surface_hash(["question_formation", "binding"])
    assert h == dpe.surface_hash(["binding", "question_formation"])  # order does not matter
    assert h != dpe.surface_hash(["question_formation", "binding", "wanna"])
