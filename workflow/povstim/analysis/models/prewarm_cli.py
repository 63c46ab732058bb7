"""``povstim analyze-prewarm``: compile the Bayesian model's sampler code before ``analyze`` needs it.

A Snakemake run starts it by itself when its DAG holds an ``analyze`` job (analysis/models/prewarm.py says why and
how); by hand it fills the compile cache for the fit that ``povstim analyze`` will make. It writes nothing
but the cache and always exits 0.
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from pathlib import Path

from povstim.io import PovstimError, json_object_arg
from povstim.analysis.models import prewarm

log = logging.getLogger("povstim.analyze-prewarm")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = __doc__.split("\n", 1)[1] if __doc__ else None
    p.add_argument("--models", required=True, metavar="JSON",
                   help="the models analyze will read: [{arch, condition, size, seed}, ...]")
    p.add_argument("--suites", required=True, metavar="JSON", help="suite name -> its folder")
    p.add_argument("--conditions", metavar="JSON", help="condition -> {source, filtered} (as for analyze)")
    p.add_argument("--archs", metavar="JSON", help="arch -> {bias} (as for analyze)")
    p.add_argument("--params", metavar="JSON", help="the config's analysis section (as for analyze)")
    p.add_argument("--until-started", metavar="LOG", help="stop as soon as this file (analyze's log) changes")
    p.add_argument("--watch-pid", type=int, metavar="PID", help="stop when this process (the Snakemake run) ends")
    p.add_argument("--wait", type=float, default=0.0, metavar="S",
                   help="wait up to S seconds for the suite folder to be written")


def run(args) -> int:
    # deferred: pandas loads when the command runs, not for --help
    from povstim.analysis.pipeline import analysis_settings

    t0 = time.perf_counter()
    log.info("priority lowered: %s", prewarm.lower_priority())
    started = Path(args.until_started) if args.until_started else None
    prewarm.stop_when(started, args.watch_pid, lambda why: prewarm.exit_now(
        f"{why} after {time.perf_counter() - t0:.1f} s: stopped (what was compiled stays cached)"))
    try:
        models = json.loads(args.models)
        if not isinstance(models, list):
            raise PovstimError(f"--models: expected a JSON list, got {args.models!r}")
        suites = {name: Path(folder) for name, folder in json_object_arg(args.suites, "--suites").items()}
        settings = analysis_settings(json_object_arg(args.params, "--params"))
        prewarm.prewarm(models, suites, json_object_arg(args.conditions, "--conditions") or None,
                        json_object_arg(args.archs, "--archs") or None, settings, wait_s=args.wait)
    except Exception as exc:  # noqa: BLE001 -- a prewarm that fails only leaves the cache as it was
        log.warning("nothing more compiled ahead (%s: %s); analyze compiles the rest itself",
                    type(exc).__name__, str(exc).splitlines()[0] if str(exc) else "")
        return 0
    log.info("done in %.1f s (%.1f CPU-s used)", time.perf_counter() - t0, prewarm.cpu_seconds())
    return 0
