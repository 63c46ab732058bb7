"""The linguistic bias score (Matthews correlation) and the control gate, against hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from povstim.probes.lbs import apply_gate, mcc, summarize

# A fixed prediction vector on a disambiguating test set (1 = linguistic label).
LABELS = [1, 1, 1, 1, 0, 0, 0, 0, 1, 0]
PREDS = [1, 1, 0, 1, 0, 1, 0, 0, 1, 1]


def test_mcc_against_the_hand_computed_confusion_matrix():
    # counted by hand from LABELS / PREDS: TP = items 0, 1, 3, 8; FN = item 2; TN = items 4, 6, 7; FP = items 5, 9
    tp, fn, tn, fp = 4, 1, 3, 2
    expected = (tp * tn - fp * fn) / math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    assert expected == pytest.approx(10 / math.sqrt(600))
    assert mcc(LABELS, PREDS) == pytest.approx(expected, abs=1e-12)
    assert mcc(LABELS, PREDS) == pytest.approx(0.408248290463863, abs=1e-12)


def test_mcc_extremes_mean_linguistic_surface_and_neither():
    y = np.array(LABELS)
    assert mcc(y, y) == 1.0  # every prediction follows the linguistic feature
    assert mcc(y, 1 - y) == -1.0  # every prediction follows the surface feature (the opposite label in test)
    assert mcc(y, np.ones_like(y)) == 0.0  # one class only: no correlation (empty marginal)
    with pytest.raises(ValueError):
        mcc([1, 0], [1])


def _rows():
    base = {"arch": "a", "condition": "baby", "size": "1k", "seed": 1, "step": 10, "final": True, "lr": 1e-3,
            "batch_size": 16, "epochs": 1, "inoculation": np.nan, "aux_mcc": np.nan}
    rows = []
    # controls: main_verb passes on restart mean (0.9, 0.6 -> 0.75), title_case fails (0.5, 0.8 -> 0.65),
    # length passes (1.0)
    for feat, kind, scores in (("main_verb", "linguistic", (0.9, 0.6)), ("title_case", "surface", (0.5, 0.8)),
                               ("length", "surface", (1.0, 1.0))):
        for r, m in enumerate(scores):
            rows.append({**base, "task": f"{feat}_control", "kind": "control", "restart": r, "mcc": m,
                         "accuracy": 0.5 + m / 2, "linguistic": feat if kind == "linguistic" else None,
                         "surface": feat if kind == "surface" else None})
    for surf, m in (("title_case", -0.8), ("length", 0.4)):
        rows.append({**base, "task": f"main_verb_{surf}", "kind": "ambiguous", "restart": 0, "mcc": m,
                     "accuracy": 0.5, "linguistic": "main_verb", "surface": surf, "inoculation": 0.0})
    return pd.DataFrame(rows)


def test_gate_scores_only_results_whose_controls_pass():
    df = apply_gate(_rows(), "mcc", 0.7)
    amb = df[df["kind"] == "ambiguous"].set_index("task")
    assert amb.loc["main_verb_length", "status"] == "scored"
    assert amb.loc["main_verb_length", "lbs"] == pytest.approx(0.4)
    assert amb.loc["main_verb_length", "control_linguistic"] == pytest.approx(0.75)
    assert amb.loc["main_verb_title_case", "status"] == "failed_control"  # title case control mean 0.65 < 0.7
    assert np.isnan(amb.loc["main_verb_title_case", "lbs"])
    assert amb.loc["main_verb_title_case", "mcc"] == pytest.approx(-0.8)  # kept, not scored
    ctrl = df[df["kind"] == "control"].groupby("task")["passed"].all()
    assert ctrl.to_dict() == {"length_control": True, "main_verb_control": True, "title_case_control": False}
    # accuracy gate: title case mean accuracy (0.75 + 0.9) / 2 = 0.825 passes 0.8, main verb 0.875 passes
    acc = apply_gate(_rows(), "accuracy", 0.8)
    assert set(acc.loc[acc["kind"] == "ambiguous", "status"]) == {"scored"}


def test_summary_tables():
    df = apply_gate(_rows(), "mcc", 0.7)
    lbs, controls = summarize(df)
    row = lbs.set_index("task").loc["main_verb_length"]
    assert row["runs"] == 1 and row["scored"] == 1 and row["lbs_mean"] == pytest.approx(0.4)
    assert lbs.set_index("task").loc["main_verb_title_case", "scored"] == 0
    c = controls.set_index("feature")
    assert c.loc["main_verb", "mcc_mean"] == pytest.approx(0.75) and c.loc["title_case", "pass_rate"] == 0.0


def test_figures_from_rows_with_checkpoints(tmp_path):
    """Every MSGS-style figure is drawn (learning curves only when checkpoints were probed), identically twice."""
    from povstim.probes.figures import draw_all

    frames = []
    for cond in ("baby", "wiki"):
        for size in ("30k", "90k"):
            for step, final in ((100, False), (200, True)):
                df = _rows()
                df["condition"], df["size"], df["step"], df["final"] = cond, size, step, final
                df.loc[df["kind"] == "ambiguous", "mcc"] += step / 1000
                frames.append(df)
    rows = apply_gate(pd.concat(frames, ignore_index=True), "mcc", 0.7)
    a = draw_all(rows, tmp_path / "a", 0.7)
    b = draw_all(rows, tmp_path / "b", 0.7)
    assert a == b == ["msgs_controls", "msgs_lbs_tasks", "msgs_lbs_inoculation", "msgs_learning_curves"]
    for stem in a:
        assert (tmp_path / "a" / f"{stem}.png").read_bytes() == (tmp_path / "b" / f"{stem}.png").read_bytes()
    assert "msgs_learning_curves" not in draw_all(rows[rows["final"]], tmp_path / "c", 0.7)
