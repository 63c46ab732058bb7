"""Minimal CoNLL-U reading and writing (Universal Dependencies, 10 columns).

Shared by the synthetic generator (which writes gold parses), every parser
backend and the DPE filter (which reads them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Iterator, TextIO

from ..io import PovstimError


@dataclass
class Token:
    id: int
    form: str
    lemma: str = "_"
    upos: str = "_"
    xpos: str = "_"
    feats: str = "_"
    head: int = 0
    deprel: str = "_"
    deps: str = "_"
    misc: str = "_"

    def feat(self, name: str) -> str | None:
        if self.feats in ("_", ""):
            return None
        for kv in self.feats.split("|"):
            k, _, v = kv.partition("=")
            if k == name:
                return v
        return None

    def to_line(self) -> str:
        return "\t".join(
            str(x)
            for x in (self.id, self.form, self.lemma, self.upos, self.xpos, self.feats,
                      self.head, self.deprel, self.deps, self.misc)
        )


@dataclass
class Sentence:
    tokens: list[Token]
    meta: dict[str, str] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return self.meta.get("text") or " ".join(t.form for t in self.tokens)

    @property
    def sent_id(self) -> str | None:
        return self.meta.get("sent_id")

    def to_block(self) -> str:
        lines = [f"# {k} = {v}" for k, v in self.meta.items()]
        lines.extend(t.to_line() for t in self.tokens)
        return "\n".join(lines) + "\n\n"


def _parse_token(line: str, where: str) -> Token | None:
    cols = line.split("\t")
    if len(cols) != 10:
        raise PovstimError(f"{where}: expected 10 tab-separated CoNLL-U columns, found {len(cols)}")
    if "-" in cols[0] or "." in cols[0]:
        return None  # multiword-token ranges and empty nodes carry no syntactic word
    try:
        head = int(cols[6]) if cols[6] != "_" else 0
        return Token(int(cols[0]), cols[1], cols[2], cols[3], cols[4], cols[5], head, cols[7], cols[8], cols[9])
    except ValueError:
        raise PovstimError(f"{where}: bad token id or head in CoNLL-U line: {line!r}") from None


def read(fh: TextIO, name: str = "<conllu>") -> Iterator[Sentence]:
    tokens: list[Token] = []
    meta: dict[str, str] = {}
    for lineno, raw in enumerate(fh, 1):
        line = raw.rstrip("\n")
        if not line.strip():
            if tokens:
                yield Sentence(tokens, meta)
            tokens, meta = [], {}
            continue
        if line.startswith("#"):
            key, sep, value = line[1:].partition("=")
            if sep:
                meta[key.strip()] = value.strip()
            continue
        tok = _parse_token(line, f"{name}:{lineno}")
        if tok is not None:
            tokens.append(tok)
    if tokens:
        yield Sentence(tokens, meta)


def read_file(path) -> list[Sentence]:
    with open(path, encoding="utf-8") as fh:
        return list(read(fh, str(path)))


def write(fh: TextIO, sentences: Iterable[Sentence]) -> int:
    n = 0
    for s in sentences:
        fh.write(s.to_block())
        n += 1
    return n
