"""POSH-BENCH word pools from the corpora: word statistics of parses, part-of-speech confirmation,
pool reports, the word-frequency baseline audit, paradigm selection of imported suites."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from povstim.benchmarks import audit, posh, words, wordstats
from povstim.benchmarks.build import build, select_paradigms, suite_spec
from povstim.benchmarks.suite import Pair
from povstim.cli import main
from povstim.io import PovstimError

# Two hand-written sentences: "cry" governs an object once (of 2 uses), "watch" is a noun once and a verb once.
CONLLU = """\
# text = Mary cried tears .
1\tMary\tMary\tPROPN\tNNP\t_\t2\tnsubj\t_\t_
2\tcried\tcry\tVERB\tVBD\t_\t0\troot\t_\t_
3\ttears\ttear\tNOUN\tNNS\t_\t2\tobj\t_\t_
4\t.\t.\tPUNCT\t.\t_\t2\tpunct\t_\t_

# text = the watch cried .
1\tthe\tthe\tDET\tDT\t_\t2\tdet\t_\t_
2\twatch\twatch\tNOUN\tNN\t_\t3\tnsubj\t_\t_
3\tcried\tcry\tVERB\tVBD\t_\t0\troot\t_\t_
4\t.\t.\tPUNCT\t.\t_\t3\tpunct\t_\t_

# text = watch Mary .
1\twatch\twatch\tVERB\tVB\t_\t0\troot\t_\t_
2\tMary\tMary\tPROPN\tNNP\t_\t1\tobj\t_\t_
3\t.\t.\tPUNCT\t.\t_\t1\tpunct\t_\t_

"""


def test_word_stats_count_forms_tags_and_objects(tmp_path):
    shard = tmp_path / "0.conllu"
    shard.write_text(CONLLU)
    out = tmp_path / "words.tsv"
    assert main(["word-stats", str(shard), "--out", str(out)]) == 0
    rows = [line.split("\t") for line in out.read_text().splitlines()]
    assert rows[0] == ["form", "upos", "n", "n_obj"]
    table = {(r[0], r[1]): (int(r[2]), int(r[3])) for r in rows[1:]}
    # hand-counted from CONLLU
    assert table[("cried", "VERB")] == (2, 1)
    assert table[("watch", "NOUN")] == (1, 0) and table[("watch", "VERB")] == (1, 1)
    assert table[("mary", "PROPN")] == (2, 0)
    stats = wordstats.read_tsv([out, out])  # two files add up
    assert stats.count("cried", "VERB") == 4 and stats.count("watch") == 4
    assert stats.share("watch", "NOUN") == 0.5
    assert stats.object_rate(["cry", "cried"]) == (4, 0.5)


def test_word_stats_errors_name_the_file(tmp_path):
    bad = tmp_path / "words.tsv"
    bad.write_text("form\tupos\tn\tn_obj\ncry\tVERB\tmany\t0\n")
    with pytest.raises(PovstimError, match=r"words.tsv, line 2"):
        wordstats.read_tsv([bad])
    bad.write_text("word\tn\n")
    with pytest.raises(PovstimError, match=r"line 1: expected the header"):
        wordstats.read_tsv([bad])
    with pytest.raises(PovstimError, match="cannot read parse shard"):
        wordstats.count_conllu([tmp_path / "missing.conllu"])


def _stats(rows: dict) -> wordstats.WordStats:
    s = wordstats.WordStats()
    for (form, upos), (n, k) in rows.items():
        s.n[(form, upos)] = n
        s.n_obj[(form, upos)] = k
    return s


def test_corpus_vocabulary_drops_the_words_the_parses_rule_out():
    pos = words.PosCheck(min_count=5, min_share=0.25, max_object_rate=0.05)
    stats = _stats({
        ("girl", "NOUN"): (50, 0),
        ("lady", "NOUN"): (1, 0), ("lady", "PROPN"): (40, 0),  # used as a name, hardly a noun: out
        ("woman", "NOUN"): (1, 0), ("woman", "PROPN"): (3, 0),  # too few tokens to rule it out: kept
        ("mary", "PROPN"): (30, 0), ("rose", "NOUN"): (30, 0), ("rose", "PROPN"): (5, 0),  # rose: a flower
        ("sleep", "VERB"): (100, 1), ("sleeps", "VERB"): (20, 0),  # 1/120 objects: strictly intransitive in use
        ("arrive", "VERB"): (100, 0),
        ("cough", "VERB"): (80, 16), ("coughed", "VERB"): (20, 4),  # 20% of uses govern an object: out
        ("smile", "NOUN"): (40, 0), ("smile", "VERB"): (5, 0), ("smiles", "NOUN"): (20, 0),  # mostly a noun: out
    })
    lex = words.build_lexicon("corpus", None, stats, pos)
    assert lex.vocabulary == "corpus"
    assert {"girl", "woman"} <= set(lex.nouns["human_f"]) and "lady" not in lex.nouns["human_f"]
    assert lex.rejected["noun.human_f"] == ["lady"]
    assert "Mary" in lex.names["f"] and "Rose" not in lex.names["f"] and lex.rejected["name.f"] == ["Rose"]
    intrans = [v.base for v in lex.verbs["wanna_intrans"]]
    assert {"arrive", "sleep", "yawn"} <= set(intrans)  # yawn: no evidence, kept
    assert "cough" not in intrans and "smile" not in intrans
    assert lex.rejected["verb.wanna_intrans"] == ["cough", "smile"]
    # a verb mostly used as a noun is dropped from every verb class; objects only matter for wanna
    assert "smile" not in {v.base for v in lex.verbs["intrans"]} and "cough" in {v.base for v in lex.verbs["intrans"]}
    # the lexicon vocabulary ignores parses and candidates
    plain = words.build_lexicon("lexicon")
    assert "lady" not in plain.nouns["human_f"] and "arrive" not in {v.base for v in plain.verbs["wanna_intrans"]}
    with pytest.raises(PovstimError, match="unknown benchmark vocabulary"):
        words.build_lexicon("wordnet")


def test_pool_report_ranks_and_k_needed():
    lex = words.Lexicon(verbs={}, nouns={"object": ["ball", "cup", "kite"]}, names={}, closed={})
    a = Counter({"the": 10, "ball": 5, "cup": 4, "kite": 1, "dog": 3})  # ranks: the 1, ball 2, cup 3, dog 4, kite 5
    b = Counter({"the": 9, "cup": 8, "ball": 2, "dog": 1})  # cup 2, ball 3, dog 4; no kite
    row = words.pool_report(lex, [a, b], top_k_words=3)["noun.object"]
    # ball: max(2, 3) = 3, cup: max(3, 2) = 3, kite: absent from b -> never
    assert row == {"candidates": 3, "rejected_by_parses": 0, "available": 2,
                   "k_for": {"1": 3, "2": 3, "5": None, "10": None}, "k_all": None, "in_corpora": 2}
    assert words.pool_report(lex, [a, b], top_k_words=2)["noun.object"]["available"] == 0
    verbs = words.Lexicon(verbs={"refl": [words.Verb("hug", "hugs", "hugged", "hugging")]}, nouns={}, names={},
                          closed={})
    # only the form the templates use (past) counts
    assert words.pool_report(verbs, [Counter({"hugged": 3, "x": 5})], 1)["verb.refl"]["k_for"]["1"] == 2


def _pair(paradigm, template, good, bad):
    return Pair(suite="s", paradigm=paradigm, category="c", item_id=good, good=good, bad=bad,
                extra={"template": template})


def test_unigram_audit_flags_what_word_frequency_solves():
    counts = Counter({"that": 90, "whether": 2, "who": 10, "he": 10, "she": 5, "the": 100})
    pairs = [
        _pair("island_wh", "whether_who", "Who did the boy know that Mary called?",
              "Who did the boy know whether Mary called?"),
        _pair("island_wh", "whether_who", "Who did the girl know that Tom saw?", "Who did the girl know whether Tom saw?"),
        _pair("island_wh", "who_past", "What did the boy know she bought?", "What did the boy know who bought?"),
        _pair("island_wh", "who_past", "What did the boy know he bought?", "What did the boy know who bought?"),
    ]
    acc = audit.unigram_accuracy(pairs, counts)
    # hand-computed: that (90) > whether (2) twice; she (5) < who (10); he (10) == who (10) is a tie, not correct
    assert acc["templates"] == {"whether_who": 1.0, "who_past": 0.0}
    assert acc["paradigms"] == {"island_wh": 0.5}
    report = audit.unigram_report(pairs, [counts], ["baby"], threshold=0.9)
    assert report["solved"] == [{"corpus": "baby", "level": "template", "name": "whether_who", "accuracy": 1.0}]


def test_solved_by_baselines_reads_item_scores():
    pd = pytest.importorskip("pandas")
    rows = [{"suite": "zorro", "arch": "unigram", "condition": "c", "size": "5M", "paradigm": p, "final": True,
             "correct": c} for p, c in [("a", True), ("a", True), ("b", True), ("b", False)]]
    rows.append({"suite": "zorro", "arch": "babyberta", "condition": "c", "size": "5M", "paradigm": "b",
                 "final": True, "correct": True})
    out = audit.solved_by_baselines(pd.DataFrame(rows), threshold=0.9)
    assert out[["arch", "paradigm", "accuracy"]].values.tolist() == [["unigram", "a", 1.0]]


def test_benchmark_manifest_reports_pools_and_baseline(tmp_path):
    synth = pytest.importorskip("povstim.synth.generator")
    paths = []
    for register, seed in (("child", 11), ("adult", 12)):
        lines, n = [], 0
        for text, _, _ in synth.generate(register, 30000, seed):
            lines.append(text)
            n += len(text.split())
            if n >= 60_000:
                break
        paths.append(tmp_path / f"{register}.txt")
        paths[-1].write_text("\n".join(lines) + "\n")
    spec = suite_spec("posh", {"kind": "generated", "pairs_per_paradigm": 40})
    pairs, params = build("posh", spec, [str(p) for p in paths])
    assert params["vocabulary"] == "lexicon"  # auto without parses
    pools = params["word_pools"]
    assert pools["verb.wh_embed"]["available"] >= 2 and pools["verb.wanna_intrans"]["available"] >= 2
    assert set(pools["noun.human_f"]) == {"candidates", "rejected_by_parses", "available", "k_for", "k_all", "in_corpora"}
    base = params["baseline"]
    assert base["kind"] == "unigram" and set(base["accuracy"]) == {str(p) for p in paths}
    # "that" is far more frequent than "whether" in both corpora: the whether templates are solved
    solved = {(s["corpus"], s["name"]) for s in base["solved"]}
    assert {(str(p), "whether_who") for p in paths} <= solved
    assert len(pairs) == 9 * 40


def test_imported_suites_keep_only_the_listed_paradigms(tmp_path):
    d = tmp_path / "zorro"
    d.mkdir()
    for name in ("binding-principle_a", "island-effects-adjunct_island", "agreement-x"):
        (d / f"{name}.txt").write_text("bad one .\ngood one .\nbad two .\ngood two .\n")
    spec = suite_spec("z", {"kind": "zorro", "path": str(d), "paradigms": ["binding-principle_a"]})
    pairs, _ = build("z", spec, [])
    assert {p.paradigm for p in pairs} == {"binding-principle_a"} and len(pairs) == 2
    spec = suite_spec("z", {"kind": "zorro", "path": str(d), "paradigms": ["binding-principle_b"]})
    with pytest.raises(PovstimError, match=r"benchmarks.z.paradigms: binding-principle_b not in .*zorro"):
        build("z", spec, [])
    assert select_paradigms(pairs, ["binding-principle_a"], "k", "w") == pairs


def test_suite_scoring_overrides_and_baselines_are_checked_by_the_schema():
    spec = suite_spec("zp", {"kind": "zorro", "path": "x", "scoring": {"mlm": "pll"}, "baselines": ["unigram"]})
    assert spec["scoring"] == {"mlm": "pll"}  # no defaults filled in: they would override the scoring section
    with pytest.raises(PovstimError, match="benchmarks.zp.scoring.mlmx"):
        suite_spec("zp", {"kind": "zorro", "path": "x", "scoring": {"mlmx": "pll"}})
    with pytest.raises(PovstimError, match="benchmarks.zp.baselines"):
        suite_spec("zp", {"kind": "zorro", "path": "x", "baselines": ["bigram"]})
    gen = suite_spec("p", {"kind": "generated"})
    assert gen["vocabulary"] == "auto" and gen["pos_check"] == {"min_count": 5, "min_share": 0.25,
                                                                "max_object_rate": 0.05}


def test_plan_resolves_vocabulary_scoring_and_baselines():
    from povstim import plan

    cfg = {
        "sources": {"s": {"kind": "synthetic"}, "r": {"kind": "local"}},
        "corpora": {"baby": {"mixture": {"s": 1}}, "wiki": {"mixture": {"r": 1}}},
        "sizes": ["1M", "5M"],
        "conditions": {"bf": {"from": "baby", "filter": True, "sizes": ["1M"]}, "w": {"from": "wiki"}},
        "archs": {"a": {"family": "gpt2"}, "b": {"family": "gpt2", "conditions": ["w"]}},
        "seeds": [1],
        "scoring": {"mlm": "holistic", "batch_size": 8},
        "benchmarks": {"posh": {"kind": "generated", "vocabulary": "auto", "seed": 1},
                       "zp": {"kind": "zorro", "path": "x", "scoring": {"mlm": "pll"}, "baselines": ["unigram"]}},
    }
    assert plan.word_stats_inputs(cfg) == [("baby", "1M")]
    assert plan.benchmark_vocabulary(cfg, "posh") == "corpus"  # a real source and a parsed corpus
    assert plan.benchmark_vocabulary(cfg, "zp") is None
    assert plan.suite_build_spec(cfg, "posh")["vocabulary"] == "corpus"
    assert "scoring" not in plan.suite_build_spec(cfg, "zp")
    assert plan.scoring_for(cfg, "zp") == {"mlm": "pll", "batch_size": 8}
    assert plan.scoring_for(cfg, "posh") == {"mlm": "holistic", "batch_size": 8}
    assert plan.baseline_scores(cfg) == [("unigram", "bf", "1M", "zp"), ("unigram", "w", "1M", "zp"),
                                         ("unigram", "w", "5M", "zp")]
    assert {m.path for m in plan.models(cfg) if m.arch == "b"} == {"b/w/1M/seed1", "b/w/5M/seed1"}
    cfg["sources"]["r"]["kind"] = "synthetic"
    assert plan.benchmark_vocabulary(cfg, "posh") == "lexicon"  # synthetic corpora: the lexicon
    cfg["conditions"]["bf"]["filter"] = False
    cfg["benchmarks"]["posh"]["vocabulary"] = "corpus"
    with pytest.raises(PovstimError, match="no corpus is parsed"):
        plan.benchmark_vocabulary(cfg, "posh")


def test_cli_corpus_vocabulary_uses_the_word_stats(tmp_path):
    from povstim import lexicon as L
    from povstim.benchmarks import candidates as C

    stats = tmp_path / "words.tsv"
    # the parses use every female name as a common noun: the class is empty, and the error says so
    names = sorted({n.form.lower() for n in L.NAMES_F + C.NAMES_F})
    stats.write_text("form\tupos\tn\tn_obj\n" + "".join(f"{n}\tNOUN\t9\t0\n" for n in names))
    out = tmp_path / "posh"
    spec = {"kind": "generated", "pairs_per_paradigm": 4, "vocabulary": "corpus"}
    args = ["benchmark", "--suite", "posh", "--params", json.dumps(spec), "--word-stats", str(stats), "--out-dir", str(out)]
    assert main(args) == 1 and not out.exists()
    spec["paradigms"] = ["wanna", "island_wh"]  # templates without a female name
    args[4] = json.dumps(spec)
    assert main(args) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["params"]["vocabulary"] == "corpus" and manifest["n_pairs"] == 8
    assert manifest["params"]["rejected_by_parses"] == {"name.f": sorted(n.form for n in L.NAMES_F + C.NAMES_F)}
    assert manifest["params"]["word_pools"]["name.f"]["rejected_by_parses"] == len(names)
    spec["vocabulary"] = "lexicon"  # the lexicon vocabulary ignores the parses
    args[4] = json.dumps(spec)
    assert main(args) == 0
    assert json.loads((out / "manifest.json").read_text())["params"]["rejected_by_parses"] == {}


def test_every_candidate_template_word_has_a_unique_verb_reading():
    """Candidate verbs must not share a base with a different inflection (one verb per base)."""
    from povstim import lexicon as L
    from povstim.benchmarks import candidates as C

    seen = {}
    for classes in (L.CLASSES, C.CLASSES):
        for entries in classes.values():
            for e in entries:
                if isinstance(e, L.Verb):
                    assert seen.setdefault(e.base, e) == e, (seen[e.base], e)
    assert len(posh.TEMPLATES) == 24


def test_posh_config_table10_paradigms_exist_in_the_released_suites(shared_data):
    """configs/posh.yaml's BLiMP and Zorro paradigm lists name real files of the releases, and their
    categories are POSH Table 10's (Island, Binding)."""
    import yaml
    from pathlib import Path

    cfg = yaml.safe_load((Path(__file__).resolve().parents[1] / "configs" / "posh.yaml").read_text())
    for suite, folder in (("blimp", shared_data / "blimp" / "data"), ("zorro", shared_data / "zorro" / "babyberta")):
        spec = suite_spec(suite, {**cfg["benchmarks"][suite], "path": str(folder)})
        pairs, _ = build(suite, spec, [])
        assert {p.paradigm for p in pairs} == set(spec["paradigms"])
        assert {p.category for p in pairs} == {"Island", "Binding"}
    scamp = cfg["benchmarks"]["scamp"]["paradigms"] + cfg["benchmarks"]["scamp_implausible"]["paradigms"]
    from povstim.benchmarks.suite import category_for

    assert {category_for(p, "other") for p in scamp} == {"Island", "Binding"}
