"""Word learning for models: surprisal curves of a word list across word checkpoints, each word's
acquisition point (recovered from simulated curves with planted points), and the regression on children's ages
(recovered from a planted relation)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from povstim.analysis.timing import word_learning as WL
from test_checkpoint_words import word_run  # noqa: F401 (fixture)
from test_train_checkpoints import corpus  # noqa: F401 (fixture)

WORDS = np.logspace(4, 7, 10)


def simulate(x0, base=14.0, floor=6.0, slope=3.0, noise=0.2, rng=None):
    rng = rng or np.random.default_rng(0)
    x = np.log10(WORDS)
    return base - (base - floor) / (1 + np.exp(-slope * (x - x0))) + rng.normal(0, noise, len(x))


@pytest.mark.parametrize("x0", [4.8, 5.5, 6.2])
def test_planted_word_points_are_recovered(x0):
    rng = np.random.default_rng(int(x0 * 10))
    est = [WL.fit_word(WORDS, simulate(x0, rng=rng), 14.0)["x0"] for _ in range(15)]
    assert abs(np.mean(est) - x0) < 0.1


def test_word_categories():
    flat = WL.fit_word(WORDS, np.full(len(WORDS), 14.0) + np.random.default_rng(1).normal(0, 0.1, len(WORDS)), 14.0)
    assert WL.categorise_word(flat)[0] == "not_acquired"
    late = WL.fit_word(WORDS, simulate(8.5, noise=0.05), 14.0)
    assert WL.categorise_word(late) == ("not_acquired", pytest.approx(1e7))
    early = WL.fit_word(WORDS, simulate(3.0, noise=0.05), 14.0)
    assert WL.categorise_word(early) == ("before_first", pytest.approx(1e4))


ZIGZAG = np.array([14, 8, 13, 7, 14, 8, 13, 7, 14, 8.0])  # surprisals between baseline and floor: no crossing to fit


def test_an_unidentified_crossing_is_not_a_point():
    """Word points with standard errors of ~20 decades were reported as points. A surprisal curve that
    zigzags between baseline and floor has a fitted crossing inside the checkpoints whose SE is far over a decade:
    not identified, no number; so is a crossing the data never pass (all surprisals on one side of halfway)."""
    zigzag = WL.fit_word(WORDS, np.array([14, 8, 13, 7, 14, 8, 13, 7, 14, 8.0]), 14.0)
    assert zigzag["x0_se"] > WL.MAX_SE and math.log10(WORDS[0]) <= zigzag["x0"] <= math.log10(WORDS[-1])
    category, words = WL.categorise_word(zigzag)
    assert category == "not_identified" and math.isnan(words)
    # hand-made fits: the same crossing is a point with a small SE, not identified with a large or infinite one,
    # or when the surprisals never pass the halfway line
    fit = {"baseline": 14.0, "floor": 6.0, "x0": 5.5, "first_words": 1e4, "budget_words": 1e7, "crosses": True}
    assert WL.categorise_word({**fit, "x0_se": 0.3}) == ("acquired", pytest.approx(10 ** 5.5))
    for se in (1.5, 20.0, math.inf, math.nan):
        assert WL.categorise_word({**fit, "x0_se": se})[0] == "not_identified"
    assert WL.categorise_word({**fit, "x0_se": 0.3, "crosses": False})[0] == "not_identified"
    # in the table: no point, a note naming the word; the regression leaves it out
    rows = [{"arch": "gpt2", "condition": "baby", "size": "1M", "seed": 1, "word": w, "step": k,
             "words_seen": int(x), "surprisal": s, "unigram_bits": 14.0, "per_million": 3.0}
            for w, ys in (("dog", simulate(5.5, noise=0.05)), ("hat", [14, 8, 13, 7, 14, 8, 13, 7, 14, 8.0]))
            for k, (x, s) in enumerate(zip(WORDS, ys))]
    points, notes = WL.word_points(pd.DataFrame(rows), 4)
    by = points.set_index("word")
    assert by.loc["dog", "acquisition"] == "acquired" and by.loc["hat", "acquisition"] == "not_identified"
    assert math.isnan(by.loc["hat", "point_words"]) and math.isnan(by.loc["hat", "log10_point"])
    assert any("not identified" in n and "hat" in n for n in notes)


def test_a_model_worse_than_unigram_frequencies_has_not_acquired_the_word():
    fit = WL.fit_word(WORDS, np.linspace(18, 16, len(WORDS)), 14.0)  # above the baseline throughout
    assert WL.categorise_word(fit)[0] == "not_acquired"


def test_regression_recovers_a_planted_relation():
    rng = np.random.default_rng(3)
    words = [f"w{i}" for i in range(30)]
    age = rng.uniform(14, 30, len(words))
    freq = 10 ** rng.uniform(0, 3, len(words))
    rows = []
    for seed in (1, 2):
        point = 3.0 + 0.08 * age - 0.3 * np.log10(freq) + rng.normal(0, 0.05, len(words))
        rows += [{"arch": "gpt2", "condition": "baby", "size": "1M", "seed": seed, "word": w, "acquisition": "acquired",
                  "log10_point": p, "per_million": f} for w, p, f in zip(words, point, freq)]
    kids = pd.DataFrame({"word": words, "age_first_months": age})
    table, notes = WL.regression(pd.DataFrame(rows), kids)
    est = table.set_index("term")["estimate"]
    assert not notes and est["child age_first_months"] == pytest.approx(0.08, abs=0.01)
    assert est["log10 frequency per million"] == pytest.approx(-0.3, abs=0.05)


def test_too_few_words_for_a_regression_is_a_note():
    points = pd.DataFrame([{"arch": "a", "condition": "c", "size": "1M", "seed": 1, "word": "dog",
                            "acquisition": "acquired", "log10_point": 5.0, "per_million": 3.0}])
    table, notes = WL.regression(points, pd.DataFrame({"word": ["dog"], "age_first_months": [14.0]}))
    assert table.empty and "fewer than the 4" in notes[0]


def test_contexts_and_frequencies(tmp_path):
    train = tmp_path / "train.txt"
    train.write_text("The dog runs .\nA dog sleeps .\nThe cat sleeps .\nDog !\n")
    found, stats = WL.contexts(train, ["dog", "cat", "juice"], 2)
    assert found["dog"] == ["The dog runs .", "A dog sleeps ."] and found["juice"] == []
    assert stats["dog"]["count"] == 3 and stats["juice"]["unigram_bits"] == math.inf
    assert stats["cat"]["unigram_bits"] == pytest.approx(-math.log2(1 / 14))


def test_word_curves_of_a_trained_model(word_run, corpus, tmp_path):  # noqa: F811
    """povstim word-curves on a model trained with word checkpoints: a row per target x word, with words seen."""
    from povstim import cli

    out = tmp_path / "curves.csv"
    params = json.dumps({"child_words": ["the", "red", "zebra"], "contexts": 5})
    assert cli.main(["word-curves", "--model", str(word_run), "--train", corpus["train"], "--params", params,
                     "--meta", json.dumps({"arch": "gpt2", "condition": "baby", "size": "2k", "seed": 1}),
                     "--out", str(out)]) == 0
    df = pd.read_csv(out)
    summary = json.loads((word_run / "train_summary.json").read_text())
    assert len(df) == 3 * (len(summary["checkpoint_words"]) + 1)
    assert set(df["words_seen"]) == {v["words"] for v in summary["checkpoint_words"].values()} | {
        summary["best_words"]}
    the = df[df["word"] == "the"]
    assert (the["n_contexts"] == 5).all() and the["surprisal"].notna().all()
    assert df[df["word"] == "zebra"]["surprisal"].isna().all()
    # a trained model finds 'the' less surprising at the end than at the first checkpoint
    the = the.sort_values("words_seen")
    assert the["surprisal"].iloc[-1] < the["surprisal"].iloc[0]


def test_acquisition_stage_with_word_curves(tmp_path):
    """povstim acquisition --word-curves with the children's fixture: word points and the regression."""
    from pathlib import Path

    from povstim import cli
    from test_acquisition import curves_table

    fixture = Path(__file__).parent / "fixtures" / "children"
    ages = {"doggie": 18.0, "go": 18.0, "more": 18.0, "juice": 18.0, "where": 21.5, "i": 21.5, "want": 21.5,
            "please": 21.0}
    rng = np.random.default_rng(5)
    rows = []
    for seed in (1, 2):
        for i, (w, age) in enumerate(ages.items()):
            x0 = 3.0 + 0.1 * age + 0.05 * (i % 3)
            for step, (words, s) in enumerate(zip(WORDS, simulate(x0, rng=rng, noise=0.05)), 1):
                rows.append({"arch": "gpt2", "condition": "baby", "size": "10M", "seed": seed, "step": step,
                             "words_seen": int(words), "word": w, "surprisal": s, "n_contexts": 20, "count": 50 + i,
                             "per_million": 5.0 + 10 * i, "unigram_bits": 14.0})
    wc = tmp_path / "wc.csv"
    pd.DataFrame(rows).to_csv(wc, index=False)
    curves = tmp_path / "curves.csv"
    curves_table({"baby": {"p1": 5.0}}, seeds=(1,)).to_csv(curves, index=False)
    out = tmp_path / "acq"
    # the paradigm fit's fast option: this test is about the word points (the default samples a PyMC model)
    assert cli.main(["acquisition", "--curves", str(curves), "--childes", str(fixture / "chat"), str(fixture / "csv"),
                     "--params", '{"method": "per_seed"}', "--word-curves", str(wc), "--out-dir", str(out)]) == 0
    points = pd.read_csv(out / "word_points.csv")
    assert len(points) == 16 and set(points["acquisition"]) == {"acquired"}
    reg = pd.read_csv(out / "word_regression.csv").set_index("term")
    assert reg.loc["child age_first_months", "estimate"] == pytest.approx(0.1, abs=0.03)
    assert reg.loc["child age_first_months", "n_words"] == 8


def test_the_demo_rule_reads_the_childrens_ages_from_the_config(tmp_path):
    """The acquisition demo showed children's ages only when the stage was rerun by hand with --childes.
    The rule's command, as Snakemake builds it from configs/acquisition-demo.yaml (a dry run; acquisition.childes
    pointed at the hand-written CHAT fixture instead of ../shared/data), passes no --childes: the ages come from
    the config's section in --params, with every model's word curves. Run as built (its paradigm fit switched to
    per_seed, the fast one) on simulated curves, it writes children.csv with the fixture's hand-known age of
    'want' (Eve, 1;09.15) and the word-learning figure."""
    import json
    import os
    import shlex
    import subprocess
    import sys
    from pathlib import Path

    import yaml
    from helpers.project import copy_parts
    from povstim import cli
    from test_acquisition import curves_table

    repo = Path(__file__).resolve().parents[1]
    chat = repo / "tests" / "fixtures" / "children" / "chat"
    work = copy_parts(tmp_path / "wf")
    config = yaml.safe_load((repo / "configs" / "acquisition-demo.yaml").read_text())
    config["acquisition"]["childes"] = [str(chat)]
    (work / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    target = "results/acquisition-demo/analysis/acquisition"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    dry = subprocess.run([sys.executable, "-m", "snakemake", "-n", "-p", "--workflow-profile", "none", "--cores", "2",
                          target], cwd=work, capture_output=True, text=True, env=env)
    assert dry.returncode == 0, dry.stderr[-3000:]
    line = next(ln for ln in dry.stdout.splitlines() if "-m povstim acquisition " in ln)
    argv = shlex.split(line.split("-m povstim ", 1)[1].split(" > ", 1)[0])
    assert "--childes" not in argv
    params = json.loads(argv[argv.index("--params") + 1])
    assert params["childes"] == [str(chat)] and params["word_learning"] is True
    word_curves = argv[argv.index("--word-curves") + 1:argv.index("--out-dir")]
    assert len(word_curves) == 3 * 2  # every condition x seed of the demo

    rng = np.random.default_rng(3)
    rows = [{"arch": "gpt2-tiny", "condition": "baby", "size": "50k", "seed": seed, "step": step,
             "words_seen": int(words), "word": w, "surprisal": s, "n_contexts": 20, "count": 50,
             "per_million": 5.0 + 10 * i, "unigram_bits": 14.0}
            for seed in (1, 2) for i, w in enumerate(["want", "dog", "ball", "cup"])
            for step, (words, s) in enumerate(zip(WORDS, ZIGZAG if w == "cup" else
                                                  simulate(4.8 + 0.3 * i, rng=rng, noise=0.05)), 1)]
    pd.DataFrame(rows).to_csv(tmp_path / "wc.csv", index=False)
    curves_table({"baby": {"p1": 5.0}}, seeds=(1,)).to_csv(tmp_path / "curves.csv", index=False)
    out = tmp_path / "acq"
    argv[argv.index("--curves") + 1] = str(tmp_path / "curves.csv")
    argv[argv.index("--params") + 1] = json.dumps({**params, "method": "per_seed"})
    argv[argv.index("--out-dir") + 1] = str(out)
    argv = argv[:argv.index("--word-curves") + 1] + [str(tmp_path / "wc.csv")] + argv[argv.index("--out-dir"):]
    assert cli.main(argv) == 0
    kids = pd.read_csv(out / "children.csv").set_index("word")
    assert kids.loc["want", "age_first_days"] == pytest.approx(365.25 + 9 * 30.4375 + 15)  # 1;09.15
    assert (out / "word_learning.png").stat().st_size > 0
    # a crossing the data do not pin down is reported as not identified, not as a number: NaN in the csv, the words
    # in the table a reader sees
    points = pd.read_csv(out / "word_points.csv")
    cup = points[points["word"] == "cup"]
    assert len(cup) == 2 and set(cup["acquisition"]) == {"not_identified"} and cup["log10_point"].isna().all()
    assert set(points.loc[points["word"] != "cup", "acquisition"]) == {"acquired"}
    md = [ln for ln in (out / "word_points.md").read_text().splitlines() if "| cup " in ln]
    assert len(md) == 2 and all(ln.count(WL.NOT_IDENTIFIED) == 3 for ln in md)  # point_words, log10_point, x0
