"""`povstim score` by hand on a researcher's own files: the format is guessed or named, rows carry
the model's real metadata, and damaged or missing models are one-line errors naming the path."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from helpers import tiny_models as tiny
from povstim.cli import main

SENTENCES = [f"The {a} saw the {b}." for a in ("dog", "cat", "boy", "girl") for b in ("ball", "cake", "tree")] * 5


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("m")
    return tiny.build(root / "models" / "gpt2-x" / "baby-f" / "50k" / "seed3", SENTENCES, layers=1, hidden=32)


@pytest.fixture()
def blimp(tmp_path) -> Path:
    path = tmp_path / "anaphor_gender_agreement.jsonl"
    rows = [{"sentence_good": "The girl saw herself.", "sentence_bad": "The girl saw himself.",
             "UID": "anaphor_gender_agreement", "pairID": str(i), "linguistics_term": "anaphor_agreement"}
            for i in range(3)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def score(model, suite, out, *extra) -> int:
    return main(["score", "--model", str(model), "--suite", str(suite), "--out", str(out), "--device", "cpu",
                 "--threads", "1", *extra])


def test_blimp_file_is_recognised_without_format(model, blimp, tmp_path, caplog):
    import logging

    caplog.set_level(logging.INFO, logger="povstim")
    out = tmp_path / "s.parquet"
    assert score(model, blimp, out) == 0
    df = pd.read_parquet(out)
    assert set(df["paradigm"]) == {"anaphor_gender_agreement"} and len(df) == 3
    assert "as blimp" in caplog.text


def test_text_suite_asks_for_the_format_by_name(model, tmp_path, capsys):
    suite = tmp_path / "pairs.txt"
    suite.write_text("The girl saw himself.\nThe girl saw herself.\n")
    assert score(model, suite, tmp_path / "s.parquet") == 1
    err = capsys.readouterr().err
    assert "--format zorro" in err and "--format posh" in err and "Traceback" not in err
    assert not (tmp_path / "s.parquet").exists()
    # and with the format named it scores
    assert score(model, suite, tmp_path / "s.parquet", "--format", "zorro") == 0


def test_rows_name_the_model_from_its_path(model, blimp, tmp_path):
    out = tmp_path / "s.parquet"
    assert score(model, blimp, out) == 0
    row = pd.read_parquet(out).iloc[0]
    assert (row["arch"], row["condition"], row["size"], row["seed"]) == ("gpt2-x", "baby-f", "50k", 3)


def test_rows_name_the_model_from_train_summary_and_flags_override(model, blimp, tmp_path):
    moved = tmp_path / "somewhere" / "final"
    shutil.copytree(model, moved)
    (moved / "train_summary.json").write_text(json.dumps(
        {"best_step": 7, "model": {"arch": "gpt2-mini", "condition": "wiki", "size": "10M", "seed": 2}}))
    out = tmp_path / "s.parquet"
    assert score(moved, blimp, out) == 0
    row = pd.read_parquet(out).iloc[0]
    assert (row["arch"], row["condition"], row["size"], row["seed"], row["step"]) == ("gpt2-mini", "wiki", "10M", 2, 7)
    assert score(moved, blimp, out, "--arch", "mine", "--seed", "9") == 0
    row = pd.read_parquet(out).iloc[0]
    assert (row["arch"], row["condition"], row["seed"]) == ("mine", "wiki", 9)


def test_truncated_weights_name_the_file(model, blimp, tmp_path, capsys):
    broken = tmp_path / "broken"
    shutil.copytree(model, broken)
    weights = broken / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    out = tmp_path / "s.parquet"
    assert score(broken, blimp, out) == 1
    err = capsys.readouterr().err
    assert str(weights) in err and "truncated" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert not out.exists() and not list(tmp_path.glob(".s.parquet*"))


def test_missing_model_folder_is_named(blimp, tmp_path, capsys):
    assert score(tmp_path / "models" / "nope" / "seed1", blimp, tmp_path / "s.parquet") == 1
    err = capsys.readouterr().err
    assert "does not exist" in err and "Repo id" not in err
    assert score("not-a-model-here", blimp, tmp_path / "s.parquet") == 1
    assert "local Hugging Face cache" in capsys.readouterr().err


def test_folder_without_config_is_not_a_model(blimp, tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert score(tmp_path / "empty", blimp, tmp_path / "s.parquet") == 1
    assert "no config.json" in capsys.readouterr().err


def test_folder_without_tokenizer_files_names_the_folder(model, blimp, tmp_path, capsys):
    # Once "nothing to score in sentence '...'": AutoTokenizer built an empty tokenizer from config.json alone.
    bare = tmp_path / "bare"
    shutil.copytree(model, bare, ignore=shutil.ignore_patterns("tokenizer*", "vocab*", "merges*", "special_tokens*"))
    assert score(bare, blimp, tmp_path / "s.parquet") == 1
    err = capsys.readouterr().err
    assert f"model folder {bare}: the tokenizer is missing" in err and "nothing to score" not in err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "s.parquet").exists()


def test_missing_tokenizer_json_beside_its_config_names_the_file(model, blimp, tmp_path, capsys):
    # Once a cut-off "Couldn't instantiate the backend tokenizer from one of: ".
    half = tmp_path / "half"
    shutil.copytree(model, half)
    (half / "tokenizer.json").unlink()
    assert (half / "tokenizer_config.json").is_file()
    assert score(half, blimp, tmp_path / "s.parquet") == 1
    err = capsys.readouterr().err
    assert f"model folder {half}: tokenizer.json is missing" in err and "Couldn't instantiate" not in err
    assert len(err.strip().splitlines()) == 1


def test_a_broken_suite_line_is_named_whole_before_any_model_loads(tmp_path, capsys):
    # A raw tab inside a JSON string was "line 4: not valid JSON (Invalid control character at)",
    # after the model had loaded (~50 s). Now: file:line:column, the whole reason, and no model is touched
    # first: each command is given a model that does not exist, so an error about it would come first if the
    # model were opened before the suite is read.
    good = {"sentence_good": "The girl saw herself.", "sentence_bad": "The girl saw himself.",
            "UID": "anaphor_gender_agreement", "pairID": "0", "linguistics_term": "anaphor_agreement"}
    suite = tmp_path / "anaphor_gender_agreement.jsonl"
    suite.write_text(json.dumps(good) + "\n" + '{"sentence_good": "Who\tis here?", "sentence_bad": "x"}\n')
    missing = tmp_path / "no-model-here"
    out = tmp_path / "s.parquet"
    for argv in (["score", "--model", str(missing), "--suite", str(suite), "--out", str(out)],
                 ["score-group", "--suite", str(suite), "--job", str(missing), "{}", str(out)],
                 ["score-model", str(missing), "--suite", str(tmp_path / "nowhere.jsonl"), "--suite", str(suite),
                  "--out-dir", str(tmp_path / "ext")]):
        assert main(argv) == 1, argv
        err = capsys.readouterr().err
        if argv[0] == "score-model":  # every suite is read before the first is scored
            assert "nowhere.jsonl does not exist" in err, err
            argv[3:5] = []
            assert main(argv) == 1
            err = capsys.readouterr().err
        assert f"{suite}:2:" in err and "Invalid control character at column" in err, (argv[0], err)
        assert str(missing) not in err and len(err.strip().splitlines()) == 1
    assert not out.exists()
