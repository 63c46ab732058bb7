"""`povstim export-babylm`: a povstim model's word checkpoints as BabyLM's chck_* revisions, loadable
with transformers' Auto classes, and its minimal-pair predictions in the BabyLM evaluation pipeline's (2025)
predictions.json / best_temperature_report.txt layout.

The predictions are read back the way the pipeline's collation scores them (an item is correct when its ``pred``
is the item's ``sentence_good``), written out here, not imported from povstim."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import torch
from helpers import tiny_models as tiny
from povstim import cli
from povstim.scoring.items import write_parquet
from povstim.scoring.run import ScoringSettings, score_model
from povstim.settings import build
from transformers import AutoModelForCausalLM, AutoTokenizer

torch.set_num_threads(1)

PAIRS = tiny.mini_pairs([("wanna", "When does Tom wanna go?", "Who does Tom wanna go?")])
SENTS = [p["good"] for p in PAIRS] * 3 + ["the boy likes the girl .", "who does mary see ?"] * 3


@pytest.fixture(scope="module")
def povstim_model(tmp_path_factory):
    """A povstim folder with word checkpoints chck_1M (step 10) and chck_2M (step 20), the final model at step 30."""
    root = tmp_path_factory.mktemp("m") / "gpt2-tiny" / "baby" / "10k" / "seed1"
    tiny.build(root, SENTS, "causal", vocab_size=300, seed=3, train_steps=30)
    for name, step in (("1M", 10), ("2M", 20)):
        d = tiny.build(root / "checkpoints" / f"chck_{name}", SENTS, "causal", vocab_size=300, seed=3,
                       train_steps=step)
        (d / "manifest.json").write_text(json.dumps({"step": step}))
        (d / "train_log.jsonl").write_text('{"step": 1}\n')
    (root / "train_summary.json").write_text(json.dumps({
        "best_step": 30, "best_words": 2_600_000, "model": {"arch": "gpt2-tiny", "condition": "baby", "size": "10k",
                                                            "seed": 1},
        "checkpoint_words": {"1M": {"step": 10, "words": 1_000_300}, "2M": {"step": 20, "words": 2_000_100}}}))
    return root


def test_export_layout_loads_and_predictions_read_back(povstim_model, tmp_path):
    suite = tmp_path / "mini.jsonl"
    suite.write_text("".join(json.dumps(p) + "\n" for p in PAIRS))
    settings = build(ScoringSettings, "scoring", {"checkpoints": True, "device": "cpu", "sensitivity": False})
    scores = score_model(PAIRS, str(povstim_model), settings, {"arch": "gpt2-tiny"})
    write_parquet(scores, tmp_path / "mini.parquet")
    out = tmp_path / "export"
    assert cli.main(["export-babylm", str(povstim_model), "--out-dir", str(out), "--predictions",
                     str(tmp_path / "mini.parquet"), str(suite), "--dataset", "mini=blimp_fast"]) == 0

    name = "gpt2-tiny-baby-10k-seed1"
    models = out / "models" / name
    assert sorted(p.name for p in models.iterdir() if p.is_dir()) == ["chck_1M", "chck_2M"]
    for rev, src in (("chck_1M", povstim_model / "checkpoints" / "chck_1M"), ("chck_2M",
                     povstim_model / "checkpoints" / "chck_2M"), ("main", povstim_model)):
        folder = models if rev == "main" else models / rev
        assert not (folder / "manifest.json").exists() and not (folder / "train_log.jsonl").exists()
        lm = AutoModelForCausalLM.from_pretrained(folder)  # what the pipeline calls
        AutoTokenizer.from_pretrained(folder)
        ref = AutoModelForCausalLM.from_pretrained(src)
        for (k, a), (_, b) in zip(lm.state_dict().items(), ref.state_dict().items()):
            assert torch.equal(a, b), (rev, k)

        preds = json.loads((out / "results" / name / rev / "zero_shot" / "causal" / "blimp" / "blimp_fast" /
                            "predictions.json").read_text())
        rows = scores[scores["final"]] if rev == "main" else scores[(~scores["final"]) & (scores["step"] == int(
            {"chck_1M": 10, "chck_2M": 20}[rev]))]
        assert set(preds) == {"binding", "wanna"}
        for uid, block in preds.items():
            items = [p for p in PAIRS if p["paradigm"] == uid]
            assert [x["id"] for x in block["predictions"]] == [f"{uid}_{k}" for k in range(len(items))]
            # the pipeline's reading: correct when pred is sentence_good
            read_back = [x["pred"].strip() == p["good"].strip() for x, p in zip(block["predictions"], items)]
            ours = [bool(rows[rows["item_id"] == p["item_id"]]["correct"].iloc[0]) for p in items]
            assert read_back == ours
            assert all(x["pred"] in (p["good"], p["bad"]) for x, p in zip(block["predictions"], items))
        report = (out / "results" / name / rev / "zero_shot" / "causal" / "blimp" / "blimp_fast" /
                  "best_temperature_report.txt").read_text()
        acc = rows.groupby("paradigm")["correct"].mean() * 100
        assert f"binding: {acc['binding']:.2f}" in report and f"wanna: {acc['wanna']:.2f}" in report
        assert report.splitlines()[0] == "TEMPERATURE: 1.00"
        assert f"### AVERAGE ACCURACY\n{acc.mean():.2f}" in report


def test_export_errors(povstim_model, tmp_path, capsys):
    plain = tmp_path / "plain"
    tiny.build(plain, SENTS, "causal", vocab_size=300, seed=3)
    assert cli.main(["export-babylm", str(plain), "--out-dir", str(tmp_path / "o")]) == 1
    assert "has no word checkpoints (checkpoints/chck_*, training.checkpoint_words)" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
    assert cli.main(["export-babylm", str(plain), "--out-dir", str(tmp_path / "o"), "--no-checkpoints"]) == 0
    assert AutoModelForCausalLM.from_pretrained(tmp_path / "o" / "models" / "plain") is not None
    assert cli.main(["export-babylm", str(tmp_path), "--out-dir", str(tmp_path / "o2")]) == 1
    assert "is not a model folder: it has no config.json" in capsys.readouterr().err
    # a score file without the checkpoints' rows
    suite = tmp_path / "mini.jsonl"
    suite.write_text("".join(json.dumps(p) + "\n" for p in PAIRS))
    settings = build(ScoringSettings, "scoring", {"checkpoints": False, "device": "cpu", "sensitivity": False})
    write_parquet(score_model(PAIRS, str(povstim_model), settings, {"arch": "x"}), tmp_path / "f.parquet")
    assert cli.main(["export-babylm", str(povstim_model), "--out-dir", str(tmp_path / "o3"), "--predictions",
                     str(tmp_path / "f.parquet"), str(suite)]) == 1
    assert "has no rows for revision chck_1M (step 10): score the model with checkpoints" in capsys.readouterr().err
    assert not (tmp_path / "o3").exists()  # nothing written
    assert pd.read_parquet(tmp_path / "f.parquet")["final"].all()


def test_masked_model_exports_under_the_mlm_backend(tmp_path):
    from transformers import AutoModelForMaskedLM

    root = tmp_path / "roberta"
    tiny.build(root, SENTS, "masked", vocab_size=300, seed=4)
    d = tiny.build(root / "checkpoints" / "chck_500k", SENTS, "masked", vocab_size=300, seed=5)
    (d / "manifest.json").write_text(json.dumps({"step": 3}))
    (root / "train_summary.json").write_text(json.dumps({"best_step": 6, "best_words": 900_000, "checkpoint_words": {
        "500k": {"step": 3, "words": 500_200}}}))
    settings = build(ScoringSettings, "scoring", {"checkpoints": True, "device": "cpu", "sensitivity": False})
    suite = tmp_path / "mini.jsonl"
    suite.write_text("".join(json.dumps(p) + "\n" for p in PAIRS[:2]))
    write_parquet(score_model(PAIRS[:2], str(root), settings, {"arch": "r"}), tmp_path / "s.parquet")
    out = tmp_path / "o"
    assert cli.main(["export-babylm", str(root), "--out-dir", str(out), "--name", "bb",
                     "--predictions", str(tmp_path / "s.parquet"), str(suite)]) == 0
    assert AutoModelForMaskedLM.from_pretrained(out / "models" / "bb" / "chck_500k") is not None
    for rev in ("main", "chck_500k"):
        assert (out / "results" / "bb" / rev / "zero_shot" / "mlm" / "blimp" / "mini" / "predictions.json").is_file()
