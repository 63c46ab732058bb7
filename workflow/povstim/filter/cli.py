"""``povstim filter``: find direct positive evidence (DPE) and write the audit.

Pipeline use (rules/filter.smk): parsed shards -> ``dpe.tsv`` + ``summary.json``
(+ the App. C sanity-check samples). By hand: a CoNLL-U file, or a
sentence-per-line text file that is parsed first with ``--parser`` (any parse backend).
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from .. import dpe
from ..dpe import audit
from ..io import PovstimError, json_object_arg, read_sentences, write_json
from ..parse import backends
from ..parse.run import parse_texts, parser_settings
from .run import assign_ids, check_ids, no_match, read_base, read_parses, run_filter, write_sanity
from .settings import filter_settings

log = logging.getLogger("povstim.filter")


def add_arguments(p) -> None:
    p.description = (
        "Find direct positive evidence (DPE) with the POSH App. C rules (--mode posh), the linguistically "
        "targeted ones (--mode strict) or App. C made robust to parser errors (--mode conservative), and write "
        "every removed sentence with its rule, matching tokens and whether it is targeted evidence to a TSV. "
        "INPUT is CoNLL-U (*.conllu: any standard file, e.g. a UD treebank or your own parsed corpus; string "
        "sent_ids are kept in a source_id column) or a sentence-per-line text file that --parser "
        f"({'|'.join(backends.BACKENDS)}) parses first."
    )
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="CoNLL-U shard(s), or one text file")
    p.add_argument("--parser", choices=backends.BACKENDS,
                   help="backend for a text INPUT (CoNLL-U input is already parsed; gold needs --gold; childes needs "
                   "childes_model in --parser-params); default: --parser-params' backend, else parser.backend's")
    p.add_argument("--params", help="the config's filter: section as JSON (mode, rules, ...)")
    p.add_argument("--parser-params", help="the config's parser: section as JSON (backend; childes_model: a folder "
                   "of povstim train-parser; model_dir: stanza's models; batch_size, ...)")
    p.add_argument("--mode", choices=dpe.MODES, help="override filter.mode")
    p.add_argument("--rules", help="comma-separated phenomena, overriding filter.rules "
                   f"(available: {', '.join(sorted(dpe.PHENOMENA))})")
    p.add_argument("--gold", nargs="*", default=[], help="gold CoNLL-U for --parser gold on a text INPUT")
    p.add_argument("--base", help="the corpus the shards came from: checks every shard sentence against it and "
                   "counts the sentences the prefilter spared")
    p.add_argument("--out", required=True, help="dpe.tsv: sent_id, phenomenon, rule, tokens, sentence, targeted")
    p.add_argument("--summary", help="summary.json: counts per rule/phenomenon, prefilter, precision/recall vs gold")
    p.add_argument("--audit-dir", help="write the App. C sanity-check samples (sanity_<phenomenon>.tsv) here")
    p.add_argument("--cores", type=int, default=1,
                   help="processes for the rules and the sanity checks (forked; the outputs do not depend on it; "
                   "default: 1)")
    p.add_argument("--skip-malformed", action="store_true",
                   help="leave malformed CoNLL-U sentences out and report them (filter.on_malformed: skip)")


def run(args) -> int:
    rules = [r.strip() for r in args.rules.split(",") if r.strip()] if args.rules else None
    settings = filter_settings(json_object_arg(args.params, "--params"), mode=args.mode, rules=rules,
                               on_malformed="skip" if args.skip_malformed else None)
    t0 = time.perf_counter()
    conllu = [p for p in args.inputs if Path(p).suffix == ".conllu"]
    parse_stats = None
    base = read_base(args.base) if args.base else None
    skipped = [] if settings.on_malformed == "skip" else None
    if len(conllu) == len(args.inputs):
        origins: list[str] = []
        sentences = read_parses(args.inputs, settings.on_malformed, skipped, origins)
        if base is None and assign_ids(sentences, origins):
            log.info("the input's own sentence ids are not line numbers: sentences numbered 0..%d in input "
                     "order, original ids kept in dpe.tsv's source_id column", len(sentences) - 1)
    elif len(args.inputs) == 1:
        lines = read_sentences(args.inputs[0], "corpus")
        texts = dict(enumerate(lines))
        base = base if base is not None else texts
        given = json_object_arg(args.parser_params, "--parser-params")
        if args.parser and given.get("backend") not in (None, args.parser):
            raise PovstimError(f"--parser {args.parser} contradicts --parser-params' backend {given['backend']!r}: "
                               "give the backend once")
        pset = parser_settings(given, "--parser-params", backend=args.parser)
        sentences, parse_stats = parse_texts(texts, pset, settings.rules, args.gold)
        log.info("parse: %s", parse_stats)
    else:
        raise PovstimError("give one sentence-per-line text file, or any number of CoNLL-U files")
    check_ids(sentences, base, args.base or args.inputs[0])
    result = run_filter(sentences, settings, base, parse_stats, skipped, jobs=max(1, args.cores))
    silent = no_match(result.summary)
    if silent:  # a typo in a pattern's values, or a corpus without the construction: never an INFO zero
        result.summary["no_match"] = silent  # (only then: summaries without constructions stay as they were)
        log.warning("NO MATCH: construction(s) %s matched no sentence of the %d (%s mode): a condition removing "
                    "them removes nothing (a typo in a pattern, or a corpus without the construction)",
                    ", ".join(silent), result.summary["n_sentences"], settings.mode)
    audit.write(args.out, result.rows)
    if args.audit_dir:
        write_sanity(result, settings, args.audit_dir, jobs=max(1, args.cores))
    if args.summary:
        write_json(args.summary, result.summary)
    log.info("%d sentences, %d removed (%s mode): %s in %.2fs", result.summary["n_sentences"],
             len(result.removed), settings.mode, result.summary["per_phenomenon"], time.perf_counter() - t0)
    return 0
