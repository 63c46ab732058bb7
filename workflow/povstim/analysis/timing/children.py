"""Children's side of "when is it acquired?": the age at which children first produce each word.

From CHILDES transcripts with the target child's own speech and ages:

* CHAT files (``.cha``, or folders of them): utterances of the participant whose ``@ID`` role is
  ``Target_Child``, aged by that ``@ID``'s age field (``Y;MM.DD``), read with the CHAT reader of
  ``sources/chat.py`` (its main-tier cleaning: retracings, codes and untranscribed material out);
* childes-db CSV exports (``.csv``: ``get_utterances()`` of childesr): rows with ``speaker_role`` Target_Child,
  words of ``gloss``, age ``target_child_age`` -- in **days** (checked on the AO-CHILDES exports: Bates's
  children are 852.25 days = 2;4, 28 months). AO-CHILDES's exports were made with
  ``role_exclude='Target_Child'``: they hold no child speech, and say so (a note; nothing is counted).

One row per word (lower-cased): ``age_first_days`` (the youngest age at which any child said it),
``age_median_days`` (the median over children of each child's first production), ``n_children`` and
``n_tokens`` (child tokens of it), ``first_at`` (file:line of the first production). ``words``: only these.
What is skipped (a file without a target child, utterances without an age, an export without child speech) is
a note, never a silent gap; a file missing a needed column is an error naming it.
"""

from __future__ import annotations

import csv
import math
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from povstim.io import PovstimError
from povstim.sources.chat import clean_main_tier, read_transcript
from povstim.sources.normalize import CleanStats

DAYS_PER_MONTH = 30.4375
CSV_COLUMNS = ("speaker_role", "target_child_age", "gloss")
COLUMNS = ["word", "age_first_days", "age_first_months", "age_first", "age_median_days", "age_median_months",
           "n_children", "n_tokens", "first_at"]


def format_age(days: float) -> str:
    """Days -> CHAT's Y;MM (852.25 -> 2;04)."""
    months = int(days // DAYS_PER_MONTH)
    return f"{months // 12};{months % 12:02d}"


def files(paths: Iterable[str | Path]) -> list[Path]:
    """The .cha and .csv files of ``paths`` (folders searched recursively), sorted; an error for a path that is
    neither."""
    out = []
    for p in map(Path, paths):
        if p.is_dir():
            out += sorted(q for q in p.rglob("*") if q.suffix.lower() in (".cha", ".csv") and q.is_file())
        elif p.is_file() and p.suffix.lower() in (".cha", ".csv"):
            out.append(p)
        else:
            raise PovstimError(f"{p}: not a CHAT file (.cha), a childes-db CSV export (.csv) or a folder of them")
    return out


def first_productions(paths: Iterable[str | Path], words: Iterable[str] | None = None
                      ) -> tuple[pd.DataFrame, list[str]]:
    """(one row per word the target children produced, notes on what was skipped)."""
    wanted = {w.lower() for w in words} if words else None
    # (child, word) -> [first age, where], and word -> tokens
    first: dict[tuple[str, str], list] = {}
    tokens: dict[str, int] = defaultdict(int)
    notes: list[str] = []
    found = files(paths)
    if not found:
        raise PovstimError(f"no .cha or .csv files in {', '.join(map(str, paths))}")
    for f in found:
        reader = _chat if f.suffix.lower() == ".cha" else _csv
        for child, age, text, where in reader(f, notes):
            for w in text.lower().split():
                w = w.strip(",")
                if not w or (wanted is not None and w not in wanted):
                    continue
                tokens[w] += 1
                cur = first.get((child, w))
                if cur is None or age < cur[0]:
                    first[(child, w)] = [age, where]
    by_word: dict[str, list] = defaultdict(list)
    for (child, w), (age, where) in first.items():
        by_word[w].append((age, where))
    rows = []
    for w in sorted(by_word):
        ages = sorted(by_word[w])
        youngest, where = ages[0]
        med = float(pd.Series([a for a, _ in ages]).median())
        rows.append({"word": w, "age_first_days": youngest, "age_first_months": youngest / DAYS_PER_MONTH,
                     "age_first": format_age(youngest), "age_median_days": med,
                     "age_median_months": med / DAYS_PER_MONTH, "n_children": len(ages), "n_tokens": tokens[w],
                     "first_at": where})
    if wanted is not None:
        never = sorted(wanted - set(by_word))
        if never:
            notes.append(f"{len(never)} word(s) of the list never produced by a target child: "
                         f"{', '.join(never[:10])}{' ...' if len(never) > 10 else ''}")
    return pd.DataFrame(rows, columns=COLUMNS), notes


def _chat(path: Path, notes: list[str]):
    """(child, age in days, words, file:line) of each target-child utterance of a CHAT file."""
    stats = CleanStats()
    with open(path, encoding="utf-8", errors="replace") as fh:
        tr = read_transcript(fh, str(path), stats)
    kids = [p for p in tr.participants.values() if p.role == "Target_Child"]
    if not kids:
        notes.append(f"{path}: no Target_Child participant: skipped")
        return
    names, corpora = _participant_names(path)
    for kid in kids:
        said = [u for u in tr.utterances if u.speaker == kid.code]
        if kid.age_days is None:
            notes.append(f"{path}: the target child {kid.code} has no age in @ID (field 4, Y;MM.DD): its "
                         f"{len(said)} utterance(s) skipped")
            continue
        # a child is its corpus and name across files (Bates/Free20/amy.cha and Bates/Snack28/amy.cha: one child)
        child = f"{corpora.get(kid.code) or path.parent.name}/{names.get(kid.code, kid.code)}"
        for u in said:
            if u.cut_off:
                continue
            text, _, reason = clean_main_tier(u.text)
            if reason is None and text:
                yield child, float(kid.age_days), text, f"{path}:{u.line_no}"


def _participant_names(path: Path) -> tuple[dict[str, str], dict[str, str]]:
    """(code -> name from '@Participants: CHI Eve Target_Child, ...', code -> corpus from its @ID): with the
    corpus, the child's name identifies it across files."""
    names, corpora = {}, {}
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if line.startswith("@Participants"):
                for entry in line.partition(":")[2].split(","):
                    parts = entry.split()
                    if len(parts) == 3:
                        names[parts[0]] = parts[1]
            elif line.startswith("@ID"):
                fields = line.partition(":")[2].strip().split("|")
                if len(fields) > 2 and fields[1].strip():
                    corpora[fields[2].strip()] = fields[1].strip()
    return names, corpora


def _csv(path: Path, notes: list[str]):
    """(child, age in days, words, file:line) of each Target_Child row of a childes-db CSV export."""
    with open(path, encoding="utf-8", errors="replace", newline="") as fh:
        header = fh.readline()
        # AO-CHILDES's files open with a README paragraph; the header is the first line naming the columns
        skipped = 1
        while header and "speaker_role" not in header:
            header = fh.readline()
            skipped += 1
        if not header:
            raise PovstimError(f"{path}: not a childes-db export: no header with {', '.join(CSV_COLUMNS)}")
        cols = next(csv.reader([header]))
        missing = [c for c in CSV_COLUMNS if c not in cols]
        if missing:
            raise PovstimError(f"{path}: childes-db export without column(s) {', '.join(missing)} (line {skipped})")
        rows = csv.DictReader(fh, fieldnames=cols)
        n_child = n_no_age = n_other = 0
        for no, r in enumerate(rows, skipped + 1):
            if r.get("speaker_role") != "Target_Child":
                n_other += 1
                continue
            n_child += 1
            try:
                age = float(r.get("target_child_age") or "nan")
            except ValueError:
                age = math.nan
            if not math.isfinite(age):
                n_no_age += 1
                continue
            child = f"{r.get('corpus_id', '')}/{r.get('target_child_id') or r.get('target_child_name') or '?'}"
            yield child, age, r.get("gloss") or "", f"{path}:{no}"
    if n_child == 0:
        notes.append(f"{path}: no Target_Child utterances among its {n_other} rows (the export left the target "
                     "child's speech out, as childes-db's role_exclude='Target_Child' does for AO-CHILDES): skipped")
    elif n_no_age:
        notes.append(f"{path}: {n_no_age} of {n_child} Target_Child utterance(s) without target_child_age: skipped")
