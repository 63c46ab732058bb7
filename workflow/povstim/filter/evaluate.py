"""Measuring the filter against gold labels: the synthetic generator's ``# dpe`` comments."""

from __future__ import annotations

from typing import Iterable

from ..parse.conllu import Sentence


def gold_labels(sent: Sentence) -> set[str] | None:
    """The generator's ``# dpe`` label(s); None when the sentence carries none."""
    raw = sent.meta.get("dpe")
    if raw is None:
        return None
    labels = {p.strip() for p in raw.replace("+", ",").split(",") if p.strip()}
    return labels - {"none"}


def ratio(a: int, b: int) -> float | None:
    return round(a / b, 6) if b else None


def evaluate(sentences: Iterable[Sentence], settings, mode: str | None = None, matches: list | None = None) -> dict:
    """Precision/recall of the ``mode`` rules (default: the settings' mode) against the gold labels.
    ``matches``: each sentence's matches in that mode when the caller has them (``run.find_modes``)."""
    mode = mode or settings.mode
    per = {p: {"tp": 0, "fp": 0, "fn": 0} for p in settings.rules}
    anyc = {"tp": 0, "fp": 0, "fn": 0}
    n = removed = 0
    for k, sent in enumerate(sentences):
        gold = gold_labels(sent)
        if gold is None:
            continue
        n += 1
        found = {m.phenomenon for m in (settings.find(sent, mode) if matches is None else matches[k])}
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
        c["precision"] = ratio(c["tp"], c["tp"] + c["fp"])
        c["recall"] = ratio(c["tp"], c["tp"] + c["fn"])
    return {
        "mode": mode,
        "n_labelled": n,
        "n_removed": removed,
        "removed_fraction": ratio(removed, n),
        "per_phenomenon": per,
        "any": anyc,
    }
