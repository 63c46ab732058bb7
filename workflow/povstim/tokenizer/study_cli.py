"""``povstim vocab-study``: corpus token counts per vocab size (POSH Table 9)."""

from __future__ import annotations

import argparse
import json
import logging
import time
from pathlib import Path

from ..io import PovstimError, atomic_write, write_json

log = logging.getLogger("povstim.vocab_study")
DEFAULT_VOCAB_SIZES = [8192, 32768, 49152, 65536]


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
    p.add_argument("--params", default="{}", help="the config's tokenizer: section as JSON (vocab_size is replaced)")
    p.add_argument("--study", default="{}", help='the config\'s vocab_study: section as JSON, e.g. {"vocab_sizes": [8192, 32768]}')
    p.add_argument("--vocab-sizes", type=int, nargs="+", help=f"vocab sizes (default {DEFAULT_VOCAB_SIZES})")
    p.add_argument("--out-dir", required=True, help="output folder")


def run(args) -> int:
    from . import study
    from .cli import parse_params

    params = parse_params(args.params)
    params.pop("vocab_size", None)
    spec = parse_params(args.study)
    unknown = sorted(set(spec) - {"vocab_sizes", "conditions", "sizes"})
    if unknown:
        raise PovstimError(f"vocab_study: unknown key(s) {', '.join(unknown)}; known: conditions, sizes, vocab_sizes")
    vocab_sizes = sorted(set(args.vocab_sizes or spec.get("vocab_sizes") or DEFAULT_VOCAB_SIZES))
    rows = []
    t0 = time.perf_counter()
    for vocab in vocab_sizes:
        for name, size, path in args.corpus:
            if not Path(path).is_file():
                raise PovstimError(f"{path}: corpus for vocab study ({name} {size}) not found")
            rows.append(study.count(path, vocab, params, name, size))
            log.info("vocab %d %s %s: %d tokens", vocab, name, size, rows[-1].tokens)
    rows.sort(key=lambda r: (r.vocab_size, r.corpus, study._size_key(r.size)))
    out = Path(args.out_dir)
    with atomic_write(out / "table9.tsv") as fh:
        fh.write("vocab_size\tcorpus\tsize\tsentences\twords\ttokens\ttokens_per_word\tlearned_vocab\n")
        for r in rows:
            fh.write(f"{r.vocab_size}\t{r.corpus}\t{r.size}\t{r.sentences}\t{r.words}\t{r.tokens}\t"
                     f"{r.tokens_per_word:.6f}\t{r.learned_vocab}\n")
    # the paper's layout: one row per vocab size x corpus, one column per corpus size
    sizes = sorted({r.size for r in rows}, key=study._size_key)
    with atomic_write(out / "table9_wide.tsv") as fh:
        fh.write("vocab_size\tcorpus\t" + "\t".join(sizes) + "\n")
        for vocab in vocab_sizes:
            for name in sorted({r.corpus for r in rows}):
                cells = {r.size: r.tokens for r in rows if r.vocab_size == vocab and r.corpus == name}
                fh.write(f"{vocab}\t{name}\t" + "\t".join(str(cells.get(s, "NA")) for s in sizes) + "\n")
    disc = study.discrepancies(rows)
    with atomic_write(out / "discrepancy.tsv") as fh:
        fh.write("vocab_size\tsize\tcorpora\tmin_tokens_per_word\tmax_tokens_per_word\tdiscrepancy\n")
        for d in disc:
            fh.write(f"{d['vocab_size']}\t{d['size']}\t{d['corpora']}\t{d['min_tokens_per_word']:.6f}\t"
                     f"{d['max_tokens_per_word']:.6f}\t{d['discrepancy']:.6f}\n")
    choice = study.choose(disc)
    choice["mean_discrepancy"] = {str(k): round(v, 6) for k, v in choice["mean_discrepancy"].items()}
    write_json(out / "choice.json", choice)
    log.info("vocab study of %d corpora x %d vocab sizes in %.1fs: chosen %d", len(args.corpus), len(vocab_sizes),
             time.perf_counter() - t0, choice["chosen_vocab_size"])
    print(json.dumps(choice, sort_keys=True))
    return 0
