"""``povstim plan CONFIG``: what a config will use, before anything is trained.

Cleans every source in memory exactly as the pipeline would (synthetic sources are generated) and
prints: sentences and words per source after cleaning (and what was dropped, and why); for each corpus
and size, the words each source must give and has, and the largest size the mixture allows; for each
generated benchmark suite, how many words of each class survive top_k_words over the corpora at the
largest size, and the K a class needs, with a warning for a thin word pool (a class of one or two words:
every item of its templates reuses them); the evidence estimate: for each filtered corpus and size, what
the DPE filter removes, BABY's targeted pool (what `reinsert` can put back) and a warning when a
configured reinsertion rate or a dose of a dose series cannot (or may not) be met: the shortfall a run would
end with (exact with the gold parser, from a parsed sample with spaCy/stanza: --filter-sample); and the casing check: a warning when a source's casing
and a benchmark suite's items disagree and tokenizer.lowercase is false (and the same for their final
punctuation, "happy?" vs "happy ?"). With --forecast: seconds per training and scoring job on this machine
(calibrated per arch, cached), steps and epochs per size, whether each budget reaches a dev-loss plateau, and
the wall time at --cores N. Remote sources must be downloaded
first (it says how).

    povstim plan configs/mine.yaml
    povstim plan configs/mine.yaml --json plan.json
    povstim plan configs/mine.yaml --forecast --cores 2
"""

from __future__ import annotations

import argparse
from pathlib import Path

from . import config_command
from ..io import PovstimError, project_dir

def add_arguments(p: argparse.ArgumentParser) -> None:
    config_command(p, __doc__)
    p.add_argument("--base-dir", type=Path, default=None,
                   help="folder that relative local source paths are relative to (default: the project folder, "
                   "the one holding the Snakefile you run, as in the pipeline)")
    p.add_argument("--downloads", type=Path, default=Path("resources/downloads"),
                   help="download cache of remote sources (default: resources/downloads)")
    p.add_argument("--json", type=Path, help="also write the plan as JSON here")
    p.add_argument("--forecast", action="store_true",
                   help="also forecast each training and scoring job's seconds on this machine (a short calibration "
                   "of each arch, its estimated cost printed before it starts, cached in resources/forecast/ by CPU "
                   "model and reused only at a comparable load), the steps and epochs each size gets, whether its "
                   "budget reaches a dev-loss plateau (and whether the config is inside the range the plateau rule "
                   "was fitted on), and the wall time at --cores; sizes found TOO LARGE are not forecast")
    p.add_argument("--cores", type=int, default=2, metavar="N",
                   help="cores of the forecast's wall time, as snakemake --cores N (default 2)")
    p.add_argument("--recalibrate", action="store_true", help="measure the forecast's calibrations again")
    p.add_argument("--filter-sample", type=int, default=None, metavar="N",
                   help="sentences of each filtered corpus parsed to estimate the DPE filter's removals and BABY's "
                   "targeted pool with spaCy/stanza (default 5000; 0: no estimate); the gold parser counts all")


def run(args) -> int:
    # deferred: config pulls jsonschema and the plan the corpus and benchmark stages, which --help does not need
    from .. import config as cfg
    from .plan import make_plan, render, stops_the_run, write_json_report

    config = cfg.load(args.config)
    base = args.base_dir or project_dir()
    if args.cores < 1:
        raise PovstimError(f"--cores {args.cores}: at least 1")
    result = make_plan(config, base, args.downloads, args.filter_sample,
                       forecast_cores=args.cores if (args.forecast or args.recalibrate) else None,
                       recalibrate=args.recalibrate)
    print(render(result), end="")
    if args.json:
        write_json_report(result, args.json)
    # A source that is missing or cleans to nothing stops the run at its clean job: an error here too,
    # naming its config key and files (a remote source not downloaded yet is only not counted yet).
    broken = [s["note"] for s in result["sources"].values() if s["status"] in ("missing", "empty")]
    if broken:
        raise PovstimError("; ".join(broken))
    return 3 if stops_the_run(result) else 0
