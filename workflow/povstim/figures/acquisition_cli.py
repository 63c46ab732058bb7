"""``povstim acquisition``: when is each paradigm acquired? (docs/analysis.md, "Acquisition points").

From the learning curves of models trained with ``training.checkpoint_words`` (analysis/accuracy_by_step.csv,
with words seen) -> ``--out-dir``:

  points.csv                  per model x paradigm: sigmoid fit, halfway point, category (analysis/timing/acquisition.py)
  summary.{csv,html,md,tex}   per condition x size x paradigm: point, interval, category (acquisition.method:
                              hierarchical, one sampled PyMC model; per_seed, the seeds' fits pooled)
  contrasts.{csv,html,md,tex} BABY-F vs BABY vs WIKI per paradigm and category: delay in decades of words, bounds
  children.{csv,html,md,tex}  with acquisition.childes: children's age of first production per word
  word_points.{csv,html,...}  with --word-curves (acquisition.word_learning): each word's acquisition point per model
  word_regression.{csv,html,...}  the models' word points on children's ages + log frequency (analysis/timing/word_learning.py)
  word_learning.{png,pdf}     each word's acquisition point per condition against the children's age of first
                              production (or its frequency without ages); not identified words listed, not drawn
  acquisition_curves_{suite}.png/.pdf, acquisition_points_{suite}.png/.pdf
  notes.json                  what was skipped and why (too few checkpoints, no words seen, no ages ...)

It sits with the figures because it draws them (analysis < figures in the layers).
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

from ..io import PovstimError, atomic_write, json_object_arg
from ..settings import build

log = logging.getLogger("povstim.acquisition")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.description = __doc__.split("\n", 1)[1] if __doc__ else None
    p.add_argument("--curves", required=True, metavar="CSV", help="analysis/accuracy_by_step.csv (with words_seen)")
    p.add_argument("--params", metavar="JSON", help="the config's acquisition section as JSON (may be partial)")
    p.add_argument("--childes", nargs="+", metavar="PATH",
                   help="CHAT files/folders or childes-db CSV exports for the children's side (overrides "
                   "acquisition.childes)")
    p.add_argument("--word-curves", nargs="+", metavar="CSV", default=[],
                   help="povstim word-curves outputs (word learning for models): word points and the regression")
    p.add_argument("--out-dir", required=True, metavar="DIR")


def run(args) -> int:
    # deferred: pandas, scipy and matplotlib load when the command runs, not for --help
    import pandas as pd

    from ..analysis.timing.acquisition import AcquisitionSettings

    given = json_object_arg(args.params, "--params", allow_file=True) or {}
    if args.childes:
        given = {**given, "childes": list(args.childes)}
    settings = build(AcquisitionSettings, "acquisition", given)
    path = Path(args.curves)
    if not path.exists():
        raise PovstimError(f"{path}: no such learning-curve table")
    curves = pd.read_csv(path, dtype={"size": str})
    words = pd.concat([pd.read_csv(f, dtype={"size": str}) for f in args.word_curves], ignore_index=True) \
        if args.word_curves else None
    acquisition(curves, settings, Path(args.out_dir), words)
    return 0


def acquisition(curves, settings, out: Path, word_curves=None) -> dict:
    """Write every output of the stage into ``out``; returns notes.json's content."""
    from ..analysis.timing import acquisition as A
    from ..analysis.timing import children
    from ..analysis.pipeline import write_csv, write_table
    from . import acquisition as figs
    from . import style

    out.mkdir(parents=True, exist_ok=True)
    points, summ, con, notes, fit_info = A.analyse(curves, settings)
    for note in notes:
        log.warning("%s", note)
    write_csv(points, out / "points.csv")
    pct = round(100 * settings.interval)
    how = ("posterior median of one hierarchical Bayesian fit over seeds, equal-tailed" if settings.method ==
           "hierarchical" else "seeds pooled (random effects)")
    write_table(summ, out / "summary", f"Acquisition points: words seen at the halfway point between chance and "
                f"the asymptote, {how} {pct}% interval of log10 words; not_acquired: not "
                "within budget_words", "tab:acquisition")
    write_table(con, out / "contrasts", "Acquisition contrasts between conditions: delta = log10 words of "
                f"condition_a - condition_b (> 0: a acquires later; factor = 10**delta), {pct}% interval; where a "
                "side is not acquired the contrast is a bound (status)", "tab:acquisition-contrasts")
    kids_notes: list[str] = []
    kids = None
    if settings.childes:
        kids, kids_notes = children.first_productions(settings.childes, settings.child_words)
        for note in kids_notes:
            log.warning("%s", note)
        write_table(kids, out / "children", "Children's age of first production per word (target children's own "
                    "utterances in CHILDES)", "tab:children-aofp")
    word_notes = _word_learning(word_curves, kids, settings, out) if word_curves is not None else []
    style.apply()
    if not points.empty:
        for suite in sorted(points["suite"].unique()):
            style.save(figs.acquisition_curves(curves, points, summ, suite), out, f"acquisition_curves_{suite}")
            style.save(figs.acquisition_points(summ, con, suite), out, f"acquisition_points_{suite}")
    info = {"skipped": notes, "children": kids_notes, "word_learning": word_notes, "models": int(points[A.MODEL].drop_duplicates().shape[0])
            if not points.empty else 0, "fits": len(points),
            "categories": {k: int(v) for k, v in points["acquisition"].value_counts().sort_index().items()}
            if not points.empty else {}, **fit_info}
    with atomic_write(out / "notes.json") as fh:
        fh.write(json.dumps(info, indent=1, sort_keys=True) + "\n")
    log.info("acquisition: %d fits of %d models -> %s", len(points), info["models"], out)
    return info


def _word_learning(word_curves, kids, settings, out: Path) -> list[str]:
    """word_points and, with the children's ages, word_regression; their notes."""
    from ..analysis.timing import word_learning as WL
    from ..analysis.pipeline import write_csv, write_table
    from . import acquisition as figs
    from . import style

    points, notes = WL.word_points(word_curves, settings.min_checkpoints)
    write_table(WL.displayed(points), out / "word_points", "Word learning for models: each word's acquisition "
                "point (halfway between its unigram surprisal and the fitted floor, over log10 words seen); not "
                f"identified: a crossing with a standard error over {WL.MAX_SE:g} decade or that the surprisals "
                "never pass, reported without a point", "tab:word-points")
    write_csv(points, out / "word_points.csv")  # the csv keeps numbers (NaN where not identified), not the words
    if kids is None:
        notes.append("no children's ages (acquisition.childes): the regression on children's ages is skipped")
    else:
        table, more = WL.regression(points, kids)
        notes += more
        write_table(table, out / "word_regression", "Models' word acquisition points (log10 words) on children's "
                    "age of first production (months) and log10 frequency per million (OLS)", "tab:word-regression")
    if not points.empty:
        style.apply()
        style.save(figs.word_learning(points, kids), out, "word_learning")
    for note in notes:
        log.warning("%s", note)
    return notes
