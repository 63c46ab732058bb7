"""The vocabulary-size study of POSH §4.1 / App. D (Table 9).

For each vocabulary size, a BPE tokenizer is trained on each corpus and the
corpus token count (CTC) is measured. Corpora of equal word count can differ a
lot in token count (child-directed speech has a smaller lexicon), so models
trained for the same number of steps would see different amounts of text. POSH
picks the vocab size "which minimizes compression-rate discrepancies across
datasets": here the compression rate of a corpus is tokens per word, and the
discrepancy at one corpus size is (max - min) / mean of those rates across the
corpora; the chosen vocab size has the smallest mean discrepancy over sizes.
"""

from __future__ import annotations

import logging
import statistics
from dataclasses import dataclass
from pathlib import Path

from .. import plan
from ..io import parse_size, read_sentences, write_json, write_tsv
from ..settings import build
from . import bpe

log = logging.getLogger("povstim.vocab_study")


@dataclass(frozen=True)
class StudySettings:
    """The ``vocab_study:`` section (defaults: workflow/schemas/config/vocab_study.schema.yaml)."""

    vocab_sizes: tuple[int, ...]
    conditions: tuple[str, ...] | None
    sizes: tuple[str, ...] | None


def study_settings(given: dict | None = None, where: str = "--study", **overrides) -> StudySettings:
    return build(StudySettings, "vocab_study", given, where=where, **overrides)


@dataclass(frozen=True)
class Row:
    vocab_size: int
    corpus: str
    size: str
    sentences: int
    words: int
    tokens: int  # corpus token count, without <s>/</s>
    learned_vocab: int  # BPE stops early when a small corpus has no pair left to merge

    @property
    def tokens_per_word(self) -> float:
        return self.tokens / self.words if self.words else float("nan")


def count(path, vocab_size: int, params: "bpe.TokenizerSettings", corpus: str, size: str) -> Row:
    sentences = read_sentences(path, f"corpus for the vocab study ({corpus} {size})")
    tok = bpe.train(iter(sentences), bpe.tokenizer_settings(params, vocab_size=vocab_size), source=str(path))
    tokens = sum(len(e.ids) for e in tok.encode_batch(sentences, add_special_tokens=False))
    words = sum(len(s.split()) for s in sentences)
    return Row(vocab_size, corpus, size, len(sentences), words, tokens, tok.get_vocab_size())


def discrepancies(rows: list[Row]) -> list[dict]:
    """One record per (vocab_size, size): the spread of tokens-per-word across corpora."""
    out = []
    keys = sorted({(r.vocab_size, r.size) for r in rows}, key=lambda k: (k[0], _size_key(k[1])))
    for vocab, size in keys:
        rates = {r.corpus: r.tokens_per_word for r in rows if r.vocab_size == vocab and r.size == size}
        values = list(rates.values())
        mean = statistics.fmean(values)
        out.append({
            "vocab_size": vocab, "size": size, "corpora": len(values),
            "min_tokens_per_word": min(values), "max_tokens_per_word": max(values),
            "discrepancy": (max(values) - min(values)) / mean if mean else float("nan"),
        })
    return out


def choose(disc: list[dict]) -> dict:
    by_vocab: dict[int, list[float]] = {}
    for d in disc:
        by_vocab.setdefault(d["vocab_size"], []).append(d["discrepancy"])
    means = {v: statistics.fmean(ds) for v, ds in sorted(by_vocab.items())}
    # ties go to the smaller vocabulary (cheaper embeddings, same compression balance)
    best = min(means, key=lambda v: (round(means[v], 12), v))
    return {"chosen_vocab_size": best, "mean_discrepancy": means, "criterion": "min mean (max-min)/mean tokens per word"}


def run_study(corpora: list[tuple[str, str, str]], vocab_sizes, params: "bpe.TokenizerSettings", out: Path) -> dict:
    """Count tokens of every (name, size, path) corpus at every vocab size; write table9.tsv (long),
    table9_wide.tsv (the paper's layout), discrepancy.tsv and choice.json to ``out``; return the choice."""
    vocab_sizes = sorted(set(vocab_sizes))
    rows = []
    for vocab in vocab_sizes:
        for name, size, path in corpora:
            rows.append(count(path, vocab, params, name, size))
            log.info("vocab %d %s %s: %d tokens", vocab, name, size, rows[-1].tokens)
    rows.sort(key=lambda r: (r.vocab_size, r.corpus, _size_key(r.size)))
    out = Path(out)
    write_tsv(out / "table9.tsv", ("vocab_size", "corpus", "size", "sentences", "words", "tokens", "tokens_per_word",
                                   "learned_vocab"),
              [(r.vocab_size, r.corpus, r.size, r.sentences, r.words, r.tokens, f"{r.tokens_per_word:.6f}",
                r.learned_vocab) for r in rows])
    # the paper's layout: one row per vocab size x corpus, one column per corpus size
    sizes = sorted({r.size for r in rows}, key=_size_key)
    tokens = {(r.vocab_size, r.corpus, r.size): r.tokens for r in rows}
    write_tsv(out / "table9_wide.tsv", ("vocab_size", "corpus", *sizes),
              [(vocab, name, *(tokens.get((vocab, name, s), "NA") for s in sizes))
               for vocab in vocab_sizes for name in sorted({r.corpus for r in rows})])
    disc = discrepancies(rows)
    write_tsv(out / "discrepancy.tsv", ("vocab_size", "size", "corpora", "min_tokens_per_word",
                                        "max_tokens_per_word", "discrepancy"),
              [(d["vocab_size"], d["size"], d["corpora"], f"{d['min_tokens_per_word']:.6f}",
                f"{d['max_tokens_per_word']:.6f}", f"{d['discrepancy']:.6f}") for d in disc])
    choice = choose(disc)
    choice["mean_discrepancy"] = {str(k): round(v, 6) for k, v in choice["mean_discrepancy"].items()}
    write_json(out / "choice.json", choice)
    return choice


def _size_key(size: str):
    try:
        return parse_size(size)
    except Exception:
        return size


def study_corpora(config: dict) -> list[tuple[str, str]]:
    """(condition, size) pairs the config's vocab_study compares (default: every condition at every size)."""
    spec = config.get("vocab_study") or {}
    conditions = spec.get("conditions") or list(config["conditions"])
    only = [str(s) for s in spec.get("sizes") or []]
    return [(c, s) for c in conditions for s in plan.condition_sizes(config, c) if not only or s in only]
