"""``povstim condition``: BABY-F, BABY or WIKI from base.txt (+ dpe.tsv), with a train/dev split."""

from __future__ import annotations

import logging

from ..dpe import audit
from ..io import PovstimError, json_object_arg, read_sentences, write_json, write_lines
from ..settings import section
from .build import build, condition_stats, corpus_hash, split, split_settings
from . import opsrun
from .table import write_table

log = logging.getLogger("povstim.condition")


def add_arguments(p) -> None:
    p.description = (
        "Build a training condition: without --dpe the base corpus as is (WIKI); with --dpe every DPE "
        "sentence removed (BABY-F); with --dpe and reinsert rates, DPE sentences put back at those rates, "
        "each replacing another sentence so the sentence count equals BABY-F's (BABY). Then a deterministic "
        "train/dev split."
    )
    p.add_argument("--base", help="{corpus}/{size}/base.txt (required unless --table)")
    p.add_argument("--dpe", help="the filter's dpe.tsv; omit for an unfiltered condition")
    p.add_argument("--reinsert", help='phenomenon -> share of sentences put back, JSON, e.g. '
                   '\'{"question_formation": 0.002, "binding": 0.0007}\'')
    p.add_argument("--phenomena", help="comma-separated phenomena this condition removes (a condition's filter "
                   "list); the other rows of --dpe are ignored (default: every row)")
    p.add_argument("--not-filtered", metavar="REASON",
                   help="the condition asked for the filter but runs unfiltered, and why (e.g. 'not filtered: no "
                   "DPE rules for language it'); recorded in --stats and the log")
    p.add_argument("--void-definition", metavar="JSON",
                   help='this condition is another\'s corpus by their definitions ({"of": "baby-f", "why": "...", '
                   '"identical": true}, plan.void_definitions); recorded in --stats and the log')
    p.add_argument("--split", help='the config\'s split: section as JSON ({"dev_fraction": 0.05, "seed": 1})')
    p.add_argument("--out-train", help="train.txt")
    p.add_argument("--out-dev", help="dev.txt")
    p.add_argument("--stats", help="condition.json: counts and measured DPE rates")
    p.add_argument("--operations", help="the condition's resolved corpus operations, JSON list (conditions/"
                   "operations.py); instead of --reinsert/--phenomena, with --dpe")
    p.add_argument("--trees", nargs="*", default=[], help="parse shards of the base (replace operations)")
    p.add_argument("--condition-name", help="the condition's name (seeds, audit, errors; required with --operations)")
    p.add_argument("--out-audit", help="operations.tsv: one row per sentence removed, added or rewritten")
    p.add_argument("--table", nargs="+", metavar="CONDITION_JSON",
                   help="instead of building: gather condition.json files ({condition}/{size}/) "
                   "into one TSV of counts and rates, written to --out-table")
    p.add_argument("--out-table", help="TSV for --table")


def run(args) -> int:
    if args.table:
        if not args.out_table:
            raise PovstimError("--table needs --out-table")
        write_table(args.table, args.out_table)
        return 0
    missing = [f for f in ("base", "out_train", "out_dev", "stats") if not getattr(args, f)]
    if missing:
        raise PovstimError("missing " + ", ".join("--" + f.replace("_", "-") for f in missing))
    if args.operations:
        return run_operations(args)
    reinsert = json_object_arg(args.reinsert, "--reinsert")
    # the rates are checked by the conditions schema (phenomena, 0 <= rate < 1)
    section("conditions", {"condition": {"from": "base", "filter": True, "reinsert": reinsert}}, "--reinsert")
    sp = split_settings(json_object_arg(args.split, "--split"))
    lines = read_sentences(args.base, "base corpus")
    rows = audit.read(args.dpe, len(lines)) if args.dpe else None
    if rows is not None and args.phenomena:  # a condition that removes only some of the filtered phenomena
        keep = set(args.phenomena.split(","))
        rows = [r for r in rows if r.phenomenon in keep]
    dpe_of = audit.removed(rows) if rows is not None else None
    cond = build(len(lines), dpe_of, reinsert, sp.seed, audit.targeted(rows) if rows is not None else None,
                 words=[len(x.split()) for x in lines])
    train, dev = split(cond.ids, sp.dev_fraction, sp.seed)
    write_lines(args.out_train, (lines[i] for i in train))
    write_lines(args.out_dev, (lines[i] for i in dev))
    stats = condition_stats(str(args.base), lines, cond, reinsert, train, dev, sp, rows is not None)
    stats["corpus_sha256"] = corpus_hash((lines[i] for i in train), (lines[i] for i in dev))
    if args.not_filtered:  # say so, never silently
        stats["not_filtered"] = args.not_filtered
        log.warning("%s: %s", args.out_train, args.not_filtered)
    if rows is not None and args.phenomena:  # a construction the condition names that matched nothing
        found = {r.phenomenon for r in rows}
        unmatched = [p for p in args.phenomena.split(",") if p not in found]
        if unmatched:
            stats["warnings"] = [f"filter: {', '.join(unmatched)} matched no sentence of the corpus (NO MATCH: "
                                 "nothing removed for it)"]
            log.warning("%s: %s", args.out_train, stats["warnings"][0])
    note_void(args, stats)
    write_json(args.stats, stats)
    if args.out_audit:
        opsrun.write_audit(args.out_audit, opsrun.legacy_audit(lines, cond))
    log.info("%s: %d sentences (%d train, %d dev), DPE rates %s", args.out_train, stats["n_sentences"], len(train),
             len(dev), stats["dpe_rate"])
    return 0


def run_operations(args) -> int:
    """A condition declared as operations (conditions/operations.py): audit, stats and splits."""
    import json

    ops = json.loads(args.operations)
    if not isinstance(ops, list):
        raise PovstimError("--operations: expected a JSON list of operations")
    sp = split_settings(json_object_arg(args.split, "--split"))
    lines = read_sentences(args.base, "base corpus")
    rows = audit.read(args.dpe, len(lines)) if args.dpe else []
    if not args.condition_name:
        raise PovstimError("--operations needs --condition-name")
    state = opsrun.build(lines, rows, ops, sp.seed, args.condition_name, args.trees)
    train, dev = split(state.ids, sp.dev_fraction, sp.seed)
    write_lines(args.out_train, (state.text.get(i, lines[i]) for i in train))
    write_lines(args.out_dev, (state.text.get(i, lines[i]) for i in dev))
    stats = opsrun.stats(str(args.base), lines, state, ops, train, dev, sp)
    stats["corpus_sha256"] = corpus_hash((state.text.get(i, lines[i]) for i in train),
                                         (state.text.get(i, lines[i]) for i in dev))
    note_void(args, stats)
    write_json(args.stats, stats)
    if args.out_audit:
        opsrun.write_audit(args.out_audit, state.audit)
    log.info("%s: %d sentences, %d words (%+.4f%% vs its reference), %d audit rows", args.out_train,
             stats["n_sentences"], stats["n_words"], 100 * stats["words_vs_reference"], len(state.audit))
    return 0


def note_void(args, stats: dict) -> None:
    """A condition void by definition says so in its condition.json (conditions.tsv, the analysis) and its log."""
    void = json_object_arg(args.void_definition, "--void-definition")
    if void:
        stats["void_definition"] = void
        log.warning("%s: VOID BY DEFINITION: %s", args.out_train, void.get("why", ""))
