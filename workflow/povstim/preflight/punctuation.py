"""Punctuation spacing of the corpora against the benchmark items (``povstim plan``), as ``casing.py`` does for
capitals.

A sentence's final punctuation is written attached ("is he happy?": BLiMP, POSH-BENCH's generated items, the
``posh`` cleaning style every source gets by default) or spaced ("is he happy ?": Zorro, both releases, and
the ``babyberta`` cleaning style). The byte-level BPE tokenizer keeps the space: " ?" and "?" are different
tokens, so a model trained on one writing meets a token at every item's end that it never saw there, and the
suite measures the orthography with the grammar (Zorro accuracies swung 30+ points between sizes
for corpora cleaned attached). ``tokenizer.lowercase`` cannot help here; the fix is the sources' cleaning style.

The measure is the share of sentences ending in ``.?!`` whose final punctuation is a token of its own: per
source after cleaning (what the corpus stage draws from) and per suite (both sentences of every pair). Where a
source's share and a suite's differ by at least ``SPACING_GAP``, the plan warns with the fix.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from .casing import share_table, suite_sentences

# Shares of spaced final punctuation this far apart are two writings, not noise: cleaned corpora are 0 (posh
# style) or 1 (babyberta style), BLiMP 0, Zorro 1.
SPACING_GAP = 0.5
TERMINAL = ".?!"
CLOSERS = "\"')]\u201d\u2019"  # a closing quote or bracket after the terminator


def spaced_share(sentences: Iterable[str]) -> float | None:
    """Share of sentences ending in .?! (a closing quote or bracket aside) whose final punctuation stands apart
    from the word before it ("happy ?", not "happy?"); None: no sentence ends so."""
    n = spaced = 0
    for s in sentences:
        tokens = s.split()
        while tokens and not tokens[-1].strip(CLOSERS):  # a closing quote standing alone: 'no . "'
            tokens.pop()
        if not tokens:
            continue
        last = tokens[-1].rstrip(CLOSERS)
        if last[-1] not in TERMINAL:
            continue
        alone = all(ch in TERMINAL for ch in last)
        if alone and len(tokens) == 1:
            continue  # punctuation with no word before it: neither writing
        n += 1
        spaced += alone  # "?" (or "?!") a token of its own; "happy?" has the word in the same token
    return spaced / n if n else None


def _fix(suite: str, suite_spaced: bool, sources: list[str]) -> str:
    names = ", ".join(f"sources.{s}.style" for s in sources)
    if suite_spaced:
        return (f"set {names}: babyberta (a space before the final punctuation; add lowercase: false to keep "
                "capitals), or leave suite " + suite + " out of the comparison")
    return (f"set {names}: posh (the default: final punctuation attached), or leave suite {suite} out of "
            "the comparison")


def check(config: dict, source_lines: dict[str, list[str]], base_dir: Path) -> dict:
    """{"sources": {name: share}, "suites": {name: {"share", "from"}}, "warnings": [...]}."""
    sources = {n: spaced_share(lines) for n, lines in source_lines.items() if lines}
    suites, warnings = {}, []
    for name, spec in (config.get("benchmarks") or {}).items():
        sents, origin = suite_sentences(name, spec, base_dir)
        share = spaced_share(sents) if sents else None
        suites[name] = {"share": share, "from": origin}
        if share is None:
            continue
        off = {s: v for s, v in sources.items() if v is not None and abs(v - share) >= SPACING_GAP}
        if off:
            spaced = share >= 0.5
            warnings.append(
                f"benchmark {name}: {share:.0%} of its sentences end in spaced punctuation (\"happy ?\"), but "
                "source(s) " + ", ".join(f"{s} {v:.0%}" for s, v in sorted(off.items()))
                + ": the models are scored on "
                + ("a ' ?' / ' .' token they never saw end a sentence" if spaced else
                   "final punctuation attached to the word, which their corpora always spaced")
                + " (the tokenizer keeps the space); " + _fix(name, spaced, sorted(off))
                + " (docs/own-data.md, 'Punctuation spacing')")
    kinds = {round(v["share"]) for v in suites.values() if v["share"] is not None}
    if len(kinds) > 1:
        warnings.append("the suites disagree among themselves ("
                        + ", ".join(f"{n} {v['share']:.0%} spaced" for n, v in suites.items() if v["share"] is not None)
                        + "): one corpus writing cannot match them all; read each suite's accuracy against the "
                        "writing of its items")
    return {"sources": sources, "suites": suites, "warnings": warnings}


def render(result: dict) -> list[str]:
    if not result or (not result["sources"] and not result["suites"]):
        return []
    return share_table("Punctuation spacing (share of sentences whose final punctuation is spaced, \"happy ?\"):",
                       result)
