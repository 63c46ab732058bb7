"""``povstim assemble``: a corpus of a word budget from a source mixture."""

from __future__ import annotations

import logging

from ..io import PovstimError, json_object_arg, parse_size, write_json, write_lines
from ..settings import section
from .assemble import assemble, default_unit, read_source

log = logging.getLogger("povstim.assemble")


def add_arguments(p) -> None:
    p.description = (
        "Assemble a corpus of --words words from cleaned sources mixed by share. Deterministic for a seed; "
        "for one seed, a smaller size is a subset of a larger one. Each source keeps its own line order. "
        "Writes one sentence per line to --out and POSH Table 4 statistics to --stats."
    )
    p.add_argument("--input", nargs="+", required=True, metavar="NAME=PATH",
                   help="cleaned source texts (one sentence per line), each as source name = path")
    p.add_argument("--mixture", required=True, metavar="JSON",
                   help='source name -> share of the word budget, e.g. \'{"cds": 0.7, "books": 0.3}\' '
                        "(shares are normalised)")
    p.add_argument("--words", required=True, metavar="SIZE", help="word budget, e.g. 50k, 10M or 5000")
    p.add_argument("--unit", choices=("words", "english_bytes"),
                   help="what --words counts (the config's size_unit; default: its schema default, words): "
                   "english_bytes = UTF-8 bytes of English, each source scaled by its language's byte premium")
    p.add_argument("--languages", metavar="JSON",
                   help='with --unit english_bytes: source name -> language code, e.g. \'{"cds_fr": "fr"}\'')
    p.add_argument("--seed", type=int, help="selection seed (default: corpora.<name>.seed's schema default, 0)")
    p.add_argument("--tolerance", metavar="FRACTION",
                   help="largest allowed overshoot of the budget, e.g. 0.02, or null for no check "
                   "(default: corpora.<name>.size_tolerance)")
    p.add_argument("--corpus-name", help="the corpus's name under corpora: (for messages)")
    p.add_argument("--out", required=True, help="output corpus text (base.txt)")
    p.add_argument("--stats", required=True, help="output statistics JSON (stats.json)")


def parse_inputs(items: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise PovstimError(f"--input {item!r}: expected NAME=PATH")
        if name in out:
            raise PovstimError(f"--input: source {name!r} given twice")
        out[name] = path
    return out


def _tolerance(text: str) -> float | None:
    if text.strip().lower() in ("null", "none"):
        return None
    try:
        return float(text)
    except ValueError:
        raise PovstimError(f"--tolerance: expected a fraction such as 0.02 or null, got {text!r}") from None


def run(args) -> int:
    inputs = parse_inputs(args.input)
    # the mixture and seed as a corpora: entry, checked and defaulted by the schema
    given = {"mixture": json_object_arg(args.mixture, "--mixture")}
    if args.seed is not None:
        given["seed"] = args.seed
    if args.tolerance is not None:
        given["size_tolerance"] = _tolerance(args.tolerance)
    corpus = section("corpora", {"corpus": given}, "--mixture")["corpus"]
    mixture, seed = corpus["mixture"], corpus["seed"]
    budget = parse_size(args.words)
    sources = {name: read_source(name, path) for name, path in inputs.items() if name in mixture}
    for name in inputs:
        if name not in mixture:
            sources[name] = []
    try:
        unit = args.unit or default_unit()
        langs = json_object_arg(args.languages, "--languages") if args.languages else None
        lines, stats = assemble(sources, mixture, budget, seed, corpus["size_tolerance"], unit, langs)
    except PovstimError as exc:
        raise PovstimError(str(exc).replace("corpora.<corpus>.", f"corpora.{args.corpus_name or '<corpus>'}.")) from None
    stats["size"] = str(args.words)
    stats["inputs"] = inputs
    write_lines(args.out, lines)
    write_json(args.stats, stats)
    if "bytes" in stats:
        log.info("assemble: %d sentences, %d words, %d bytes = %.0f English-equivalent bytes (%s budget)",
                 stats["sentences"], stats["words"], stats["bytes"], stats["english_equivalent_bytes"], args.words)
    else:
        log.info("assemble: %d sentences, %d words (%s budget)", stats["sentences"], stats["words"], args.words)
    return 0
