"""The trained model as the unit of replication: the three-level model's run-level effect (1|run), run = arch x
condition x size x seed (analysis.run_effect; docs/analysis.md, "The trained model as the unit of replication")."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from povstim import config as cfg
from povstim.analysis import pipeline
from povstim.analysis.models import bayes
from povstim.io import PovstimError

PHENOMENA = {f"{c.lower()}_{k}": c for c in ("Binding", "Island", "Question Formation", "Wanna") for k in (1, 2)}
# each trained model's own deviation (log-odds), not shared by the conditions' same seeds: seed 1 is good in
# BABY-F and bad in BABY. Planted condition effect 0; the runs' means differ by 0.4 by chance.
RUN_DEVIATION = {"baby-f": [0.9, -0.3, 0.3], "baby": [-0.6, 0.6, -0.3]}
LEVEL = {"baby-f": "BABY-F", "baby": "BABY"}


def _counts(seeds=(1, 2, 3), n=2000) -> pd.DataFrame:
    """Expected counts (no binomial noise): every run x phenomenon cell at logistic(0.4 + run deviation)."""
    rows = []
    for cond, devs in RUN_DEVIATION.items():
        for seed, dev in zip(seeds, devs):
            for phen, cat in PHENOMENA.items():
                rows.append({"arch": "gpt2-tiny", "condition": cond, "size": "10k", "seed": seed, "phenomenon": phen,
                             "category": cat, "source_filter": LEVEL[cond], "n_total": n,
                             "n_correct": int(round(n * expit(0.4 + dev)))})
    return pd.DataFrame(rows)


def _settings(**kw):
    return pipeline.analysis_settings({"models": ["three_level"], "three_level_formula":
                                       "category * source_filter + (1|seed) + (1|phenomenon)", **kw})


def test_derive_names_one_run_per_trained_model():
    df = bayes.derive(_counts())
    assert df["run"].nunique() == 6  # 2 conditions x 1 size x 3 seeds
    assert df.groupby("run")["seed"].nunique().eq(1).all() and df.groupby("run")["condition"].nunique().eq(1).all()
    assert df.loc[0, "run"] == "gpt2-tiny|baby-f|BABY-F|10k|1"


def test_run_effect_is_added_with_enough_seeds_and_refused_without():
    df = _counts()
    s = _settings()
    assert pipeline.model_spec("three_level", s, df)["formula"].endswith(" + (1|run)")
    # Table 12 as published keeps its formula; `never` keeps POSH's released one; a formula by hand is as written
    assert "(1|run)" not in pipeline.model_spec("table12", s, df)["formula"]
    assert "(1|run)" not in pipeline.model_spec("three_level", _settings(run_effect="never"), df)["formula"]
    assert "(1|run)" not in pipeline.model_spec("three_level", s, df, frozenset({"three_level"}))["formula"]
    two = df[df["seed"] < 3]
    assert "(1|run)" not in pipeline.model_spec("three_level", s, two)["formula"]  # auto: left out, noted
    with pytest.raises(PovstimError, match=r"^analysis.run_effect: always needs at least 3 seeds .*gpt2-tiny x "
                                           r"baby x 10k has 2"):
        pipeline.model_spec("three_level", _settings(run_effect="always"), two)


def test_config_with_too_few_seeds_for_the_run_effect_is_one_line_naming_the_key(tmp_path):
    text = open("config.yaml").read().replace("models: [three_level, table12]",
                                              "models: [three_level, table12]\n  run_effect: always")
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(PovstimError) as err:
        cfg.load(path)
    assert "analysis.run_effect: always needs at least 3 seeds" in str(err.value) and "seeds has 2" in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.heavy  # two Bambi fits, ~70 CPU-s; test_run_effect_is_added_with_enough_seeds_and_refused_without covers the spec
def test_a_contrast_is_judged_against_how_much_runs_differ():
    """Runs that differ by chance (planted effect 0): with items as the only replication the 0.4 gap between the
    runs' means is credible; with (1|run) its interval holds 0."""
    df = _counts()
    fast = dict(draws=300, tune=400, chains=2, sampler="pymc", target_accept=0.95)
    out = {}
    for effect in ("never", "auto"):
        s = _settings(run_effect=effect, **fast)
        design = pipeline.model_design(df, s, "binomial", **pipeline.model_spec("three_level", s, df))
        res = bayes.fit(design, s, cores=1)
        con = bayes.pairwise_contrasts(res.idata.posterior, design, by="category")
        out[effect] = con[con["scope"] == "overall"].iloc[0]
    gap = np.mean(RUN_DEVIATION["baby-f"]) - np.mean(RUN_DEVIATION["baby"])
    assert out["never"]["lower"] > 0 and out["never"]["median"] == pytest.approx(gap, abs=0.1)
    assert out["auto"]["lower"] < 0 < out["auto"]["upper"]
    # items as replication: the binomial SE of the overall difference, by hand (8 phenomena x 3 runs a condition,
    # 2000 items a cell, p ~ logistic(0.4 + deviation)); the run-level interval is many times that wide
    v = sum(1 / (2000 * p * (1 - p)) for devs in RUN_DEVIATION.values() for p in expit(0.4 + np.array(devs))) / 9 / 8
    assert out["auto"]["upper"] - out["auto"]["lower"] > 10 * 2 * 1.96 * np.sqrt(v)
