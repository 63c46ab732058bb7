"""Any CSV or TSV file as a source (``format: csv`` / ``format: tsv``): one row, one utterance or sentence.

The text is the ``text_column``; the rest is optional:

* ``delimiter`` -- default: a tab for ``format: tsv`` and for ``.tsv``/``.tab`` files (also inside
  ``.gz``/``.bz2``/``.xz``), else a comma;
* ``speaker_column`` with ``keep_speakers`` (only rows whose speaker is one of these) and/or
  ``drop_speakers`` (rows of these speakers are left out, counted as ``other_speaker``);
* ``age_column`` (a number in any unit, e.g. months) for ``age_order: true``: rows ordered by age,
  rows without an age last (counted in ``rows_without_age``); ties keep file order, and with
  ``transcript_column`` the rows of a transcript stay together (a transcript's age is its youngest
  row's; equal ages keep the order of first appearance), as AO-CHILDES orders childes-db exports.

Every error names the file, the line and the column (a missing column: the columns the header has).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Iterator

from ..io import PovstimError
from .normalize import CleanStats, age_order_record

_MISSING_AGE = ("", "na", "nan", "null", "none")
_TAB_SUFFIXES = (".tsv", ".tab")
# The settings that name a column of the header.
COLUMN_KEYS = ("text_column", "speaker_column", "age_column", "transcript_column")


def delimiter_of(fmt: str, member: str, spec: dict) -> str:
    """The field separator: ``delimiter`` when given, else a tab for tsv (format or file name), else a comma."""
    if spec.get("delimiter") is not None:
        return spec["delimiter"]
    name = member.lower()
    for suffix in (".gz", ".bz2", ".xz"):
        name = name.removesuffix(suffix)
    return "\t" if fmt == "tsv" or name.endswith(_TAB_SUFFIXES) else ","


def _column(header: list[str], spec: dict, key: str, member: str, source: str) -> int | None:
    col = spec.get(key)
    if col is None:
        return None
    if col not in header:
        shown = ", ".join(repr(h) for h in header) if header else "(an empty first line)"
        hint = ""
        if len(header) == 1:  # one field: the header was not split, so the file has another separator
            other = next((d for d in (";", "\t", ",", "|") if d in header[0]), None)
            if other is not None:
                said = "'\\t'" if other == "\t" else repr(other)
                hint = (f"; the header was read as one field: its columns look separated by {said}, so set "
                        f"sources.{source}.delimiter: {said}")
        raise PovstimError(f"{member}: line 1: no column {col!r} (sources.{source}.{key}); the header has: {shown}"
                           + hint)
    return header.index(col)


def _header(reader, fmt: str, member: str) -> list[str] | None:
    """The first row (None for an empty file), without a byte-order mark (Excel's UTF-8 CSV)."""
    try:
        header = next(reader, None)
    except csv.Error as exc:
        raise PovstimError(f"{member}: line 1: malformed {fmt.upper()} header ({exc})") from None
    if header and header[0].startswith("\ufeff"):
        header[0] = header[0][1:]
    return header


def check_columns(fmt: str, members: Iterable[tuple[str, Iterable[str]]], spec: dict, source: str) -> None:
    """The columns the settings name against each member's first line only (``povstim check``: cheap),
    with the clean job's error: the key, the file and the columns the header has."""
    check_spec(source, spec)
    for member, lines in members:
        header = _header(csv.reader(lines, delimiter=delimiter_of(fmt, member, spec)), fmt, member)
        if header is None:
            continue  # an empty file: the clean job counts it
        for key in COLUMN_KEYS:
            _column(header, spec, key, member, source)


def _age(value: str, member: str, line: int, column: str) -> float:
    v = value.strip()
    if v.lower() in _MISSING_AGE:
        return math.inf
    try:
        age = float(v)
    except ValueError:
        raise PovstimError(f"{member}: line {line}: column {column!r}: {value!r} is not a number (an age; leave "
                           "the cell empty for an unknown age)") from None
    return age if not math.isnan(age) else math.inf


def check_spec(source: str, spec: dict) -> None:
    """Settings that cannot work together, before any file is read."""
    where = f"sources.{source}"
    if spec.get("age_order") and spec.get("age_column") is None:
        raise PovstimError(f"{where}.age_order: a csv/tsv source is ordered by its age_column; set "
                           f"{where}.age_column (the column with the child's age, any unit)")
    if spec.get("max_age_days") is not None:
        raise PovstimError(f"{where}.max_age_days: applies to CHAT and childes-db exports; a csv/tsv source's "
                           "age_column has no known unit: filter the rows before, or keep them")
    if (spec.get("keep_speakers") or spec.get("drop_speakers")) and spec.get("speaker_column") is None:
        raise PovstimError(f"{where}: keep_speakers/drop_speakers need {where}.speaker_column")
    if spec.get("delimiter") is not None and len(spec["delimiter"]) != 1:
        raise PovstimError(f"{where}.delimiter: one character (a tab is \"\\t\"), not {spec['delimiter']!r}")


def rows(fmt: str, members: Iterable[tuple[str, Iterable[str]]], spec: dict, stats: CleanStats
         ) -> Iterator[tuple[str, None]]:
    """(text, None) of the kept rows of every member, in file order or age order."""
    source = stats.source
    check_spec(source, spec)
    keep = set(spec.get("keep_speakers") or [])
    drop = set(spec.get("drop_speakers") or [])
    age_order = bool(spec["age_order"])
    kept: list[tuple[float, int, int, str]] = []
    transcripts: dict[tuple[str, str], int] = {}
    n = 0
    for member, lines in members:
        stats.files += 1
        reader = csv.reader(lines, delimiter=delimiter_of(fmt, member, spec))
        header = _header(reader, fmt, member)
        if header is None:
            continue  # an empty file
        text_i = _column(header, spec, "text_column", member, source)
        speaker_i = _column(header, spec, "speaker_column", member, source)
        age_i = _column(header, spec, "age_column", member, source)
        transcript_i = _column(header, spec, "transcript_column", member, source)
        width = len(header)
        while True:
            try:
                row = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                raise PovstimError(f"{member}: line {reader.line_num}: malformed {fmt.upper()} ({exc})") from None
            if not row or (len(row) == 1 and not row[0].strip()):
                continue  # a blank line
            line = reader.line_num
            if len(row) != width:
                sep = delimiter_of(fmt, member, spec)
                raise PovstimError(
                    f"{member}: line {line}: {len(row)} fields where the header has {width} "
                    f"({', '.join(repr(h) for h in header)}); is the delimiter {sep!r} right "
                    f"(sources.{source}.delimiter), and are fields with a {sep!r} quoted?")
            stats.lines_in += 1
            n += 1
            if speaker_i is not None:
                speaker = row[speaker_i].strip()
                if (keep and speaker not in keep) or speaker in drop:
                    stats.drop("other_speaker")
                    continue
            text = row[text_i].strip()
            if not text or text == "NA":
                stats.drop("empty")
                continue
            if not age_order:
                yield text, None
                continue
            age = _age(row[age_i], member, line, header[age_i])
            if age == math.inf:
                stats.extra["rows_without_age"] = stats.extra.get("rows_without_age", 0) + 1
            group = n
            if transcript_i is not None:
                group = transcripts.setdefault((member, row[transcript_i]), n)
            kept.append((age, group, n, text))
    if age_order:
        # by age (unknown last; a transcript's age is its youngest row's), then the transcript's first row,
        # then file order: a transcript's rows stay together
        first_age: dict[int, float] = {}
        for age, group, _, _ in kept:
            first_age[group] = min(age, first_age.get(group, math.inf))
        kept.sort(key=lambda r: (first_age[r[1]], r[1], r[2]))
        by = f"column {spec['age_column']!r} (sources.{source}.age_column, its own unit)"
        stats.extra["age_order"] = age_order_record(by, [a for a, *_ in kept])
        for *_, text in kept:
            yield text, None
