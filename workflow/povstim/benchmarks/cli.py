"""``povstim benchmark``: generate POSH-BENCH or import a suite into the benchmark schema.

    povstim benchmark --suite posh --params '{"kind": "generated", "pairs_per_paradigm": 500,
        "top_k_words": 3000, "seed": 1}' --corpus baby/base.txt --corpus wiki/base.txt
        --out-dir results/benchmarks/posh
    povstim benchmark --suite posh --params '{"kind": "generated", "vocabulary": "corpus"}'
        --corpus baby/base.txt --corpus wiki/base.txt --word-stats parse/baby/50M/words.tsv
        --out-dir results/benchmarks/posh
    povstim benchmark --suite blimp --params '{"kind": "blimp", "path": "data/blimp"}'
        --out-dir results/benchmarks/blimp

Writes one ``{paradigm}.jsonl`` per paradigm and ``manifest.json`` (pair counts
per paradigm, the parameters, and for generated suites the size of each word
class after the top-K filter, the word pools with the K needed to grow them,
and the word-frequency baseline's accuracy on every --corpus).
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from ..io import PovstimError, json_object_arg
from .build import build_suite, suite_spec

log = logging.getLogger("povstim.benchmark")

def add_arguments(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = __doc__.split("\n\n", 1)[1]
    p.add_argument("--suite", required=True, help="suite name (written into every pair's 'suite' field)")
    p.add_argument(
        "--params",
        help="the suite's config as JSON: {kind: generated|suite|blimp|zorro|scamp|posh|jsonl|csv, ...}; "
        "generated takes pairs_per_paradigm, top_k_words, seed, paradigms; importers take path "
        "(and columns for jsonl/csv)",
    )
    p.add_argument("--kind", help="instead of --params: the suite kind")
    p.add_argument("--path", help="instead of --params: the file or folder to import")
    p.add_argument("--pairs-per-paradigm", type=int, help="generated: pairs per paradigm (schema default 500)")
    p.add_argument("--top-k-words", type=int, help="generated: K of the top-K word intersection (schema default 3000)")
    p.add_argument("--seed", type=int, help="generated: random seed (schema default 1)")
    p.add_argument(
        "--corpus", action="append", default=[], metavar="TXT",
        help="generated: a corpus whose top-K words bound the vocabulary (repeat; the intersection is used)",
    )
    p.add_argument(
        "--word-stats", action="append", default=[], metavar="TSV",
        help="generated: words.tsv of the parses (povstim word-stats; repeat): with vocabulary auto or corpus, "
        "words must be used in their slot's part of speech in the corpora",
    )
    p.add_argument("--out-dir", required=True, help="output folder, e.g. results/benchmarks/posh")


def _spec(args) -> dict:
    spec = json_object_arg(args.params, "--params")
    for key, value in (("kind", args.kind), ("path", args.path), ("pairs_per_paradigm", args.pairs_per_paradigm),
                       ("top_k_words", args.top_k_words), ("seed", args.seed)):
        if value is not None:
            spec[key] = value
    if "kind" not in spec:
        raise PovstimError("say which suite to build: --params '{\"kind\": ...}' or --kind")
    return suite_spec(args.suite, spec)


def run(args) -> int:
    spec = _spec(args)
    if spec["kind"] != "generated" and (args.corpus or args.word_stats):
        log.warning("--corpus and --word-stats are only used by generated suites; ignoring them")
    manifest = build_suite(args.suite, spec, args.corpus, Path(args.out_dir), args.word_stats)
    log.info("suite %s: %d items (%d pairs) in %d paradigms -> %s", args.suite,
             manifest.get("n_items", manifest["n_pairs"]), manifest["n_pairs"], len(manifest["paradigms"]),
             args.out_dir)
    return 0
