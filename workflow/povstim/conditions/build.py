"""Build a training condition from an assembled corpus and the DPE audit.

- BABY-F: base.txt minus every sentence ``dpe.tsv`` lists.
- BABY:   BABY-F, then for each phenomenon ``round(rate * len(BABY-F))`` of the
  removed DPE sentences put back — only *targeted* (disambiguating) evidence,
  the removals the strict rule also flags, see :func:`build` — each replacing
  one non-DPE sentence, so BABY has exactly as many sentences as BABY-F and its
  measured DPE rate is the configured one (or, when there is too little
  targeted evidence, as much as there is, reported as a shortfall). The
  replaced sentences are chosen so their words add up to the words put back
  (``operations.match_words``, as the ``reinsert`` operation does): BABY
  matches BABY-F in words too.
- WIKI (or any unfiltered condition): base.txt as is.

Sentences keep their base.txt order (a put-back sentence takes its own
original position), and the train/dev split ranks sentences by a seeded hash
of their base.txt line index, so BABY and BABY-F share the dev sentences they
have in common.
"""

from __future__ import annotations

import hashlib
import logging
import random
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from ..io import PovstimError
from ..settings import build as build_settings
from .operations import WORD_TOLERANCE, match_words, pool_phenomenon, sentences_for

log = logging.getLogger("povstim.condition")


@dataclass
class Condition:
    ids: list[int]                      # base.txt line indices, in corpus order
    dpe_of: dict[int, list[str]]        # id -> phenomena, for every DPE sentence of the base
    reinserted: dict[str, list[int]] = field(default_factory=dict)
    replaced: list[int] = field(default_factory=list)
    pool: dict[str, dict[str, int]] = field(default_factory=dict)  # phenomenon -> candidates to put back
    reinserted_targeted: dict[str, int] = field(default_factory=dict)
    targeted_of: dict[int, set[str]] = field(default_factory=dict)  # id -> phenomena it is targeted evidence for
    shortfall: dict[str, dict[str, int]] = field(default_factory=dict)  # phenomenon -> needed, available


def build(
    n_base: int,
    dpe: dict[int, list[str]] | None,
    reinsert: dict[str, float],
    seed: int,
    targeted: dict[int, set[str]] | None = None,
    words: list[int] | None = None,
) -> Condition:
    """Build the condition's sentence list (see the module docstring).

    ``targeted`` marks the removed sentences a strict rule also flags (every
    audit carries these rows; in strict mode every removal is targeted). BABY
    puts back only those: App. C's other removals (a question with any relative
    clause anywhere, a reflexive after any two nouns) do not disambiguate the
    hypotheses, so filling the rate up with them would make BABY's measured rate
    a rate of false positives. When fewer targeted sentences were removed than
    the rate needs, all of them go back and ``Condition.shortfall`` says how many
    were needed and how many there were (condition.json, and a warning).

    ``words`` (words of each base.txt line) word-matches the sentences the
    reinsertions replace to the sentences put back; required with reinsert rates.
    """
    if dpe is None:
        if any(reinsert.values()):
            raise PovstimError("reinsert is set but the condition has no DPE audit (set filter: true on it)")
        return Condition(list(range(n_base)), {})
    kept = [i for i in range(n_base) if i not in dpe]
    if not kept:
        raise PovstimError(f"every one of the {n_base} sentences was removed as DPE: the filtered corpus is empty")
    targeted = targeted or {}
    cond = Condition(kept, dpe, targeted_of={i: set(p) for i, p in targeted.items() if i in dpe})
    rates = {p: float(r) for p, r in sorted(reinsert.items()) if float(r) > 0}
    if not rates:
        return cond
    rng = random.Random(f"{seed}:reinsert")
    n = len(kept)
    # Only sentences removed for exactly one phenomenon are put back, so putting
    # one back raises exactly one phenomenon's rate and every measured rate
    # equals its configured one.
    first: dict[str, list[int]] = defaultdict(list)
    rest: dict[str, list[int]] = defaultdict(list)
    for i in sorted(dpe):
        if len(dpe[i]) == 1:
            phen = dpe[i][0]
            (first if pool_phenomenon(dpe[i], targeted.get(i, ())) else rest)[phen].append(i)
    cond.pool = {p: {"targeted": len(first.get(p, [])), "other": len(rest.get(p, []))} for p in rates}
    chosen: dict[str, list[int]] = {}
    for phen, rate in rates.items():
        need = sentences_for(rate, n)
        a = first.get(phen, [])
        if need > len(a):
            cond.shortfall[phen] = {"needed": need, "available": len(a)}
            log.warning(
                "SHORTFALL reinsert.%s=%s: a rate of %s in %d sentences needs %d sentences of disambiguating "
                "evidence, but only %d of the removed sentences are (the strict rule flags them, for %s alone); "
                "all %d go back, and BABY's measured rate is %.6f. App. C's other removals are not put back: "
                "they are not evidence. Use a larger corpus or a lower rate to reach the configured rate.",
                phen, rate, rate, n, need, len(a), phen, len(a), len(a) / n)
            chosen[phen] = list(a)
        else:
            chosen[phen] = sorted(rng.sample(a, need))
        cond.reinserted_targeted[phen] = len(chosen[phen])
    total = sum(len(v) for v in chosen.values())
    if total >= n:
        raise PovstimError(f"reinsert rates add up to {total} sentences, as many as the corpus holds ({n})")
    if words is None:
        raise PovstimError("reinsert rates need the base's word counts (words=) to match BABY-F's words")
    # Word-matched room: a seeded sample of the kept sentences, then one-in-one-out swaps until
    # their words equal the words put back, so BABY has BABY-F's sentences and words.
    target = sum(words[i] for v in chosen.values() for i in v)
    tolerance = int(WORD_TOLERANCE * sum(words[i] for i in kept))
    replaced = match_words(kept, total, target, words.__getitem__, rng, tolerance, strict=False)
    gone = set(replaced)
    ids = sorted([i for i in kept if i not in gone] + [i for v in chosen.values() for i in v])
    cond.ids = ids
    cond.reinserted = chosen
    cond.replaced = replaced
    return cond


def split(ids: list[int], dev_fraction: float, seed: int) -> tuple[list[int], list[int]]:
    """Deterministic train/dev split: the dev set is the ids with the lowest seeded hash."""
    if len(ids) < 2:
        raise PovstimError(f"a condition needs at least 2 sentences for a train/dev split, it has {len(ids)}")
    n_dev = min(max(1, int(round(dev_fraction * len(ids)))), len(ids) - 1)

    def key(i: int) -> bytes:
        return hashlib.sha256(f"{seed}:{i}".encode()).digest()

    dev = set(sorted(ids, key=key)[:n_dev])
    return [i for i in ids if i not in dev], [i for i in ids if i in dev]


@dataclass(frozen=True)
class SplitSettings:
    """The ``split:`` section (defaults: workflow/schemas/config/split.schema.yaml)."""

    dev_fraction: float
    seed: int


def split_settings(given: dict | None = None, where: str = "--split") -> SplitSettings:
    return build_settings(SplitSettings, "split", given, where=where)


def _rate(k: int, n: int) -> float:
    return round(k / n, 8) if n else 0.0


def vs_reference(n: int, n_words: int, n_base_words: int, ref: dict) -> dict:
    """condition.json's relative differences: sentences and words against the reference (token matching), words
    against the base corpus."""
    return {
        "sentences_vs_reference": round(n / ref["n_sentences"] - 1, 8) if ref["n_sentences"] else 0.0,
        "words_vs_reference": round(n_words / ref["n_words"] - 1, 8) if ref["n_words"] else 0.0,
        "words_vs_base": round(n_words / n_base_words - 1, 8) if n_base_words else 0.0,
    }


def condition_stats(base: str, lines: list[str], cond: Condition, reinsert: dict, train: list[int],
                    dev: list[int], split: SplitSettings, filtered: bool) -> dict:
    """condition.json: counts, what was removed and put back, and the measured DPE rates."""
    n = len(cond.ids)
    dpe_of = cond.dpe_of
    present = Counter(p for i in cond.ids for p in dpe_of.get(i, []))
    targeted_present = Counter(p for i in cond.ids for p in dpe_of.get(i, []) if p in cond.targeted_of.get(i, ()))
    removed = Counter(p for ps in dpe_of.values() for p in ps)
    n_words = sum(len(lines[i].split()) for i in cond.ids)
    n_base_words = sum(len(x.split()) for x in lines)
    # token matching, as for conditions built by operations (opsrun.stats): the reference is the corpus after
    # the filter's removal (BABY-F), or the base when nothing is removed; the reinsertions keep it
    ref_ids = [i for i in range(len(lines)) if i not in dpe_of]
    ref = {"after_step": 0 if dpe_of else None, "n_sentences": len(ref_ids),
           "n_words": sum(len(lines[i].split()) for i in ref_ids)}
    return {
        "base": base,
        "filtered": filtered,
        "n_base": len(lines),
        "n_dpe_removed": len(dpe_of),
        "dpe_removed": dict(sorted(removed.items())),
        "n_filtered": len(lines) - len(dpe_of),
        "reinsert_config": dict(sorted(reinsert.items())),
        "reinserted": {p: len(v) for p, v in sorted(cond.reinserted.items())},
        "n_replaced": len(cond.replaced),
        "reinsert_pool": cond.pool,
        "reinserted_targeted": dict(sorted(cond.reinserted_targeted.items())),
        "reinsert_shortfall": dict(sorted(cond.shortfall.items())),
        "n_sentences": n,
        "n_words": n_words,
        "n_base_words": n_base_words,
        "reference": ref,
        **vs_reference(n, n_words, n_base_words, ref),
        "n_train": len(train),
        "n_dev": len(dev),
        "dev_fraction": split.dev_fraction,
        "seed": split.seed,
        "dpe_count": dict(sorted(present.items())),
        "dpe_rate": {p: _rate(present.get(p, 0), n) for p in sorted(set(removed) | set(reinsert))},
        # The measured rate of *disambiguating* evidence (removals the strict rule flags) in this condition.
        "dpe_rate_targeted": {p: _rate(targeted_present.get(p, 0), n) for p in sorted(set(removed) | set(reinsert))},
        # ... and its count: two conditions of one base whose counts of a phenomenon differ by fewer sentences than
        # its threshold (analysis.void_evidence) are void for it (analysis/guardrails/void.py)
        "dpe_count_targeted": {p: targeted_present.get(p, 0) for p in sorted(set(removed) | set(reinsert))},
    }


def corpus_hash(train_lines, dev_lines) -> str:
    """sha256 of a condition's training text as written (train, then dev): two conditions with the same hash
    train the same models (condition.json ``corpus_sha256``; analysis/guardrails/void.py)."""
    h = hashlib.sha256()
    for part in (train_lines, dev_lines):
        for line in part:
            h.update(line.encode("utf-8") + b"\n")
        h.update(b"\0")
    return h.hexdigest()
