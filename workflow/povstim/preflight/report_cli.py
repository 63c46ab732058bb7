"""``povstim report CONFIG``: the Snakemake HTML report of an experiment, built from the config that made it.

    povstim report configs/mine.yaml            # -> results/<experiment>/report.html
    povstim report results/mine/config.yaml     # the record every run leaves beside its results

Runs ``snakemake --report results/<experiment>/report.html --configfile CONFIG`` with this checkout's
Snakefile in the current folder, so the report and the results always belong to the same experiment.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from ..io import PovstimError, project_dir

REPO = Path(__file__).resolve().parents[3]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = __doc__.split("\n\n", 1)[1]
    p.add_argument("config", metavar="CONFIG", help="the experiment's config (or its record results/<exp>/config.yaml)")
    p.add_argument("--out", help="report path (default: results/<experiment>/report.html; must stay under it)")


def run(args) -> int:
    # deferred: config pulls jsonschema, which --help does not need
    from .. import config as cfg

    config = cfg.load(args.config)
    exp = config["experiment"]
    out = args.out or f"results/{exp}/report.html"
    # the project's own Snakefile (io.project_dir), else that of the checkout povstim is installed from
    snakefile = next((f for f in (project_dir() / "Snakefile", REPO / "Snakefile") if f.exists()), REPO / "Snakefile")
    if not snakefile.exists():
        raise PovstimError(f"no Snakefile at {snakefile}: run povstim report from a povstim checkout")
    if not Path(f"results/{exp}").is_dir():
        raise PovstimError(f"results/{exp}/ does not exist in {Path.cwd()}: run the experiment first "
                           f"(snakemake --cores N --configfile {args.config} -- results/figures)")
    cmd = [sys.executable, "-m", "snakemake", "-s", str(snakefile), "--report", out, "--configfile", args.config]
    env = dict(os.environ)
    proc = subprocess.run(cmd, env=env)
    if proc.returncode != 0:
        raise PovstimError(f"snakemake --report failed (exit {proc.returncode}); its messages are above")
    print(f"report of experiment '{exp}': {out}")
    return 0
