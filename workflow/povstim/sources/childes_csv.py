"""childes-db ``get_utterances`` exports -> adult utterances, as AO-CHILDES builds them.

Each CSV row is one utterance: the words in ``gloss``, the speaker in
``speaker_role``, the utterance type (question, declarative, imperative, ...)
in ``type`` and the target child's age in days in ``target_child_age``.
Following AO-CHILDES (Huebner & Willits 2021; their ``aochildes`` package):

* rows of the target child and other children (``drop_roles``) are dropped;
* rows with untranscribed material (``xxx``, ``yyy``, ``www``, the Unicode
  replacement character) are dropped whole;
* the terminator comes from ``type`` -- this is what keeps questions
  questions (BabyBERTa App. C replaced periods by question marks for
  questions marked with periods);
* ``age_order: true`` orders utterances by the target child's age, then
  transcript, then utterance order (AO = age-ordered); otherwise files are
  read in name order and rows in file order;
* ``max_age_days`` and ``collections`` restrict the rows (AO-CHILDES: under
  6 years, Eng-NA).
"""

from __future__ import annotations

import csv
import math
import re
from typing import Iterable, Iterator

from ..io import PovstimError
from .normalize import CleanStats, age_order_record

DEFAULT_DROP_ROLES = ("Target_Child", "Child")
REQUIRED = ("gloss", "speaker_role")
_UNKNOWN_RE = re.compile(r"(\ufffd|\bwww\b|\bxxx\b|\byyy\b)")
# childes-db utterance types -> terminator (AO-CHILDES helpers.punctuation_dict).
TYPE_TERMINATOR = {
    "question": "?",
    "self interruption question": "?",
    "interruption question": "?",
    "trail off question": "?",
    "imperative": "!",
    "imperative_emphatic": "!",
    "question exclamation": "!",
}


def _age(value: str) -> float:
    try:
        age = float(value)
    except (TypeError, ValueError):
        return math.inf
    return age if not math.isnan(age) else math.inf


def _int(value: str) -> int:
    try:
        return int(float(value))
    except (TypeError, ValueError):
        return 0


FIELDS = ("gloss", "speaker_role", "target_child_age", "collection_name", "type", "transcript_id", "utterance_order")


def read_rows(members: Iterable[tuple[str, Iterable[str]]], stats: CleanStats) -> Iterator[tuple]:
    """(gloss, role, age, collection, type, transcript, order) of every row of every member.

    A plain csv.reader with column indices: building a 24-key dict per row
    (csv.DictReader) was half of the cleaning time.
    """
    for name, lines in members:
        stats.files += 1
        reader = csv.reader(lines)
        header = next(reader, None) or []
        missing = [c for c in REQUIRED if c not in header]
        if missing:
            raise PovstimError(
                f"{name}: not a childes-db utterances export: missing column(s) {', '.join(missing)} "
                f"(has: {', '.join(header)})"
            )
        idx = [header.index(c) if c in header else None for c in FIELDS]
        width = len(header)
        try:
            for row in reader:
                if len(row) < width:
                    row = row + [""] * (width - len(row))
                yield tuple(row[i] if i is not None else "" for i in idx)
        except csv.Error as exc:
            raise PovstimError(f"{name}: line {reader.line_num}: malformed CSV ({exc})") from None


def utterances(
    members: Iterable[tuple[str, Iterable[str]]], params: dict, stats: CleanStats
) -> Iterator[tuple[str, str]]:
    """Yield (words, terminator) for the kept rows, in file order or child-age order."""
    drop_roles = set(params.get("drop_roles", DEFAULT_DROP_ROLES))
    max_age = params.get("max_age_days")
    collections = set(params.get("collections") or [])
    age_order = bool(params["age_order"])
    kept: list[tuple[float, int, int, int, str, str]] = []
    for row_no, (gloss, role, age_s, collection, utype, transcript, order) in enumerate(read_rows(members, stats)):
        stats.lines_in += 1
        if role in drop_roles:
            stats.drop("child_speaker")
            continue
        age = _age(age_s) if (age_order or max_age is not None) else math.inf
        if max_age is not None and age != math.inf and age > float(max_age):
            stats.drop("child_too_old")
            continue
        if collections and collection not in collections:
            stats.drop("other_collection")
            continue
        if gloss in ("", "NA"):
            stats.drop("empty")
            continue
        if _UNKNOWN_RE.search(gloss):
            stats.drop("untranscribed")
            continue
        words = gloss.replace("_", " ").replace("+", " ")
        terminator = TYPE_TERMINATOR.get(utype.strip(), ".")
        if age_order:
            kept.append((age, _int(transcript), _int(order), row_no, words, terminator))
        else:
            kept.append((0, 0, 0, row_no, words, terminator))
    if age_order:
        # Rows without an age go last; ties keep transcript and utterance order.
        kept.sort(key=lambda r: r[:4])
        stats.extra["age_order"] = age_order_record("column 'target_child_age' (days)", [r[0] for r in kept])
    for *_, words, terminator in kept:
        yield words, terminator
