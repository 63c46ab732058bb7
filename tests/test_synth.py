"""The synthetic generator: determinism, exact DPE rates, gold labels, valid gold CoNLL-U."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from povstim.cli import main
from povstim.io import PovstimError
from povstim.parse.conllu import read_file
from povstim.synth import gold
from povstim.synth.generator import dpe_counts, generate, write_corpus

RATES = {"question_formation": 0.02, "binding": 0.015}


@pytest.fixture(scope="module")
def corpora(tmp_path_factory):
    """One child and one adult corpus, written through the real writer."""
    d = tmp_path_factory.mktemp("synth")
    out = {}
    for reg, n in (("child", 3000), ("adult", 2000)):
        txt, con = d / f"{reg}.txt", d / f"{reg}.conllu"
        summary = write_corpus(reg, n, 5, RATES, txt, con)
        out[reg] = (txt, con, summary)
    return out


def _lines(path):
    return path.read_text(encoding="utf-8").splitlines()


def test_same_seed_is_byte_identical_other_seed_differs(tmp_path):
    paths = []
    for i, seed in enumerate((3, 3, 4)):
        t, c = tmp_path / f"{i}.txt", tmp_path / f"{i}.conllu"
        write_corpus("child", 500, seed, RATES, t, c)
        paths.append((t.read_bytes(), c.read_bytes()))
    assert paths[0] == paths[1]
    assert paths[0][0] != paths[2][0]


@pytest.mark.parametrize("reg", ["child", "adult"])
def test_dpe_counts_are_exact(corpora, reg):
    txt, con, summary = corpora[reg]
    sents = read_file(con)
    n = len(sents)
    labels = Counter(s.meta["dpe"] for s in sents)
    for ph, rate in RATES.items():
        assert labels[ph] == round(rate * n) == summary["dpe"][ph]
    assert labels["none"] == n - sum(round(r * n) for r in RATES.values())
    assert sum(summary["constructions"].values()) == n
    assert summary["constructions"] == dict(sorted(Counter(s.meta["construction"] for s in sents).items()))


@pytest.mark.parametrize("reg", ["child", "adult"])
def test_gold_labels_match_the_definitions_on_every_sentence(corpora, reg):
    """Labels come from how a sentence was built; the definitions are recomputed from its tree."""
    _, con, _ = corpora[reg]
    for s in read_file(con):
        assert gold.label(s) == s.meta["dpe"], (s.meta["construction"], s.text)


def test_dpe_sentences_have_their_defining_structure(corpora):
    for reg in ("child", "adult"):
        for s in read_file(corpora[reg][1]):
            toks = s.tokens
            if s.meta["dpe"] == "question_formation":
                assert s.text.endswith("?")
                root = next(t for t in toks if t.head == 0)
                subj = [t for t in toks if t.head == root.id and t.deprel == "nsubj"]
                assert len(subj) == 1
                rel = [t for t in toks if t.deprel == "acl:relcl" and t.head == subj[0].id]
                assert rel and rel[0].id > subj[0].id
            elif s.meta["dpe"] == "binding":
                refl = [t for t in toks if t.feat("Reflex") == "Yes"]
                assert len(refl) == 1
                before = [t for t in toks[: refl[0].id - 1] if gold.animate_np(t)]
                assert len(before) >= 2


def test_look_alikes_are_generated_and_labelled_none(corpora):
    """What the POSH surface rules over-filter: declaratives with subject relatives,
    questions with object relatives, reflexives with one antecedent."""
    seen = Counter()
    for s in read_file(corpora["child"][1]) + read_file(corpora["adult"][1]):
        if s.meta["dpe"] != "none":
            continue
        has_rel = any(t.deprel == "acl:relcl" for t in s.tokens)
        has_refl = any(t.feat("Reflex") == "Yes" for t in s.tokens)
        if has_rel and s.text.endswith("?"):
            seen["question_with_relative"] += 1
        if has_rel and s.text.endswith("."):
            seen["declarative_with_relative"] += 1
        if has_refl:
            seen["reflexive"] += 1
    assert seen["question_with_relative"] >= 10
    assert seen["declarative_with_relative"] >= 50
    assert seen["reflexive"] >= 20


@pytest.mark.parametrize("reg", ["child", "adult"])
def test_conllu_is_valid_and_matches_the_text(corpora, reg):
    txt, con, _ = corpora[reg]
    lines = _lines(txt)
    sents = read_file(con)
    assert len(lines) == len(sents)
    for i, (line, s) in enumerate(zip(lines, sents)):
        assert s.meta["sent_id"] == str(i)
        assert s.meta["text"] == line == gold.text_of(s)
        assert s.meta["register"] == reg
        assert gold.tree_errors(s) == [], (line, gold.tree_errors(s))
        assert s.tokens[-1].upos == "PUNCT" and s.tokens[-1].deprel == "punct"
        assert line[0].isupper() and line[-1] in ".?!" and line[-2] != " "
        assert s.tokens[-2].misc == "SpaceAfter=No"
        for t in s.tokens:
            assert t.upos in gold_upos and t.deprel in gold_deprels, (t.upos, t.deprel, line)
            if t.feats != "_":
                keys = [kv.split("=")[0] for kv in t.feats.split("|")]
                assert keys == sorted(keys)


gold_upos = {"NOUN", "PROPN", "PRON", "VERB", "AUX", "DET", "ADJ", "ADP", "SCONJ", "ADV", "PART", "PUNCT", "CCONJ"}
gold_deprels = {"nsubj", "obj", "iobj", "aux", "cop", "mark", "advcl", "ccomp", "xcomp", "acl:relcl", "acl", "det",
                "amod", "nmod", "nmod:poss", "case", "obl", "advmod", "conj", "cc", "punct", "root"}


def _subject_of(s, tok):
    pred = tok if tok.deprel not in ("aux", "cop") else s.tokens[tok.head - 1]
    subj = [t for t in s.tokens if t.head == pred.id and t.deprel == "nsubj"]
    return subj[0] if subj else None


def _is_3sg(s, subj):
    if subj.upos == "PRON":
        if subj.feat("PronType") == "Rel":  # agrees with the noun it modifies
            noun = s.tokens[s.tokens[subj.head - 1].head - 1]
            return noun.feat("Number") == "Sing"
        return subj.form.lower() in ("he", "she", "it", "who", "this", "that")
    return subj.feat("Number") == "Sing"


@pytest.mark.parametrize("reg", ["child", "adult"])
def test_subject_verb_agreement(corpora, reg):
    checked = 0
    for s in read_file(corpora[reg][1]):
        for t in s.tokens:
            if t.feat("VerbForm") != "Fin" or t.feat("Mood") == "Imp" or t.form.lower() == "wanna":
                continue
            subj = _subject_of(s, t)
            if subj is None or t.lemma in ("can", "will", "should", "could", "would", "might"):
                continue
            form = t.form.lower()
            if t.feat("Tense") == "Past":
                if form in ("was", "were"):
                    assert (form == "was") == (_is_3sg(s, subj) or subj.form.lower() == "i"), s.text
                    checked += 1
                continue
            if subj.form.lower() == "i":
                assert form in ("am", "do", "have") or t.feat("Person") is None, s.text
            elif _is_3sg(s, subj):
                assert t.feat("Number") == "Sing" and t.feat("Person") == "3" and form != "are", s.text
            else:
                assert t.feat("Person") is None and form not in ("is", "am", "does", "has"), s.text
            checked += 1
    assert checked > 300


def test_registers_differ(corpora):
    child, adult = (_lines(corpora[r][0]) for r in ("child", "adult"))

    def q(ls):
        return sum(x.endswith("?") for x in ls) / len(ls)

    def wps(ls):
        return sum(len(x.split()) for x in ls) / len(ls)

    assert 0.3 <= q(child) <= 0.5
    assert q(adult) <= 0.12
    assert wps(adult) >= wps(child) + 3


def test_indirect_evidence_constructions_are_present(corpora):
    child, adult = (" \n".join(_lines(corpora[r][0])) for r in ("child", "adult"))
    both = child + adult
    assert re.search(r"^Do you wanna (play|go|sleep|swim|dance|sing|come|sit|stay|walk|run|jump)\?", child, re.M)
    assert re.search(r"^What (do|does|did) \w+( \w+)? wanna \w+\?", child, re.M)
    assert re.search(r"^I wanna \w+", child, re.M)
    assert re.search(r"^(What|Who) did .+\?", both, re.M)
    assert re.search(r" (after|before|while|without) \w+ing ", adult)
    assert re.search(r" whether ", adult)
    assert re.search(r"'s ", both)
    assert re.search(r" that ", adult)
    perc = [s for s in read_file(corpora["adult"][1]) if s.meta["construction"] == "percep"]
    assert perc and all(any(t.deprel == "xcomp" and t.form.endswith("ing") for t in s.tokens) for s in perc)


def test_reflexives_agree_with_their_antecedent(corpora):
    for s in read_file(corpora["child"][1]) + read_file(corpora["adult"][1]):
        if not s.meta["construction"] in ("refl", "dpe_binding_poss", "dpe_binding_ccomp", "dpe_binding_relcl"):
            continue
        r = next(t for t in s.tokens if t.feat("Reflex") == "Yes")
        subj = _subject_of(s, s.tokens[r.head - 1])
        if subj.upos == "PRON":
            expected = {"I": "myself", "you": "yourself", "he": "himself", "she": "herself",
                        "we": "ourselves", "they": "themselves"}[subj.lemma]
            assert r.form == expected, s.text
        elif subj.feat("Number") == "Plur":
            assert r.form == "themselves", s.text
        else:
            assert r.form in ("himself", "herself", "itself"), s.text


def test_dpe_rates_zero_and_bad_rates():
    labels = Counter(label for _, _, label in generate("child", 400, 1, {}))
    assert labels == {"none": 400}
    assert dpe_counts(1000, {"binding": 0.0007}) == {"question_formation": 0, "binding": 1}
    with pytest.raises(PovstimError, match="unknown dpe_rate phenomenon 'islands'"):
        dpe_counts(10, {"islands": 0.1})
    with pytest.raises(PovstimError, match="more than 1"):
        dpe_counts(10, {"binding": 0.6, "question_formation": 0.6})
    with pytest.raises(PovstimError, match="unknown register"):
        list(generate("legal", 10, 1, {}))


def test_cli_with_params(tmp_path, capsys):
    params = {"kind": "synthetic", "register": "adult", "sentences": 300, "seed": 9,
              "dpe_rate": {"question_formation": 0.01, "binding": 0.01}}
    t, c = tmp_path / "a.txt", tmp_path / "a.conllu"
    assert main(["synth", "--params", json.dumps(params), "--out-text", str(t), "--out-conllu", str(c)]) == 0
    assert len(_lines(t)) == 300 and len(read_file(c)) == 300
    assert sum(s.meta["dpe"] == "binding" for s in read_file(c)) == 3
    # explicit flags override --params
    assert main(["synth", "--params", json.dumps(params), "--sentences", "20", "--out-text", str(t),
                 "--out-conllu", str(c)]) == 0
    assert len(_lines(t)) == 20


@pytest.mark.parametrize("params, message", [
    ({"kind": "synthetic", "register": "child", "sentences": 10, "rate": 1}, "unknown config key 'sources.synthetic.rate' (did you mean 'dpe_rate'?)"),
    ({"kind": "local", "register": "child", "sentences": 10}, "kind is 'local'"),
    ({"kind": "synthetic", "sentences": 10}, "no register"),
])
def test_cli_bad_params(tmp_path, capsys, params, message):
    t, c = tmp_path / "a.txt", tmp_path / "a.conllu"
    assert main(["synth", "--params", json.dumps(params), "--out-text", str(t), "--out-conllu", str(c)]) == 1
    assert message in capsys.readouterr().err
    assert not t.exists() and not c.exists()


def test_config_schema_checks_synthetic_sources(repo_root):
    import copy

    import yaml

    from povstim import config as povstim_config

    cfg = yaml.safe_load((repo_root / "config.yaml").read_text())
    povstim_config.validate(copy.deepcopy(cfg), source="config")
    bad = copy.deepcopy(cfg)
    bad["sources"]["cds"]["registr"] = "child"
    with pytest.raises(PovstimError, match="registr"):
        povstim_config.validate(bad, source="config")
    bad = copy.deepcopy(cfg)
    bad["sources"]["cds"]["dpe_rate"]["islands"] = 0.1
    with pytest.raises(PovstimError, match="islands"):
        povstim_config.validate(bad, source="config")
    bad = copy.deepcopy(cfg)
    bad["sources"]["cds"]["register"] = "legal"
    with pytest.raises(PovstimError, match="register"):
        povstim_config.validate(bad, source="config")


def test_default_sources_cover_the_largest_default_size(repo_root):
    """The embedded default's synthetic sources must hold enough words for every size."""
    import yaml

    from povstim.io import parse_size

    cfg = yaml.safe_load((repo_root / "config.yaml").read_text())
    biggest = max(parse_size(s) for s in cfg["sizes"])
    need: dict[str, float] = {}
    for corpus in cfg["corpora"].values():
        total = sum(corpus["mixture"].values())
        for src, share in corpus["mixture"].items():
            need[src] = max(need.get(src, 0.0), biggest * share / total)
    checked = 0
    for name, words_needed in need.items():
        spec = cfg["sources"][name]
        if spec["kind"] != "synthetic":
            continue
        n = 2000
        words = sum(len(t.split()) for t, *_ in generate(spec["register"], n, spec.get("seed", 0)))
        expected = words / n * spec["sentences"]
        assert expected >= 1.1 * words_needed, (name, expected, words_needed)
        checked += 1
    assert checked >= 1


def test_output_does_not_depend_on_hash_seed(tmp_path):
    """Byte-identical across processes with different PYTHONHASHSEED (no set/hash order leaks)."""
    import os
    import subprocess
    import sys

    outs = []
    for hs in ("1", "2"):
        t, c = tmp_path / f"{hs}.txt", tmp_path / f"{hs}.conllu"
        env = dict(os.environ, PYTHONHASHSEED=hs)
        subprocess.run([sys.executable, "-m", "povstim", "synth", "--register", "child", "--sentences", "300",
                        "--seed", "2", "--dpe-rate", '{"binding": 0.05}', "--out-text", str(t),
                        "--out-conllu", str(c)], check=True, env=env, capture_output=True)
        outs.append((t.read_bytes(), c.read_bytes()))
    assert outs[0] == outs[1]
