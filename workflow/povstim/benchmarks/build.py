"""Building a suite from its config entry: generate POSH-BENCH or import a released suite."""

from __future__ import annotations

import logging
import random
from pathlib import Path

from ..io import PovstimError, atomic_dir
from ..settings import section
from . import audit, importers, posh, words
from .suite import write_suite
from .tasks import import_items, write_items
from .wordstats import read_tsv

log = logging.getLogger("povstim.benchmark")

# Keys of a suite entry that configure other stages (scoring, baselines), not the suite itself.
NOT_BUILD_KEYS = ("scoring", "baselines")


def suite_spec(suite: str, given: dict, where: str = "--params") -> dict:
    """The suite's config entry, checked and defaulted by the benchmarks schema (per kind)."""
    return section("benchmarks", {suite: given}, where)[suite]


def resolve_vocabulary(spec: dict, word_stats) -> str:
    """``auto`` means ``corpus`` when parses are given (real corpora), else ``lexicon``."""
    vocabulary = spec["vocabulary"]  # the schema fills it (suite_spec)
    if vocabulary == "auto":
        return "corpus" if word_stats else "lexicon"
    return vocabulary


def build(suite: str, spec: dict, corpora: list[str], word_stats: list[str] | None = None) -> tuple[list, dict]:
    """(pairs, manifest params) for a checked suite spec (see :func:`suite_spec`).

    ``corpora``: the texts whose top-K words bound the vocabulary (generated suites);
    ``word_stats``: ``words.tsv`` files of the parses (``vocabulary: corpus``).
    """
    kind = spec["kind"]
    spec = {k: v for k, v in spec.items() if k not in NOT_BUILD_KEYS}
    if kind == "generated":
        vocabulary = resolve_vocabulary(spec, word_stats)
        stats = pos = None
        if word_stats:
            if vocabulary != "corpus":
                log.warning("vocabulary: lexicon ignores the word statistics of the parses")
            else:
                stats = read_tsv(word_stats)
                pos = words.PosCheck(**spec["pos_check"])
        counts = [words.word_counts(c) for c in corpora]
        allowed = words.frequent_from_counts(counts, int(spec["top_k_words"])) if counts else None
        lex = words.build_lexicon(vocabulary, allowed, stats, pos)
        try:
            pairs = posh.generate(lex, int(spec["pairs_per_paradigm"]), int(spec["seed"]), suite=suite,
                                  paradigms=spec.get("paradigms"))
        except PovstimError as exc:
            hint = _pool_hint(str(exc), vocabulary, stats, pos, counts, int(spec["top_k_words"]), suite, spec)
            raise PovstimError(f"{exc}{hint}") from None
        params = {
            **spec,
            "vocabulary": vocabulary,
            "corpora": [str(c) for c in corpora],
            "word_stats": [str(w) for w in word_stats or []],
            "frequent_words": None if allowed is None else len(allowed),
            "word_classes": lex.sizes(),
            "word_pools": words.pool_report(lex, counts, int(spec["top_k_words"])),
            "rejected_by_parses": lex.rejected,
            "templates": {t.name: t.paradigm for t in posh.TEMPLATES},
        }
        if counts:
            report = audit.unigram_report(pairs, counts, [str(c) for c in corpora], float(spec["baseline_threshold"]))
            params["baseline"] = report
            for s in report["solved"]:
                log.warning("the word-frequency baseline of %s solves %s %s (accuracy %.2f): a model's accuracy "
                            "there says little about structure", s["corpus"], s["level"], s["name"], s["accuracy"])
        return pairs, params
    return imported_pairs(suite, spec), dict(spec)


def imported_pairs(suite: str, spec: dict) -> list:
    """The pairs of a suite read from files (every kind but generated): imported, the configured paradigms
    selected, at most ``pairs_per_paradigm`` of each sampled. The one place for that, so that what the plan's
    forecast counts (preflight/forecast.py) is what the benchmarks stage writes."""
    kind = spec["kind"]
    if kind not in importers.FORMATS:  # the schema's enum and the importers must agree
        raise PovstimError(
            f"benchmarks.{suite}: unknown kind {kind!r}; use generated or one of {', '.join(importers.FORMATS)}"
        )
    pairs = importers.import_suite(kind, spec["path"], suite, spec.get("columns"),
                                   importers.suite_language(spec, f"benchmarks.{suite}"))
    if spec.get("paradigms"):
        pairs = select_paradigms(pairs, spec["paradigms"], f"benchmarks.{suite}.paradigms", spec["path"])
    if spec.get("pairs_per_paradigm"):
        pairs = sample_per_paradigm(pairs, spec["pairs_per_paradigm"], spec["seed"])
    return pairs


def sample_per_paradigm(pairs: list, k: int, seed: int) -> list:
    """At most ``k`` pairs of each paradigm, a seeded sample kept in file order (same seed, same pairs)."""
    by: dict[str, list[int]] = {}
    for i, p in enumerate(pairs):
        by.setdefault(p.paradigm, []).append(i)
    keep: set[int] = set()
    for paradigm, idx in by.items():
        rng = random.Random(f"{seed}:{paradigm}")
        keep.update(idx if len(idx) <= k else rng.sample(idx, k))
    return [p for i, p in enumerate(pairs) if i in keep]


def build_suite(suite: str, spec: dict, corpora: list[str], out: Path, word_stats: list[str] | None = None) -> dict:
    """Build the suite into folder ``out``; return its manifest.

    It is built in a sibling temp folder and swapped in: a failed run never
    leaves a half-written suite, and stale paradigm files from an earlier run vanish.
    """
    if spec["kind"] == "suite":  # a suite in the benchmark schema, any task kind (benchmarks/tasks.py)
        items, norms, params = import_items(suite, spec)
        with atomic_dir(out) as tmp:
            return write_items(tmp, items, params, norms)
    pairs, params = build(suite, spec, corpora, word_stats or [])
    with atomic_dir(out) as tmp:
        return write_suite(tmp, pairs, params)


def select_paradigms(pairs: list, wanted: list[str], key: str, where: str) -> list:
    """Only the pairs of ``wanted`` paradigms (e.g. POSH Table 10's overlap); an error names any missing."""
    have = {p.paradigm for p in pairs}
    missing = [w for w in wanted if w not in have]
    if missing:
        raise PovstimError(
            f"{key}: {', '.join(missing)} not in {where} (it has {len(have)} paradigms: "
            f"{', '.join(sorted(have)[:12])}{', ...' if len(have) > 12 else ''})"
        )
    keep = set(wanted)
    return [p for p in pairs if p.paradigm in keep]


def _pool_hint(message: str, vocabulary: str, stats, pos, counts: list, top_k: int, suite: str,
               spec: dict) -> str:
    """How far to raise top_k_words when a word class is empty or a template runs out of pairs (from
    :func:`posh.generator_report`, at the suite's own pairs_per_paradigm, seed and paradigms)."""
    import re

    if not re.search(r"no word of class '([^']+)'|distinct pairs", message) or not counts:
        return ""
    report = posh.generator_report(words.build_lexicon(vocabulary, None, stats, pos), counts, top_k,
                                   spec.get("pairs_per_paradigm"), int(spec["seed"]), spec.get("paradigms"))
    if report["k_needed"]:
        hint = f"top_k_words: {report['k_needed']} generates every pair"
    else:
        hint = "no top_k_words fills every class with these corpora; larger or different corpora are needed"
    return f" ({hint}; benchmarks.{suite}.top_k_words is {top_k}; `povstim plan CONFIG` lists every class)"
