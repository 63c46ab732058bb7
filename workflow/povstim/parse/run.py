"""Parsing sentences to CoNLL-U with the configured backend, behind the surface prefilter.

The library behind ``povstim parse`` (and behind ``povstim filter`` on a text
input). The prefilter keeps a sentence unparsed when no enabled DPE
phenomenon's surface pre-test (povstim.dpe) passes on it: no rule could flag it.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, replace
from pathlib import Path

from .. import dpe
from ..io import PovstimError
from ..settings import build
from . import adapted, backends
from .cache import ParseCache, namespace, parse_with_cache
from .conllu import Sentence

log = logging.getLogger("povstim.parse")


@dataclass(frozen=True)
class ParserSettings:
    """The ``parser:`` section (defaults: workflow/schemas/config/parser.schema.yaml)."""

    backend: str
    shards: int
    model_dir: str | None
    batch_size: int
    prefilter: bool
    prefilter_check: int
    device: str
    spacy_model: str | None
    cache_dir: str | None
    fallback: str | None
    childes_treebank: str | None
    childes_model: str | None
    childes_epochs: int
    childes_max_steps: int
    childes_seed: int


def parser_settings(given: dict | None = None, where: str = "--params", **overrides) -> ParserSettings:
    return build(ParserSettings, "parser", given, where=where, **overrides)


def measured_recall_note(backend: str, phenomena=("question_formation", "binding")) -> str:
    """What a parser costs the DPE filter, as measured: the recall of ``phenomena`` in each filter mode on
    ``backend``'s parses, read with its provenance from povstim's measured-recall table (filter/measured_recall.yaml,
    the one place these numbers live); too few positives says so instead of a number."""
    from ..filter.residual import MIN_POSITIVES, shipped_table  # the table's reader; see filter.smk's exclude

    entry = shipped_table().get(backend) or {}
    modes = {m: v for m, v in entry.items() if isinstance(v, dict)}
    if not modes:
        return f"no measured recall for parser {backend} (filter/measured_recall.yaml)"
    parts = []
    for mode, rows in modes.items():
        got = []
        for phen in phenomena:
            if phen in rows:
                tp, n, sample = rows[phen]["tp"], rows[phen]["positives"], rows[phen].get("sample", "?")
                got.append(f"{phen.replace('_', ' ')} {tp / n:.2f} ({tp}/{n}, {sample} of sample)" if n >= MIN_POSITIVES
                           else f"{phen.replace('_', ' ')} not measurable ({tp}/{n} positives)")
        parts.append(f"{mode}: " + ", ".join(got))
    return (f"{backend}'s measured recall (filter/measured_recall.yaml: {entry.get('provenance', '?')}): "
            + "; ".join(parts))


def effective(settings: ParserSettings) -> tuple[ParserSettings, str | None]:
    """The settings the parse really runs with, and why they differ from ``settings`` (None if they do not).

    ``parser.fallback``: stanza without its models parses with the fallback backend
    instead — loudly, never silently: the POSH paper parsed with stanza, and the DPE
    filter's recall depends on the parser (docs/filter.md, filter_validation).
    """
    if settings.backend != "stanza" or not settings.fallback:
        return settings, None
    try:
        backends.check_stanza_models(settings.model_dir)
        return settings, None
    except PovstimError as exc:
        why = str(exc).split("\n")[0]
    note = (f"{settings.fallback} (fallback: parser.backend is stanza but its models are missing from "
            f"parser.model_dir={settings.model_dir!r})")
    log.warning("PARSER FALLBACK: %s; parsing with %s instead (parser.fallback). The DPE filter's recall "
                "depends on the parser: %s (docs/filter.md); set filter_validation to measure it in this run. "
                "Cause: %s", settings.backend, settings.fallback,
                measured_recall_note(settings.fallback), why)
    return replace(settings, backend=settings.fallback), note


def shard_range(n: int, shard: int, n_shards: int) -> range:
    if n_shards < 1:
        raise PovstimError(f"--n-shards must be at least 1, got {n_shards}")
    if not 0 <= shard < n_shards:
        raise PovstimError(f"--shard {shard} is outside 0..{n_shards - 1}")
    return range(shard * n // n_shards, (shard + 1) * n // n_shards)


def spared_sample(items: dict[int, str], keep: dict[int, str], n: int) -> dict[int, str]:
    """Up to ``n`` of the sentences the prefilter spared, chosen by a hash of their text (deterministic)."""
    import hashlib

    spared = [i for i in items if i not in keep]
    spared.sort(key=lambda i: (hashlib.sha256(items[i].encode()).digest(), i))
    return {i: items[i] for i in spared[:n]}


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
    settings, fallback_note = effective(settings)
    t0 = time.perf_counter()
    if settings.prefilter:
        keep = {i: t for i, t in items.items() if dpe.needs_parse(t, rules)}
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
        # A seeded sample of spared sentences is parsed too: the filter checks that no rule
        # fires on them, which catches a rule widened beyond its surface pre-test.
        check = spared_sample(items, keep, settings.prefilter_check) if settings.prefilter else {}
        todo = {**keep, **check}
        ids = sorted(todo)
        texts = [todo[i] for i in ids]
        if settings.backend == "spacy":
            model = settings.spacy_model

            def parse(batch):
                return backends.parse_spacy(batch, settings.spacy_model, settings.batch_size, language=language)
        elif settings.backend == "childes":
            # a folder that is not a trained parser is an error before anything is parsed; the cache keys
            # the parses by what the parser was trained on (its fingerprint), not by the folder's path
            model = adapted.check_model(settings.childes_model)["fingerprint"]
            nlp = []

            def parse(batch):
                if not nlp:
                    nlp.append(adapted.load(settings.childes_model))
                return backends.parse_childes(batch, batch_size=settings.batch_size, nlp=nlp[0])
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
            mark = ("spared" if i in check else "pass") if settings.prefilter else "off"
            s.meta = {"sent_id": str(i), "text": todo[i], "prefilter": mark}
            if fallback_note:
                s.meta["parser"] = fallback_note
            if settings.backend == "stanza":
                backends.with_space_after(s, todo[i], language)
            out.append(s)
        cache_stats["n_spared_checked"] = len(check)
    t_parse = time.perf_counter() - t1
    stats = {
        "backend": settings.backend,
        **({"fallback": fallback_note} if fallback_note else {}),
        "n_sentences": len(items),
        "n_parsed": len(keep),
        "n_spared": len(items) - len(keep),
        "seconds_prefilter": round(t_prefilter, 3),
        "seconds_parse": round(t_parse, 3),
        **cache_stats,
    }
    return out, stats
