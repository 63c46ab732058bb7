"""``povstim parse``: one shard of a corpus -> CoNLL-U (gold, spacy or stanza backend).

Shard I of N holds base.txt lines [I*n//N, (I+1)*n//N); each CoNLL-U block
carries ``# sent_id`` (the 0-based line index in base.txt) and ``# text``.

The surface prefilter (``parser.prefilter``, on by default) decides which
sentences need a parse at all: a sentence that fails every enabled rule's
necessary surface condition is kept without parsing. Real backends leave such
sentences out of the shard. The gold backend costs nothing per sentence, so it
writes every sentence and marks the spared ones ``# prefilter = spared``: the
filter then checks on every gold run that no spared sentence would have been
removed.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

from .. import dpe, languages
from ..constructions.library import use as use_constructions
from ..io import atomic_write, read_sentences
from ..settings import section
from ..io import json_object_arg as load_json_arg
from . import backends
from .conllu import write
from .run import parse_texts, parser_settings, shard_range

log = logging.getLogger("povstim.parse")


def add_arguments(p) -> None:
    p.description = (
        "Parse shard I of N of a sentence-per-line corpus to CoNLL-U (UD v2 labels). "
        "# sent_id is the 0-based line index in the input; sentences the surface prefilter "
        "spares are kept without parsing (left out for spacy/stanza, marked '# prefilter = spared' for gold)."
    )
    p.add_argument("--input", required=True, help="base.txt: one sentence per line")
    p.add_argument("--gold", nargs="*", default=[], metavar="CONLLU",
                   help="gold CoNLL-U of the synthetic sources (gold backend looks sentences up by text)")
    p.add_argument("--params", help="the config's parser: section as JSON (backend, model_dir, batch_size, prefilter, ...)")
    p.add_argument("--filter-params", help="the config's filter: section as JSON (which rules the prefilter serves)")
    p.add_argument("--backend", choices=backends.BACKENDS, help="override parser.backend")
    p.add_argument("--model-dir", help="override parser.model_dir (stanza models)")
    p.add_argument("--batch-size", type=int, help="override parser.batch_size")
    p.add_argument("--device", help="stanza device: auto (GPU when free), cpu, cuda, cuda:N")
    p.add_argument("--no-prefilter", action="store_true", help="parse every sentence")
    p.add_argument("--cache-dir", help="sentence-level parse cache (default parser.cache_dir, "
                   "resources/parse_cache); reruns parse only sentences not parsed before")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the parse cache")
    p.add_argument("--language",
                   help="the corpus language (povstim.languages): picks the spaCy pipeline / stanza models "
                   "(default: the schema's `language`, en; the rule passes the experiment's)")
    p.add_argument("--shard", type=int, default=0, help="0-based shard index (default 0)")
    p.add_argument("--n-shards", type=int, help="number of shards (default parser.shards)")
    p.add_argument("--out", required=True, help="output CoNLL-U")


def run(args) -> int:
    overrides = dict(backend=args.backend, model_dir=args.model_dir, batch_size=args.batch_size, device=args.device)
    if args.no_prefilter:
        overrides["prefilter"] = False
    if args.cache_dir:
        overrides["cache_dir"] = args.cache_dir
    settings = parser_settings(load_json_arg(args.params, "--params"), **overrides)
    if args.no_cache:
        settings = replace(settings, cache_dir=None)
    # Which phenomena the prefilter serves: the filter section's rules, checked against the registry.
    filter_section = section("filter", load_json_arg(args.filter_params, "--filter-params"), "--filter-params")
    use_constructions(filter_section, "--filter-params constructions")  # the user's, beside the library's
    rules = dpe.check_rules(filter_section["rules"])
    lines = read_sentences(args.input, "corpus")
    path = Path(args.input)
    n_shards = args.n_shards if args.n_shards is not None else settings.shards
    items = {i: lines[i] for i in shard_range(len(lines), args.shard, n_shards)}
    language = languages.get(args.language, "--language").code
    sents, stats = parse_texts(items, settings, rules, args.gold, language)
    with atomic_write(args.out) as fh:
        write(fh, sents)
    log.info(
        "shard %d/%d of %s: %d sentences, %d parsed, %d spared by the prefilter (%s backend, %.2fs)",
        args.shard, n_shards, path, stats["n_sentences"], stats["n_parsed"], stats["n_spared"],
        stats["backend"], stats["seconds_parse"],
    )
    if "cache_hits" in stats:
        log.info("parse cache %s: %d sentences reused, %d parsed anew",
                 settings.cache_dir, stats["cache_hits"], stats["cache_misses"])
    return 0
