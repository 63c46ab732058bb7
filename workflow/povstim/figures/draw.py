"""Drawing every figure the analysis outputs allow: the library behind ``povstim figures`` (and
``povstim release``)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pandas as pd

from ..io import PovstimError, write_json

log = logging.getLogger("povstim.figures")


def draw_analysis(adir: Path, out: Path, curves: pd.DataFrame | None = None, study: pd.DataFrame | None = None,
                  audit: pd.DataFrame | None = None, learning_curves: bool = True) -> dict[str, list[str]]:
    """Every figure the outputs of `povstim analyze` (or `povstim release`) in ``adir`` allow, into ``out``
    (+ figures.json). ``curves``: the learning-curve table (default adir/accuracy_by_step.csv)."""
    from . import plots, style

    logging.getLogger("fontTools").setLevel(logging.WARNING)
    style.apply()
    out.mkdir(parents=True, exist_ok=True)
    made: dict[str, list[str]] = {}

    acc_path = adir / "accuracy.csv"
    if not acc_path.exists():
        raise PovstimError(f"{acc_path}: missing; run `povstim analyze` first")
    acc = pd.read_csv(acc_path, dtype={"size": str})
    if "posh" in set(acc["suite"]):
        made["fig1_children"] = _save(plots.fig1_children(acc, plots.load_children()), out, "fig1_children")
    made["fig2_accuracy"] = _save(plots.fig2_accuracy(acc), out, "fig2_accuracy")

    for prefix, stem in (("", "fig3_posterior"), ("three_level_", "fig3_three_level")):
        summary_path = adir / "bayes" / f"{prefix}summary.csv"
        if summary_path.exists():
            summary = pd.read_csv(summary_path)
            diag_path = adir / "bayes" / f"{prefix}diagnostics.json"
            problems = json.loads(diag_path.read_text())["problems"] if diag_path.exists() else []
            made[stem] = _save(plots.fig3_posterior(summary, problems), out, stem)
        elif not prefix:
            log.warning("%s missing: no posterior figure (was the model skipped?)", summary_path)

    if learning_curves:
        if curves is None:
            cpath = adir / "accuracy_by_step.csv"
            if not cpath.exists():
                raise PovstimError(f"{cpath}: missing and no --scores given")
            curves = pd.read_csv(cpath, dtype={"size": str})
        for suite in sorted(curves["suite"].unique()):
            made[f"learning_curves_{suite}"] = _save(plots.learning_curves(curves, suite), out,
                                                     f"learning_curves_{suite}")
            made[f"learning_curves_{suite}_category"] = _save(plots.learning_curves(curves, suite, "category"), out,
                                                              f"learning_curves_{suite}_category")

    from . import exp3  # POSH Figs. 4-5 (inductive biases), when the analysis wrote the Exp. 3 tables

    made.update(exp3.draw(adir, out))
    if study is not None:
        made["tokenizer_study"] = _save(plots.tokenizer_study(study), out, "tokenizer_study")
    if audit is not None:
        if audit.empty:
            log.warning("filter audit: no DPE removed in any corpus; drawing nothing")
        else:
            made["filter_audit"] = _save(plots.filter_audit(audit), out, "filter_audit")
    write_json(out / "figures.json", made)
    log.info("%d figures written to %s", len(made), out)
    return made


def _save(fig, out, stem):
    from . import style

    return [p.name for p in style.save(fig, out, stem)]


