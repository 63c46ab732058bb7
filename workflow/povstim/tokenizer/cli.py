"""``povstim tokenize``: train a byte-level BPE tokenizer on one training corpus."""

from __future__ import annotations

import argparse
import logging
import time

from ..io import json_object_arg
from . import bpe

log = logging.getLogger("povstim.tokenize")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Train a byte-level BPE tokenizer (POSH §4.1) on a one-sentence-per-line corpus and write a "
        "Hugging Face tokenizer.json. Special tokens <s> </s> <pad> <unk> <mask> make sentence boundaries "
        "explicit and serve both causal (GPT-2) and masked (BabyBERTa) models."
    )
    p.add_argument("--train", required=True, nargs="+",
                   help="training corpus, UTF-8, one sentence per line; several: trained on their union (each "
                   "sentence as often as the corpus holding it most often; tokenizer.shared: true)")
    p.add_argument("--out", required=True, help="output tokenizer.json")
    p.add_argument(
        "--params",
        help="the config's tokenizer: section as JSON, e.g. "
        '\'{"vocab_size": 8192, "lowercase": true, "add_prefix_space": true, "min_frequency": 2}\'; '
        "missing keys take the schema's defaults; the flags below override it",
    )
    p.add_argument("--vocab-size", type=int, help="vocabulary size incl. 256 byte symbols and special tokens")
    p.add_argument("--lowercase", action=argparse.BooleanOptionalAction, default=None, help="lowercase the text")
    p.add_argument(
        "--add-prefix-space", action=argparse.BooleanOptionalAction, default=None,
        help="treat a sentence-initial word like a word after a space (BabyBERTa App. A)",
    )
    p.add_argument("--min-frequency", type=int, help="minimum pair frequency for a merge")


def run(args) -> int:
    settings = bpe.tokenizer_settings(
        json_object_arg(args.params, "--params"), vocab_size=args.vocab_size, lowercase=args.lowercase,
        add_prefix_space=args.add_prefix_space, min_frequency=args.min_frequency,
    )
    t0 = time.perf_counter()
    tok = bpe.train_files(args.train, settings)
    bpe.save(tok, args.out)
    log.info("trained %d-token BPE on %s in %.1fs -> %s", tok.get_vocab_size(), ", ".join(args.train),
             time.perf_counter() - t0, args.out)
    return 0
