"""The metric sensitivity table: each metric's verdicts recomputed from the stored sums and token
counts, checked against verdicts worked out by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from povstim.analysis.tables import sensitivity
from povstim.cli import main

# Per row: paradigm, category, (sum, ntok) of good and bad with BOS, and without BOS.
ROWS = [
    # the first word decides: wrong when scored (BOS), right when it only conditions the rest
    ("wanna", "Wanna", (-10.0, 5), (-9.0, 5), (-6.0, 4), (-7.0, 4)),
    # different token counts: the sum penalises the longer good sentence, the mean does not
    ("binding", "Binding", (-12.0, 6), (-11.0, 5), (-10.0, 5), (-9.5, 4)),
    # a tie with BOS (not correct under either BOS metric), right without
    ("binding", "Binding", (-8.0, 4), (-8.0, 4), (-5.0, 3), (-6.0, 3)),
]
# hand-computed verdicts: sum_bos, mean_bos, sum_nobos, mean_nobos
VERDICTS = [
    (False, False, True, True),      # -10 < -9; -2 < -1.8; -6 > -7; -1.5 > -1.75
    (False, True, False, True),      # -12 < -11; -2 > -2.2; -10 < -9.5; -2 > -2.375
    (False, False, True, True),      # tie; tie; -5 > -6; -1.67 > -2
]


def _items(primary=0):
    rows = []
    for i, (par, cat, gb, bb, gn, bn) in enumerate(ROWS):
        rows.append({"suite": "posh", "arch": "a", "condition": "baby", "size": "1M", "seed": 1, "paradigm": par,
                     "category": cat, "item_id": str(i), "correct": VERDICTS[i][primary],
                     "sum_bos_good": gb[0], "ntok_bos_good": gb[1], "sum_bos_bad": bb[0], "ntok_bos_bad": bb[1],
                     "sum_nobos_good": gn[0], "ntok_nobos_good": gn[1], "sum_nobos_bad": bn[0],
                     "ntok_nobos_bad": bn[1]})
    return pd.DataFrame(rows)


def test_verdicts_of_every_metric_match_the_hand_computed_ones():
    items = _items()
    for j, key in enumerate(sensitivity.METRICS):
        got = sensitivity.verdicts(items, key).astype(bool).tolist()
        assert got == [v[j] for v in VERDICTS], key
    assert sensitivity.primary_metric(items) == "sum_bos"
    assert sensitivity.primary_metric(_items(primary=3)) == "mean_nobos"


def test_table_counts_accuracy_flips_and_length_differences():
    t = sensitivity.sensitivity_table(_items())
    row = t[(t["condition"] == "all") & (t["paradigm"] == "binding")].iloc[0]
    assert row["n"] == 2 and row["acc_sum_bos"] == 0.0 and row["acc_mean_bos"] == 0.5
    assert row["acc_mean_nobos"] == 1.0 and row["flips_mean_nobos"] == 2 and row["flips_sum_bos"] == 0
    assert row["flips_sum_nobos"] == 1 and row["len_differs"] == 0.5
    wanna = t[(t["condition"] == "all") & (t["paradigm"] == "wanna")].iloc[0]
    assert wanna["acc_sum_bos"] == 0.0 and wanna["acc_mean_nobos"] == 1.0 and wanna["len_differs"] == 0.0
    overall = t[(t["condition"] == "all") & (t["level"] == "overall")].iloc[0]
    assert overall["n"] == 3 and overall["flips_mean_nobos"] == 3 and overall["acc_mean_bos"] == pytest.approx(1 / 3)
    view = sensitivity.formatted(t, "posh", "sum_bos")
    assert view.loc[view["Paradigm"] == "binding", "mean, no BOS (POSH)"].iloc[0] == "100.0 (2)"
    assert "sum, BOS [tables]" in view.columns


def test_rows_without_the_columns_are_left_out():
    items = _items()
    items.loc[0, ["ntok_nobos_good", "ntok_nobos_bad"]] = 0  # e.g. a masked LM: no BOS setting
    items.loc[0, ["sum_nobos_good", "sum_nobos_bad"]] = np.nan
    v = sensitivity.verdicts(items, "mean_nobos")
    assert v.isna().tolist() == [True, False, False]
    t = sensitivity.sensitivity_table(items)
    wanna = t[(t["condition"] == "all") & (t["paradigm"] == "wanna")].iloc[0]
    assert wanna["n_mean_nobos"] == 0 and np.isnan(wanna["acc_mean_nobos"]) and wanna["n_sum_bos"] == 1
    view = sensitivity.formatted(t, "posh", None)
    assert view.loc[view["Paradigm"] == "wanna", "mean, no BOS (POSH)"].iloc[0] == "n/a"


def test_analyze_writes_the_table_when_scores_carry_the_columns(tmp_path):
    from helpers.simulate import simulate_scores, write_score_files

    df = simulate_scores(items=10, sizes=("50k",), seeds=(1,), steps=(100,))
    rng = np.random.default_rng(0)
    n = len(df)
    for tag in ("bos", "nobos"):
        for side in ("good", "bad"):
            df[f"ntok_{tag}_{side}"] = rng.integers(4, 9, n) + (tag == "bos")
            df[f"sum_{tag}_{side}"] = -rng.gamma(5.0, 2.0, n)
    df["logp_good"], df["logp_bad"] = df["sum_bos_good"], df["sum_bos_bad"]
    df["correct"] = df["logp_good"] > df["logp_bad"]
    paths = write_score_files(df, tmp_path)
    out = tmp_path / "analysis"
    assert main(["analyze", "--scores", *map(str, paths), "--out-dir", str(out), "--no-model"]) == 0
    t = pd.read_csv(out / "sensitivity.csv")
    assert set(t["level"]) == {"paradigm", "category", "overall"}
    assert (t["flips_sum_bos"] == 0).all()  # the run's own metric never flips
    md = (out / "tables" / "metric_sensitivity_posh.md").read_text()
    assert "sum, BOS [tables]" in md and "Token counts differ" in md
    # without the columns (older score files, baselines) no table, and no error
    paths2 = write_score_files(simulate_scores(items=5, sizes=("50k",), seeds=(1,), steps=(100,)), tmp_path / "b")
    assert main(["analyze", "--scores", *map(str, paths2), "--out-dir", str(tmp_path / "b2"), "--no-model"]) == 0
    assert not (tmp_path / "b2" / "sensitivity.csv").exists()
