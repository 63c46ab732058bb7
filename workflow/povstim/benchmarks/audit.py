"""Which paradigms a corpus baseline already solves.

A minimal pair tests structure only if word frequency alone cannot tell its
members apart. POSH's wh-island *whether* templates contrast "whether" with
"that": "that" is far more frequent in any corpus, so BabyBERTa's word-frequency
baseline (a sentence scores the sum of its words' corpus frequencies) prefers the
good member every time, and a language model scoring 100% there may have learnt
nothing about islands. This module measures that on the suite itself, per
paradigm and per template, for each frequency corpus, and names what is solved.

Two entry points:

* :func:`unigram_report` -- at benchmark time, from the word counts of the corpora
  the words were drawn from (``manifest.json`` field ``baseline``);
* :func:`solved_by_baselines` -- after scoring, from a table of item scores
  (``povstim score --baseline unigram|ngram`` rows have arch = the baseline),
  for reports that compare models with baselines.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict

# Same word definition as the frequency filter (words.word_counts): punctuation
# and case are the same in both members of every POSH pair, so they cannot
# change a verdict.
_WORD_RE = re.compile(r"[a-z]+")


def unigram_score(sentence: str, counts: Counter, total: int) -> float:
    """BabyBERTa's word-frequency baseline: the sum of the words' relative corpus frequencies."""
    return sum(counts[w] for w in _WORD_RE.findall(sentence.lower())) / total


def unigram_accuracy(pairs, counts: Counter) -> dict:
    """Accuracy of the frequency baseline per paradigm and per template (a tie is not correct)."""
    total = sum(counts.values()) or 1
    hits: dict[str, dict[str, list[int]]] = {"paradigms": defaultdict(lambda: [0, 0]),
                                             "templates": defaultdict(lambda: [0, 0])}
    for p in pairs:
        correct = unigram_score(p.good, counts, total) > unigram_score(p.bad, counts, total)
        keys = [("paradigms", p.paradigm)]
        if "template" in p.extra:
            keys.append(("templates", p.extra["template"]))
        for level, key in keys:
            hits[level][key][0] += correct
            hits[level][key][1] += 1
    return {level: {k: round(c / n, 4) for k, (c, n) in sorted(d.items())} for level, d in hits.items() if d}


def unigram_report(pairs, counts: list[Counter], names: list[str], threshold: float) -> dict:
    """Frequency-baseline accuracy on every corpus, and what it solves (accuracy >= ``threshold``).

    ``solved`` lists ``{corpus, level, name, accuracy}``; a model's accuracy there
    says little about structure.
    """
    per_corpus = {}
    solved = []
    for name, c in zip(names, counts):
        acc = unigram_accuracy(pairs, c)
        per_corpus[name] = acc
        for level, table in acc.items():
            for key, a in table.items():
                if a >= threshold:
                    solved.append({"corpus": name, "level": level[:-1], "name": key, "accuracy": a})
    return {"kind": "unigram", "threshold": threshold, "accuracy": per_corpus, "solved": solved}


def solved_by_baselines(scores, baselines=("unigram", "ngram"), threshold: float = 0.9):
    """Rows (suite, arch, condition, size, paradigm, accuracy) where a baseline's accuracy >= ``threshold``.

    ``scores``: a DataFrame of item scores (columns as ``povstim score`` writes them).
    """
    import pandas as pd

    d = scores[scores["arch"].isin(baselines)]
    if "final" in d.columns:
        d = d[d["final"]]
    if d.empty:
        return pd.DataFrame(columns=["suite", "arch", "condition", "size", "paradigm", "accuracy"])
    acc = (d.groupby(["suite", "arch", "condition", "size", "paradigm"], sort=True)["correct"].mean()
           .rename("accuracy").reset_index())
    return acc[acc["accuracy"] >= threshold].reset_index(drop=True)
