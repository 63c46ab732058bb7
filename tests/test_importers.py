"""Importers into the benchmark schema: hand-written files and the real BLiMP / Zorro data."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import torch

from povstim.benchmarks.importers import import_suite, load_pairs
from povstim.benchmarks.suite import read_suite
from povstim.cli import main
from povstim.io import PovstimError

torch.set_num_threads(1)


def test_zorro_odd_lines_are_bad(tmp_path):
    f = tmp_path / "island-effects-adjunct_island.txt"
    f.write_text("what did she see the dog before eating ?\nwhat did she see before eating the dog ?\n"
                 "who did he hug the man after ?\nwho did he hug after the man ?\n\n")
    pairs = import_suite("zorro", f, "zorro")
    assert [(p.bad, p.good) for p in pairs] == [
        ("what did she see the dog before eating ?", "what did she see before eating the dog ?"),
        ("who did he hug the man after ?", "who did he hug after the man ?"),
    ]
    assert pairs[0].category == "Island" and pairs[0].paradigm == f.stem and pairs[1].item_id == "1"
    f.write_text("one line .\n")
    with pytest.raises(PovstimError, match="odd number"):
        import_suite("zorro", f, "zorro")
    f.write_text("a .\n\nb .\nc .\n")
    with pytest.raises(PovstimError, match="line 2: empty line"):
        import_suite("zorro", f, "zorro")


def test_posh_release_is_bad_then_good_and_names_normalised(tmp_path):
    f = tmp_path / "question-formation_or.txt"
    f.write_text("Did the man who the boy see will leave?\nWill the man who the boy did see leave?\n")
    (p,) = import_suite("posh", f, "posh")
    assert p.bad.startswith("Did") and p.good.startswith("Will")
    assert p.paradigm == "question_formation_or" and p.category == "Question Formation"


def test_scamp_tsv(tmp_path):
    d = tmp_path / "scamp"
    d.mkdir()
    (d / "wh_island_implausible.tsv").write_text("What did the cup know that Ann ate?\tWhat did the cup know whether Ann ate?\n")
    (d / "principle_A_domain_2.tsv").write_text("Ann said Bo saw himself.\tBo said Ann saw himself.\n")
    pairs = import_suite("scamp", d, "scamp")
    assert [(p.paradigm, p.category) for p in pairs] == [("principle_A_domain_2", "Binding"),
                                                        ("wh_island_implausible", "Island")]
    assert pairs[1].good.endswith("Ann ate?") and "whether" in pairs[1].bad
    (d / "bad.tsv").write_text("only one field\n")
    with pytest.raises(PovstimError, match="bad.tsv, line 1: expected 'good<TAB>bad'"):
        import_suite("scamp", d, "scamp")


def test_generic_csv_and_jsonl_with_named_columns(tmp_path):
    c = tmp_path / "mine.csv"
    c.write_text("id,ok,star,phen,note\n7,The boy runs.,The boy run.,agreement,x\n8,A cat sleeps.,A cat sleep.,,y\n")
    pairs = import_suite("csv", c, "mine", {"good": "ok", "bad": "star", "paradigm": "phen", "item_id": "id"})
    assert [(p.item_id, p.paradigm, p.good, p.bad) for p in pairs] == [
        ("7", "agreement", "The boy runs.", "The boy run."), ("8", "mine", "A cat sleeps.", "A cat sleep.")]
    assert pairs[0].extra == {"note": "x"}
    j = tmp_path / "mine.jsonl"
    j.write_text(json.dumps({"g": "Who did he see?", "b": "Who did he see Mary?"}) + "\n")
    (p,) = import_suite("jsonl", j, "mine", {"good": "g", "bad": "b"})
    assert (p.good, p.bad, p.item_id) == ("Who did he see?", "Who did he see Mary?", "1")
    c.write_text("ok,star\nThe boy runs.,The boy run.\n,A cat sleep.\n")
    with pytest.raises(PovstimError, match="row 3: no value in column 'ok'"):
        import_suite("csv", c, "mine", {"good": "ok", "bad": "star"})
    with pytest.raises(PovstimError, match="row 2: no value in column 'good'"):
        import_suite("csv", c, "mine")


def test_load_pairs_detects_schema_files(tmp_path):
    with pytest.raises(PovstimError, match="does not exist"):
        load_pairs(tmp_path / "x.txt")
    (tmp_path / "x.txt").write_text("The boy run.\nThe boy runs.\n")
    with pytest.raises(PovstimError, match="cannot tell the format.*--format zorro.*--format posh"):
        load_pairs(tmp_path / "x.txt")
    f = tmp_path / "x.jsonl"
    f.write_text(json.dumps({"suite": "s", "paradigm": "p", "category": "c", "item_id": 1, "good": "A.", "bad": "B."}) + "\n")
    assert load_pairs(f)[0]["item_id"] == "1"


# ---------------------------------------------------------------- real data
def _line_pairs(path):
    lines = path.read_text(encoding="utf-8").splitlines()
    return [(lines[i + 1], lines[i]) for i in range(0, len(lines), 2)]


def test_every_zorro_file_imports_without_loss(shared_data):
    for version in ("babyberta", "conll2021_8192"):
        folder = shared_data / "zorro" / version
        files = sorted(folder.glob("*.txt"))
        assert len(files) == 23
        pairs = import_suite("zorro", folder, "zorro")
        assert len(pairs) == 23 * 2000
        by_file = {}
        for p in pairs:
            by_file.setdefault(p.paradigm, []).append((p.good, p.bad))
        for f in files:
            assert by_file[f.stem] == _line_pairs(f), f
    cats = {p.paradigm: p.category for p in pairs}
    assert cats["island-effects-adjunct_island"] == "Island" and cats["binding-principle_a"] == "Binding"


def test_every_blimp_file_imports_without_loss(shared_data):
    folder = shared_data / "blimp" / "data"
    pairs = import_suite("blimp", folder, "blimp")
    assert len(pairs) == 67 * 1000
    by_file = {}
    for p in pairs:
        by_file.setdefault(p.paradigm, []).append(p)
    for f in sorted(folder.glob("*.jsonl")):
        records = [json.loads(line) for line in f.read_text().splitlines() if line.strip()]
        got = by_file[records[0]["UID"]]
        assert [(p.good, p.bad, p.item_id) for p in got] == [
            (r["sentence_good"], r["sentence_bad"], str(r["pairID"])) for r in records]
    cats = {p.paradigm: p.category for p in pairs}
    assert cats["adjunct_island"] == "Island" and cats["principle_A_c_command"] == "Binding"
    assert cats["left_branch_island_simple_question"] == "island_effects"  # not in POSH Table 10


def test_real_suites_score_end_to_end(shared_data, tmp_path):
    """Every pair of BLiMP and Zorro through benchmark -> score (unigram baseline on a
    training corpus), plus one file of each through a real neural model."""
    corpus = tmp_path / "train.txt"
    corpus.write_text("\n".join(
        line for f in sorted((shared_data / "zorro" / "babyberta").glob("*.txt"))[:5]
        for line in f.read_text().splitlines()[1::2]) + "\n")
    for suite, kind, path, n in (("blimp", "blimp", shared_data / "blimp" / "data", 67000),
                                 ("zorro", "zorro", shared_data / "zorro" / "babyberta", 46000)):
        out_dir = tmp_path / "benchmarks" / suite
        spec = json.dumps({"kind": kind, "path": str(path)})
        assert main(["benchmark", "--suite", suite, "--params", spec, "--out-dir", str(out_dir)]) == 0
        assert len(read_suite(out_dir)) == n
        out = tmp_path / f"{suite}.parquet"
        assert main(["score", "--baseline", "unigram", "--corpus", str(corpus), "--suite", str(out_dir),
                     "--out", str(out)]) == 0
        df = pd.read_parquet(out)
        assert len(df) == n and df.logp_good.notna().all()
        assert (df.correct == (df.logp_good > df.logp_bad)).all()


def test_real_files_score_with_a_neural_model(shared_data, tmp_path):
    from helpers import tiny_models as tiny

    zorro = shared_data / "zorro" / "babyberta" / "binding-principle_a.txt"
    blimp = shared_data / "blimp" / "data" / "principle_A_c_command.jsonl"
    text = zorro.read_text().splitlines()[1:400:2]
    model = tiny.build(tmp_path / "m", text, "causal", vocab_size=400, seed=0)
    for fmt, path, n in (("zorro", zorro, 2000), ("blimp", blimp, 1000)):
        out = tmp_path / f"{fmt}.parquet"
        assert main(["score", "--model", str(model), "--suite", str(path), "--format", fmt,
                     "--batch-size", "256", "--out", str(out)]) == 0
        df = pd.read_parquet(out)
        assert len(df) == n and (df.ntok_good > 0).all() and df.logp_good.lt(0).all()
