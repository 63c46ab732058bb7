"""``povstim filter``: find direct positive evidence (DPE) and write the audit.

Pipeline use (rules/filter.smk): parsed shards -> ``dpe.tsv`` + ``summary.json``
(+ the App. C sanity-check samples). By hand: a CoNLL-U file, or a
sentence-per-line text file that is parsed first with ``--parser spacy|stanza``.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

from ..io import PovstimError, atomic_write, read_lines, write_json
from ..parse.cli import ParserSettings, load_json_arg, parse_texts
from ..parse.conllu import Sentence, read
from . import audit
from .rules import MODES, RULES, Settings, find_dpe

log = logging.getLogger("povstim.filter")

DPE_HEADER = ("sent_id", "phenomenon", "rule", "tokens", "sentence")


def _clean(s: str) -> str:
    return s.replace("\t", " ").replace("\n", " ")


def load_inputs(paths: list[str], parser: str, pparams: dict, rules, gold: list[str]) -> tuple[list[Sentence], dict | None, dict[int, str] | None]:
    """Read CoNLL-U inputs, or parse text inputs; return sentences, parse stats, and the texts of a text input."""
    sentences: list[Sentence] = []
    stats = None
    texts: dict[int, str] | None = None
    for path in paths:
        p = Path(path)
        if not p.is_file():
            raise PovstimError(f"filter input {p} does not exist")
        if p.suffix == ".conllu":
            with open(p, encoding="utf-8") as fh:
                for sent in read(fh, str(p)):
                    if sent.sent_id is None:
                        sent.meta = {"sent_id": str(len(sentences)), **sent.meta}
                    sentences.append(sent)
        else:
            if texts is not None or sentences:
                raise PovstimError("give one sentence-per-line text file, or any number of CoNLL-U files")
            lines = read_lines(p)
            texts = {i: line for i, line in enumerate(lines) if line.strip()}
            settings = ParserSettings.from_params(pparams, backend=parser)
            sentences, stats = parse_texts(texts, settings, rules, gold)
    for s in sentences:
        try:
            int(s.sent_id)
        except (TypeError, ValueError):
            raise PovstimError(f"sentence with non-integer '# sent_id = {s.sent_id}' ({s.text!r})") from None
    return sentences, stats, texts


def add_arguments(p) -> None:
    p.description = (
        "Find direct positive evidence (DPE) for question formation and binding with the POSH App. C "
        "rules (--mode posh, the default) or the linguistically targeted ones (--mode strict), and write "
        "every removed sentence with its rule and matching tokens to a TSV. INPUT is CoNLL-U (*.conllu) "
        "or a sentence-per-line text file that --parser spacy|stanza parses first."
    )
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="CoNLL-U shard(s), or one text file")
    p.add_argument("--parser", choices=("gold", "spacy", "stanza"), default="gold",
                   help="backend for a text INPUT (CoNLL-U input is already parsed; gold needs --gold)")
    p.add_argument("--params", help="the config's filter: section as JSON (mode, rules, ...)")
    p.add_argument("--parser-params", help="the config's parser: section as JSON (model_dir, batch_size, ...)")
    p.add_argument("--mode", choices=MODES, help="override filter.mode")
    p.add_argument("--rules", help=f"comma-separated phenomena, overriding filter.rules (available: {', '.join(sorted(RULES))})")
    p.add_argument("--gold", nargs="*", default=[], help="gold CoNLL-U for --parser gold on a text INPUT")
    p.add_argument("--base", help="the corpus the shards came from: checks every shard sentence against it and "
                   "counts the sentences the prefilter spared")
    p.add_argument("--out", required=True, help="dpe.tsv: sent_id, phenomenon, rule, tokens, sentence")
    p.add_argument("--summary", help="summary.json: counts per rule/phenomenon, prefilter, precision/recall vs gold")
    p.add_argument("--audit-dir", help="write the App. C sanity-check samples (sanity_<phenomenon>.tsv) here")


def run(args) -> int:
    params = load_json_arg(args.params, "--params")
    if args.rules:
        params["rules"] = [r.strip() for r in args.rules.split(",") if r.strip()]
    settings = Settings.from_params(params, mode=args.mode)
    pparams = load_json_arg(args.parser_params, "--parser-params")
    t0 = time.perf_counter()
    sentences, parse_stats, texts = load_inputs(args.inputs, args.parser, pparams, settings.rules, args.gold)

    base: dict[int, str] | None = texts
    if args.base:
        lines = read_lines(args.base)
        base = dict(enumerate(lines))
    seen: set[int] = set()
    for s in sentences:
        i = int(s.sent_id)
        if i in seen:
            raise PovstimError(f"sentence id {i} appears twice in the filter input")
        seen.add(i)
        if base is not None:
            if i not in base:
                raise PovstimError(f"sent_id {i} is not a line of {args.base} ({len(base)} lines): stale parse shard?")
            if s.meta.get("text", base[i]) != base[i]:
                raise PovstimError(
                    f"sent_id {i}: the parse's text {s.meta.get('text')!r} differs from line {i + 1} of "
                    f"{args.base} {base[i]!r}: the parse shards are stale, rerun the parse stage"
                )
    sentences.sort(key=lambda s: int(s.sent_id))

    rows: list[tuple] = []
    per_rule: Counter = Counter()
    per_phen: Counter = Counter()
    removed: set[int] = set()
    misses: list[int] = []
    strict_settings = replace(settings, mode="strict") if settings.mode == "posh" else None
    also_strict: Counter = Counter()
    leaks: list[int] = []
    spared_parsed = 0
    for s in sentences:
        i = int(s.sent_id)
        spared = s.meta.get("prefilter") == "spared"
        spared_parsed += spared
        matches = find_dpe(s, settings)
        if matches and spared:
            misses.append(i)  # safety net: removed anyway, and reported
        for m in matches:
            rows.append((i, m.phenomenon, m.rule, m.tokens_str(), _clean(s.text)))
            per_rule[m.rule] += 1
            per_phen[m.phenomenon] += 1
        if matches:
            removed.add(i)
        if strict_settings is not None:
            # In posh mode, say which removals are also targeted evidence (an extra row
            # naming the strict rule): BABY puts back those, the real evidence. Strict
            # matches posh lets through are counted as possible leaks.
            posh_phen = {m.phenomenon for m in matches}
            posh_rules = {m.rule for m in matches}
            for m in find_dpe(s, strict_settings):
                if m.rule in posh_rules:
                    continue  # one function serves both modes (wanna): no second row
                if m.phenomenon in posh_phen:
                    rows.append((i, m.phenomenon, m.rule, m.tokens_str(), _clean(s.text)))
                    also_strict[m.phenomenon] += 1
                else:
                    leaks.append(i)
    if misses:
        log.warning("the prefilter spared %d sentence(s) a rule removes (ids %s): report this as a bug",
                    len(misses), misses[:10])

    with atomic_write(args.out) as fh:
        fh.write("\t".join(DPE_HEADER) + "\n")
        for row in rows:
            fh.write("\t".join(str(x) for x in row) + "\n")

    n_sentences = len(base) if base is not None else len(sentences)
    n_parsed = len(sentences) - spared_parsed
    summary = {
        "mode": settings.mode,
        "rules": list(settings.rules),
        "rule_functions": {p: RULES[p].modes[settings.mode].__name__ for p in settings.rules},
        "n_sentences": n_sentences,
        "n_parsed": n_parsed,
        "n_removed": len(removed),
        "removed_fraction": round(len(removed) / n_sentences, 6) if n_sentences else None,
        "per_rule": dict(sorted(per_rule.items())),
        "per_phenomenon": {p: per_phen.get(p, 0) for p in settings.rules},
        "targeted": {
            "note": "posh removals the strict rule also flags (extra dpe.tsv rows), and strict matches posh kept",
            "also_strict": {p: also_strict.get(p, 0) for p in settings.rules} if strict_settings else None,
            "n_strict_not_removed": len(leaks) if strict_settings else None,
            "strict_not_removed_ids": leaks[:100] if strict_settings else None,
        },
        "prefilter": {
            "n_spared": n_sentences - n_parsed,
            "spared_fraction": round((n_sentences - n_parsed) / n_sentences, 6) if n_sentences else None,
            "n_misses": len(misses),
            "miss_ids": misses[:100],
        },
    }
    if parse_stats:  # timings stay in the log: they would break byte-identical reruns
        summary["parse"] = {k: v for k, v in parse_stats.items() if not k.startswith("seconds")}
        log.info("parse: %s", parse_stats)
    if any(audit.gold_labels(s) is not None for s in sentences):
        summary["gold"] = {
            m: audit.evaluate(sentences, Settings(m, settings.rules, settings.animate_nouns)) for m in MODES
        }
    if args.audit_dir:
        texts_all = base if base is not None else {int(s.sent_id): s.text for s in sentences}
        survivors = {i: t for i, t in texts_all.items() if i not in removed}
        samples = audit.sanity_samples(survivors, settings.audit_sample, settings.seed)
        summary["sanity"] = {}
        for name, (n_cand, ids) in samples.items():
            out = Path(args.audit_dir) / f"sanity_{name}.tsv"
            with atomic_write(out) as fh:
                fh.write("sent_id\tsentence\n")
                for i in ids:
                    fh.write(f"{i}\t{_clean(survivors[i])}\n")
            summary["sanity"][name] = {"n_candidates": n_cand, "n_sampled": len(ids), "file": out.name}
    if args.summary:
        write_json(args.summary, summary)
    log.info("%d sentences, %d removed (%s mode): %s in %.2fs", n_sentences, len(removed), settings.mode,
             dict(per_phen), time.perf_counter() - t0)
    return 0
