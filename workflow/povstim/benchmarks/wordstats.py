"""Part-of-speech and object counts per word, from the parse stage's CoNLL-U.

With real corpora POSH-BENCH draws its words from the corpora themselves
(``vocabulary: corpus``): a candidate must be frequent in every corpus (top-K)
*and* used in the corpora with the part of speech its slot needs ("watch" as a
noun, "saw" as a verb), and a strictly intransitive verb must (almost) never have
an object. This module turns parsed shards into the evidence for that:

``words.tsv`` (one row per lower-cased form x UPOS, sorted)::

    form    upos    n       n_obj
    cry     VERB    412     3
    watch   NOUN    57      0

``n_obj`` counts the tokens that govern an ``obj`` dependent (UD), so
``n_obj / n`` over a verb's forms is its object rate. Only parsed sentences count:
the parse stage's surface prefilter leaves sentences no DPE rule could flag
unparsed, so the counts come from a large but question/reflexive-rich sample of
the corpus. That is enough to tell a noun from a verb and a transitive verb from
an intransitive one, which is all they are used for.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from ..io import PovstimError, atomic_write, open_text
from ..parse import conllu

HEADER = ("form", "upos", "n", "n_obj")


@dataclass
class WordStats:
    """Counts per (lower-cased form, UPOS): tokens and tokens governing an ``obj``."""

    n: Counter = field(default_factory=Counter)
    n_obj: Counter = field(default_factory=Counter)

    _totals: Counter | None = field(default=None, repr=False, compare=False)

    def add(self, other: "WordStats") -> None:
        self.n.update(other.n)
        self.n_obj.update(other.n_obj)
        self._totals = None

    def count(self, form: str, upos: str | None = None) -> int:
        form = form.lower()
        if upos is not None:
            return self.n[(form, upos)]
        if self._totals is None:
            self._totals = Counter()
            for (f, _), c in self.n.items():
                self._totals[f] += c
        return self._totals[form]

    def share(self, form: str, upos: str) -> float:
        total = self.count(form)
        return self.count(form, upos) / total if total else 0.0

    def object_rate(self, forms: Iterable[str], upos: str = "VERB") -> tuple[int, float]:
        """(tokens, share governing an object) over ``forms`` used as ``upos``."""
        n = sum(self.n[(f.lower(), upos)] for f in set(forms))
        k = sum(self.n_obj[(f.lower(), upos)] for f in set(forms))
        return n, (k / n if n else 0.0)


def count_sentences(sentences) -> WordStats:
    stats = WordStats()
    for sent in sentences:
        governs_obj = {t.head for t in sent.tokens if t.deprel == "obj" or t.deprel.startswith("obj:")}
        for t in sent.tokens:
            if t.upos in ("_", ""):
                continue  # a token the backend left untagged (gold files mark spared sentences so)
            key = (t.form.lower(), t.upos)
            stats.n[key] += 1
            if t.id in governs_obj:
                stats.n_obj[key] += 1
    return stats


def count_conllu(paths: Iterable[str | Path]) -> WordStats:
    stats = WordStats()
    n_files = 0
    for path in paths:
        n_files += 1
        try:
            with open(path, encoding="utf-8") as fh:
                stats.add(count_sentences(conllu.read(fh, str(path))))
        except OSError as exc:
            raise PovstimError(f"cannot read parse shard {path}: {exc.strerror}") from None
    if n_files == 0:
        raise PovstimError("word statistics need at least one CoNLL-U shard")
    return stats


def write_tsv(stats: WordStats, path: str | Path) -> None:
    with atomic_write(path) as fh:
        fh.write("\t".join(HEADER) + "\n")
        for (form, upos) in sorted(stats.n):
            fh.write(f"{form}\t{upos}\t{stats.n[(form, upos)]}\t{stats.n_obj[(form, upos)]}\n")


def read_tsv(paths: Iterable[str | Path]) -> WordStats:
    """Sum of one or more ``words.tsv`` files; errors name the file and line."""
    stats = WordStats()
    for path in paths:
        with open_text(path, "word statistics") as fh:
            header = fh.readline().rstrip("\n").split("\t")
            if tuple(header) != HEADER:
                raise PovstimError(f"{path}, line 1: expected the header {' '.join(HEADER)}, got {' '.join(header)}")
            for n, line in enumerate(fh, 2):
                parts = line.rstrip("\n").split("\t")
                try:
                    form, upos, k, k_obj = parts[0], parts[1], int(parts[2]), int(parts[3])
                except (IndexError, ValueError):
                    raise PovstimError(f"{path}, line {n}: expected form, upos and two counts") from None
                stats.n[(form, upos)] += k
                stats.n_obj[(form, upos)] += k_obj
    stats._totals = None
    return stats
