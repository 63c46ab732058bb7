"""`povstim release`: published per-model accuracy files -> the same tables, model and figures.

The fixture folder (tests/fixtures/released/posh_results, SYNTHETIC accuracies) has POSH-BENCH's
released layout: results_gpt2_<arch>_<baby|wiki>_<size>[f]_<vocab>_<seed>_best.csv with an
unnamed paradigm column and a ``best`` column, paradigms spelled with hyphens, an extra paradigm
(island-subject) and the off-the-shelf GPT-2's results_gpt2_best.csv.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from povstim.analysis.tables import released
from povstim.analysis.tables.released import release_settings
from povstim.benchmarks.suite import POSH_CATEGORIES
from povstim.cli import main
from povstim.io import PovstimError

FIXTURE = Path(__file__).parent / "fixtures" / "released" / "posh_results"
CONFIG = Path(__file__).resolve().parents[1] / "configs" / "release" / "posh-bench.yaml"
IGNORE = {"ignore": ["results_gpt2_best.csv"]}


def _raw_files() -> pd.DataFrame:
    """The fixture read independently of the code under test: file name split by hand."""
    rows = []
    for path in sorted(FIXTURE.glob("results_gpt2_*_*_*_*_*_best.csv")):
        _, _, arch, corpus, size, vocab, seed, _ = path.stem.split("_") + [""] * (8 - len(path.stem.split("_")))
        filtered = size.endswith("f")
        cond = corpus + ("-f" if filtered else "")
        for line in path.read_text().splitlines()[1:]:
            par, acc = line.split(",")
            par = par.replace("-", "_")
            if par in POSH_CATEGORIES:
                rows.append({"arch": arch, "condition": cond, "size": size.rstrip("f"), "seed": int(seed),
                             "paradigm": par, "category": POSH_CATEGORIES[par], "acc": float(acc)})
    return pd.DataFrame(rows)


def test_reads_posh_released_layout():
    counts = released.read_released(FIXTURE, release_settings(IGNORE))
    raw = _raw_files()
    assert len(counts) == len(raw) == 18 * 9
    assert set(counts["condition"]) == {"baby-f", "baby", "wiki"} and set(counts["arch"]) == {"mini", "small"}
    assert set(counts["size"]) == {"10M", "30M"} and set(counts["seed"]) == {42, 53, 76}
    assert set(counts["paradigm"]) == set(POSH_CATEGORIES)  # island_subject left out
    m = counts.merge(raw, on=["arch", "condition", "size", "seed", "paradigm", "category"])
    assert len(m) == len(raw)
    assert (m["n_total"] == 500).all() and (m["n_correct"] == (m["acc"] * 500).round().astype(int)).all()
    f = counts.drop_duplicates("condition").set_index("condition")
    assert bool(f.loc["baby-f", "filtered"]) and not f.loc["baby", "filtered"] and f.loc["wiki", "source"] == "wiki"


def test_the_posh_bench_config_reads_only_the_condition_files(tmp_path):
    """The authors' posh_results/ also holds per-item distributions and Exp. 3 results."""
    import yaml

    d = _copy(tmp_path)
    (d / "distributions_gpt2_mini_baby_10M_32768_42_best.csv").write_text("phenomenon,distribution\nwanna,x\n")
    (d / "results_TPT_10Mf_96_best.csv").write_text(",best\nwanna,0.5\n")
    rel = yaml.safe_load(CONFIG.read_text())["release"]
    counts = released.read_released(d, release_settings(rel, where=str(CONFIG)))
    assert len(counts) == 18 * 9 and counts["file"].str.startswith("results_gpt2_").all()


@pytest.mark.parametrize("layout", ["results/posh_gpt_results", "posh_results"])
def test_a_checkout_of_the_authors_repository_is_read_in_either_layout(tmp_path, layout):
    """Their results moved from posh_results/ to results/posh_gpt_results/ (xiulinyang/posh-bench 5c4049b),
    beside results/posh_lstm_results/, category_results_*.csv and the Exp. 3 files."""
    import yaml

    checkout = tmp_path / "posh-bench"
    shutil.copytree(FIXTURE, checkout / layout)
    (checkout / layout / "results_TPT_10Mf_128_best.csv").write_text(",best\nwanna,0.5\n")
    (checkout / "results").mkdir(exist_ok=True)
    (checkout / "results" / "category_results_gpt.csv").write_text("category,acc\nwanna,0.5\n")
    (checkout / "results" / "posh_lstm_results").mkdir()
    rel = yaml.safe_load(CONFIG.read_text())["release"]
    settings = release_settings(rel, where=str(CONFIG))
    assert released.results_folder(checkout, settings) == checkout / layout
    from_checkout = released.read_released(checkout, settings)
    from_folder = released.read_released(checkout / layout, settings)
    assert len(from_checkout) == 18 * 9
    pd.testing.assert_frame_equal(from_checkout, from_folder)


def _copy(tmp_path) -> Path:
    d = tmp_path / "posh_results"
    shutil.copytree(FIXTURE, d)
    return d


def test_bad_release_folders_are_errors_naming_the_file(tmp_path):
    d = _copy(tmp_path)
    s = release_settings(IGNORE)
    # the off-the-shelf GPT-2 file does not match the pattern unless ignored
    with pytest.raises(PovstimError, match=r"results_gpt2_best\.csv: file name does not match release\.pattern"):
        released.read_released(d, release_settings({}))
    (d / "notes.csv").write_text("a,b\n1,2\n")
    with pytest.raises(PovstimError, match=r"notes\.csv: file name does not match"):
        released.read_released(d, s)
    (d / "notes.csv").unlink()

    target = d / "results_gpt2_small_wiki_30M_32768_53_best.csv"
    good = target.read_text()
    target.write_text("\n".join(x for x in good.splitlines() if not x.startswith("wanna")) + "\n")
    with pytest.raises(PovstimError, match=r"results_gpt2_small_wiki_30M_32768_53_best\.csv: paradigm\(s\) wanna missing"):
        released.read_released(d, s)
    target.write_text(",best\n" + "".join(f"{p},0.5\n" for p in POSH_CATEGORIES if p != "wanna") + "wanna,1.2\n")
    with pytest.raises(PovstimError, match=r"30M_32768_53_best\.csv: paradigm wanna: accuracy 1\.2 is outside \[0, 1\]"):
        released.read_released(d, s)
    target.write_text(",best\n" + "".join(f"{p},0.5\n" for p in POSH_CATEGORIES if p != "wanna") + "wanna,0.5011\n")
    with pytest.raises(PovstimError, match=r"53_best\.csv: paradigm wanna: accuracy 0\.5011 is not a whole number of 500"):
        released.read_released(d, s)
    target.write_text(good)
    with pytest.raises(PovstimError, match=r"release\.pattern needs the named group\(s\) seed"):
        released.read_released(d, release_settings({**IGNORE, "pattern": r"^results_(?P<size>\d+M)(?P<source>x).*$"}))
    with pytest.raises(PovstimError, match=r"no column 'acc' \(release\.accuracy_column\)"):
        released.read_released(d, release_settings({**IGNORE, "accuracy_column": "acc"}))
    with pytest.raises(PovstimError, match="no such folder"):
        released.read_released(tmp_path / "nope", s)


def test_cli_errors_are_one_line(tmp_path, capsys):
    d = _copy(tmp_path)
    (d / "results_gpt2_mini_baby_10M_32768_42_best.csv").write_text(",best\nwanna,-0.1\n")
    rc = main(["release", "--results", str(d), "--config", str(CONFIG), "--out-dir", str(tmp_path / "o"),
               "--no-model"])
    err = capsys.readouterr().err
    assert rc == 1 and "results_gpt2_mini_baby_10M_32768_42_best.csv: paradigm(s)" in err and "Traceback" not in err
    assert not (tmp_path / "o" / "analysis" / "accuracy.csv").exists()


def test_release_tables_and_figures_follow_the_files(tmp_path):
    out = tmp_path / "rel"
    assert main(["release", "--results", str(FIXTURE), "--config", str(CONFIG), "--out-dir", str(out),
                 "--no-model"]) == 0
    a = out / "analysis"
    t3 = pd.read_csv(a / "tables" / "table3_posh.csv", dtype=str)
    raw = _raw_files()
    # Table 3 cell = mean over seeds of the category's mean accuracy (POSH), SD over seeds
    sub = raw[(raw["condition"] == "wiki") & (raw["size"] == "10M") & (raw["category"] == "Wanna")]
    cell = t3[(t3["Size"] == "10M") & (t3["Cond."] == "WIKI")]["Wanna"].iloc[0]
    assert cell.startswith(f"{100 * sub['acc'].mean():.1f}\u2020")  # far below chance: daggers
    assert cell.endswith(f"({100 * np.std(sub['acc'], ddof=1):.1f})")
    isl = raw[(raw["condition"] == "baby-f") & (raw["size"] == "30M") & (raw["category"] == "Island")]
    per_seed = isl.groupby("seed")["acc"].mean()
    cell = t3[(t3["Size"] == "30M") & (t3["Cond."] == "BABY-F")]["Island"].iloc[0]
    assert cell.startswith(f"{100 * per_seed.mean():.1f}***")
    chisq = pd.read_csv(a / "chisq.csv")
    assert (chisq["significance"] == "posh").all()  # the release config's procedure
    assert "per seed" in (a / "tables" / "table8_posh.md").read_text()
    figs = json.loads((out / "figures" / "figures.json").read_text())
    assert {"fig1_children", "fig2_accuracy"} <= set(figs)
    assert (out / "figures" / "fig1_children.png").read_bytes()[:4] == b"\x89PNG"


def test_released_counts_and_item_scores_give_the_same_tables(tmp_path):
    """One code path: item scores with the same counts give byte-identical Tables 3/8 and chisq.csv."""
    from helpers.simulate import write_score_files

    counts = released.read_released(FIXTURE, release_settings(IGNORE))
    rows = []
    for _, r in counts.iterrows():
        correct = np.arange(r["n_total"]) < r["n_correct"]
        rows.append(pd.DataFrame({
            "arch": r["arch"], "condition": r["condition"], "size": r["size"], "seed": r["seed"], "step": 1,
            "final": True, "suite": "posh", "paradigm": r["paradigm"], "category": r["category"],
            "item_id": [f"{r['paradigm']}-{i:04d}" for i in range(r["n_total"])],
            "logp_good": np.where(correct, -1.0, -2.0), "logp_bad": -1.5, "ntok_good": 5, "ntok_bad": 5,
            "correct": correct}))
    paths = write_score_files(pd.concat(rows, ignore_index=True), tmp_path / "scores")
    params = json.dumps({"significance": "posh"})
    assert main(["analyze", "--scores", *map(str, paths), "--params", params, "--out-dir",
                 str(tmp_path / "items"), "--no-model"]) == 0
    assert main(["release", "--results", str(FIXTURE), "--params", json.dumps(IGNORE), "--analysis", params,
                 "--out-dir", str(tmp_path / "rel"), "--no-model"]) == 0
    for f in ("chisq.csv", "accuracy.csv", "tables/table3_posh.md", "tables/table8_posh.tex",
              "tables/table3_posh.html"):
        assert (tmp_path / "items" / f).read_bytes() == (tmp_path / "rel" / "analysis" / f).read_bytes(), f


@pytest.mark.slow
def test_release_fits_table12_and_draws_figure3(tmp_path):
    out = tmp_path / "rel"
    assert main(["release", "--results", str(FIXTURE), "--config", str(CONFIG), "--out-dir", str(out),
                 "--analysis", json.dumps({"draws": 100, "tune": 100}),
                 "--cores", "2"]) == 0
    b = out / "analysis" / "bayes"
    summary = pd.read_csv(b / "summary.csv").set_index("term")
    assert {"filtered[True]", "source[baby]", "category[Binding]:filtered[True]"} <= set(summary.index)
    assert json.loads((b / "diagnostics.json").read_text())["n_observations"] == 18 * 9 * 500
    assert (b / "table12.md").read_text().startswith(("| Predictor", "**CONVERGENCE PROBLEM"))
    assert not (b / "three_level_summary.csv").exists()  # the release config fits Table 12 only
    figs = json.loads((out / "figures" / "figures.json").read_text())
    assert {"fig1_children", "fig2_accuracy", "fig3_posterior"} <= set(figs)
