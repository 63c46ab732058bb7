"""``povstim construction-delta``: Δ accuracy of filtered training per construction, a Bayesian estimate.

For every condition that names the constructions it removes (``conditions.<c>.filter: [..]``) against the
unfiltered condition of its corpus, per arch x size x suite: a binomial GLMM of item correctness,
``filtered * target + (1|seed) + (1|paradigm)`` (analysis/models/construction_delta.py), read as Δ accuracy
(filtered - full) on the constructions' target paradigms and on the control paradigms, and their difference,
on the probability scale with 95% intervals -> ``--out-dir``:

  delta.tsv                  one row per condition x arch x size x suite: raw and estimated Δ, intervals, R-hat,
                             ESS, divergences, converged
  delta.html                 the same table for the report (a banner when a fit did not converge)
  delta_{suite}.png/.pdf     one row per construction: target Δ and control Δ with their intervals
  diagnostics.json           each fit's diagnostics (formula, dropped terms, sampler, R-hat, ESS, divergences)
  notes.json                 what was skipped and why (NO TARGET, NO CONTROL), convergence problems

It sits with the figures because it draws them (analysis < figures in the layers).
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

from ..io import PovstimError, atomic_write, json_object_arg

log = logging.getLogger("povstim.construction_delta")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.description = __doc__.split("\n", 1)[1] if __doc__ else None
    p.add_argument("--items", required=True, metavar="PARQUET", help="analysis/items.parquet (item scores)")
    p.add_argument("--conditions", required=True, metavar="JSON",
                   help="the config's conditions section (each condition's from and filter) as JSON")
    p.add_argument("--filter", metavar="JSON", help="the config's filter section as JSON (its own constructions)")
    p.add_argument("--params", metavar="JSON", help="the config's analysis section as JSON (sampler, priors, "
                   "min_groups; may be partial)")
    p.add_argument("--cores", type=int, default=1, help="chains sampled at once")
    p.add_argument("--out-dir", required=True, metavar="DIR")


def run(args) -> int:
    # deferred: pandas, Bambi and matplotlib load when the command runs, not for --help
    from ..analysis.tables import tidy
    from ..analysis.pipeline import analysis_settings
    from ..constructions.library import use

    conditions = json_object_arg(args.conditions, "--conditions", allow_file=True)
    use(json_object_arg(args.filter, "--filter", allow_file=True), "filter.constructions")
    settings = analysis_settings(json_object_arg(args.params, "--params", allow_file=True))
    items = tidy.final_items(tidy.read_frame(Path(args.items), "item-score"))
    construction_delta(items, conditions, settings, Path(args.out_dir), cores=args.cores)
    return 0


def construction_delta(items, conditions: dict, settings, out: Path, cores: int | None = None) -> dict:
    """Write every output of the stage into ``out``; returns notes.json's content."""
    from ..analysis.models import construction_delta as cd

    if not cd.comparisons(conditions):
        raise PovstimError("no condition names constructions (conditions.<c>.filter: [..]): nothing to compare")
    table, notes, diags = cd.delta_table(items, conditions, settings, cores=cores)
    return write_delta(table, notes, diags, out)


def write_delta(table, notes: list, diags: dict, out: Path, source: str = "item correctness") -> dict:
    """delta.tsv/.html, the figure per suite, diagnostics.json and notes.json of a Δ table into ``out``
    (``source``: what the GLMM was fitted on, for the caption); returns notes.json's content."""
    from ..analysis.models import construction_delta as cd
    from ..analysis.tables import tables
    from . import construction_delta as figs
    from . import style

    out.mkdir(parents=True, exist_ok=True)
    if not table.empty:
        with atomic_write(out / "delta.tsv") as fh:
            table.to_csv(fh, sep="\t", index=False, lineterminator="\n")
        style.apply()
        for suite in sorted(table["suite"].unique()):
            style.save(figs.delta_figure(table, suite), out, f"delta_{suite}")
    else:
        # an empty table is still a table: the header says what would be there, notes.json why it is empty
        with atomic_write(out / "delta.tsv") as fh:
            fh.write("condition\tconstructions\tnote\n")
    unconverged = [] if table.empty else table.loc[~table["converged"], "condition"].tolist()
    banner = (f"CONVERGENCE PROBLEM in {len(unconverged)} fit(s) ({', '.join(unconverged)}): see the problems "
              "column and diagnostics.json before reading those rows") if unconverged else ""
    caption = (f"Δ accuracy of filtered training (filtered − full): per condition, a binomial GLMM of {source}, "
               f"{cd.FORMULA}, read on the probability scale; delta_target / delta_control: the "
               "posterior median Δ on the constructions' target paradigms / on the other paradigms, with 95% "
               "equal-tailed intervals; diff = delta_target − delta_control (< 0: the removal costs more on its "
               "own paradigms); raw_*: mean over paradigms of the seed-averaged accuracies."
               + (" Notes: " + " | ".join(notes) if notes else ""))
    with atomic_write(out / "delta.html") as fh:
        fh.write(tables.to_html(table, caption, banner))
    with atomic_write(out / "diagnostics.json") as fh:
        fh.write(json.dumps(diags, indent=1, sort_keys=True, default=str) + "\n")
    info = {"notes": notes, "fits": len(table), "unconverged": unconverged, "formula": cd.FORMULA,
            "interval": cd.INTERVAL}
    with atomic_write(out / "notes.json") as fh:
        fh.write(json.dumps(info, indent=1, sort_keys=True) + "\n")
    log.info("construction delta: %d fit(s), %d note(s) -> %s", len(table), len(notes), out)
    return info
