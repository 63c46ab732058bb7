"""Finding direct positive evidence in parsed sentences: the library behind ``povstim filter``.

Input: CoNLL-U sentences (parse shards, whose ``# sent_id`` is the line index
in the corpus's base.txt), optionally checked against base.txt itself. Output:
the audit rows of ``dpe.tsv`` (:mod:`povstim.dpe.audit`), a summary (counts
per rule and phenomenon, the prefilter's check, gold precision/recall when the
parses carry gold labels) and the App. C sanity-check samples.
"""

from __future__ import annotations

import logging
import random
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from .. import dpe
from ..dpe import audit
from ..forkmap import fork_map
from ..io import PovstimError, atomic_write, read_sentences
from ..parse.conllu import Sentence, Skipped, read
from ..parse.tokenize import tokenize
from . import evaluate
from .settings import FilterSettings

log = logging.getLogger("povstim.filter")


@dataclass
class FilterResult:
    rows: list[audit.Row]
    removed: set[int]
    summary: dict
    texts: dict[int, str]  # every sentence of the corpus (base.txt) by id
    sanity: dict[str, tuple[int, list[int]]] = field(default_factory=dict)


def read_parses(paths: list[str], on_malformed: str = "error", skipped: list[Skipped] | None = None,
                origins: list[str] | None = None) -> list[Sentence]:
    """CoNLL-U sentences of the given files, in file order (``# sent_id`` as written; see :func:`assign_ids`).

    A malformed sentence is an error naming its file and line, or, with
    ``on_malformed="skip"``, left out and recorded in ``skipped``. ``origins``
    receives each sentence's file name.
    """
    sentences: list[Sentence] = []
    for path in paths:
        p = Path(path)
        if not p.is_file():
            raise PovstimError(f"filter input {p} does not exist")
        with open(p, encoding="utf-8") as fh:
            for sent in read(fh, str(p), on_malformed, skipped):
                sentences.append(sent)
                if origins is not None:
                    origins.append(p.name)
    return sentences


def _int_id(s: Sentence) -> int | None:
    try:
        return int(s.sent_id)
    except (TypeError, ValueError):
        return None


def assign_ids(sentences: list[Sentence], origins: list[str] | None = None) -> bool:
    """Give every sentence an integer id, the one thing ``dpe.tsv`` needs.

    Parse shards already carry integer ids (lines of base.txt): they are kept.
    Any other CoNLL-U — a UD treebank with ``# sent_id = adam1-1``, several files
    that each start at 1, sentences without an id — is numbered 0, 1, ... in input
    order, and each sentence's original id is kept as ``source_sent_id`` (dpe.tsv's
    ``source_id`` column; ``file#id`` when there are several files). Returns whether
    the sentences were renumbered.
    """
    ints = [_int_id(s) for s in sentences]
    if all(i is not None for i in ints) and len(set(ints)) == len(ints):
        return False
    several = origins is not None and len(set(origins)) > 1
    for k, s in enumerate(sentences):
        orig = s.sent_id
        meta = {"sent_id": str(k)}
        if orig is not None:
            meta["source_sent_id"] = f"{origins[k]}#{orig}" if several else orig
        meta.update((key, v) for key, v in s.meta.items() if key not in ("sent_id", "source_sent_id"))
        s.meta = meta
    return True


def check_ids(sentences: list[Sentence], base: dict[int, str] | None, base_name: str) -> None:
    """Every sentence id is an integer line of base.txt, once, with the same text."""
    seen: set[int] = set()
    for s in sentences:
        try:
            i = int(s.sent_id)
        except (TypeError, ValueError):
            raise PovstimError(f"sentence with non-integer '# sent_id = {s.sent_id}' ({s.text!r}): parse shards "
                               f"of {base_name} number their sentences by base.txt line") from None
        if i in seen:
            raise PovstimError(f"sentence id {i} appears twice in the filter input")
        seen.add(i)
        if base is not None:
            if i not in base:
                raise PovstimError(f"sent_id {i} is not a line of {base_name} ({len(base)} lines): stale parse shard?")
            if s.meta.get("text", base[i]) != base[i]:
                raise PovstimError(
                    f"sent_id {i}: the parse's text {s.meta.get('text')!r} differs from line {i + 1} of "
                    f"{base_name} {base[i]!r}: the parse shards are stale, rerun the parse stage"
                )


def find_modes(sentences: list[Sentence], settings: FilterSettings, modes: list[str],
               jobs: int = 1) -> dict[str, list[list[dpe.Match]]]:
    """{mode: the matches of each sentence (``settings.find``)}: every rule runs once per sentence and mode,
    in up to ``jobs`` forked processes (the rules are pure functions of the parse: same matches either way)."""
    per_sentence = fork_map(lambda s: [settings.find(s, m) for m in modes], sentences, jobs)
    return {m: [found[k] for found in per_sentence] for k, m in enumerate(modes)}


def no_match(summary: dict) -> list[str]:
    """The declarative constructions (library or filter.constructions) of a filter summary that removed no
    sentence; App. C's Python phenomena are left out (their zero is a fact about the corpus)."""
    return [p for p, k in summary["per_phenomenon"].items()
            if k == 0 and dpe.PHENOMENA.get(p) is not None and dpe.PHENOMENA[p].origin != "python"]


def run_filter(sentences: list[Sentence], settings: FilterSettings, base: dict[int, str] | None = None,
               parse_stats: dict | None = None, skipped: list[Skipped] | None = None,
               jobs: int = 1) -> FilterResult:
    """Apply the enabled phenomena's rules in the configured mode; build the audit rows and the summary.

    In posh and conservative mode each removal also says whether the strict rule
    of the same phenomenon fires (``targeted``): BABY puts back only those, the
    disambiguating evidence. Strict matches the mode lets through are counted as
    possible leaks. ``skipped``: malformed input sentences left out (reported).
    ``jobs``: processes for the rules (:func:`find_modes`).
    """
    sentences = sorted(sentences, key=lambda s: int(s.sent_id))
    check_strict = settings.mode != "strict"
    gold = any(evaluate.gold_labels(s) is not None for s in sentences)
    # the modes the outputs need: the configured one, strict for `targeted`, and all three for the gold summary
    modes = list(dpe.MODES) if gold else [settings.mode] + (["strict"] if check_strict else [])
    found = find_modes(sentences, settings, modes, jobs)
    rows: list[audit.Row] = []
    per_rule: Counter = Counter()
    per_phen: Counter = Counter()
    removed: set[int] = set()
    misses: list[int] = []
    also_strict: Counter = Counter()
    leaks: list[int] = []
    spared_parsed = 0
    for k, s in enumerate(sentences):
        i = int(s.sent_id)
        spared = s.meta.get("prefilter") == "spared"
        spared_parsed += spared
        matches = found[settings.mode][k]
        if matches and spared:
            misses.append(i)  # safety net: removed anyway, and reported
        strict_all = {m.phenomenon for m in found["strict"][k]} if check_strict else None
        # a strict match by a cue measured below dpe.TARGETED_PRECISION is not targeted evidence
        strict = ({m.phenomenon for m in found["strict"][k] if dpe.feeds_targeted(m.phenomenon, m.rule)}
                  if check_strict else None)
        for m in matches:
            targeted = dpe.feeds_targeted(m.phenomenon, m.rule) if strict is None else m.phenomenon in strict
            rows.append(audit.Row(i, m.phenomenon, m.rule, m.tokens_str(), s.text, targeted,
                                  s.meta.get("source_sent_id")))
            per_rule[m.rule] += 1
            per_phen[m.phenomenon] += 1
            also_strict[m.phenomenon] += bool(check_strict and targeted)
        if matches:
            removed.add(i)
        if check_strict and strict_all - {m.phenomenon for m in matches}:
            leaks.append(i)
    if misses:
        log.warning("PREFILTER MISS: a rule flags %d sentence(s) its surface pre-test spared (ids %s); they are "
                    "removed here, but unchecked spared sentences may hold more. A rule was widened beyond its "
                    "pre-test in povstim/dpe/: widen the pre-test too.", len(misses), misses[:10])
    texts = base if base is not None else {int(s.sent_id): s.text for s in sentences}
    n_sentences = len(texts)
    n_parsed = len(sentences) - spared_parsed
    summary = {
        "mode": settings.mode,
        "rules": list(settings.rules),
        "rule_functions": {p: dpe.PHENOMENA[p].rules[settings.mode].__name__ for p in settings.rules},
        "n_sentences": n_sentences,
        "n_parsed": n_parsed,
        "n_removed": len(removed),
        "removed_fraction": round(len(removed) / n_sentences, 6) if n_sentences else None,
        "per_rule": dict(sorted(per_rule.items())),
        "per_phenomenon": {p: per_phen.get(p, 0) for p in settings.rules},
        "targeted": {
            "note": "removals the strict rule also flags (dpe.tsv targeted=true), and strict matches the mode kept",
            "also_strict": {p: also_strict.get(p, 0) for p in settings.rules} if check_strict else None,
            "n_strict_not_removed": len(leaks) if check_strict else None,
            "strict_not_removed_ids": leaks[:100] if check_strict else None,
        },
        "prefilter": {
            "note": "n_checked spared sentences were parsed anyway; n_misses of them a rule flags (must be 0)",
            "n_checked": spared_parsed,
            "n_spared": n_sentences - n_parsed,
            "spared_fraction": round((n_sentences - n_parsed) / n_sentences, 6) if n_sentences else None,
            "n_misses": len(misses),
            "miss_ids": misses[:100],
        },
    }
    if skipped is not None:
        summary["input"] = {
            "note": "malformed CoNLL-U sentences left out (filter.on_malformed: skip)",
            "n_skipped": len(skipped),
            "skipped": [str(x) for x in skipped[:100]],
        }
        if skipped:
            log.warning("SKIPPED %d malformed CoNLL-U sentence(s) (filter.on_malformed: skip), e.g. %s",
                        len(skipped), "; ".join(str(x) for x in skipped[:3]))
    fallbacks = sorted({s.meta["parser"] for s in sentences if "parser" in s.meta})
    if fallbacks:
        summary["parser_fallback"] = fallbacks
        log.warning("PARSER FALLBACK: these parses come from %s", "; ".join(fallbacks))
    if parse_stats:  # timings stay in the log: they would break byte-identical reruns
        summary["parse"] = {k: v for k, v in parse_stats.items() if not k.startswith("seconds")}
    if gold:
        summary["gold"] = {m: evaluate.evaluate(sentences, settings, m, matches=found[m]) for m in dpe.MODES}
    return FilterResult(rows, removed, summary, texts)


def sanity_samples(survivors: dict[int, str], settings: FilterSettings,
                   jobs: int = 1) -> dict[str, tuple[int, list[int]]]:
    """For each enabled phenomenon with an App. C sanity check: (number of candidates among the
    survivors, a seeded random sample of their ids). ``jobs``: processes for the checks."""
    names, ids = sanity_checks(settings.rules), sorted(survivors)

    def fires(i: int) -> list[str]:  # each survivor tokenized once for all checks
        words = tokenize(survivors[i])[0]
        return [name for name in names if dpe.PHENOMENA[name].sanity(words, survivors[i])]

    hits = fork_map(fires, ids, jobs)
    out = {}
    for name in names:
        cands = [i for i, fired in zip(ids, hits) if name in fired]
        rng = random.Random(f"{settings.seed}:sanity:{name}")
        out[name] = (len(cands), sorted(rng.sample(cands, min(settings.audit_sample, len(cands)))))
    return out


def sanity_checks(rules=()) -> list[str]:
    """The phenomena whose sanity sample is drawn: App. C's checks (App. C inspects them all, whatever is
    filtered) and the filtered constructions' (``dpe.sanity_names``)."""
    return dpe.sanity_names(rules)


def write_sanity(result: FilterResult, settings: FilterSettings, audit_dir: str | Path, jobs: int = 1) -> None:
    survivors = {i: t for i, t in result.texts.items() if i not in result.removed}
    result.summary["sanity"] = {}
    for name, (n_cand, ids) in sanity_samples(survivors, settings, jobs).items():
        out = Path(audit_dir) / f"sanity_{name}.tsv"
        with atomic_write(out) as fh:
            fh.write("sent_id\tsentence\n")
            for i in ids:
                fh.write(f"{i}\t{audit._clean(survivors[i])}\n")
        result.summary["sanity"][name] = {"n_candidates": n_cand, "n_sampled": len(ids), "file": out.name}


def read_base(path: str | Path) -> dict[int, str]:
    return dict(enumerate(read_sentences(path, "base corpus")))
