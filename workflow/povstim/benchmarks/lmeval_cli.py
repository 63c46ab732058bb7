"""``povstim export-lm-eval``: minimal-pair suites as lm-evaluation-harness tasks (local data, no hub).

    povstim export-lm-eval results/demo/benchmarks/posh ../shared/data/zorro/babyberta --format zorro --out lm-eval-tasks
    HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1 lm_eval --model hf \\
        --model_args pretrained=results/demo/models/gpt2-tiny/baby/10k/seed1,dtype=float64 \\
        --include_path lm-eval-tasks --tasks povstim_posh --log_samples --output_path lm-eval-out

writes OUT/{suite}/ per suite: _template_yaml, one povstim_{suite}_{paradigm}.yaml task per paradigm, the group
_povstim_{suite}.yaml (task povstim_{suite}: all its paradigms) and data/{paradigm}.jsonl. Each sentence is scored
as povstim score scores it by default (log p(sentence | BOS) summed over its tokens), and a tie is counted wrong
(docs/evaluation.md, "lm-evaluation-harness"). The task YAMLs name their data files by absolute path: export again
after moving the folder. The reverse, an lm-eval task folder as a suite: povstim score --suite FOLDER --format lm_eval.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from ..io import PovstimError

log = logging.getLogger("povstim.export")


def add_arguments(p: argparse.ArgumentParser) -> None:
    from .importers import FORMATS

    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = __doc__.split("\n\n", 1)[1]
    p.add_argument("suites", nargs="+", metavar="SUITE", help="suite folders or files (benchmark schema, or see "
                   "--format)")
    p.add_argument("--out", required=True, help="the task folder: one subfolder per suite (replaced if present)")
    p.add_argument("--format", choices=FORMATS, help="read every SUITE with this importer (default: the benchmark "
                   "schema, else guessed from the files as povstim score does)")
    p.add_argument("--suite-name", action="append", default=[], metavar="SUITE=NAME",
                   help="the name of a suite's tasks (default: the suite's own name, else its file name)")


def run(args) -> int:
    from .importers import load_pairs
    from .lmeval import export_suite
    from .tasks import resolve_path

    names = {}
    for spec in args.suite_name:
        suite, sep, name = spec.partition("=")
        if not sep or not suite or not name:
            raise PovstimError(f"--suite-name {spec!r}: write SUITE=NAME")
        names[suite] = name
    loaded = {}
    for path in args.suites:  # every suite read before anything is written
        pairs = load_pairs(resolve_path(path), args.format, names.get(path))
        suite = names.get(path) or str(pairs[0]["suite"])
        if suite in loaded:
            raise PovstimError(f"two suites are named {suite}; name one with --suite-name {path}=NAME")
        loaded[suite] = pairs
    out = Path(args.out)
    for suite, pairs in loaded.items():
        counts = export_suite(pairs, suite, out / suite)
        log.info("%s: %d pairs in %d task(s) -> %s (group povstim_%s)", suite, len(pairs), len(counts),
                 out / suite, suite)
    return 0
