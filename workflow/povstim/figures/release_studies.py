"""``povstim release`` for the released results of other studies than POSH-BENCH: their tables, figures and
povstim's own models of them (docs/published.md).

fict             FiCT (Patil et al. 2024; CLMBRs/corpus-filtering ``results/data/``): the authors' Δ columns
                 recomputed and compared cell by cell, the Δ table and heatmap, the perplexity table, the corpora's
                 sizes, and povstim's Bayesian Δ model (analysis/models/construction_delta.py) on their accuracies
childes_vs_wiki  Padovani et al. 2025 (fpadovani/childes_vs_wiki ``json_results_clm/``): learning curves per
                 paradigm and source, the final-checkpoint table, povstim's model of source (the three-level
                 model's design, CHILDES vs Wikipedia per paradigm) and acquisition points from their curves

It sits with the figures, above the analyses whose tables it writes (the one command that does both).
"""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path

import numpy as np
import pandas as pd

from ..io import PovstimError, atomic_write

log = logging.getLogger("povstim.release")

LAYOUTS = {
    "posh": "POSH-BENCH: one CSV per model, results_gpt2_<arch>_<baby|wiki>_<size>[f]_<vocab>_<seed>_best.csv "
            "(release.glob, release.pattern), or a checkout holding results/posh_gpt_results/",
    "fict": "FiCT: tidy_results.csv (+ corpus_tokens.csv), or a checkout holding results/data/",
    "childes_vs_wiki": "CHILDES vs Wikipedia: json_<suite>/<lang>_<child|wiki>_clm_results/"
                       "results_paradigm_seed_N.json, or a checkout holding evaluation/scripts/json_results_clm/",
}
FICT_CHECKOUT = "results/data"
SIZE_NOTE = ("x = training steps (the release gives checkpoints by step, not by words seen): the acquisition "
             "columns named *_step are steps")
# the model of source: the three-level model's design with the two sources as source_filter's levels, the paradigm as
# category (the suites have no higher category) and no (1|phenomenon) (it would be the category)
SOURCE_FORMULA = "category * source_filter + (1|seed)"


def detect_layout(folder: str | Path, rel) -> tuple[str, Path]:
    """(layout, the folder to read) of ``folder`` under ``release.layout`` (auto: whichever layout's files are
    there); an error listing the known layouts when none is."""
    from ..analysis.tables import released, released_curves, released_fict

    folder = Path(folder)
    if not folder.is_dir():
        raise PovstimError(f"{folder}: no such folder of released results")
    found = {}
    for base in (folder, folder / FICT_CHECKOUT):
        if (base / released_fict.TIDY).is_file():
            found.setdefault("fict", base)
    if released_curves.suite_folders(folder):
        found["childes_vs_wiki"] = folder
    posh = released.results_folder(folder, rel)
    rx = released.release_pattern(rel)
    if any(p.is_file() and rx.fullmatch(p.name) for p in posh.glob(rel.glob)):
        found["posh"] = folder
    want = rel.layout
    if want != "auto":
        if want == "posh":  # the POSH reader says itself what is missing (its glob, its pattern)
            return "posh", folder
        if want not in found:
            raise PovstimError(f"{folder}: not in the {want} layout ({LAYOUTS[want]})")
        return want, found[want]
    if not found:
        raise PovstimError(f"{folder}: not a release layout povstim knows; known: "
                           + "; ".join(f"{k} = {v}" for k, v in LAYOUTS.items()) + " (release.layout)")
    if len(found) > 1:
        raise PovstimError(f"{folder}: holds files of several layouts ({', '.join(sorted(found))}): "
                           "name one with release.layout")
    (layout, path), = found.items()
    log.info("%s: %s layout", folder, layout)
    return layout, path


def _json(path: Path, doc) -> None:
    with atomic_write(path) as fh:
        fh.write(json.dumps(doc, indent=1, sort_keys=True, default=str) + "\n")


# ------------------------------------------------------------------ FiCT
def run_fict(folder: Path, rel, ana, out: Path, fit_model: bool = True, cores: int | None = None) -> dict:
    """Every FiCT output into ``out``/analysis and ``out``/figures; returns check.json's content."""
    from ..analysis.pipeline import write_csv, write_table
    from ..analysis.tables import released_fict as rf
    from . import style

    df = rf.read_tidy(folder)
    a_dir, f_dir = out / "analysis", out / "figures"
    a_dir.mkdir(parents=True, exist_ok=True)
    summary, cells = rf.delta_check(df)
    write_csv(summary, a_dir / "delta_check.csv")
    write_csv(cells, a_dir / "delta_mismatches.csv")
    check = {"rows": len(df), "tolerance": rf.TOLERANCE,
             "columns": {r["column"]: {"match": r["match"], "differ": r["differ"], "cells": r["cells"]}
                         for r in summary.to_dict("records")},
             "cells": int(summary["cells"].sum()), "match": int(summary["match"].sum()),
             "differ": int(summary["differ"].sum()),
             "causes": cells.groupby(["column", "kind"]).size().to_dict() if len(cells) else {}}
    log.info("FiCT deltas: %d of %d cells equal the authors' columns within %g", check["match"], check["cells"],
             rf.TOLERANCE)
    for (col, kind), n in check["causes"].items():
        log.warning("FiCT deltas: %d cell(s) of %s differ (%s; each cell and its cause: %s)", n, col, kind,
                    a_dir / "delta_mismatches.csv")
    check["causes"] = {f"{col}/{kind}": int(n) for (col, kind), n in check["causes"].items()}
    _json(a_dir / "delta_check.json", check)

    table = rf.delta_table(df)
    write_csv(table, a_dir / "delta_table.csv")
    summ = rf.target_summary(table)
    write_table(summ.round(4), a_dir / "tables" / "delta_targets",
                "FiCT's released accuracies: mean Δ accuracy (filtered − full, all-seed average of the full models) "
                "on each filter's target paradigms and on the other paradigms, per corpus and arch; recomputed by "
                "povstim from blimp_acc.", "tab:fict-delta-targets")
    ppl = rf.perplexity_table(df)
    write_table(ppl.round(4), a_dir / "tables" / "perplexity",
                "FiCT's released perplexities: validation and test perplexity per corpus and arch, mean and SD over "
                "seeds, with the corpus's tokens and share of the full corpus.", "tab:fict-perplexity")
    sizes = rf.corpus_sizes(df, folder)
    write_table(sizes.round(6), a_dir / "tables" / "corpus_sizes",
                "FiCT's training corpora: tokens (tidy_results.csv's corpus_tokens), share of the full corpus and "
                "tokens removed by each filter; the filtered corpora are smaller than the full one, so a Δ mixes "
                "the removed construction with less training text.", "tab:fict-corpus-sizes")
    style.apply()
    f_dir.mkdir(parents=True, exist_ok=True)
    style.save(fict_heatmap(table), f_dir, "fict_delta_heatmap")
    if fit_model:
        fict_model(df, rel, ana, a_dir / "construction_delta", folder, cores)
    return check


def fict_model(df: pd.DataFrame, rel, ana, out: Path, folder: Path, cores: int | None = None) -> None:
    """povstim's Δ model (construction_delta's GLMM) per filtered corpus x arch, on binomial counts."""
    from ..analysis.models import construction_delta as cd
    from ..analysis.tables import released_fict as rf
    from .construction_delta_cli import write_delta

    items = rel.items_per_paradigm
    if isinstance(items, dict):
        raise PovstimError("release.items_per_paradigm: the fict layout takes one count (BLiMP: 1000 pairs)")
    counts = rf.counts(df, int(items), str(folder / rf.TIDY))
    rows, notes, diags = [], [], {}
    for corpus in [c for c in dict.fromkeys(counts["condition"]) if c != rf.FULL]:
        sub = counts[counts["condition"].isin([corpus, rf.FULL])]
        targets = frozenset(sub.loc[(sub["condition"] == corpus) & sub["target"], "paradigm"])
        comp = cd.Comparison(corpus, (corpus,), rf.FULL, targets)
        for arch, g in sub.groupby("arch", sort=True):
            g = g.assign(filtered=g["condition"] == corpus, target=g["paradigm"].isin(targets))
            row, diag = cd.comparison_row(comp, (arch, "", "blimp"), g, ana, cores)
            rows.append(row)
            notes += [f"CONVERGENCE PROBLEM: {corpus} {arch}: {p}" for p in diag["problems"]]
            diags[f"{corpus}/{arch}"] = {k: v for k, v in diag.items() if k != "sampling_seconds"}
    write_delta(pd.DataFrame(rows), notes, diags, out,
                source=f"FiCT's released accuracies as counts (round(accuracy x {items}) of {items} pairs)")


def fict_heatmap(table: pd.DataFrame):
    """FiCT's heatmap from povstim's recomputed Δ: per arch, the full models' mean accuracy and the Δ (all-seed
    average) of each filtered corpus per paradigm, target paradigms boxed."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    archs = sorted(table["arch"].unique())
    corpora = list(dict.fromkeys(table["corpus"]))
    paradigms = sorted(table["paradigm"].unique())
    fig, axes = plt.subplots(1, 2 * len(archs), figsize=(20, 17),
                             gridspec_kw={"width_ratios": [1, len(corpora)] * len(archs), "wspace": 0.05})
    lim = float(np.nanmax(np.abs(table["delta_all_seed_avg"])))
    for i, arch in enumerate(archs):
        d = table[table["arch"] == arch]
        full = d.groupby("paradigm")["full_acc"].first().reindex(paradigms).to_numpy()[:, None]
        delta = d.pivot(index="paradigm", columns="corpus", values="delta_all_seed_avg").reindex(
            index=paradigms, columns=corpora).to_numpy()
        target = d.pivot(index="paradigm", columns="corpus", values="target").reindex(
            index=paradigms, columns=corpora).fillna(False).to_numpy(bool)
        ax_f, ax_d = axes[2 * i], axes[2 * i + 1]
        ax_f.imshow(full, cmap="Greens", vmin=0.5, vmax=1.0, aspect="auto")
        ax_d.imshow(delta, cmap="RdBu", vmin=-lim, vmax=lim, aspect="auto")
        for ax, values, dark in ((ax_f, full, lambda v: v > 0.85), (ax_d, delta, lambda v: abs(v) > 0.6 * lim)):
            for (r, c), v in np.ndenumerate(values):
                # white on the darkest cells, so every number stays readable
                ax.text(c, r, f"{v:.3f}".replace("0.", ".", 1) if not math.isnan(v) else "", ha="center",
                        va="center", fontsize=5, color="white" if dark(v) else "black")
            ax.grid(False)
        for r, c in zip(*np.nonzero(target)):
            ax_d.add_patch(Rectangle((c - 0.5, r - 0.5), 1, 1, fill=False, edgecolor="black", linewidth=1.2))
        ax_f.set_xticks([0])
        ax_f.set_xticklabels(["full (acc.)"], rotation=45, ha="right")
        ax_d.set_xticks(range(len(corpora)))
        ax_d.set_xticklabels(corpora, rotation=45, ha="right")
        ax_f.set_yticks(range(len(paradigms)))
        ax_f.set_yticklabels(paradigms if i == 0 else [""] * len(paradigms), fontsize=5.5)
        ax_d.set_yticks([])
        ax_d.set_title(f"{arch}: Δ accuracy, filtered − full (all-seed average; boxed: the filter's targets)")
    fig.subplots_adjust(top=0.96, bottom=0.07, left=0.13, right=0.99)
    fig.suptitle("FiCT's released BLiMP accuracies, Δ recomputed by povstim (mean over 5 seeds)", y=0.985)
    return fig


# ------------------------------------------------------------------ CHILDES vs Wikipedia
def run_curves(folder: Path, rel, ana, acq, out: Path, fit_model: bool = True, cores: int | None = None) -> dict:
    """Every CHILDES-vs-Wikipedia output into ``out``/analysis and ``out``/figures; returns notes.json's content."""
    from ..analysis.pipeline import write_csv, write_table
    from ..analysis.tables import released_curves as rc
    from . import style

    items = rel.items_per_paradigm if isinstance(rel.items_per_paradigm, dict) else None
    df, notes = rc.read_curves(folder, items, rel.missing_checkpoints)
    a_dir, f_dir = out / "analysis", out / "figures"
    a_dir.mkdir(parents=True, exist_ok=True)
    f_dir.mkdir(parents=True, exist_ok=True)
    write_csv(df.drop(columns=["folder"]), a_dir / "curves.csv")
    final = rc.final_table(df)
    write_table(final.round(4), a_dir / "tables" / "final_checkpoint",
                "Accuracy at the last released checkpoint per suite, paradigm and training source: mean and SD over "
                "seeds, the items behind each accuracy (inferred from the released fractions), and CHILDES − "
                "Wikipedia.", "tab:childes-wiki-final")
    points = acquisition(df, acq, a_dir / "acquisition")
    style.apply()
    for suite in sorted(df["suite"].unique()):
        style.save(curves_figure(df[df["suite"] == suite], points, suite), f_dir, f"curves_{suite}")
    info = {"suites": sorted(df["suite"].unique()), "languages": sorted(df["language"].unique()), "notes": notes,
            "items": {f"{s}/{p}": int(n) for (s, p), n in df.groupby(["suite", "paradigm"])["n_total"].first().items()}}
    if fit_model:
        info["models"] = source_models(df, ana, a_dir / "bayes", cores)
    _json(a_dir / "notes.json", info)
    return info


def model_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The curves as the acquisition and Bayesian analyses' rows: arch gpt2, condition = source, size = the last
    checkpoint's step, category = paradigm."""
    last = df.groupby("suite")["step"].transform("max").astype(int).astype(str)
    return df.assign(arch="gpt2", condition=df["source"], size=last, category=df["paradigm"], filtered=False)


def acquisition(df: pd.DataFrame, acq, out: Path) -> pd.DataFrame:
    """Acquisition points per seed, pooled per suite x source x paradigm, and CHILDES − Wikipedia contrasts, from
    the released curves (analysis/timing/acquisition.py, its x the training step)."""
    from ..analysis.pipeline import write_csv
    from ..analysis.timing import acquisition as A

    # one category per suite, so the contrasts' category level is the mean over the suite's paradigms
    rows = model_rows(df).assign(words_seen=df["step"].astype(float), category=df["suite"])
    points, summ, con, notes, info = A.analyse(rows, acq)
    out.mkdir(parents=True, exist_ok=True)

    def steps(t: pd.DataFrame) -> pd.DataFrame:
        return t.rename(columns={c: c.replace("words", "step") for c in t.columns})
    write_csv(steps(points), out / "points.csv")
    write_csv(steps(summ), out / "summary.csv")
    write_csv(steps(con), out / "contrasts.csv")
    _json(out / "notes.json", {"notes": notes, "fit": info, "x": SIZE_NOTE})
    return summ


def source_models(df: pd.DataFrame, ana, out: Path, cores: int | None = None) -> dict:
    """Per suite, povstim's model of source on the last checkpoint: the three-level model's binomial GLMM with
    source_filter = CHILDES / WIKIPEDIA, paradigm as category, ``(1|seed)``, and its pairwise contrast per paradigm
    (pipeline.fit_and_write, bayes.pairwise_contrasts); returns each fit's diagnostics."""
    from ..analysis.models import bayes
    from ..analysis.pipeline import _rounded, fit_and_write, write_csv, write_table

    rows = model_rows(df)
    final = rows[rows["step"] == rows.groupby("suite")["step"].transform("max")]
    out_diag = {}
    for suite, g in final.groupby("suite", sort=True):
        sub = out / suite
        design, res, diag = fit_and_write(
            g, ana, sub, family="binomial", cores=cores, suite=suite, formula=SOURCE_FORMULA, prefix="source_",
            table="source_model", title="Model of training source (the three-level model's design)",
            coding_of={"source_filter": ("treatment", "WIKIPEDIA")})
        if "source_filter" in design.codes:
            con = bayes.pairwise_contrasts(res.idata.posterior, design, by="category")
            write_csv(_rounded(con), sub / "source_contrasts.csv")
            banner = "" if diag["converged"] else ("CONVERGENCE PROBLEM — do not interpret these estimates: "
                                                   + "; ".join(diag["problems"]))
            write_table(bayes.contrasts_table(con), sub / "source_contrasts_table",
                        f"{suite}, last checkpoint: CHILDES vs. Wikipedia per paradigm (log-odds; posterior median, "
                        "95% equal-tailed credible interval, posterior probability of a positive difference).",
                        "tab:source-contrasts", banner=banner)
        out_diag[suite] = {k: diag[k] for k in ("converged", "max_r_hat", "min_ess_bulk", "divergences")}
    return out_diag


def curves_figure(df: pd.DataFrame, summ: pd.DataFrame, suite: str):
    """One panel per paradigm: accuracy over training steps per source (seeds' mean, band min-max), chance at 50%,
    and each source's pooled acquisition point (dotted)."""
    import matplotlib.pyplot as plt

    from . import style

    paradigms = sorted(df["paradigm"].unique())
    sources = sorted(df["source"].unique())
    cols = min(4, len(paradigms))
    rows = math.ceil(len(paradigms) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(2.4 * cols, 2.0 * rows + 0.6), sharex=True, sharey=True,
                             squeeze=False)
    for ax, par in zip(axes.flat, paradigms):
        for i, src in enumerate(sources):
            d = df[(df["paradigm"] == par) & (df["source"] == src)]
            g = d.groupby("step")["accuracy"]
            m, lo, hi = g.mean(), g.min(), g.max()
            ax.plot(m.index, 100 * m, color=style.PALETTE[i + 1], linestyle=style.DASHES[i], marker=style.MARKERS[i],
                    markersize=2, label=src)
            ax.fill_between(m.index, 100 * lo, 100 * hi, color=style.PALETTE[i + 1], alpha=0.15, linewidth=0)
            s = summ[(summ["suite"] == suite) & (summ["paradigm"] == par) & (summ["condition"] == src)]
            if len(s) and s["acquisition"].iloc[0] in ("acquired", "partly"):
                ax.axvline(s["point_words"].iloc[0], color=style.PALETTE[i + 1], linestyle=":", linewidth=0.9)
        ax.axhline(50, color="#888888", linewidth=0.6)
        ax.set_xscale("log")
        ax.set_title(style.panel_title(par))
    for ax in axes.flat[len(paradigms):]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("training step")
    for ax in axes[:, 0]:
        ax.set_ylabel("accuracy (%)")
    fig.suptitle(f"{suite}: accuracy per checkpoint by training source (seeds' mean, min-max band; dotted: "
                 "acquisition point)", fontsize=8)
    style.legend_below(fig, axes)
    return fig
