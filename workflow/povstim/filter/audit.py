"""Measuring the filter: gold precision/recall, per-rule counts, App. C sanity-check samples."""

from __future__ import annotations

import random
from typing import Iterable

from ..parse.conllu import Sentence
from ..parse.tokenize import tokenize
from .lexicon import AUX_FORMS, REFLEXIVES
from .rules import Settings, find_dpe


def gold_labels(sent: Sentence) -> set[str] | None:
    """The generator's ``# dpe`` label(s); None when the sentence carries none."""
    raw = sent.meta.get("dpe")
    if raw is None:
        return None
    labels = {p.strip() for p in raw.replace("+", ",").split(",") if p.strip()}
    return labels - {"none"}


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 6) if b else None


def evaluate(sentences: Iterable[Sentence], settings: Settings) -> dict:
    """Precision/recall of ``settings`` against the gold ``# dpe`` labels (phenomena in settings.rules)."""
    per = {p: {"tp": 0, "fp": 0, "fn": 0} for p in settings.rules}
    anyc = {"tp": 0, "fp": 0, "fn": 0}
    n = removed = 0
    for sent in sentences:
        gold = gold_labels(sent)
        if gold is None:
            continue
        n += 1
        found = {m.phenomenon for m in find_dpe(sent, settings)}
        removed += bool(found)
        for p in settings.rules:
            c = per[p]
            if p in found and p in gold:
                c["tp"] += 1
            elif p in found:
                c["fp"] += 1
            elif p in gold:
                c["fn"] += 1
        g_any = bool(gold & set(settings.rules))
        if found and g_any:
            anyc["tp"] += 1
        elif found:
            anyc["fp"] += 1
        elif g_any:
            anyc["fn"] += 1
    for c in list(per.values()) + [anyc]:
        c["n_gold"] = c["tp"] + c["fn"]
        c["precision"] = _ratio(c["tp"], c["tp"] + c["fp"])
        c["recall"] = _ratio(c["tp"], c["tp"] + c["fn"])
    return {
        "mode": settings.mode,
        "n_labelled": n,
        "n_removed": removed,
        "removed_fraction": _ratio(removed, n),
        "per_phenomenon": per,
        "any": anyc,
    }


def _lower_words(text: str) -> list[str]:
    return [w.lower().replace("’", "'") for w in tokenize(text)[0]]


def qf_sanity_candidate(text: str) -> bool:
    """App. C sanity check: a question mark and at least two auxiliaries."""
    if "?" not in text:
        return False
    return sum(w in AUX_FORMS for w in _lower_words(text)) >= 2


def binding_sanity_candidate(text: str) -> bool:
    """App. C sanity check: the sentence holds a reflexive."""
    return any(w in REFLEXIVES for w in _lower_words(text))


SANITY_CHECKS = {
    "question_formation": qf_sanity_candidate,
    "binding": binding_sanity_candidate,
}


def sanity_samples(survivors: dict[int, str], size: int, seed: int) -> dict[str, tuple[int, list[int]]]:
    """For each check: (number of candidates among the survivors, a seeded random sample of their ids)."""
    out = {}
    for name, test in SANITY_CHECKS.items():
        cands = [i for i in sorted(survivors) if test(survivors[i])]
        rng = random.Random(f"{seed}:sanity:{name}")
        pick = sorted(rng.sample(cands, min(size, len(cands))))
        out[name] = (len(cands), pick)
    return out
