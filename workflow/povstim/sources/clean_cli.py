"""``povstim clean``: a real source -> one utterance/sentence per line + statistics."""

from __future__ import annotations

import argparse
from pathlib import Path

from .clean import clean_source
from .spec import source_spec



def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Clean one real source to one utterance/sentence per line in the project's orthography "
        "(first letter capitalised, final punctuation attached; or BabyBERTa style: lowercased, spaced "
        "final punctuation). CHAT transcripts keep adult speakers' main tiers with CHAT codes stripped; "
        "childes-db CSVs keep adult rows (optionally ordered by child age); text and parquet are "
        "sentence-split. Lines under `min_words` (3) or over `max_sentence_words` (150) words are dropped, and so "
        "are lines with bytes invalid in the encoding or NUL bytes (counted with file:line; `invalid_text: fail` "
        "stops instead). Statistics (lines in/out, drops by reason, malformed lines, words, words/sentence, "
        "share of questions) go to --stats."
    )
    parser.add_argument("--source", required=True, help="source name (the key under `sources:` in the config)")
    parser.add_argument(
        "--params",
        required=True,
        help="the source's config as JSON (kind, format, path for local sources, style, lowercase, min_words, "
        "max_words, drop_roles, age_order, include, ...; see docs/corpora.md)",
    )
    parser.add_argument(
        "--input-dir", type=Path, help="folder with the downloaded files and manifest.json (not for local sources)"
    )
    parser.add_argument(
        "--base-dir",
        type=Path,
        default=None,
        help="folder that a local source's relative `path` is relative to (default: the current folder; "
        "the Snakemake rule passes the repository)",
    )
    parser.add_argument("--out", required=True, type=Path, help="clean text, e.g. results/corpus/clean/NAME.txt")
    parser.add_argument("--stats", required=True, type=Path, help="statistics JSON, e.g. results/corpus/clean/NAME.stats.json")


def run(args: argparse.Namespace) -> int:
    spec = source_spec(args.source, args.params)
    clean_source(args.source, spec, args.out, args.stats, input_dir=args.input_dir, base_dir=args.base_dir)
    return 0
