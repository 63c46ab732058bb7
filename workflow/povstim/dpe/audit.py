"""``dpe.tsv``: the one reader and writer of the DPE audit.

One row per removed sentence and phenomenon: ``sent_id`` (0-based line of the
corpus's base.txt), ``phenomenon``, ``rule`` (the function that fired, in the
configured mode), ``tokens`` (``id:form`` of the tokens that triggered it),
``sentence`` and ``targeted`` (``true`` when the strict rule of the same
phenomenon also fires: the removal is disambiguating evidence, the only kind
BABY puts back; in strict mode every removal is targeted). When the input was a
CoNLL-U file with its own sentence ids (a UD treebank: ``# sent_id = adam1-1``),
a seventh column ``source_id`` keeps them; ``sent_id`` is then the sentence's
0-based position in the input.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from ..io import PovstimError, atomic_write, read_lines

COLUMNS = ("sent_id", "phenomenon", "rule", "tokens", "sentence", "targeted")
SOURCE_COLUMN = "source_id"  # optional seventh column


@dataclass(frozen=True)
class Row:
    sent_id: int
    phenomenon: str
    rule: str
    tokens: str
    sentence: str
    targeted: bool
    source_id: str | None = None


def _clean(s: str) -> str:
    return s.replace("\t", " ").replace("\n", " ")


def write(path: str | Path, rows: Iterable[Row]) -> int:
    rows = list(rows)
    with_source = any(r.source_id is not None for r in rows)
    with atomic_write(path) as fh:
        fh.write("\t".join(COLUMNS + ((SOURCE_COLUMN,) if with_source else ())) + "\n")
        for r in rows:
            cols = [str(r.sent_id), r.phenomenon, r.rule, _clean(r.tokens), _clean(r.sentence),
                    "true" if r.targeted else "false"]
            if with_source:
                cols.append(_clean(r.source_id or ""))
            fh.write("\t".join(cols) + "\n")
    return len(rows)


def read(path: str | Path, n_lines: int | None = None) -> list[Row]:
    """Rows of a dpe.tsv; ``n_lines`` (the base corpus's line count) checks every sent_id against it."""
    path = Path(path)
    if not path.is_file():
        raise PovstimError(f"DPE audit {path} does not exist")
    lines = read_lines(path)
    header = tuple(lines[0].split("\t")) if lines else ()
    if header not in (COLUMNS, COLUMNS + (SOURCE_COLUMN,)):
        raise PovstimError(f"{path}: not a dpe.tsv (expected the header {' '.join(COLUMNS)} [{SOURCE_COLUMN}]); "
                           "rerun the filter stage")
    out = []
    for lineno, line in enumerate(lines[1:], 2):
        cols = line.split("\t")
        if len(cols) != len(header) or cols[5] not in ("true", "false"):
            raise PovstimError(f"{path}:{lineno}: bad row {line!r}")
        try:
            i = int(cols[0])
        except ValueError:
            raise PovstimError(f"{path}:{lineno}: sent_id {cols[0]!r} is not an integer") from None
        if n_lines is not None and not 0 <= i < n_lines:
            raise PovstimError(f"{path}:{lineno}: sent_id {i} is not a line of the base corpus ({n_lines} lines)")
        out.append(Row(i, cols[1], cols[2], cols[3], cols[4], cols[5] == "true", cols[6] if len(cols) > 6 else None))
    return out


def removed(rows: Iterable[Row]) -> dict[int, list[str]]:
    """sent_id -> phenomena it was removed for (in file order)."""
    out: dict[int, list[str]] = defaultdict(list)
    for r in rows:
        if r.phenomenon not in out[r.sent_id]:
            out[r.sent_id].append(r.phenomenon)
    return dict(out)


def targeted(rows: Iterable[Row]) -> dict[int, set[str]]:
    """sent_id -> phenomena whose removal is targeted (disambiguating) evidence."""
    out: dict[int, set[str]] = defaultdict(set)
    for r in rows:
        if r.targeted:
            out[r.sent_id].add(r.phenomenon)
    return dict(out)
