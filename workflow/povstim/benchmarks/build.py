"""Building a suite from its config entry: generate POSH-BENCH or import a released suite."""

from __future__ import annotations

import shutil
from pathlib import Path

from ..io import PovstimError
from ..settings import section


def suite_spec(suite: str, given: dict, where: str = "--params") -> dict:
    """The suite's config entry, checked and defaulted by the benchmarks schema (per kind)."""
    return section("benchmarks", {suite: given}, where)[suite]


def build(suite: str, spec: dict, corpora: list[str]) -> tuple[list, dict]:
    """(pairs, manifest params) for a checked suite spec (see :func:`suite_spec`)."""
    from . import importers, posh, words

    kind = spec["kind"]
    if kind == "generated":
        allowed = words.frequent_words(corpora, int(spec["top_k_words"]))
        lex = words.default_lexicon(allowed)
        pairs = posh.generate(lex, int(spec["pairs_per_paradigm"]), int(spec["seed"]), suite=suite,
                              paradigms=spec.get("paradigms"))
        params = {
            **spec,
            "corpora": [str(c) for c in corpora],
            "frequent_words": None if allowed is None else len(allowed),
            "word_classes": lex.sizes(),
            "templates": {t.name: t.paradigm for t in posh.TEMPLATES},
        }
        return pairs, params
    if kind not in importers.FORMATS:  # the schema's enum and the importers must agree
        raise PovstimError(
            f"benchmarks.{suite}: unknown kind {kind!r}; use generated or one of {', '.join(importers.FORMATS)}"
        )
    pairs = importers.import_suite(kind, spec["path"], suite, spec.get("columns"))
    return pairs, dict(spec)


def build_suite(suite: str, spec: dict, corpora: list[str], out: Path) -> dict:
    """Build the suite into folder ``out``; return its manifest.

    It is built in a sibling temp folder and swapped in: a failed run never
    leaves a half-written suite, and stale paradigm files from an earlier run vanish.
    """
    from .suite import write_suite

    out = Path(out)
    tmp = out.with_name(f".{out.name}.tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    if spec["kind"] == "suite":  # a suite in the benchmark schema, any task kind (benchmarks/tasks.py)
        from .tasks import import_items, write_items

        items, norms, params = import_items(suite, spec)
        manifest = write_items(tmp, items, params, norms)
    else:
        pairs, params = build(suite, spec, corpora)
        manifest = write_suite(tmp, pairs, params)
    if out.exists():
        shutil.rmtree(out)
    tmp.rename(out)
    return manifest
