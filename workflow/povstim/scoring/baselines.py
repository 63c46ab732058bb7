"""Corpus baselines scored like models (same item-score table).

- ``unigram``: BabyBERTa's word-frequency baseline — a sentence's score is the
  sum of the relative corpus frequencies of its words, and a pair counts as
  correct when the grammatical sentence's sum is larger. (The column is still
  called ``logp_*``; for this baseline it holds that sum.)
- ``ngram``: an interpolated Kneser-Ney word n-gram model (discount 0.75,
  unknown words share an interpolated uniform floor) trained on the corpus;
  a sentence's score is the sum of its words' log-probabilities including the
  end-of-sentence token, with ``<s>`` padding so the first word is scored.

Words are lower-cased word characters and single punctuation marks.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from ..io import PovstimError, iter_sentences
from .scorer import Scores

_TOKEN_RE = re.compile(r"\w+|[^\w\s]")
BOS, EOS = "<s>", "</s>"


def words(sentence: str) -> list[str]:
    return _TOKEN_RE.findall(sentence.lower())


def _read(corpora) -> list[list[str]]:
    out = [words(line) for path in corpora for line in iter_sentences(path, "baseline corpus")]
    if not any(out):
        raise PovstimError(f"baseline corpus {', '.join(map(str, corpora))} holds no words")
    return out


class UnigramFrequency:
    def __init__(self, sentences: list[list[str]]):
        self.counts = Counter(w for s in sentences for w in s)
        self.total = sum(self.counts.values())

    def score(self, sentences: list[str]) -> Scores:
        toks = [words(s) for s in sentences]
        logp = np.array([sum(self.counts[w] for w in t) / self.total for t in toks], dtype=np.float64)
        return Scores(logp=logp, ntok=np.array([len(t) for t in toks], dtype=np.int64))

    def logprob(self, sentences: list[str]) -> Scores:
        """Unigram log-probability of each sentence, ``sum_w log p(w)`` over its words, with add-one smoothing
        so an unseen word has a probability: ``p(w) = (count(w) + 1) / (total + V + 1)`` (V word types; the +1
        is every unseen word's share). ``ntok``: the number of words (SLOR's |s|, scoring/words.py)."""
        denom = math.log(self.total + len(self.counts) + 1)
        toks = [words(s) for s in sentences]
        logp = np.array([math.fsum(math.log(self.counts[w] + 1) - denom for w in t) for t in toks], dtype=np.float64)
        return Scores(logp=logp, ntok=np.array([len(t) for t in toks], dtype=np.int64))


class KneserNey:
    """Interpolated Kneser-Ney n-gram model over words."""

    def __init__(self, sentences: list[list[str]], order: int = 3, discount: float = 0.75):
        if order < 1:
            raise PovstimError("n-gram order must be at least 1")
        self.n, self.d = order, discount
        self.vocab = {w for s in sentences for w in s} | {EOS}
        grams: list[Counter] = [Counter() for _ in range(order + 1)]  # grams[k]: k-gram counts
        for s in sentences:
            seq = [BOS] * (order - 1) + s + [EOS]
            for k in range(1, order + 1):
                for i in range(max(0, order - 1 - (k - 1)), len(seq) - k + 1):
                    grams[k][tuple(seq[i : i + k])] += 1
        # Highest order uses raw counts; lower orders use continuation counts
        # (how many distinct words precede the k-gram).
        self.count: list[Counter] = [Counter() for _ in range(order + 1)]
        self.count[order] = grams[order]
        for k in range(1, order):
            cont = Counter()
            for g in grams[k + 1]:
                cont[g[1:]] += 1
            self.count[k] = cont
        self.ctx_total: list[dict] = [defaultdict(int) for _ in range(order + 1)]
        self.ctx_types: list[dict] = [defaultdict(int) for _ in range(order + 1)]
        for k in range(1, order + 1):
            for g, c in self.count[k].items():
                self.ctx_total[k][g[:-1]] += c
                self.ctx_types[k][g[:-1]] += 1

    def prob(self, word: str, history: tuple[str, ...]) -> float:
        p = 1.0 / (len(self.vocab) + 1)  # uniform floor, +1 for unknown words
        for k in range(1, self.n + 1):
            h = history[len(history) - (k - 1) :] if k > 1 else ()
            total = self.ctx_total[k].get(h, 0)
            if total == 0:
                continue  # unseen context: keep the lower-order estimate
            c = self.count[k].get(h + (word,), 0)
            p = max(c - self.d, 0.0) / total + self.d * self.ctx_types[k][h] / total * p
        return p

    def score(self, sentences: list[str]) -> Scores:
        logps, ntoks = [], []
        for s in sentences:
            seq = [BOS] * (self.n - 1) + words(s) + [EOS]
            lp = 0.0
            for i in range(self.n - 1, len(seq)):
                lp += math.log(self.prob(seq[i], tuple(seq[i - self.n + 1 : i])))
            logps.append(lp)
            ntoks.append(len(seq) - (self.n - 1))
        return Scores(logp=np.array(logps, dtype=np.float64), ntok=np.array(ntoks, dtype=np.int64))


def train_baseline(kind: str, corpora: list[str | Path], order: int = 3):
    sentences = _read(corpora)
    if kind == "unigram":
        return UnigramFrequency(sentences)
    if kind == "ngram":
        return KneserNey(sentences, order=order)
    raise PovstimError(f"unknown baseline {kind!r}: use unigram or ngram")
