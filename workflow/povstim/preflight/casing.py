"""Casing of the corpora against the benchmark items (``povstim plan``).

A model trained on lowercased text (``style: babyberta`` or ``lowercase: true`` in a source, or a corpus
that was lowercased before it reached povstim) has never seen a capital letter; BLiMP's items and POSH-BENCH's
generated ones start with one and capitalise names ("Who should Derek hug ...?"). Zorro's are the reverse:
the BabyBERTa release starts 78% of its sentences lowercase (capitals only on names), the CoNLL 2021 release
is all lowercase. With ``tokenizer.lowercase: false`` the tokenizer keeps the case, so a pair is scored through
tokens (or bytes) the model never learned and the benchmark measures the orthography as much as the grammar.
``tokenizer.lowercase: true`` lowercases the training text and, through the same tokenizer, every benchmark
item at scoring time, and removes the mismatch.

The measure is the share of sentences whose first letter is a capital: per source after cleaning (what the
corpus stage draws from) and per suite (both sentences of every pair). Where ``tokenizer.lowercase`` is false
and a source's share and a suite's differ by at least ``CASING_GAP``, the plan warns.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..io import PovstimError

# Shares of sentence-initial capitals this far apart are two orthographies, not noise: lowercased corpora are
# near 0, capitalised corpora and BLiMP/POSH items near 1, Zorro's BabyBERTa release 0.22.
CASING_GAP = 0.5


def initial_capital_share(sentences: Iterable[str]) -> float | None:
    """Share of sentences whose first letter is upper case (None: no sentence with a letter)."""
    n = caps = 0
    for s in sentences:
        first = next((ch for ch in s if ch.isalpha()), None)
        if first is None:
            continue
        n += 1
        caps += first.isupper()
    return caps / n if n else None


def suite_sentences(name: str, spec: dict, base_dir: Path) -> tuple[list[str] | None, str]:
    """The sentences of a configured suite (both members of each pair) and where they come from; None with
    the reason when they cannot be read before the run. Generated suites (POSH-BENCH) are rendered capitalised
    by ``benchmarks.posh.render``: a sample of its output stands for them."""
    # deferred: the importers and the POSH generator, only when the plan looks at casing
    from ..benchmarks import importers, posh

    kind = spec["kind"]
    if kind == "generated":
        sample = [posh.render(t) for t in (("is", "the", "boy", "happy", "?"), ("who", "did", "she", "see", "?"))]
        return sample, "generated (POSH-BENCH orthography: capitalised, attached punctuation)"
    path = spec.get("path")
    if not path or str(path).startswith("builtin:"):
        return None, "not checked (no file to read before the run)"
    where = Path(path) if Path(path).is_absolute() else base_dir / path
    try:
        if kind == "suite":
            from ..benchmarks.tasks import import_items

            items, _, _ = import_items(name, {**spec, "path": str(where)})
            sents = [s for it in items for s in (it.get("good"), it.get("bad")) if isinstance(s, str)]
        else:
            pairs = importers.import_suite(kind, where, name, spec.get("columns"))
            sents = [s for p in pairs for s in (p.good, p.bad)]
    except (PovstimError, OSError) as exc:
        return None, f"not checked ({exc})"
    return (sents or None), str(path)


def check(config: dict, source_lines: dict[str, list[str]], base_dir: Path) -> dict:
    """{"sources": {name: share}, "suites": {name: {"share", "from"}}, "lowercase": bool, "warnings": [...]}."""
    sources = {n: initial_capital_share(lines) for n, lines in source_lines.items() if lines}
    suites, warnings = {}, []
    lowercase = bool(config["tokenizer"]["lowercase"])
    for name, spec in (config.get("benchmarks") or {}).items():
        sents, origin = suite_sentences(name, spec, base_dir)
        share = initial_capital_share(sents) if sents else None
        suites[name] = {"share": share, "from": origin}
        if lowercase or share is None:
            continue
        off = {s: v for s, v in sources.items() if v is not None and abs(v - share) >= CASING_GAP}
        if off:
            lower = share < 0.5
            warnings.append(
                f"benchmark {name}: {share:.0%} of its sentences start with a capital, but source(s) "
                + ", ".join(f"{s} {v:.0%}" for s, v in sorted(off.items()))
                + ": with tokenizer.lowercase false the models are scored on "
                + ("lowercase sentence starts they did not learn from a capitalised corpus" if lower else
                   "capitals (sentence starts, names) they never saw in a lowercased corpus")
                + "; set tokenizer.lowercase: true (it lowercases the training text and every benchmark item "
                "alike), or clean the sources in the items' orthography (docs/own-data.md, 'Casing')")
    return {"lowercase": lowercase, "sources": sources, "suites": suites, "warnings": warnings}


def render(result: dict) -> list[str]:
    if not result or (not result["sources"] and not result["suites"]):
        return []
    how = "true: the tokenizer lowercases corpora and items alike" if result["lowercase"] else "false"
    return share_table(f"Casing (share of sentences that start with a capital letter; tokenizer.lowercase {how}):",
                       result)


def share_table(title: str, result: dict) -> list[str]:
    """Plan's table of one share per source and suite, then its warnings (casing here, punctuation spacing)."""
    lines = ["", title]
    for name, share in result["sources"].items():
        lines.append(f"  source {name:<14} {share:>5.0%}" if share is not None else f"  source {name:<14}     -")
    for name, s in result["suites"].items():
        share = f"{s['share']:>5.0%}" if s["share"] is not None else "    -"
        lines.append(f"  suite  {name:<14} {share}  ({s['from']})")
    lines += [f"  -> WARNING: {w}" for w in result["warnings"]]
    return lines
