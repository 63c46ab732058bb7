"""``povstim benchmark``: generate POSH-BENCH or import a suite into the benchmark schema.

    povstim benchmark --suite posh --params '{"kind": "generated", "pairs_per_paradigm": 500,
        "top_k_words": 3000, "seed": 1}' --corpus baby/base.txt --corpus wiki/base.txt
        --out-dir results/benchmarks/posh
    povstim benchmark --suite blimp --params '{"kind": "blimp", "path": "data/blimp"}'
        --out-dir results/benchmarks/blimp

Writes one ``{paradigm}.jsonl`` per paradigm and ``manifest.json`` (pair counts
per paradigm, the parameters, and for generated suites the size of each word
class after the top-K filter).
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
from pathlib import Path

from ..io import PovstimError

log = logging.getLogger("povstim.benchmark")

GENERATED_DEFAULTS = {"pairs_per_paradigm": 500, "top_k_words": 3000, "seed": 1}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = __doc__.split("\n\n", 1)[1]
    p.add_argument("--suite", required=True, help="suite name (written into every pair's 'suite' field)")
    p.add_argument(
        "--params",
        help="the suite's config as JSON: {kind: generated|suite|blimp|zorro|scamp|posh|jsonl|csv, ...}; "
        "generated takes pairs_per_paradigm, top_k_words, seed, paradigms; importers take path "
        "(and columns for jsonl/csv)",
    )
    p.add_argument("--kind", help="instead of --params: the suite kind")
    p.add_argument("--path", help="instead of --params: the file or folder to import")
    p.add_argument("--pairs-per-paradigm", type=int, help="generated: pairs per paradigm (default 500)")
    p.add_argument("--top-k-words", type=int, help="generated: K of the top-K word intersection (default 3000)")
    p.add_argument("--seed", type=int, help="generated: random seed (default 1)")
    p.add_argument(
        "--corpus", action="append", default=[], metavar="TXT",
        help="generated: a corpus whose top-K words bound the vocabulary (repeat; the intersection is used)",
    )
    p.add_argument("--out-dir", required=True, help="output folder, e.g. results/benchmarks/posh")


def _spec(args) -> dict:
    spec = {}
    if args.params:
        try:
            spec = json.loads(args.params)
        except json.JSONDecodeError as exc:
            raise PovstimError(f"--params is not valid JSON: {exc.msg}") from None
        if not isinstance(spec, dict):
            raise PovstimError("--params must be a JSON object")
    for key, value in (("kind", args.kind), ("path", args.path), ("pairs_per_paradigm", args.pairs_per_paradigm),
                       ("top_k_words", args.top_k_words), ("seed", args.seed)):
        if value is not None:
            spec[key] = value
    if "kind" not in spec:
        raise PovstimError("say which suite to build: --params '{\"kind\": ...}' or --kind")
    return spec


def build(suite: str, spec: dict, corpora: list[str]) -> tuple[list, dict]:
    """Return (pairs, manifest params) for a suite spec."""
    from . import importers, posh, words

    kind = spec["kind"]
    if kind == "generated":
        known = {"kind", "pairs_per_paradigm", "top_k_words", "seed", "paradigms"}
        unknown = sorted(set(spec) - known)
        if unknown:
            raise PovstimError(f"benchmarks.{suite}: unknown key(s) {', '.join(unknown)} for a generated suite")
        opts = {**GENERATED_DEFAULTS, **spec}
        allowed = words.frequent_words(corpora, int(opts["top_k_words"]))
        lex = words.default_lexicon(allowed)
        pairs = posh.generate(lex, int(opts["pairs_per_paradigm"]), int(opts["seed"]), suite=suite,
                              paradigms=opts.get("paradigms"))
        params = {
            **opts,
            "corpora": [str(c) for c in corpora],
            "frequent_words": None if allowed is None else len(allowed),
            "word_classes": lex.sizes(),
            "templates": {t.name: t.paradigm for t in posh.TEMPLATES},
        }
        return pairs, params
    if kind not in importers.FORMATS:
        raise PovstimError(
            f"benchmarks.{suite}: unknown kind {kind!r}; use generated or one of {', '.join(importers.FORMATS)}"
        )
    if "path" not in spec:
        raise PovstimError(f"benchmarks.{suite}: an imported suite ({kind}) needs 'path'")
    pairs = importers.import_suite(kind, spec["path"], suite, spec.get("columns"))
    return pairs, dict(spec)


def run(args) -> int:
    from .suite import write_suite

    spec = _spec(args)
    if spec["kind"] != "generated" and args.corpus:
        log.warning("--corpus is only used by generated suites; ignoring it")
    out = Path(args.out_dir)
    # Build in a sibling temp folder, then swap it in: a failed run never leaves
    # a half-written suite, and stale paradigm files from an earlier run vanish.
    tmp = out.with_name(f".{out.name}.tmp")
    if spec["kind"] == "suite":  # a suite in the benchmark schema, any task kind (benchmarks/tasks.py)
        from .tasks import import_items, write_items

        items, norms, params = import_items(args.suite, spec)
        if tmp.exists():
            shutil.rmtree(tmp)
        manifest = write_items(tmp, items, params, norms)
    else:
        pairs, params = build(args.suite, spec, args.corpus)
        if tmp.exists():
            shutil.rmtree(tmp)
        manifest = write_suite(tmp, pairs, params)
    if out.exists():
        shutil.rmtree(out)
    tmp.rename(out)
    log.info("suite %s: %d items (%d pairs) in %d paradigms -> %s", args.suite,
             manifest.get("n_items", manifest["n_pairs"]), manifest["n_pairs"], len(manifest["paradigms"]), out)
    return 0
