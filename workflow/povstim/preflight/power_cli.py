"""``povstim power CONFIG``: the power of the three-level model's condition contrasts before anything is trained.

For every arch (learner) and contrast (BABY-F vs. BABY, BABY vs. WIKI, BABY-F vs. WIKI, overall and per
category): the standard error the configured seeds, sizes and benchmark items give, the chance that the
95% interval excludes 0 at the stated effect (``power.effects``, ``power.category_effects``; defaults from
POSH-BENCH's Table 12), the minimal detectable effect at ``power.target`` power, and the seeds (or pairs per
paradigm) that reach it. A normal approximation of the binomial GLMM (povstim/analysis/models/power.py;
docs/analysis.md, "Power before training").

    povstim power config.yaml
    povstim power configs/mine.yaml --json power.json
"""

from __future__ import annotations

import argparse
from pathlib import Path

from . import config_command
from ..io import project_path, write_json


def add_arguments(p: argparse.ArgumentParser) -> None:
    config_command(p, __doc__)
    p.add_argument("--results", type=Path, default=None,
                   help="the experiment's results folder, where an imported suite's built items are counted "
                   "(default: results/<experiment>)")
    p.add_argument("--json", type=Path, help="also write the power table as JSON here")


def run(args) -> int:
    # deferred: config pulls jsonschema and power scipy, which --help does not need
    from .. import config as cfg
    from ..analysis.models import power

    config = cfg.load(args.config)
    results = args.results or project_path(Path("results") / config["experiment"])
    rep = power.analyse(config, results)
    warning = power.seed_warning(config)
    print("\n".join(power.render(rep) + ([warning] if warning else [])))
    if args.json:
        write_json(args.json, rep)
    return 0
