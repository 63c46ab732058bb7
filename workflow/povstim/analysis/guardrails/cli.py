"""``povstim guardrails``: the checks a reviewer would ask for, on a finished analysis.

    povstim guardrails --items results/<exp>/analysis/items.parquet --chisq results/<exp>/analysis/chisq.csv
        --benchmarks results/<exp>/benchmarks/posh --models results/<exp>/models/*/*/*/seed* \\
        --params '{"still_learning": 0.01}' --out-dir results/<exp>/analysis/guardrails

Writes guardrails.json, guardrails.csv and guardrails.html (see povstim.analysis.guardrails.checks) and logs
every finding as a GUARDRAIL warning. Findings never change a result and never fail the run.
"""

from __future__ import annotations

import argparse

from povstim.benchmarks.suite import read_suite
from povstim.filter.residual import recall_source
from povstim.io import PovstimError, json_object_arg
from povstim.settings import build
from povstim.analysis.tables.conditions_page import write_page


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = __doc__.split("\n\n", 1)[1]
    p.add_argument("--items", required=True, help="the tidy item table (analysis/items.parquet) or any score parquet")
    p.add_argument("--chisq", help="chisq.csv of the analysis (for the below-chance check)")
    p.add_argument("--benchmarks", nargs="*", default=[], metavar="DIR",
                   help="suite folders (the contrasting words of substitution pairs; the baseline in manifest.json)")
    p.add_argument("--models", nargs="*", default=[], metavar="DIR",
                   help="model folders written by povstim train (train_summary.json, train_log.jsonl)")
    p.add_argument("--conditions", nargs="*", default=[], metavar="JSON",
                   help="condition.json files of the conditions (BABY's measured vs configured reinsert rates)")
    p.add_argument("--conditions-page", metavar="HTML",
                   help="also write the report's conditions table (words, removed and reinserted evidence, rates of "
                   "every --conditions file) here")
    p.add_argument("--params", help="the config's guardrails section as JSON")
    p.add_argument("--residual", metavar="JSON",
                   help='{"backend": parser.backend, "mode": filter.mode, "validation": the filter_validation output or '
                   'null}: the conditions page adds the expected direct evidence left in each filtered condition')
    p.add_argument("--bayes", metavar="DIR",
                   help="the analysis' bayes/ folder: every fit whose diagnostics.json says it did not converge is named")
    p.add_argument("--out-dir", required=True, help="output folder")


def run(args) -> int:
    import json
    import logging
    from pathlib import Path

    # deferred: pandas loads when the command runs, not for --help
    import pandas as pd

    from povstim.analysis.guardrails import checks as G
    from povstim.analysis.tables.tidy import read_frame

    settings = build(G.GuardrailSettings, "guardrails", json_object_arg(args.params, "--params"))
    items = read_frame(Path(args.items), "items")
    if "final" in items.columns:
        items = items[items["final"]]
    chisq = pd.read_csv(args.chisq) if args.chisq else None
    log = logging.getLogger("povstim.guardrails")
    missing = [d for d in args.benchmarks + args.models + args.conditions if not Path(d).exists()]
    if missing:
        log.info("skipping %d missing folder(s) (e.g. %s): the checks that need them see less", len(missing),
                 missing[0])
    pairs = [p for d in args.benchmarks if Path(d).exists() for p in read_suite(d)]
    runs = [G.read_run(d) for d in args.models if Path(d).exists()]
    manifests = [json.loads((Path(d) / "manifest.json").read_text()) for d in args.benchmarks
                 if (Path(d) / "manifest.json").exists()]
    conditions = [G.read_condition(p) for p in args.conditions if Path(p).exists()]
    result = G.run_checks(runs, items, pairs, chisq, settings, manifests, conditions, G.read_fit_diagnostics(args.bayes))
    G.write_outputs(result, args.out_dir)
    if args.conditions_page:
        residual = None
        if args.residual:
            spec = json_object_arg(args.residual, "--residual")
            if not {"backend", "mode"} <= set(spec):
                raise PovstimError('--residual: give {"backend": ..., "mode": ..., "validation": ...}')
            residual = recall_source(spec["backend"], spec["mode"], spec.get("validation"))
        write_page(conditions, args.conditions_page, settings.size_label, residual)
    return 0
