"""`povstim release` on other studies' released results: FiCT (tidy_results.csv) and Padovani et al.'s CHILDES vs
Wikipedia curves (json_<suite>/<lang>_<child|wiki>_clm_results/results_paradigm_seed_N.json).

The released files themselves (../shared/data/published/, GPL-3 / unlicensed data: read, never copied) are read
where present, and the gold answers are the authors' own columns and averages; elsewhere the fixtures are built
here with SYNTHETIC accuracies and the expected values computed by hand from them.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from povstim.analysis.tables import released_curves as rc
from povstim.analysis.tables import released_fict as rf
from povstim.analysis.tables.released import release_settings
from povstim.cli import main
from povstim.figures import release_studies
from povstim.io import PovstimError

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED = ROOT.parent / "shared" / "data" / "published"
FICT = PUBLISHED / "fict"
CVW = PUBLISHED / "childes_vs_wiki"
CLAMS_FR = ROOT.parent / "shared" / "data" / "clams" / "clams" / "fr_evalset"


# ------------------------------------------------------------------ FiCT fixtures
def _fict_rows(targets=("p1",), loss=0.0) -> pd.DataFrame:
    """Two corpora (full, f1) x two archs x three seeds x three paradigms, accuracies k/1000; f1's models lose
    ``loss`` on its target paradigms. The authors' columns computed here, by hand."""
    rng = np.random.default_rng(3)
    rows = []
    for corpus in ("full", "f1"):
        for arch in ("lstm", "transformer"):
            for seed in range(3):
                for par in ("p1", "p2", "p3"):
                    base = {"p1": 0.8, "p2": 0.7, "p3": 0.6}[par]
                    acc = base + rng.integers(-20, 20) / 1000
                    if corpus == "f1" and par in targets:
                        acc -= loss
                    rows.append({"corpus": corpus, "arch": arch, "seed": seed, "validation_loss": 3.0,
                                 "validation_ppl": 40 + seed + (corpus == "f1"), "test_loss": 3.0,
                                 "test_ppl": 41 + seed, "blimp_benchmark": par, "blimp_acc": round(acc, 3),
                                 "filter_target": "TRUE" if corpus == "f1" and par in targets else "FALSE",
                                 "field": "syntax", "linguistics_term": "t",
                                 "corpus_tokens": 1000 if corpus == "full" else 900})
    df = pd.DataFrame(rows)
    for arch in ("lstm", "transformer"):
        for par in ("p1", "p2", "p3"):
            full = df[(df.corpus == "full") & (df.arch == arch) & (df.blimp_benchmark == par)]
            mean = full["blimp_acc"].mean()
            for _, fr in full.iterrows():
                sel = (df.arch == arch) & (df.blimp_benchmark == par) & (df.seed == fr["seed"])
                df.loc[sel, "full_same_seed_acc"] = fr["blimp_acc"]
            sel = (df.arch == arch) & (df.blimp_benchmark == par)
            df.loc[sel, "full_all_seed_avg_acc"] = mean
    df["blimp_delta_same_seed"] = df["blimp_acc"] - df["full_same_seed_acc"]
    df["blimp_delta_all_seed_avg"] = df["blimp_acc"] - df["full_all_seed_avg_acc"]
    return df


def _write_fict(folder: Path, df: pd.DataFrame) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    df.to_csv(folder / "tidy_results.csv")  # an unnamed index column first, as the authors' file has
    (folder / "corpus_tokens.csv").write_text(",tokens\nfull,1000\nf-one,900\n")
    return folder


@pytest.mark.skipif(not (FICT / "tidy_results.csv").is_file(), reason="FiCT's released results not in ../shared")
def test_fict_deltas_equal_the_authors_columns_on_every_released_row():
    df = rf.read_tidy(FICT)
    summary, cells = rf.delta_check(df)
    raw = pd.read_csv(FICT / "tidy_results.csv")  # the authors' file, read independently
    assert len(df) == len(raw) == 10720
    assert summary.set_index("column")["match"].to_dict() == {"blimp_delta_same_seed": 10720,
                                                              "blimp_delta_all_seed_avg": 10720}
    assert cells.empty
    sizes = rf.corpus_sizes(df, FICT).set_index("corpus")
    # tidy_results.csv names the filter agr-pp-mod, corpus_tokens.csv pp-mod-subj: matched by the token count
    assert sizes.loc["agr-pp-mod", "name_in_corpus_tokens"] == "pp-mod-subj"
    assert sizes.loc["agr-pp-mod", "tokens"] == 63650020 and sizes.loc["full", "tokens"] == 66442068


def test_fict_cells_that_differ_are_listed_with_their_cause(tmp_path):
    df = _fict_rows()
    df.loc[7, "blimp_delta_same_seed"] += 0.01          # their arithmetic off
    df.loc[20, "full_all_seed_avg_acc"] += 0.05         # their reference off (and the delta taken from it)
    df.loc[20, "blimp_delta_all_seed_avg"] -= 0.05
    summary, cells = rf.delta_check(rf.read_tidy(_write_fict(tmp_path, df)))
    s = summary.set_index("column")
    assert s.loc["blimp_delta_same_seed", "match"] == len(df) - 1
    assert s.loc["blimp_delta_all_seed_avg", "match"] == len(df) - 1
    by = cells.set_index("column")
    assert by.loc["blimp_delta_same_seed", "row"] == 7
    assert "is not blimp_acc - full_same_seed_acc" in by.loc["blimp_delta_same_seed", "cause"]
    assert by.loc["blimp_delta_all_seed_avg", "row"] == 20
    assert "their reference full_all_seed_avg_acc" in by.loc["blimp_delta_all_seed_avg", "cause"]
    assert by["kind"].to_dict() == {"blimp_delta_same_seed": "arithmetic", "blimp_delta_all_seed_avg": "reference"}
    out = tmp_path / "out"
    assert main(["release", "--results", str(tmp_path), "--out-dir", str(out), "--no-model"]) == 0
    check = json.loads((out / "analysis" / "delta_check.json").read_text())
    assert check["match"] == 2 * len(df) - 2 and check["causes"] == {"blimp_delta_same_seed/arithmetic": 1,
                                                                     "blimp_delta_all_seed_avg/reference": 1}
    assert len(pd.read_csv(out / "analysis" / "delta_mismatches.csv")) == 2


def test_fict_tables_and_heatmap_through_the_command(tmp_path):
    df = _fict_rows(loss=0.2)
    folder = _write_fict(tmp_path / "results" / "data", df)
    out = tmp_path / "out"
    # the checkout (results/data/ inside), layout found from the files
    assert main(["release", "--results", str(tmp_path), "--out-dir", str(out), "--no-model"]) == 0
    check = json.loads((out / "analysis" / "delta_check.json").read_text())
    assert check["match"] == check["cells"] == 2 * len(df)
    table = pd.read_csv(out / "analysis" / "delta_table.csv")
    row = table[(table.corpus == "f1") & (table.arch == "lstm") & (table.paradigm == "p1")].iloc[0]
    f1 = df[(df.corpus == "f1") & (df.arch == "lstm") & (df.blimp_benchmark == "p1")]["blimp_acc"]
    full = df[(df.corpus == "full") & (df.arch == "lstm") & (df.blimp_benchmark == "p1")]["blimp_acc"]
    assert row["delta_all_seed_avg"] == pytest.approx(f1.mean() - full.mean(), abs=1e-6)
    assert row["delta_same_seed"] == pytest.approx((f1.to_numpy() - full.to_numpy()).mean(), abs=1e-6)
    assert bool(row["target"]) and not table[(table.paradigm == "p2")]["target"].any()
    ppl = pd.read_csv(out / "analysis" / "tables" / "perplexity.csv").set_index(["corpus", "arch"])
    assert ppl.loc[("f1", "lstm"), "validation_ppl"] == pytest.approx(42.0)  # 41, 42, 43 by hand
    assert ppl.loc[("f1", "lstm"), "share_of_full"] == pytest.approx(0.9)
    sizes = pd.read_csv(out / "analysis" / "tables" / "corpus_sizes.csv").set_index("corpus")
    assert sizes.loc["f1", "name_in_corpus_tokens"] == "f-one" and sizes.loc["f1", "removed_tokens"] == 100
    assert (out / "figures" / "fict_delta_heatmap.png").stat().st_size > 10_000
    assert folder.is_dir()


def test_a_fict_csv_missing_a_column_is_one_line(tmp_path):
    df = _fict_rows().drop(columns=["blimp_delta_same_seed"])
    folder = _write_fict(tmp_path, df)
    with pytest.raises(PovstimError, match=r"tidy_results\.csv: missing column\(s\) blimp_delta_same_seed \(expected"):
        rf.read_tidy(folder)
    (folder / "tidy_results.csv").unlink()
    with pytest.raises(PovstimError, match=r"tidy_results\.csv: no such file"):
        rf.read_tidy(folder)


def test_an_unknown_release_layout_lists_the_known_ones(tmp_path):
    (tmp_path / "notes.txt").write_text("x\n")
    (tmp_path / "scores.csv").write_text("a,b\n1,2\n")  # a CSV, but not a POSH result file
    with pytest.raises(PovstimError, match=r"not a release layout povstim knows; known: posh = .*; fict = .*; "
                                           r"childes_vs_wiki = "):
        release_studies.detect_layout(tmp_path, release_settings({}))
    _write_fict(tmp_path / "f", _fict_rows())
    with pytest.raises(PovstimError, match=r"not in the childes_vs_wiki layout"):
        release_studies.detect_layout(tmp_path / "f", release_settings({"layout": "childes_vs_wiki"}))
    assert release_studies.detect_layout(tmp_path / "f", release_settings({}))[0] == "fict"
    posh = ROOT / "tests" / "fixtures" / "released" / "posh_results"
    assert release_studies.detect_layout(posh, release_settings({})) == ("posh", posh)


@pytest.mark.heavy
def test_fict_delta_model_recovers_a_planted_loss_on_the_targets(tmp_path):
    """Bambi fits (2 per arch): heavy. The tables' path is covered by test_fict_tables_and_heatmap_through_the_command."""
    _write_fict(tmp_path / "data", _fict_rows(loss=0.2))
    out = tmp_path / "out"
    params = json.dumps({"chains": 2, "tune": 150, "draws": 150, "seed": 1})
    assert main(["release", "--results", str(tmp_path / "data"), "--out-dir", str(out), "--analysis", params,
                 "--params", '{"items_per_paradigm": 1000}']) == 0
    delta = pd.read_csv(out / "analysis" / "construction_delta" / "delta.tsv", sep="\t")
    assert len(delta) == 2 and set(delta["arch"]) == {"lstm", "transformer"}
    assert (delta["delta_target_upper"] < -0.1).all() and (delta["delta_target_lower"] > -0.3).all()
    assert (delta["delta_control_lower"] < 0.02).all() and (delta["delta_control_upper"] > -0.02).all()


# ------------------------------------------------------------------ CHILDES vs Wikipedia fixtures
STEPS = (1000, 2000, 5000, 10000, 20000, 50000, 100000)
ITEMS = {"simple_agrmt.txt": 280, "vp_coord.txt": 980}
MIDPOINT = {"child": 4.3, "wiki": 3.8}  # log10 step where each source's synthetic curve is halfway


def _accuracy(source: str, par: str, step: int, seed: int) -> float:
    n = ITEMS[par]
    p = 0.5 + 0.4 / (1 + math.exp(-3 * (math.log10(step) - MIDPOINT[source] - 0.02 * (seed - 30))))
    return round(p * n) / n


def _write_curves(root: Path, lang: str, suite_dir: str, seeds=(13, 30, 42), drop: tuple | None = None) -> Path:
    """One json_<suite> folder in the authors' layout; ``drop`` = (source, seed, step) leaves one checkpoint out."""
    folder = root / suite_dir
    for source in ("child", "wiki"):
        sub = folder / f"{lang}_{source}_clm_results"
        sub.mkdir(parents=True)
        for seed in seeds:
            doc = {str(s): {p: _accuracy(source, p, s, seed) for p in ITEMS} for s in STEPS
                   if drop is None or (source, seed, s) != drop}
            (sub / f"results_paradigm_seed_{seed}.json").write_text(json.dumps(doc))
            (sub / f"results_seed_{seed}.json").write_text("{}")  # the authors' summaries: not read
        (sub / "averaged_results_per_paradigm.json").write_text("{}")
    return folder


@pytest.mark.parametrize("lang, suite_dir, suite", [("en", "json_en_clams_ok", "clams_en"),
                                                     ("de", "json_de_fitclams_wiki", "fitclams_wiki_de"),
                                                     ("fr", "json_fr_clams_ok", "clams_fr")])
def test_the_curves_layout_is_read_in_any_language(tmp_path, lang, suite_dir, suite):
    _write_curves(tmp_path, lang, suite_dir)
    (tmp_path / suite_dir / "clm_results").mkdir()  # as the authors' German CLAMS folder: skipped with a warning
    df, notes = rc.read_curves(tmp_path)
    assert notes == [] and set(df["suite"]) == {suite} and set(df["language"]) == {lang}
    assert set(df["source"]) == {"childes", "wikipedia"} and set(df["seed"]) == {13, 30, 42}
    assert sorted(df["step"].unique()) == list(STEPS)
    items = df.groupby("paradigm")["n_total"].first().to_dict()
    assert items == {"simple_agrmt": 280, "vp_coord": 980}  # inferred from the fractions alone
    final = rc.final_table(df).set_index(["paradigm", "source"])
    want = np.mean([_accuracy("child", "vp_coord.txt", 100000, s) for s in (13, 30, 42)])
    assert final.loc[("vp_coord", "childes"), "accuracy"] == pytest.approx(want)


def test_curves_command_writes_curves_table_and_acquisition_points(tmp_path):
    _write_curves(tmp_path / "json_results_clm", "de", "json_de_clams_ok")
    out = tmp_path / "out"
    assert main(["release", "--results", str(tmp_path / "json_results_clm"), "--out-dir", str(out), "--no-model",
                 "--config", str(ROOT / "configs" / "release" / "childes-vs-wiki.yaml")]) == 0
    assert (out / "figures" / "curves_clams_de.png").stat().st_size > 10_000
    final = pd.read_csv(out / "analysis" / "tables" / "final_checkpoint.csv")
    assert len(final) == 4 and set(final["step"]) == {100000}
    summ = pd.read_csv(out / "analysis" / "acquisition" / "summary.csv").set_index(["paradigm", "condition"])
    for src, name in (("child", "childes"), ("wiki", "wikipedia")):
        for par in ("simple_agrmt", "vp_coord"):
            # the planted halfway points, in log10 steps
            assert summ.loc[(par, name), "log10_point"] == pytest.approx(MIDPOINT[src], abs=0.1)
    assert "point_step" in summ.columns


def test_a_curves_folder_missing_a_seed_or_a_checkpoint_is_one_line(tmp_path):
    folder = _write_curves(tmp_path / "a", "fr", "json_fr_clams_ok")
    (folder / "fr_wiki_clm_results" / "results_paradigm_seed_30.json").unlink()
    with pytest.raises(PovstimError, match=r"fr_wiki_clm_results: no results_paradigm_seed_30\.json \(expected seeds "
                                           r"13, 30, 42"):
        rc.read_curves(tmp_path / "a")
    _write_curves(tmp_path / "b", "fr", "json_fr_clams_ok", drop=("wiki", 13, 20000))
    with pytest.raises(PovstimError, match=r"fr_wiki_clm_results/results_paradigm_seed_13\.json: no checkpoint 20000 "
                                           r"\(expected the 7 checkpoints"):
        rc.read_curves(tmp_path / "b")
    df, notes = rc.read_curves(tmp_path / "b", missing_checkpoints="note")
    assert len(notes) == 1 and "no checkpoint 20000" in notes[0]
    assert len(df) == 2 * 3 * 7 * 2 - 2
    _write_curves(tmp_path / "c", "fr", "json_fr_clams_ok", drop=("wiki", 13, 100000))
    with pytest.raises(PovstimError, match=r"no checkpoint 100000 .*the last checkpoint"):
        rc.read_curves(tmp_path / "c", missing_checkpoints="note")


@pytest.mark.skipif(not (CVW / "json_fr_clams_ok").is_dir(), reason="Padovani et al.'s released curves not in ../shared")
def test_french_release_against_the_authors_own_averages():
    df, notes = rc.read_curves(CVW, missing_checkpoints="note")
    assert sorted(df["suite"].unique()) == ["clams_fr", "fitclams_childes_fr", "fitclams_wiki_fr"]
    assert len(notes) == 1 and "fr_wiki_clm_results/results_paradigm_seed_13.json: no checkpoint 92000" in notes[0]
    final = rc.final_table(df).set_index(["suite", "paradigm", "source"])
    for folder, suite in (("json_fr_clams_ok", "clams_fr"), ("json_fr_fitclams_wiki", "fitclams_wiki_fr")):
        for sub, source in (("fr_child_clm_results", "childes"), ("fr_wiki_clm_results", "wikipedia")):
            theirs = json.loads((CVW / folder / sub / "averaged_results_per_paradigm.json").read_text())["100000"]
            for par, acc in theirs.items():
                name = par.rsplit(".", 1)[0]
                assert final.loc[(suite, name, source), "accuracy"] == pytest.approx(acc, abs=1e-12)
    if CLAMS_FR.is_dir():  # the inferred item counts are the suite files' numbers of pairs
        items = df[df["suite"] == "clams_fr"].groupby("paradigm")["n_total"].first()
        for path in CLAMS_FR.glob("*.txt"):
            pairs = sum(1 for line in path.read_text().splitlines() if line.startswith("True"))
            assert items[path.stem] == pairs
    fit_wiki = CLAMS_FR.parents[1] / "fit_clams" / "fr_" / "wiki"
    if fit_wiki.is_dir():  # FIT-CLAMS files: two lines (grammatical, ungrammatical) per pair
        items = df[df["suite"] == "fitclams_wiki_fr"].groupby("paradigm")["n_total"].first()
        for path in fit_wiki.glob("*.csv"):
            assert 2 * items[path.stem] == len(path.read_text().splitlines())


@pytest.mark.heavy
def test_curves_model_of_source_finds_the_better_source(tmp_path):
    """Bambi fit of the model of source on the fixture: heavy. The rest of the command is covered by
    test_curves_command_writes_curves_table_and_acquisition_points."""
    _write_curves(tmp_path, "en", "json_en_clams_ok")
    out = tmp_path / "out"
    params = json.dumps({"chains": 2, "tune": 300, "draws": 300, "seed": 1, "min_groups": 3})
    assert main(["release", "--results", str(tmp_path), "--out-dir", str(out), "--analysis", params]) == 0
    con = pd.read_csv(out / "analysis" / "bayes" / "clams_en" / "source_contrasts.csv")
    # by hand: at the last step CHILDES (halfway at 10^4.3 steps) is still below Wikipedia (10^3.8); the overall
    # contrast is the mean over paradigms of the log-odds difference of the seeds' pooled accuracies
    def logit(p):
        return math.log(p / (1 - p))
    want = np.mean([logit(np.mean([_accuracy("child", p, 100000, s) for s in (13, 30, 42)]))
                    - logit(np.mean([_accuracy("wiki", p, 100000, s) for s in (13, 30, 42)])) for p in ITEMS])
    overall = con[con["scope"] == "overall"].iloc[0]
    assert overall["contrast"] == "CHILDES vs. WIKIPEDIA" and want < -0.1
    assert overall["lower"] < want < overall["upper"] < 0
