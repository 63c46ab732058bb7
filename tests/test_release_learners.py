"""`povstim release` with the authors' LSTM and n-gram results beside the GPT-2 ones.

A checkout is built in a temporary folder: the GPT-2 fixture as results/posh_gpt_results/, and
results/posh_lstm_results/ and results/posh_ngram_results/ with the authors' file names
(results_LSTM_<small|medium|large>_<baby|wiki>_<size>[f]_<vocab>_<seed>_best.csv and
results_<baby|wiki>_<size>[f]_best.csv, as in xiulinyang/posh-bench at 5c4049b) and the same CSV columns.
The accuracies are SYNTHETIC (multiples of 1/500 drawn here), not published results.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from povstim.analysis.tables import released
from povstim.analysis.tables.released import release_settings
from povstim.cli import main
from povstim.io import PovstimError

FIXTURE = Path(__file__).parent / "fixtures" / "released" / "posh_results"
CONFIG = Path(__file__).resolve().parents[1] / "configs" / "release" / "posh-bench.yaml"
PARADIGMS = ["island-adjunct", "island-complex-np", "island-wh", "principle_a_command", "principle_a_locality",
             "question-formation_or", "question-formation_rr", "question-formation_sr", "wanna"]
LSTM_FILES = [f"results_LSTM_small_{c}_{s}_32768_{seed}_best.csv"
              for c, s in (("baby", "10M"), ("baby", "10Mf"), ("wiki", "10M")) for seed in (42, 53, 76)]
NGRAM_FILES = ["results_baby_10M_best.csv", "results_baby_10Mf_best.csv", "results_wiki_10M_best.csv",
               "results_baby_30M_best.csv"]


def _write(path: Path, rng) -> dict[str, float]:
    acc = {p: int(rng.integers(150, 450)) / 500 for p in PARADIGMS}
    path.write_text(",best\n" + "".join(f"{p},{a}\n" for p, a in acc.items()))
    return acc


@pytest.fixture
def checkout(tmp_path):
    root = tmp_path / "posh-bench"
    shutil.copytree(FIXTURE, root / "results" / "posh_gpt_results")
    rng = np.random.default_rng(0)
    truth = {}
    for folder, names in (("posh_lstm_results", LSTM_FILES), ("posh_ngram_results", NGRAM_FILES)):
        (root / "results" / folder).mkdir()
        for name in names:
            truth[name] = _write(root / "results" / folder / name, rng)
    return root, truth


def _settings():
    return release_settings(yaml.safe_load(CONFIG.read_text())["release"], where=str(CONFIG))


def test_the_lstm_and_ngram_folders_are_read_with_learner_labels(checkout):
    root, truth = checkout
    counts = released.read_released(root, _settings())
    assert set(counts["arch"]) == {"mini", "small", "lstm-small", "ngram"}
    lstm = counts[counts["arch"] == "lstm-small"]
    assert len(lstm) == len(LSTM_FILES) * 9 and set(lstm["seed"]) == {42, 53, 76}
    assert set(lstm["condition"]) == {"baby", "baby-f", "wiki"}
    ngram = counts[counts["arch"] == "ngram"]
    # no seed in an n-gram file's name: the smallest seed of the other files (one model in an existing group)
    assert len(ngram) == len(NGRAM_FILES) * 9 and set(ngram["seed"]) == {42}
    row = ngram[(ngram["condition"] == "baby-f") & (ngram["paradigm"] == "wanna")].iloc[0]
    assert row["n_correct"] == round(truth["results_baby_10Mf_best.csv"]["wanna"] * 500) and row["n_total"] == 500
    assert row["file"] == "posh_ngram_results/results_baby_10Mf_best.csv"
    # the GPT-2 rows are what the folder alone gives
    alone = released.read_released(root / "results" / "posh_gpt_results", release_settings(
        {**yaml.safe_load(CONFIG.read_text())["release"], "learners": {}}))
    gpt = counts[counts["arch"].isin(["mini", "small"])].reset_index(drop=True)
    pd.testing.assert_frame_equal(gpt, alone.reset_index(drop=True), check_categorical=False)


def test_learners_off_or_a_bad_learner_pattern(checkout):
    root, _ = checkout
    rel = yaml.safe_load(CONFIG.read_text())["release"]
    counts = released.read_released(root, release_settings({**rel, "learners": {}}))
    assert set(counts["arch"]) == {"mini", "small"}
    bad = {"posh_lstm_results": {"pattern": "^results_LSTM_(?P<seed>[0-9]+)$"}}
    with pytest.raises(PovstimError, match=r"release\.learners\.posh_lstm_results\.pattern needs the named group"):
        released.read_released(root, release_settings({**rel, "learners": bad}))
    (root / "results" / "posh_lstm_results" / "results_LSTM_oops_best.csv").write_text(",best\n")
    with pytest.raises(PovstimError, match="results_LSTM_oops_best.csv: file name does not match"):
        released.read_released(root, release_settings(rel))


def test_release_tables_have_learner_rows_beside_gpt2(checkout, tmp_path):
    root, truth = checkout
    out = tmp_path / "rel"
    assert main(["release", "--results", str(root), "--config", str(CONFIG), "--out-dir", str(out),
                 "--no-model"]) == 0
    t3 = (out / "analysis" / "tables" / "table3_posh.md").read_text()
    t8 = (out / "analysis" / "tables" / "table8_posh.md").read_text()
    for label in ("lstm-small", "ngram", "mini"):
        assert label in t3 and label in t8, label
    acc = pd.read_csv(out / "analysis" / "accuracy.csv")
    assert {"lstm-small", "ngram", "mini", "small"} <= set(acc["arch"])
    assert (out / "figures" / "fig2_accuracy.png").read_bytes()[:4] == b"\x89PNG"


def test_table12_is_fitted_to_the_gpt2_files_only(checkout, tmp_path, monkeypatch):
    from povstim.analysis import pipeline

    real, seen = pipeline.counts_analysis, {}

    def spy(counts, settings, out, fit_model=True, cores=None, model_counts=None):
        seen["all"], seen["model"] = set(counts["arch"]), set(model_counts["arch"])
        return real(counts, settings, out, fit_model=False, cores=cores)

    monkeypatch.setattr(pipeline, "counts_analysis", spy)
    root, _ = checkout
    assert main(["release", "--results", str(root), "--config", str(CONFIG), "--out-dir", str(tmp_path / "r")]) == 0
    assert seen == {"all": {"mini", "small", "lstm-small", "ngram"}, "model": {"mini", "small"}}
