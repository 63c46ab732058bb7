"""``povstim vocab-study``: corpus token counts per vocab size (POSH Table 9)."""

from __future__ import annotations

import argparse
import json
import logging
import time

from ..io import json_object_arg
from . import bpe, study

log = logging.getLogger("povstim.vocab_study")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Reproduce POSH Table 9: train a BPE tokenizer per corpus and vocab size, count the corpus tokens, "
        "and pick the vocab size that minimises the compression-rate (tokens per word) discrepancy across "
        "corpora. Writes table9.tsv (long), table9_wide.tsv (the paper's layout), discrepancy.tsv and choice.json to --out-dir."
    )
    p.add_argument(
        "--corpus", nargs=3, action="append", required=True, metavar=("NAME", "SIZE", "PATH"),
        help="a corpus to study, e.g. --corpus wiki 10M results/corpus/wiki/10M/train.txt (repeatable)",
    )
    p.add_argument("--params", help="the config's tokenizer: section as JSON (vocab_size is replaced)")
    p.add_argument("--study", help='the config\'s vocab_study: section as JSON, e.g. {"vocab_sizes": [8192, 32768]}')
    p.add_argument("--vocab-sizes", type=int, nargs="+", help="vocab sizes (default: vocab_study.vocab_sizes)")
    p.add_argument("--out-dir", required=True, help="output folder")


def run(args) -> int:
    params = bpe.tokenizer_settings(json_object_arg(args.params, "--params"))
    spec = study.study_settings(json_object_arg(args.study, "--study"), vocab_sizes=args.vocab_sizes)
    t0 = time.perf_counter()
    choice = study.run_study([tuple(c) for c in args.corpus], spec.vocab_sizes, params, args.out_dir)
    log.info("vocab study of %d corpora x %d vocab sizes in %.1fs: chosen %d", len(args.corpus),
             len(spec.vocab_sizes), time.perf_counter() - t0, choice["chosen_vocab_size"])
    print(json.dumps(choice, sort_keys=True))
    return 0
