"""Assemble a corpus of a word budget from a mixture of cleaned sources.

Rules (see docs/corpus.md):

* Words are whitespace tokens of a line (``len(line.split())``).
* Shares are normalised; source ``s`` gets a quota of ``share_s * budget``
  words (rounded so the quotas add up to the budget exactly).
* Each source's lines are visited in a seeded random permutation that does
  not depend on the budget; the selection is the shortest prefix of that
  permutation whose words reach the quota. So for the same seed every smaller
  corpus is a subset of every larger one (nested sizes), and the corpus has at
  least ``budget`` words (it overshoots by less than one sentence per source).
* Selected lines keep their source's own order (age-ordered sources stay age
  ordered), and sources are interleaved by relative position (a line at 30%
  of its source's selection comes out at about 30% of the corpus).
* A quota larger than a source's words is a PovstimError naming the source,
  the words needed and the words available.
* The corpus may exceed its budget by at most ``tolerance`` (a fraction;
  ``corpora.<name>.size_tolerance``). The overshoot is below one sentence per
  source, so only a very long line can break it: the error names the source,
  its longest selected line (line number in the clean file) and what to change.
* One line is not allowed to dominate silently: when a selected line holds at least ``DOMINANT_SHARE``
  (10%) of the corpus's words -- possible within the tolerance when ``sources.<name>.max_sentence_words`` is
  ``null`` (no limit): a 10,000-word line was 10,000 of a 16k corpus's 16,001 words -- the log warns, naming
  the source and the line, and ``stats.json`` records it (``dominant_line``). The corpus is still built as
  configured (``null`` asked for no limit); the fix is a limit or a cleaned file. ``preview`` says both (the
  tolerance error, the dominant line) without building the corpus: ``povstim plan``, for every corpus x size.
* **English-equivalent bytes** (``size_unit: english_bytes``, BabyLM 2026's multilingual track): the budget
  is UTF-8 bytes of English; the shares split it as above, and source ``s`` in language ``L`` gets
  ``round(share_s * budget * byte_premium(L))`` bytes of its own text (``languages.budget_bytes``, Arnett
  et al. 2024), so each source of a bilingual mixture is budgeted by its own premium. A line counts its
  UTF-8 bytes plus its newline (the base.txt file's size); selection, nesting and the tolerance work on
  bytes exactly as on words.
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from .. import languages
from ..io import PovstimError, read_sentences
from ..schema import load_schema

log = logging.getLogger("povstim.assemble")

# a selected line holding this share of the corpus's words is warned about (and recorded): not a sentence
DOMINANT_SHARE = 0.10


def read_source(name: str, path: str | Path) -> list[str]:
    return read_sentences(path, f"assemble: source {name!r}")


def quotas(mixture: Mapping[str, float], budget: int) -> dict[str, int]:
    """Split ``budget`` words over sources by share (largest-remainder rounding)."""
    if budget < 1:
        raise PovstimError(f"assemble: word budget must be positive, got {budget}")
    if not mixture:
        raise PovstimError("assemble: the mixture is empty")
    for name, share in mixture.items():
        if not isinstance(share, (int, float)) or isinstance(share, bool) or share <= 0:
            raise PovstimError(f"assemble: mixture share of {name!r} must be a positive number, got {share!r}")
    total = float(sum(mixture.values()))
    exact = {n: budget * s / total for n, s in mixture.items()}
    out = {n: int(v) for n, v in exact.items()}
    left = budget - sum(out.values())
    for n in sorted(exact, key=lambda n: (-(exact[n] - out[n]), n))[:left]:
        out[n] += 1
    return out


UNITS = ("words", "english_bytes")


def default_unit() -> str:
    """The size unit when a config or caller gives none: the schema's ``size_unit`` default (one place)."""
    return load_schema()["properties"]["size_unit"]["default"]


def source_quotas(mixture: Mapping[str, float], budget: int, unit: str = "words",
                  langs: Mapping[str, str] | None = None) -> dict[str, int]:
    """What each source must give: words (``quotas``), or with ``english_bytes`` the UTF-8 bytes of its own
    language's text for its share of ``budget`` English bytes (``langs``: source -> language code)."""
    q = quotas(mixture, budget)
    if unit == "words":
        return q
    if unit not in UNITS:
        raise PovstimError(f"size_unit is {unit!r}; known: {', '.join(UNITS)}")
    missing = [n for n in q if n not in (langs or {})]
    if missing:
        raise PovstimError(f"assemble: size_unit english_bytes needs the language of source {missing[0]!r}")
    return {n: languages.budget_bytes(v, langs[n], f"sources.{n}.language") for n, v in q.items()}


def line_sizes(lines: Sequence[str], unit: str = "words") -> np.ndarray:
    """Each line's size in the budget's unit: whitespace words, or UTF-8 bytes with the newline."""
    if unit == "words":
        return word_counts(lines)
    return np.fromiter((len(line.encode("utf-8")) + 1 for line in lines), dtype=np.int64, count=len(lines))


def _permutation(name: str, n: int, seed: int) -> np.ndarray:
    # Seeded by the corpus seed and the source name (crc32 is stable across runs,
    # unlike hash()), so two sources of one corpus get different orders.
    rng = np.random.default_rng([int(seed), zlib.crc32(name.encode("utf-8"))])
    return rng.permutation(n)


def word_counts(lines: Sequence[str]) -> np.ndarray:
    return np.fromiter((len(line.split()) for line in lines), dtype=np.int64, count=len(lines))


def select(name: str, lines: Sequence[str], quota: int, seed: int, counts: np.ndarray | None = None,
           unit: str = "words") -> list[int]:
    """Indices (in source order) of the lines a source contributes (``counts``: each line's size in ``unit``)."""
    if counts is None:
        counts = word_counts(lines)
    available = int(counts.sum())
    if quota > available:
        what = "words" if unit == "words" else "bytes"
        raise PovstimError(
            f"assemble: source {name!r} has {available:,} {what} ({len(lines):,} sentences) but this size "
            f"needs {quota:,} {what} from it ({what} are counted after cleaning); use a smaller size or more text "
            f"for {name!r} (`povstim plan CONFIG` lists every source's {what} and the largest size each corpus allows)"
        )
    if quota == 0:
        return []
    order = _permutation(name, len(lines), seed)
    cum = np.cumsum(counts[order])
    k = int(np.searchsorted(cum, quota, side="left")) + 1  # shortest prefix reaching the quota
    return sorted(order[:k].tolist())


def assemble(sources: Mapping[str, Sequence[str]], mixture: Mapping[str, float], budget: int,
             seed: int, tolerance: float | None = None, unit: str = "words",
             langs: Mapping[str, str] | None = None, warn: bool = True) -> tuple[list[str], dict]:
    """Return (corpus lines, stats) for ``budget`` words (or English-equivalent bytes, ``unit``) of ``mixture``
    over ``sources`` (``langs``: each source's language, for the bytes' premiums). ``warn``: log a dominant line
    (``povstim plan`` says it per corpus x size itself, through ``preview``)."""
    missing = sorted(set(mixture) - set(sources))
    if missing:
        raise PovstimError(f"assemble: mixture names source {missing[0]!r} but no --input gives it "
                           f"(inputs: {', '.join(sorted(sources)) or 'none'})")
    unused = sorted(set(sources) - set(mixture))
    if unused:
        raise PovstimError(f"assemble: --input {unused[0]!r} is not in the mixture ({', '.join(sorted(mixture))})")
    q = source_quotas(mixture, budget, unit, langs)
    keyed: list[tuple[float, int, str]] = []
    per_source = {}
    longest: list[tuple[int, str, int]] = []  # (words, source, 1-based line) of each source's longest pick
    total = float(sum(mixture.values()))
    for rank, name in enumerate(mixture):
        lines = sources[name]
        counts = word_counts(lines)
        sizes = counts if unit == "words" else line_sizes(lines, unit)
        idx = select(name, lines, q[name], seed, sizes, unit)
        chosen = [lines[i] for i in idx]
        n = len(chosen)
        keyed.extend(((j + 0.5) / n, rank, line) for j, line in enumerate(chosen))
        words = int(counts[idx].sum()) if n else 0
        if n:
            top = max(idx, key=lambda i: (sizes[i], -i))
            longest.append((int(sizes[top]), name, top + 1))
        st = _stats(n, words, sum(1 for line in chosen if line.rstrip().endswith("?")))
        if unit == "words":
            st.update(share=round(mixture[name] / total, 6), quota_words=q[name],
                      available_words=int(counts.sum()), available_sentences=len(lines))
        else:
            got = int(sizes[idx].sum()) if n else 0
            lang = langs[name]
            st.update(share=round(mixture[name] / total, 6), language=lang,
                      byte_premium=languages.get(lang).byte_premium, quota_bytes=q[name], bytes=got,
                      english_equivalent_bytes=round(languages.english_equivalent_bytes(got, lang), 1),
                      available_words=int(counts.sum()), available_bytes=int(sizes.sum()),
                      available_sentences=len(lines))
        per_source[name] = st
    if len(mixture) > 1:
        keyed.sort(key=lambda x: (x[0], x[1]))
    out = [line for _, _, line in keyed]
    stats = _stats(len(out), sum(st["words"] for st in per_source.values()),
                   sum(st["questions"] for st in per_source.values()))
    if unit == "words":
        stats.update(budget_words=budget, seed=seed, sources=per_source)
        got, target, what = stats["words"], budget, "words"
    else:
        got, target, what = sum(st["bytes"] for st in per_source.values()), sum(q.values()), "bytes"
        stats.update(size_unit=unit, budget_english_bytes=budget, quota_bytes=target, bytes=got,
                     english_equivalent_bytes=round(sum(st["english_equivalent_bytes"] for st in per_source.values()), 1),
                     seed=seed, sources=per_source)
    overshoot, dominant = _limits(longest, got, target, tolerance, what)
    if overshoot:
        raise PovstimError(overshoot)
    stats["size_tolerance"] = tolerance
    if dominant:
        stats["dominant_line"] = dominant
        if warn:
            log.warning("%s", dominant_message(dominant, got, what))
    return out, stats


def _limits(longest: list[tuple[int, str, int]], got: int, target: int, tolerance: float | None,
            what: str) -> tuple[str | None, dict | None]:
    """The error a corpus over its tolerance is (else None), and its dominant line's record (else None):
    ``longest`` holds each source's longest selected line as (size, source, 1-based line)."""
    if not longest or not got:
        return None, None
    size, name, line = max(longest)
    if tolerance is not None and got > target * (1 + tolerance):
        over = got / target - 1
        return (f"assemble: the corpus has {got:,} {what}, {over:.1%} over its budget of {target:,} "
                f"(allowed: {tolerance:.1%}, corpora.<corpus>.size_tolerance); the longest selected line is line "
                f"{line:,} of source {name!r} with {size:,} {what}. Lower sources.{name}.max_sentence_words (or "
                "clean that file), or raise size_tolerance"), None
    share = size / got
    if share < DOMINANT_SHARE:
        return None, None
    return None, {"source": name, "line": line, what: size, "share": round(share, 6)}


def dominant_message(dominant: dict, got: int, what: str) -> str:
    """The warning of a line holding ``DOMINANT_SHARE`` or more of the corpus (assemble's log, povstim plan)."""
    name = dominant["source"]
    return (f"assemble: line {dominant['line']:,} of source {name!r} (its cleaned text) holds {dominant[what]:,} of "
            f"the corpus's {got:,} {what} ({100 * dominant['share']:.1f}%): one line is not a sentence; set "
            f"sources.{name}.max_sentence_words (null is no limit) or clean that file")


def preview(sources: Mapping[str, Sequence[str]], mixture: Mapping[str, float], budget: int, seed: int,
            tolerance: float | None, unit: str = "words", langs: Mapping[str, str] | None = None,
            sizes: Mapping[str, np.ndarray] | None = None) -> dict:
    """What ``assemble`` would say about this budget, without building the corpus (``povstim plan``, every corpus
    x size): ``{"overshoot": its error}`` for a corpus over its tolerance, ``{"dominant_line": record, "warning":
    message}`` for a line holding ``DOMINANT_SHARE`` of it, ``{}`` for neither. ``sizes``: each source's line sizes
    in ``unit`` (``line_sizes``), when the caller has them. The selection is ``select``'s, as in ``assemble``."""
    q = source_quotas(mixture, budget, unit, langs)
    longest, got = [], 0
    for name in mixture:
        lines = sources[name]
        size_of = sizes[name] if sizes is not None and name in sizes else line_sizes(lines, unit)
        idx = select(name, lines, q[name], seed, size_of, unit)
        if idx:
            got += int(size_of[idx].sum())
            top = max(idx, key=lambda i: (size_of[i], -i))
            longest.append((int(size_of[top]), name, top + 1))
    what = "words" if unit == "words" else "bytes"
    target = budget if unit == "words" else sum(q.values())
    overshoot, dominant = _limits(longest, got, target, tolerance, what)
    if overshoot:
        return {"overshoot": overshoot}
    return {"dominant_line": dominant, "warning": dominant_message(dominant, got, what)} if dominant else {}


def _stats(n: int, words: int, questions: int) -> dict:
    return {
        "sentences": n,
        "words": words,
        "words_per_sentence": round(words / n, 3) if n else 0.0,
        "questions": questions,
        "question_share": round(questions / n, 4) if n else 0.0,
    }
