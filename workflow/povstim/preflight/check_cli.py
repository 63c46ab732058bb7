"""``povstim check CONFIG``: validate config files before running anything.

Reads each file as the Snakefile does and reports the first problem with the file's name and the line
(YAML syntax) or the key (a misspelled key, a wrong type, a value that breaks another section: a mixture
naming an unknown source, ``n_embd`` not divisible by ``n_head``, a csv/tsv source's ``text_column`` (or
speaker, age, transcript column) that the header line of its file lacks, ...). Snakemake itself parses
``--configfile`` before the workflow starts and says only "Config file is not valid JSON or YAML":
this command names the line.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..io import project_dir, project_path


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = __doc__.split("\n\n", 1)[1]
    p.add_argument("configs", nargs="+", metavar="CONFIG", help="config file(s) (YAML)")


def run(args) -> int:
    # deferred: config pulls jsonschema and the plan every registry, which --help does not need
    from .. import config as cfg
    from .. import languages, plan
    from ..sources.clean import check_columns, empty_local

    for path in args.configs:
        config = cfg.load(path)
        models = plan.scored_models(config)  # trained models and n-gram corpus models
        warnings = []
        # every check first: an error (a csv's missing column) must not follow an "OK" line
        for name, spec in config["sources"].items():
            if spec["kind"] == "local":
                where = project_path(spec["path"])
                if not where.exists():
                    warnings.append(f"{path}: warning: sources.{name}.path {spec['path']} does not exist yet ({where}); "
                                    "relative paths are relative to the project folder (the one holding the Snakefile you run)")
                elif why := empty_local(name, spec, where):  # a 0-byte file, an empty folder: as clean says
                    warnings.append(f"{path}: warning: {why}")
                else:
                    check_columns(name, spec, project_dir())  # a csv/tsv's named columns, from its header line
        print(f"{path}: OK: experiment '{config['experiment']}', {len(config['sources'])} source(s), "
              f"{len(config['corpora'])} corpora x {len(config['sizes'])} size(s), {len(config['conditions'])} "
              f"condition(s), {len(models)} model(s), suites {', '.join(plan.suites(config))}; outputs under "
              f"results/{config['experiment']}/")
        for w in warnings:
            print(w)
        # a language no filter rule covers gets no BABY-F: say so before anything runs
        covered = plan.rule_languages(config)
        uncovered = sorted({c for corpus in config["corpora"] for c in plan.corpus_languages(config, corpus)
                            if c not in covered})
        if uncovered:
            asked = [n for n in config["conditions"] if plan.filter_note(config, n)]
            print(f"{path}: note: {', '.join(languages.get(c).name for c in uncovered)} has no DPE filter here "
                  f"(filter.rules cover: {', '.join(sorted(covered)) or 'none'}): "
                  + (f"{', '.join(f'conditions.{n}' for n in asked)} asks for filter: true and is built unfiltered "
                     "(condition.json, log and report say so)" if asked else
                     "no BABY-F can be built; a filter: true condition would be built unfiltered"))
        for line in plan.void_definition_lines(config):  # as plan and the run's console say it
            print(f"{path}: warning: {line}")
    return 0
