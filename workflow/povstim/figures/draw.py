"""Drawing every figure the analysis outputs allow: the library behind ``povstim figures`` (and
``povstim release``)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pandas as pd

from ..forkmap import fork_map
from ..io import PovstimError, write_json

log = logging.getLogger("povstim.figures")


def draw_analysis(adir: Path, out: Path, curves: pd.DataFrame | None = None, study: pd.DataFrame | None = None,
                  audit: pd.DataFrame | None = None, learning_curves: bool = True,
                  jobs: int = 1) -> dict[str, list[str]]:
    """Every figure the outputs of `povstim analyze` (or `povstim release`) in ``adir`` allow, into ``out``
    (+ figures.json). ``curves``: the learning-curve table (default adir/accuracy_by_step.csv). ``jobs`` > 1
    draws that many figures at once in forked processes (the same files, byte for byte)."""
    # deferred: matplotlib, not needed by `povstim figures --index` (links only)
    from . import style

    logging.getLogger("fontTools").setLevel(logging.WARNING)
    style.apply()
    out.mkdir(parents=True, exist_ok=True)
    figures = plan(adir, curves=curves, study=study, audit=audit, learning_curves=learning_curves)
    made = render(figures, out, jobs)
    write_json(out / "figures.json", made)
    log.info("%d figures written to %s", len(made), out)
    return made


def plan(adir: Path, curves: pd.DataFrame | None = None, study: pd.DataFrame | None = None,
         audit: pd.DataFrame | None = None, learning_curves: bool = True) -> list[tuple]:
    """(stem, function, args) of every figure to draw, in figures.json's order: ``function(*args)`` returns
    the matplotlib figure. Reading the inputs (and their errors) happens here, before anything is drawn."""
    # deferred: matplotlib, not needed by `povstim figures --index` (links only)
    from . import exp3, filter_audit, plots

    acc_path = adir / "accuracy.csv"
    if not acc_path.exists():
        raise PovstimError(f"{acc_path}: missing; run `povstim analyze` first")
    acc = pd.read_csv(acc_path, dtype={"size": str})
    figures: list[tuple] = []
    if "posh" in set(acc["suite"]):
        figures.append(("fig1_children", plots.fig1_children, (acc, plots.load_children())))
    figures.append(("fig2_accuracy", plots.fig2_accuracy, (acc,)))

    for prefix, stem in (("", "fig3_posterior"), ("three_level_", "fig3_three_level")):
        summary_path = adir / "bayes" / f"{prefix}summary.csv"
        if summary_path.exists():
            summary = pd.read_csv(summary_path)
            diag_path = adir / "bayes" / f"{prefix}diagnostics.json"
            problems = json.loads(diag_path.read_text())["problems"] if diag_path.exists() else []
            figures.append((stem, plots.fig3_posterior, (summary, problems)))
        elif not prefix:
            log.warning("%s missing: no posterior figure (was the model skipped?)", summary_path)

    if learning_curves:
        if curves is None:
            cpath = adir / "accuracy_by_step.csv"
            if not cpath.exists():
                raise PovstimError(f"{cpath}: missing and no --scores given")
            curves = pd.read_csv(cpath, dtype={"size": str})
        for suite in sorted(curves["suite"].unique()):
            figures.append((f"learning_curves_{suite}", plots.learning_curves, (curves, suite)))
            figures.append((f"learning_curves_{suite}_category", plots.learning_curves, (curves, suite, "category")))

    figures += exp3.plan(adir)  # POSH Figs. 4-5 (inductive biases), when the analysis wrote the Exp. 3 tables
    if study is not None:
        figures.append(("tokenizer_study", plots.tokenizer_study, (study,)))
    if audit is not None:
        if audit.empty:
            log.warning("filter audit: no DPE removed in any corpus; drawing nothing")
        else:
            figures.append(("filter_audit", filter_audit.draw, (audit,)))
    return figures


def render(figures: list[tuple], out: Path, jobs: int = 1) -> dict[str, list[str]]:
    """Draw and save ``figures`` ((stem, function, args), see :func:`plan`) into ``out``: {stem: file names}.
    With ``jobs`` > 1, several at once (:func:`povstim.forkmap.fork_map`): a figure's pixels and PDF bytes do
    not depend on the process that draws it, and each file is written atomically."""
    files = fork_map(lambda task: _draw(*task, out), figures, jobs, chunk=1)
    return {stem: names for (stem, _, _), names in zip(figures, files)}


def _draw(stem: str, fn, args: tuple, out: Path) -> list[str]:
    # deferred: matplotlib, not needed by `povstim figures --index` (links only)
    from . import style

    return [p.name for p in style.save(fn(*args), out, stem)]
