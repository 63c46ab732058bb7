"""training.schedule wsd (warmup-stable-decay to a plateau): the lr per step against hand-computed values, and a
real tiny run that finds its plateau at the constant peak lr, decays, and stops with stop_reason "plateau"."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
import torch

from povstim.train.optim import decay_window, lr_at
from test_train import TRAINING, corpus, train  # noqa: F401 (corpus: the fixture)

WSD = SimpleNamespace(lr=1.0, warmup=10, max_steps=110, schedule="wsd", decay_fraction=0.1)
LINEAR = SimpleNamespace(lr=1.0, warmup=10, max_steps=110, schedule="linear", decay_fraction=0.1)


def test_wsd_budget_decay_by_hand():
    # no plateau: the decay must end at max_steps 110 and last 10% of the steps before it: 110 / 1.1 = 100
    assert decay_window(WSD) == (100, 110)
    assert lr_at(WSD, 0) == pytest.approx(0.1)  # warmup: (0 + 1) / 10
    assert lr_at(WSD, 9) == pytest.approx(1.0)
    assert [lr_at(WSD, s) for s in (10, 50, 99)] == [1.0, 1.0, 1.0]  # stable: the peak, constant
    assert lr_at(WSD, 100) == pytest.approx(1.0)  # (110 - 100) / 10
    assert lr_at(WSD, 105) == pytest.approx(0.5)
    assert lr_at(WSD, 109) == pytest.approx(0.1)
    assert lr_at(WSD, 110) == 0.0


def test_wsd_plateau_decay_by_hand():
    # plateau found at step 40: decay over ceil(0.1 x 40) = 4 steps, the run ends at 44
    assert decay_window(WSD, 40) == (40, 44)
    assert lr_at(WSD, 39, 40) == 1.0
    assert [lr_at(WSD, s, 40) for s in (40, 41, 42, 43)] == pytest.approx([1.0, 0.75, 0.5, 0.25])
    # a plateau found inside the budget's own decay changes nothing
    assert decay_window(WSD, 104) == (100, 110)
    assert lr_at(WSD, 105, 104) == pytest.approx(0.5)


def test_linear_schedule_unchanged():
    # POSH Table 6: warmup then (max_steps - step) / (max_steps - warmup)
    assert lr_at(LINEAR, 10) == pytest.approx(1.0)
    assert lr_at(LINEAR, 60) == pytest.approx(0.5)
    assert lr_at(LINEAR, 60, 40) == pytest.approx(0.5)  # a decay start means nothing to it


@pytest.mark.slow
def test_wsd_run_finds_its_plateau_at_full_lr_then_decays(corpus, tmp_path):
    # lr 3.0 without clipping: the dev loss stops improving after the first evaluations, so patience (20 steps)
    # finds the plateau long before the budget (200 steps) and the decay phase ends the run
    cfg = {**TRAINING, "lr": 3.0, "warmup": 0, "grad_clip": 0, "patience": 20, "max_steps": 200,
           "schedule": "wsd", "decay_fraction": 0.5, "log_every": 1}
    out = train(corpus, tmp_path / "m", training=cfg)
    summary = json.loads((out / "train_summary.json").read_text())
    assert summary["stop_reason"] == "plateau"
    start = summary["decay_start"]
    assert summary["decay_end"] == summary["steps"] == start + -(-start // 2) < 200  # ceil(0.5 x start)
    log = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    dev = {e["step"]: e["dev_loss"] for e in log if e["dev_loss"] is not None}
    before = {s: v for s, v in dev.items() if s <= start}
    assert start == min(before, key=before.get) + 20  # patience, counted from the best evaluation before it
    lr = {e["step"]: e["lr"] for e in log}  # the lr of the update that ended at this step (0-based step - 1)
    assert all(lr[s] == 3.0 for s in range(1, start + 2))  # constant until the plateau (update `start` included)
    tail = [lr[s] for s in range(start + 2, summary["steps"] + 1)]
    n = summary["steps"] - start  # decay steps: update start + i has lr 3.0 x (n - i) / n
    assert tail == pytest.approx([3.0 * (n - i) / n for i in range(1, n)])
    assert log[-1]["dev_loss"] is not None  # the run's last step is evaluated
    state = torch.load(out / "checkpoints" / f"step{summary['steps']}" / "trainer_state.pt", weights_only=True)
    assert state["decay_start"] == start  # a resumed run continues the same decay


def test_wsd_without_a_plateau_stops_on_its_budget(corpus, tmp_path):
    cfg = {**TRAINING, "max_steps": 40, "patience": 1000, "schedule": "wsd", "decay_fraction": 0.25}
    out = train(corpus, tmp_path / "m", training=cfg)
    summary = json.loads((out / "train_summary.json").read_text())
    assert summary["stop_reason"] == "max_steps" and summary["steps"] == 40 and summary["decay_start"] is None
    log = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    lr = {e["step"]: e["lr"] for e in log}
    assert lr[30] == 3e-3 and lr[40] == pytest.approx(3e-3 / 8)  # decay over steps 32-39: (40 - 39) / 8
