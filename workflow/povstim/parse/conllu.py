"""CoNLL-U reading and writing (Universal Dependencies, 10 columns).

Shared by the synthetic generator (which writes gold parses), every parser
backend and the DPE filter (which reads them). The reader takes any standard
CoNLL-U file, a UD treebank as much as our own parse shards:

- ``# key = value`` comments become ``Sentence.meta`` (``# sent_id`` is kept as
  the string it is: UD treebanks use ids such as ``adam1-1``);
- multiword-token lines (``5-6  that's``) and empty nodes (``8.1``) are kept out
  of ``Sentence.tokens`` (the syntactic words the rules see) but kept, so a
  sentence writes back as it was read;
- UD v1 relation names are mapped to their v2 names (``dobj`` -> ``obj``,
  ``nsubjpass`` -> ``nsubj:pass``, ...), subtypes and all, so one set of rules
  reads both;
- a malformed sentence (wrong column count, a non-integer id, ids that are not
  1..n, a head outside the sentence, a cycle) is an error naming the file and
  line, or, with ``on_error="skip"``, left out and recorded in ``skipped``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Iterator, TextIO

from ..io import PovstimError

# UD v1 -> v2 relation names (https://universaldependencies.org/v2/summary.html).
# Only names that do not exist in v2 are mapped, so v2 input is read unchanged.
UD1_TO_UD2 = {
    "dobj": "obj",
    "nsubjpass": "nsubj:pass",
    "csubjpass": "csubj:pass",
    "auxpass": "aux:pass",
    "neg": "advmod",
    "name": "flat",
    "mwe": "fixed",
    "foreign": "flat:foreign",
    "remnant": "orphan",
}

ON_ERROR = ("error", "skip")


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
    # Multiword-token and empty-node lines, verbatim, keyed by the word id they come
    # before (a range ``5-6`` before word 5, an empty node ``8.1`` before word 9).
    extra: dict[int, list[str]] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return self.meta.get("text") or self.surface()

    @property
    def sent_id(self) -> str | None:
        return self.meta.get("sent_id")

    def surface(self) -> str:
        """The text rebuilt from the forms (multiword tokens as written, SpaceAfter=No honoured)."""
        ranges = {}
        for lines in self.extra.values():
            for line in lines:
                cols = line.split("\t")
                if "-" in cols[0]:
                    a, b = cols[0].split("-")
                    ranges[int(a)] = (int(b), cols[1], cols[9] if len(cols) > 9 else "_")
        parts, i, n = [], 0, len(self.tokens)
        while i < n:
            tok = self.tokens[i]
            if tok.id in ranges:
                end, form, misc = ranges[tok.id]
                i = next((k for k in range(i, n) if self.tokens[k].id == end), i) + 1
            else:
                form, misc = tok.form, tok.misc
                i += 1
            parts.append(form)
            if i < n and "SpaceAfter=No" not in misc:
                parts.append(" ")
        return "".join(parts)

    def to_block(self) -> str:
        lines = [f"# {k} = {v}" for k, v in self.meta.items()]
        for t in self.tokens:
            lines.extend(self.extra.get(t.id, ()))
            lines.append(t.to_line())
        lines.extend(self.extra.get(len(self.tokens) + 1, ()))
        return "\n".join(lines) + "\n\n"


def ud2_deprel(deprel: str) -> str:
    """A UD v1 relation name as its v2 name, subtype kept (``nsubjpass:xsubj`` -> ``nsubj:pass:xsubj``)."""
    base, sep, sub = deprel.partition(":")
    new = UD1_TO_UD2.get(base)
    if new is None:
        return deprel
    return f"{new}:{sub}" if sep else new


@dataclass
class Skipped:
    """A malformed sentence left out by ``on_error="skip"``: where and why."""

    where: str
    reason: str

    def __str__(self) -> str:
        return f"{self.where}: {self.reason}"


class _Malformed(Exception):
    def __init__(self, lineno: int, reason: str):
        self.lineno, self.reason = lineno, reason


def _parse_word(cols: list[str], lineno: int) -> Token:
    try:
        tid = int(cols[0])
    except ValueError:
        raise _Malformed(lineno, f"token id {cols[0]!r} is not an integer, a range (5-6) or an empty node (8.1)") from None
    if cols[6] == "_":
        raise _Malformed(lineno, f"token {tid} has no HEAD ('_'): the sentence is not parsed")
    try:
        head = int(cols[6])
    except ValueError:
        raise _Malformed(lineno, f"token {tid}: HEAD {cols[6]!r} is not an integer") from None
    return Token(tid, cols[1], cols[2], cols[3], cols[4], cols[5], head, ud2_deprel(cols[7]), cols[8], cols[9])


def _check_tree(tokens: list[Token], lines: list[int]) -> None:
    """Ids 1..n in order, every head in 0..n, and every token reaches the root (no cycle)."""
    for k, t in enumerate(tokens):
        if t.id != k + 1:
            raise _Malformed(lines[k], f"token id {t.id} where {k + 1} was expected (ids must be 1..n in order)")
    n = len(tokens)
    for k, t in enumerate(tokens):
        if not 0 <= t.head <= n:
            raise _Malformed(lines[k], f"token {t.id}: head {t.head} is outside the sentence (0..{n})")
    heads = [0] + [t.head for t in tokens]
    done = [False] * (n + 1)
    done[0] = True
    for k in range(1, n + 1):
        path, cur = [], k
        while not done[cur]:
            if cur in path:
                raise _Malformed(lines[cur - 1], f"token {cur} is on a head cycle ({' -> '.join(map(str, path[path.index(cur):] + [cur]))})")
            path.append(cur)
            cur = heads[cur]
        for p in path:
            done[p] = True


def read(fh: TextIO, name: str = "<conllu>", on_error: str = "error",
         skipped: list[Skipped] | None = None) -> Iterator[Sentence]:
    """The sentences of a CoNLL-U stream.

    A malformed sentence raises :class:`PovstimError` naming ``name`` and the
    line (``on_error="error"``), or is left out and appended to ``skipped``
    (``on_error="skip"``).
    """
    if on_error not in ON_ERROR:
        raise ValueError(f"on_error must be one of {ON_ERROR}")
    tokens: list[Token] = []
    token_lines: list[int] = []
    meta: dict[str, str] = {}
    extra: dict[int, list[str]] = {}
    bad: _Malformed | None = None

    def finish() -> Sentence | None:
        nonlocal bad
        err = bad
        if err is None and tokens:
            try:
                _check_tree(tokens, token_lines)
            except _Malformed as exc:
                err = exc
        if err is not None:
            where = f"{name}:{err.lineno}"
            if on_error == "error":
                raise PovstimError(f"{where}: malformed CoNLL-U: {err.reason}")
            if skipped is not None:
                sid = meta.get("sent_id")
                skipped.append(Skipped(where, err.reason + (f" (sent_id {sid})" if sid else "")))
            return None
        return Sentence(tokens, meta, extra) if tokens else None

    for lineno, raw in enumerate(fh, 1):
        line = raw.rstrip("\n").rstrip("\r")
        if not line.strip():
            sent = finish()
            if sent is not None:
                yield sent
            tokens, token_lines, meta, extra, bad = [], [], {}, {}, None
            continue
        if line.startswith("#"):
            key, sep, value = line[1:].partition("=")
            if sep:
                meta[key.strip()] = value.strip()
            continue
        if bad is not None:
            continue  # the rest of a malformed sentence
        cols = line.split("\t")
        if len(cols) != 10:
            bad = _Malformed(lineno, f"expected 10 tab-separated columns, found {len(cols)}")
            continue
        if "-" in cols[0] or "." in cols[0]:
            # Multiword-token ranges and empty nodes carry no syntactic word of the basic tree.
            extra.setdefault(len(tokens) + 1, []).append(line)
            continue
        try:
            tokens.append(_parse_word(cols, lineno))
            token_lines.append(lineno)
        except _Malformed as exc:
            bad = exc
    sent = finish()
    if sent is not None:
        yield sent


def read_file(path, on_error: str = "error", skipped: list[Skipped] | None = None) -> list[Sentence]:
    with open(path, encoding="utf-8") as fh:
        return list(read(fh, str(path), on_error, skipped))


def write(fh: TextIO, sentences: Iterable[Sentence]) -> int:
    n = 0
    for s in sentences:
        fh.write(s.to_block())
        n += 1
    return n
