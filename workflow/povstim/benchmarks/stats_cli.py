"""``povstim word-stats``: part-of-speech and object counts per word from parsed shards.

    povstim word-stats results/<exp>/parse/baby/50M/*.conllu --out results/<exp>/parse/baby/50M/words.tsv

The evidence ``vocabulary: corpus`` uses to keep a candidate benchmark word only
when the corpora use it in its slot's role (benchmarks/wordstats.py).
"""

from __future__ import annotations

import argparse
import logging

from .wordstats import count_conllu, write_tsv

log = logging.getLogger("povstim.word_stats")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = __doc__.split("\n\n", 1)[1]
    p.add_argument("shards", nargs="+", metavar="CONLLU", help="parsed shards (povstim parse)")
    p.add_argument("--out", required=True, help="words.tsv to write: form, upos, n, n_obj")


def run(args) -> int:
    stats = count_conllu(args.shards)
    write_tsv(stats, args.out)
    log.info("%d forms x tags, %d tokens from %d shard(s) -> %s", len(stats.n), sum(stats.n.values()),
             len(args.shards), args.out)
    return 0
