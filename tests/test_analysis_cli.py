"""`povstim analyze` end to end on simulated item scores: outputs, by-hand mode, recovery.

These fit real Bambi models (tens of seconds each on 2 cores), so they are marked slow.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from povstim.analysis.tables import tidy
from helpers.simulate import CONDITIONS, TRUE_COEFS, simulate_scores
from povstim.cli import main
from test_analysis_helpers import PARAMS, simulated_results

pytestmark = pytest.mark.slow

SUMMARY_COLUMNS = ["term", "median", "lower", "upper", "r_hat", "ess_bulk", "ess_tail"]


def test_full_analysis_writes_every_output():
    a = simulated_results() / "analysis"
    acc = pd.read_csv(a / "accuracy.csv", dtype={"size": str})
    assert set(acc["level"]) == {"paradigm", "category", "overall"}
    assert set(acc["condition"]) == set(CONDITIONS) and set(acc["size"]) == {"50k", "150k"}
    chi = pd.read_csv(a / "chisq.csv")
    assert (chi["correction"] == "holm").all() and (chi["p_adj"].dropna() >= chi["p"].dropna()).all()
    curves = pd.read_csv(a / "accuracy_by_step.csv")
    assert sorted(curves["step"].unique()) == [60, 120, 240]
    assert curves[curves["final"]]["step"].eq(240).all()
    for kind in ("table3_posh", "table8_posh"):
        for ext in ("csv", "md", "tex", "html"):
            assert (a / "tables" / f"{kind}.{ext}").stat().st_size > 100
    assert "Holm-corrected" in (a / "tables" / "table3_posh.md").read_text()
    t8 = pd.read_csv(a / "tables" / "table8_posh.csv")
    assert t8["Category"].iloc[-1] == "Average" and len(t8) == 10

    b = a / "bayes"
    summary = pd.read_csv(b / "summary.csv")
    assert list(summary.columns[:7]) == SUMMARY_COLUMNS
    assert summary["term"].tolist()[:3] == ["Intercept", "size", "category[Binding]"]
    assert "sd(1|seed)" in set(summary["term"]) and "sd(1|phenomenon)" in set(summary["term"])
    assert (summary["lower"] <= summary["median"]).all() and (summary["median"] <= summary["upper"]).all()
    diag = json.loads((b / "diagnostics.json").read_text())
    for key in ("divergences", "max_r_hat", "min_ess_bulk", "min_ess_tail", "converged", "problems"):
        assert key in diag
    assert diag["n_observations"] == 3 * 2 * 2 * 9 * 60 and diag["n_rows"] == 3 * 2 * 2 * 9
    assert diag["converged"] == (not diag["problems"])
    import arviz as az

    idata = az.from_netcdf(b / "posterior.nc")
    # a fit that failed its diagnostics is refitted once with twice the draws (analysis.refit), and says so
    assert idata.posterior.sizes["draw"] == PARAMS["draws"] * (2 if diag["refitted"] else 1)
    assert idata.posterior.sizes["chain"] == 2 and len(diag["attempts"]) == 1 + diag["refitted"]
    html = (b / "table12.html").read_text()
    assert "Training size (z)" in html and "Filtering (yes vs. no)" in html
    assert ("CONVERGENCE PROBLEM" in html) == (not diag["converged"])


def _fit(args, tmp_path, name):
    out = tmp_path / name
    rc = main(["analyze", *args, "--out", str(out), "--draws", "300", "--tune", "300", "--chains", "2",
               "--seed", "3", "--cores", "2"])
    assert rc == 0
    return pd.read_csv(out / "summary.csv").set_index("term"), json.loads((out / "diagnostics.json").read_text())


@pytest.mark.heavy  # two Bambi fits; the counts path is fitted by test_parameter_recovery
def test_counts_reproduce_the_bernoulli_fit(tmp_path):
    """By hand: --counts (binomial) and --items (Bernoulli) give the same fixed effects."""
    df = simulate_scores(items=40, sizes=("50k", "150k"), seeds=(1,), steps=(100,), rng_seed=5)
    df = tidy.attach_conditions(df, CONDITIONS)
    items_path = tmp_path / "items.parquet"
    df.to_parquet(items_path)
    counts = (df.groupby(["condition", "source", "filtered", "size", "category", "paradigm"])["correct"]
              .agg(n_correct="sum", n_total="size").reset_index())
    counts_path = tmp_path / "counts.csv"
    counts.to_csv(counts_path, index=False)
    rhs = "size * filtered + source + category + (1|phenomenon)"
    s_items, d_items = _fit(["--items", str(items_path), "--formula", rhs], tmp_path, "items")
    s_counts, d_counts = _fit(["--counts", str(counts_path), "--formula", rhs], tmp_path, "counts")
    assert d_items["family"] == "bernoulli" and d_counts["family"] == "binomial"
    assert d_items["n_rows"] == len(df) and d_counts["n_rows"] == len(counts)
    assert d_items["n_observations"] == d_counts["n_observations"]
    fixed = [t for t in s_items.index if not t.startswith("sd(")]
    assert fixed == [t for t in s_counts.index if not t.startswith("sd(")]
    for term in fixed:
        # Monte-Carlo error of a median ~ posterior SD / sqrt(ESS); allow 4 combined MCSEs.
        sd = (s_items.loc[term, "upper"] - s_items.loc[term, "lower"]) / 3.92
        mcse = sd * np.sqrt(1 / s_items.loc[term, "ess_bulk"] + 1 / s_counts.loc[term, "ess_bulk"])
        assert abs(s_items.loc[term, "median"] - s_counts.loc[term, "median"]) < 4 * mcse + 1e-3, term


def test_parameter_recovery(tmp_path):
    """Simulate from known Table 12 coefficients, fit, and check the 95% intervals cover them."""
    df = simulate_scores(items=300, sizes=("50k", "150k", "450k"), seeds=(1, 2, 3), steps=(100,),
                         phenomenon_sd=0.2, seed_sd=0.05, rng_seed=11)
    df = tidy.attach_conditions(df, CONDITIONS)
    counts = (df.groupby(["condition", "source", "filtered", "size", "seed", "category", "paradigm"])["correct"]
              .agg(n_correct="sum", n_total="size").reset_index())
    path = tmp_path / "counts.csv"
    counts.to_csv(path, index=False)
    summary, diag = _fit(["--counts", str(path), "--formula", PARAMS["formula"]], tmp_path, "fit")
    assert diag["n_observations"] == len(df) == 3 * 3 * 3 * 9 * 300
    missed = []
    for term, truth in TRUE_COEFS.items():
        lo, hi = summary.loc[term, "lower"], summary.loc[term, "upper"]
        if not lo <= truth <= hi:
            missed.append(f"{term}: {truth} not in [{lo}, {hi}]")
    assert not missed, missed
    # The well-identified population effects are also estimated tightly.
    for term in ("size", "filtered[True]", "source[baby]"):
        assert abs(summary.loc[term, "median"] - TRUE_COEFS[term]) < 0.05, term


def test_priors_file_and_bad_inputs(tmp_path):
    counts = tmp_path / "c.csv"
    counts.write_text("size,paradigm,n_correct,n_total\n50k,a,30,50\n150k,a,40,50\n50k,b,20,50\n150k,b,35,50\n")
    bad = tmp_path / "p.yaml"
    bad.write_text("comon: {dist: Normal, mu: 0, sigma: 1}\n")
    r = subprocess.run([sys.executable, "-m", "povstim", "analyze", "--counts", str(counts), "--formula", "size",
                        "--priors", str(bad), "--out", str(tmp_path / "o")], capture_output=True, text=True)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert f"{bad}: unknown config key 'analysis.priors.comon' (did you mean 'common'?)" in r.stderr
    r = subprocess.run([sys.executable, "-m", "povstim", "analyze", "--counts", str(counts), "--formula",
                        "size + filtered", "--out", str(tmp_path / "o")], capture_output=True, text=True)
    assert r.returncode == 1 and "filtered" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "o" / "summary.csv").exists()
