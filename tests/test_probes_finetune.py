"""Fine-tuning real tiny models (causal and masked) as sentence classifiers, and the probe CLI end to end."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import torch

from helpers.probes import tiny_model
from povstim.cli import main
from povstim.probes.finetune import HyperParams, finetune, load, predict
from povstim.probes.lbs import accuracy, mcc
from povstim.probes.msgs.features import parse_task
from povstim.probes.msgs.generate import Counts, generate_task
from povstim.probes.run import COLUMNS

HP = HyperParams(lr=1e-3, batch_size=16, epochs=2, warmup_ratio=0.06, weight_decay=0.1, adam_beta1=0.9,
                 adam_beta2=0.98, adam_eps=1e-6, grad_clip=0.0)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp("models")
    return {"causal": tiny_model(root / "gpt2", "causal"), "masked": tiny_model(root / "roberta", "masked", 20)}


@pytest.fixture(scope="module")
def control_data():
    task = parse_task("absolute_token_position_control")
    return generate_task(task, Counts(train=2, test=2, control_train=480, control_test=200), [0.0], seed=5)


def _xy(clf, recs):
    return clf.encode([r["sentence"] for r in recs]), np.array([r["label"] for r in recs])


def test_a_control_task_is_learnable(models, control_data):
    """A tiny GPT-2 fine-tuned on the absolute-position control task generalises out of domain."""
    clf = load(models["causal"])
    x, y = _xy(clf, control_data["train"])
    tx, ty = _xy(clf, control_data["test"])
    model, stats = finetune(clf, x, y, HP, seed=3)
    pred = predict(model, tx, clf.pad_id, clf.device)
    assert accuracy(ty, pred) >= 0.95 and mcc(ty, pred) >= 0.9
    assert stats.steps == 2 * 30 and stats.examples == 960
    # the pretrained base model is untouched by the run (every run starts from it)
    untouched = predict(clf.model, tx, clf.pad_id, clf.device)
    assert accuracy(ty, untouched) < 0.9


def test_runs_are_reproducible_and_seeded(models, control_data):
    clf = load(models["causal"])
    x, y = _xy(clf, control_data["train"][:64])
    hp = HyperParams(**{**HP.__dict__, "epochs": 1})
    a, sa = finetune(clf, x, y, hp, seed=11)
    b, sb = finetune(clf, x, y, hp, seed=11)
    c, sc = finetune(clf, x, y, hp, seed=12)
    assert sa.final_loss == sb.final_loss
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
    assert sa.final_loss != sc.final_loss


def test_input_framing_and_new_head(models):
    causal, masked = load(models["causal"]), load(models["masked"])
    assert causal.kind == "causal" and masked.kind == "masked"
    assert causal.head == ("score",) and masked.head == ("classifier.dense", "classifier.out_proj")
    tok = causal.tokenizer
    ids = causal.encode(["The cat slept."])[0]
    # <|endoftext|> is BOS, EOS and padding of this GPT-2 tokenizer: prepended as BOS, never appended
    assert ids[0] == tok.bos_token_id and ids[-1] != tok.eos_token_id
    assert ids[1:] == tok("The cat slept.", add_special_tokens=False)["input_ids"]
    mids = masked.encode(["The cat slept."])[0]
    assert mids[0] == masked.tokenizer.bos_token_id and mids[-1] == masked.tokenizer.eos_token_id
    # GPT-2 pools the last non-padding token: padding a batch does not change a sentence's prediction
    model = causal.model.eval()
    batch = causal.encode(["The cat slept.", "A very small dog was chasing the big cat in the park."])
    alone = model(input_ids=torch.tensor(batch[:1])).logits
    from povstim.probes.finetune import _pad

    ids_, mask = _pad(batch, causal.pad_id, "cpu")
    padded = model(input_ids=ids_, attention_mask=mask).logits[:1]
    assert torch.allclose(alone, padded, atol=1e-5)


def test_masked_model_fine_tunes(models, control_data):
    clf = load(models["masked"])
    x, y = _xy(clf, control_data["train"][:96])
    model, stats = finetune(clf, x, y, HyperParams(**{**HP.__dict__, "epochs": 1}), seed=1)
    assert np.isfinite(stats.final_loss) and stats.steps == 6
    assert set(predict(model, x, clf.pad_id, clf.device)) <= {0, 1}


def test_probe_cli_end_to_end(models, tmp_path):
    """generate -> run -> summarize: tidy rows, the gate, byte-identical reruns, figures and tables."""
    params = json.dumps({
        "tasks": ["syntactic_category_title_case"], "inoculation": [0.0, 0.01],
        "items": {"train": 100, "test": 40, "control_train": 60, "control_test": 40},
        "grid": {"lr": [1e-3], "epochs": [1]}, "seed": 2,
    })
    data = tmp_path / "data"
    assert main(["probe", "generate", "--params", params, "--out-dir", str(data)]) == 0
    meta = json.dumps({"arch": "gpt2-nano", "condition": "baby", "size": "2k", "seed": 1})
    outs = []
    for k in ("a", "b"):
        out = tmp_path / k / "lbs.parquet"
        assert main(["probe", "run", "--model", str(models["causal"]), "--data", str(data), "--params", params,
                     "--meta", meta, "--threads", "1", "--timing", str(tmp_path / k / "timing.json"),
                     "--out", str(out)]) == 0
        outs.append(out)
    assert outs[0].read_bytes() == outs[1].read_bytes()
    df = pd.read_parquet(outs[0])
    assert list(df.columns) == COLUMNS
    assert len(df) == 2 + 2  # two gating controls + one ambiguous task at two inoculation rates
    amb = df[df["kind"] == "ambiguous"].sort_values("inoculation")
    assert amb["n_train"].tolist() == [100, 100] and amb["n_inoculating"].tolist() == [0, 1]
    assert set(df["status"]) <= {"control", "scored", "failed_control"}
    assert (amb["status"] == "scored").tolist() == amb["lbs"].notna().tolist()
    assert json.loads((tmp_path / "a" / "timing.json").read_text())["train_examples"] == 2 * 100 + 2 * 60
    assert main(["probe", "summarize", "--lbs", str(outs[0]), "--params", params, "--out-dir",
                 str(tmp_path / "sum"), "--figures", str(tmp_path / "sum" / "figures")]) == 0
    figs = sorted(p.name for p in (tmp_path / "sum" / "figures").glob("*.png"))
    assert figs == ["msgs_controls.png", "msgs_lbs_inoculation.png", "msgs_lbs_tasks.png"]
    table = pd.read_csv(tmp_path / "sum" / "lbs_summary.csv")
    assert sorted(table["inoculation"]) == [0.0, 0.01]
    # a data folder generated with other settings is refused, naming the mismatch
    other = json.dumps({**json.loads(params), "seed": 3})
    assert main(["probe", "run", "--model", str(models["causal"]), "--data", str(data), "--params", other,
                 "--out", str(tmp_path / "x.parquet")]) == 1


def test_the_checkpoint_at_the_final_step_gets_the_final_rows_not_a_second_grid(models, tmp_path, monkeypatch):
    """A checkpoint saved at the final model's step holds the same files: its rows are the final model's
    (step and final aside), the same bytes as fine-tuning it again; an earlier checkpoint is fine-tuned."""
    import shutil

    from povstim.probes import run as probe_run

    model = tmp_path / "model"
    shutil.copytree(models["causal"], model)
    (model / "train_summary.json").write_text(json.dumps({"best_step": 20}))
    shutil.copytree(models["causal"], model / "checkpoints" / "step20")
    (model / "checkpoints" / "step20" / "trainer_state.pt").write_bytes(b"optimizer and RNG state")
    shutil.copytree(models["masked"], model / "checkpoints" / "step10")  # other weights
    params = json.dumps({"tasks": ["syntactic_category_title_case"], "inoculation": [0.0], "checkpoints": True,
                         "items": {"train": 60, "test": 30, "control_train": 40, "control_test": 30},
                         "grid": {"lr": [1e-3], "epochs": [1]}, "seed": 2})
    data = tmp_path / "data"
    assert main(["probe", "generate", "--params", params, "--out-dir", str(data)]) == 0
    meta = json.dumps({"arch": "gpt2-nano", "condition": "baby", "size": "2k", "seed": 1})

    def probe(name):
        out = tmp_path / name / "lbs.parquet"
        assert main(["probe", "run", "--model", str(model), "--data", str(data), "--params", params, "--meta", meta,
                     "--threads", "1", "--timing", str(tmp_path / name / "timing.json"), "--out", str(out)]) == 0
        return out, json.loads((tmp_path / name / "timing.json").read_text())

    reused, timing = probe("reused")
    assert timing["runs"] == 2 * 3 and timing["reused_rows"] == 3  # final + step 10 fine-tuned; step 20 reused
    monkeypatch.setattr(probe_run, "holds_final_model", lambda *a: False)
    again, timing_again = probe("again")
    assert timing_again["runs"] == 3 * 3 and timing_again["reused_rows"] == 0
    assert reused.read_bytes() == again.read_bytes()
    df = pd.read_parquet(reused)
    assert df.groupby(["step", "final"]).size().to_dict() == {(10, False): 3, (20, False): 3, (20, True): 3}
    fin = df[df.final].drop(columns=["final"]).reset_index(drop=True)
    ck = df[(df.step == 20) & ~df.final].drop(columns=["final"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(fin, ck)
