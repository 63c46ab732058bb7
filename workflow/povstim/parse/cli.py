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

import json
import logging
import time
from dataclasses import dataclass, replace
from pathlib import Path

from ..io import PovstimError, atomic_write, read_lines
from ..io import json_object_arg as load_json_arg
from . import backends
from .cache import ParseCache, namespace, parse_with_cache
from .conllu import Sentence, write
from .prefilter import DEFAULT_RULES, check_rules, needs_parse

log = logging.getLogger("povstim.parse")


@dataclass(frozen=True)
class ParserSettings:
    backend: str = "gold"
    shards: int = 1
    model_dir: str | None = None
    batch_size: int = 256
    prefilter: bool = True
    device: str = "auto"
    spacy_model: str | None = None
    cache_dir: str | None = "resources/parse_cache"

    @classmethod
    def from_params(cls, params: dict | None, **overrides) -> "ParserSettings":
        p = dict(params or {})
        p.update({k: v for k, v in overrides.items() if v is not None})
        backend = p.get("backend", "gold")
        if backend not in backends.BACKENDS:
            raise PovstimError(f"parser.backend: unknown backend {backend!r} (choose from {', '.join(backends.BACKENDS)})")
        return cls(
            backend=backend,
            shards=int(p.get("shards", 1)),
            model_dir=p.get("model_dir"),
            batch_size=int(p.get("batch_size", 256)),
            prefilter=bool(p.get("prefilter", True)),
            device=str(p.get("device", "auto")),
            spacy_model=p.get("spacy_model"),
            cache_dir=p.get("cache_dir", "resources/parse_cache") or None,
        )



def shard_range(n: int, shard: int, n_shards: int) -> range:
    if n_shards < 1:
        raise PovstimError(f"--n-shards must be at least 1, got {n_shards}")
    if not 0 <= shard < n_shards:
        raise PovstimError(f"--shard {shard} is outside 0..{n_shards - 1}")
    return range(shard * n // n_shards, (shard + 1) * n // n_shards)


def parse_texts(
    items: dict[int, str],
    settings: ParserSettings,
    rules: tuple[str, ...],
    gold: list[str] | None = None,
    language: str = "en",
) -> tuple[list[Sentence], dict]:
    """Parse the texts the prefilter lets through; return CoNLL-U sentences and counts.

    ``items`` maps a sentence id (base.txt line index) to its text.
    """
    cache_stats: dict = {}
    t0 = time.perf_counter()
    if settings.prefilter:
        keep = {i: t for i, t in items.items() if needs_parse(t, rules)}
    else:
        keep = dict(items)
    t_prefilter = time.perf_counter() - t0
    t1 = time.perf_counter()
    out: list[Sentence] = []
    if settings.backend == "gold":
        parsed = backends.gold_lookup(items, gold or [])
        for i in sorted(items):
            g = parsed[i]
            meta = {"sent_id": str(i), "text": items[i]}
            meta.update({k: v for k, v in g.meta.items() if k not in ("sent_id", "text")})
            if settings.prefilter:
                meta["prefilter"] = "pass" if i in keep else "spared"
            out.append(Sentence([replace(t) for t in g.tokens], meta))
    else:
        ids = sorted(keep)
        texts = [keep[i] for i in ids]
        if settings.backend == "spacy":
            model = settings.spacy_model

            def parse(batch):
                return backends.parse_spacy(batch, settings.spacy_model, settings.batch_size, language=language)
        else:
            # Check the models even for a shard with nothing to parse: a missing
            # model folder is a config error, whatever the shard holds.
            backends.check_stanza_models(settings.model_dir, language)
            model = str(Path(settings.model_dir).resolve()) if settings.model_dir else None

            def parse(batch):
                return backends.parse_stanza(batch, settings.model_dir, settings.device, settings.batch_size,
                                             language=language)
        if language != "en":  # one cache, several languages: keep their parses apart
            model = f"{model or ''}|{language}"
        cache = None
        if settings.cache_dir:
            cache = ParseCache(Path(settings.cache_dir) / f"{settings.backend}.sqlite", namespace(settings.backend, model))
        try:
            sents = parse_with_cache(texts, parse, cache)
        finally:
            if cache is not None:
                cache.close()
        if cache is not None:
            cache_stats = {"cache_hits": cache.hits, "cache_misses": cache.misses}
        for i, s in zip(ids, sents):
            s.meta = {"sent_id": str(i), "text": keep[i], "prefilter": "pass" if settings.prefilter else "off"}
            if settings.backend == "stanza":
                backends.with_space_after(s, keep[i])
            out.append(s)
    t_parse = time.perf_counter() - t1
    stats = {
        "backend": settings.backend,
        "n_sentences": len(items),
        "n_parsed": len(keep),
        "n_spared": len(items) - len(keep),
        "seconds_prefilter": round(t_prefilter, 3),
        "seconds_parse": round(t_parse, 3),
        **cache_stats,
    }
    return out, stats


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
    p.add_argument("--language", default="en",
                   help="the corpus language (povstim.languages): picks the spaCy pipeline / stanza models")
    p.add_argument("--shard", type=int, default=0, help="0-based shard index (default 0)")
    p.add_argument("--n-shards", type=int, default=1, help="number of shards (default 1)")
    p.add_argument("--out", required=True, help="output CoNLL-U")


def run(args) -> int:
    overrides = dict(backend=args.backend, model_dir=args.model_dir, batch_size=args.batch_size, device=args.device)
    if args.no_prefilter:
        overrides["prefilter"] = False
    if args.cache_dir:
        overrides["cache_dir"] = args.cache_dir
    settings = ParserSettings.from_params(load_json_arg(args.params, "--params"), **overrides)
    if args.no_cache:
        settings = replace(settings, cache_dir=None)
    rules = check_rules(load_json_arg(args.filter_params, "--filter-params").get("rules", DEFAULT_RULES))
    path = Path(args.input)
    if not path.is_file():
        raise PovstimError(f"corpus {path} does not exist")
    lines = read_lines(path)
    for i, line in enumerate(lines):
        if not line.strip():
            raise PovstimError(f"{path}:{i + 1}: empty line (corpora hold one sentence per line, no empty lines)")
    items = {i: lines[i] for i in shard_range(len(lines), args.shard, args.n_shards)}
    from .. import languages

    languages.get(args.language, "--language")
    sents, stats = parse_texts(items, settings, rules, args.gold, args.language)
    with atomic_write(args.out) as fh:
        write(fh, sents)
    log.info(
        "shard %d/%d of %s: %d sentences, %d parsed, %d spared by the prefilter (%s backend, %.2fs)",
        args.shard, args.n_shards, path, stats["n_sentences"], stats["n_parsed"], stats["n_spared"],
        settings.backend, stats["seconds_parse"],
    )
    if "cache_hits" in stats:
        log.info("parse cache %s: %d sentences reused, %d parsed anew",
                 settings.cache_dir, stats["cache_hits"], stats["cache_misses"])
    return 0
