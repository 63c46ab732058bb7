"""Clean one real source to ``results/corpus/clean/{source}.txt`` + statistics.

Which reader runs depends on the source's kind (and ``format`` for ``text_url``
and ``local``); all of them end in :func:`normalize.finish`, so every source
has the same orthography, the same minimum length and the same statistics.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Iterable, Iterator

from .. import languages
from ..io import PovstimError, write_json, write_lines
from . import chat, childes_csv, hf_parquet, normalize, tabular, textfmt
from .normalize import CleanStats, Style, finish, split_sentences
from .spec import source_spec

log = logging.getLogger(__name__)

FORMATS = ("chat", "childes_csv", "parquet", "csv", "tsv") + textfmt.TEXT_FORMATS
KIND_FORMAT = {"childes_chat": "chat", "childes_csv": "childes_csv", "hf_parquet": "parquet"}
# Written formats whose units are paragraphs: split into sentences by default.
_PARAGRAPH_FORMATS = {"plain", "gutenberg", "tinystories", "parquet"}
_DEFAULT_INCLUDE = {"chat": ["*.cha"], "childes_csv": ["*.csv"], "parquet": ["*.parquet"], "csv": ["*.csv"],
                    "tsv": ["*.tsv"]}


def source_format(name: str, spec: dict) -> str:
    kind = spec.get("kind")
    if kind in KIND_FORMAT:
        return KIND_FORMAT[kind]
    if kind == "text_url":
        fmt = spec.get("format", "plain")
    elif kind == "local":
        if "format" not in spec:
            raise PovstimError(f"sources.{name}: a local source needs `format` (one of: {', '.join(FORMATS)})")
        fmt = spec["format"]
    else:
        raise PovstimError(f"sources.{name}: kind '{kind}' is not a real source that `povstim clean` reads")
    if fmt not in FORMATS:
        raise PovstimError(f"sources.{name}.format: unknown format '{fmt}' (known: {', '.join(FORMATS)})")
    return fmt


class EmptySource(PovstimError):
    """A local source whose path holds nothing to clean (``empty_local``): its own message, not "download it"."""


def _include(spec: dict, fmt: str) -> list[str] | None:
    """The file patterns a folder or archive is read through: ``include``, else the format's default."""
    include = spec.get("include", _DEFAULT_INCLUDE.get(fmt))
    return [include] if isinstance(include, str) else include


def empty_local(name: str, spec: dict, path: Path) -> str | None:
    """Why a local source's existing ``path`` holds no text to clean, else None: a 0-byte file, a folder without
    files, a folder none of whose files ``include`` selects (as the folder reader does: ``textfmt.iter_members``),
    or one whose selected files are all 0 bytes. Before this check an empty folder got "cleaning kept no lines ...
    (dropped: {})", an empty file "download it first"."""
    key = f"sources.{name}.path"
    if path.is_file():
        if path.stat().st_size == 0:  # not "download it first": the user's own file is empty
            return f"{key}: {path} is empty (0 bytes): put the source's text in it (or point {key} at the file that holds it)"
        return None
    if not path.is_dir():
        return None
    files = sorted(p for p in path.rglob("*") if p.is_file())
    if not files:
        return (f"{key}: {path} is an empty folder (no files): put the source's files in it (or point {key} at the "
                "folder that holds them)")
    include = _include(spec, source_format(name, spec))
    picked = [p for p in files if textfmt.selected(p.relative_to(path).as_posix(), include)]
    if not picked:
        where = (f"sources.{name}.include" if "include" in spec else
                 f"format {source_format(name, spec)}'s default include")
        return (f"{key}: {path} holds {len(files):,} file(s) (first: {files[0].relative_to(path).as_posix()}) but "
                f"none that {where} selects ({', '.join(include)}): set sources.{name}.include to your files' names, "
                "or put the source's files in the folder")
    if all(p.stat().st_size == 0 for p in picked):
        return (f"{key}: {path}: its {len(picked):,} file(s) that it reads are all empty (0 bytes; first: "
                f"{picked[0].relative_to(path).as_posix()}): put the source's text in them")
    return None


def input_paths(name: str, spec: dict, input_dir: Path | None, base_dir: Path) -> list[Path]:
    """The files to clean: the manifest's files, or a local source's path."""
    if spec.get("kind") == "local":
        path = Path(spec["path"]).expanduser()
        if not path.is_absolute():
            path = base_dir / path
        if not path.exists():
            raise PovstimError(f"sources.{name}.path: {path} does not exist")
        why = empty_local(name, spec, path)
        if why:
            raise EmptySource(why)
        return [path]
    if input_dir is None:
        raise PovstimError(f"source '{name}' ({spec.get('kind')}) needs --input-dir with its downloaded files")
    manifest = input_dir / "manifest.json"
    if not manifest.exists():
        raise PovstimError(f"{manifest}: missing; run `povstim download --source {name}` first")
    files = json.loads(manifest.read_text())["files"]
    paths = [input_dir / f["name"] for f in files]
    for p in paths:
        if not p.exists():
            raise PovstimError(f"{p}: listed in {manifest} but missing; download source '{name}' again")
    return paths


def bad_line_handler(name: str, spec: dict, stats: CleanStats) -> textfmt.BadLine:
    """What happens to a line that is not text (invalid bytes, NUL): ``invalid_text: drop`` counts it
    (``dropped``, ``malformed_lines`` with file:line examples) and leaves it out; ``fail`` stops."""
    policy = spec["invalid_text"]

    def bad_line(where: str, line: str, why: str, reason: str) -> None:
        if policy == "fail":
            raise PovstimError(f"source '{name}': {where}: {why}: {line[:80]!r} (sources.{name}.invalid_text is "
                               "'fail'; set it to 'drop' to count and skip such lines)")
        stats.drop(reason)
        stats.malformed_line(where, line, why)
        if stats.dropped[reason] == 1:
            log.warning("source '%s': %s: %s; such lines are dropped and counted (sources.%s.invalid_text: drop)",
                        name, where, why, name)

    return bad_line


def _members(paths: list[Path], spec: dict, fmt: str, bad_line: textfmt.BadLine | None = None
             ) -> Iterator[tuple[str, Iterable[str]]]:
    include = _include(spec, fmt)
    local_file = spec.get("kind") == "local" and len(paths) == 1 and paths[0].is_file()
    for path in paths:
        is_archive = path.name.lower().endswith(textfmt.ARCHIVE_SUFFIXES)
        if path.is_file() and not local_file and not is_archive and include and not textfmt.matches_file(path.name, include):
            continue  # a downloaded file the patterns do not select (e.g. a README next to the data)
        # A local file named by `path` is read whatever its name; patterns select inside archives and folders.
        yield from textfmt.iter_members(path, None if (local_file and not is_archive) else include,
                                        spec["encoding"], bad_line)


def check_columns(name: str, spec: dict, base_dir: Path) -> None:
    """A csv/tsv local source's column settings against its files' headers (first lines only), for
    ``povstim check``; other sources and a missing path are left to the checks that handle them."""
    spec = source_spec(name, spec)
    if spec.get("kind") != "local" or source_format(name, spec) not in ("csv", "tsv"):
        return
    paths = input_paths(name, spec, None, base_dir)
    fmt = source_format(name, spec)
    tabular.check_columns(fmt, _members(paths, spec, fmt), spec, name)


def _dropped_transcript(stats: CleanStats, member: str, reason: str, why: str, utterances: int) -> None:
    """A CHAT transcript left out whole for a header: named in the statistics (``dropped_transcripts``) and the log."""
    stats.extra.setdefault("dropped_transcripts", []).append(
        {"file": member, "reason": reason, "why": why, "utterances": utterances})
    # A transcript without the header is suspicious; one in another language is what `languages:` asks for.
    log.log(logging.WARNING if "no @Languages" in why else logging.INFO,
            "source '%s': %s: transcript dropped (%s utterances, %s): %s", stats.source, member, utterances, reason, why)


def _units(paths: list[Path], spec: dict, fmt: str, stats: CleanStats) -> Iterator[tuple[str, str | None]]:
    """(text, terminator or None) pairs before normalisation; paragraphs already split."""
    bad_line = bad_line_handler(stats.source, spec, stats)
    split = spec.get("split_sentences", fmt in _PARAGRAPH_FORMATS)
    drop_unterminated = spec.get("drop_unterminated", fmt in ("plain", "gutenberg", "parquet"))
    if fmt == "chat":
        roles = spec.get("drop_roles", chat.CHILD_ROLES)
        languages = set(spec.get("languages") or [])
        max_age = spec.get("max_age_days")
        age_order = bool(spec["age_order"])
        ordered: list[tuple[float, int, list[tuple[str, str]]]] = []
        for n, (member, lines) in enumerate(_members(paths, spec, fmt, bad_line)):
            stats.files += 1
            tr = chat.read_transcript(lines, member, stats)
            skip = None
            age = tr.target_child_age_days
            if languages and not languages.intersection(tr.languages):
                skip = "other_language_transcript"
                why = (f"line {tr.languages_line}: @Languages: {', '.join(tr.languages) or '(empty)'}"
                       if tr.languages_line else "no @Languages header")
                why += f", not in sources.{stats.source}.languages {sorted(languages)}"
            elif max_age is not None and age is not None and age > float(max_age):
                skip = "child_too_old"
                why = f"target child {age:.0f} days old (@ID) > sources.{stats.source}.max_age_days {max_age}"
            if skip:
                stats.drop(skip, len(tr.utterances))
                stats.lines_in += len(tr.utterances)
                _dropped_transcript(stats, member, skip, why, len(tr.utterances))
                continue
            utts = chat.adult_utterances(tr, stats, roles, where=member)
            if age_order:
                # AO-CHILDES order: transcripts by the target child's age (unknown last), then by name.
                ordered.append((age if age is not None else float("inf"), n, list(utts)))
            else:
                yield from utts
        if age_order:
            # the range over kept utterances, as the csv readers record it (a transcript's age for each)
            stats.extra["age_order"] = normalize.age_order_record(
                "the target child's age in days (@ID)", [a for a, _, utts in ordered for _ in utts])
        for _, _, utts in sorted(ordered, key=lambda t: t[:2]):
            yield from utts
        return
    if fmt == "childes_csv":
        yield from childes_csv.utterances(_members(paths, spec, fmt, bad_line), spec, stats)
        return
    if fmt in ("csv", "tsv"):
        yield from tabular.rows(fmt, _members(paths, spec, fmt, bad_line), spec, stats)
        return
    if fmt == "parquet":
        column = spec["column"]

        def texts():
            for path in paths:
                files = sorted(path.rglob("*.parquet")) if path.is_dir() else [path]
                for f in files:
                    stats.files += 1
                    for doc in hf_parquet.documents(f, column):
                        yield from hf_parquet.paragraphs(doc)

        source = texts()
    else:

        def texts():
            for _, lines in _members(paths, spec, fmt, bad_line):
                stats.files += 1
                yield from textfmt.units(fmt, lines)

        source = texts()
    for unit in source:
        stats.lines_in += 1
        if not unit:
            stats.drop("empty")
            continue
        if drop_unterminated and unit.rstrip("\"'\u201d\u2019)")[-1:] not in ".?!":
            stats.drop("unterminated_paragraph")  # headings, list items, captions
            continue
        if split:
            sents = split_sentences(unit, spec.get("language", "en"))
            stats.extra["sentences_split"] = stats.extra.get("sentences_split", 0) + len(sents)
            for s in sents:
                yield s, None
        else:
            yield unit, None


def clean_lines(name: str, spec: dict, paths: list[Path], stats: CleanStats) -> Iterator[str]:
    fmt = source_format(name, spec)
    style = Style.from_params(spec, spoken=fmt in ("chat", "childes_csv"))
    max_words = spec.get("max_words")
    for text, terminator in _units(paths, spec, fmt, stats):
        line = finish(text, style, stats, terminator)
        if line is None:
            continue
        yield line
        if max_words and stats.words >= max_words:
            stats.extra["stopped_at_max_words"] = int(max_words)
            return


def clean_source(
    name: str, spec: dict, out: Path, stats_path: Path, input_dir: Path | None = None, base_dir: Path | None = None
) -> dict:
    """Clean a source; write the text and its statistics atomically; return the statistics."""
    spec = source_spec(name, spec)
    fmt = source_format(name, spec)
    lang = languages.get(spec.get("language"), f"sources.{name}.language")  # fails before any work
    if spec.get("fix_questions") and not lang.question_heuristic:
        raise PovstimError(f"sources.{name}.fix_questions: the question heuristic reads English word order and "
                           f"cannot run on {lang.name} ({lang.code}); leave it unset for this source")
    paths = input_paths(name, spec, input_dir, base_dir or Path.cwd())
    stats = CleanStats(source=name)
    t0 = time.perf_counter()
    n = write_lines(out, clean_lines(name, spec, paths, stats))
    seconds = time.perf_counter() - t0
    if n == 0:
        out.unlink(missing_ok=True)
        raise PovstimError(
            f"source '{name}': cleaning kept no lines from {', '.join(map(str, paths))} "
            f"(dropped: {dict(stats.dropped)}); check its kind/format/include settings"
        )
    try:  # English cleaning and DPE rules must never run on French text said to be English (and so on)
        with open(out, encoding="utf-8") as fh:
            languages.check_text(languages.sample_words(fh), lang.code, f"sources.{name}.language")
    except PovstimError:
        out.unlink(missing_ok=True)
        raise
    result = stats.to_dict()
    result.update(
        {
            "kind": spec.get("kind"),
            "format": fmt,
            "style": Style.from_params(spec).style,
            "lowercase": Style.from_params(spec).lowercase,
            "questions_fixed": stats.questions_fixed,
            **({"language": spec["language"]} if spec.get("language", "en") != "en" else {}),
            "inputs": [p.name for p in paths],
        }
    )
    # Timings stay out of the statistics file so it is byte-identical across runs.
    write_json(stats_path, result)
    log.info(
        "%s: %d lines in -> %d out (%d words, %.2f words/sentence, %.1f%% questions, %d malformed) in %.1fs",
        name, stats.lines_in, stats.lines_out, stats.words, result["words_per_sentence"],
        100 * result["question_share"], stats.malformed, seconds,
    )
    if result.get("age_order"):
        rec = result["age_order"]
        log.info("%s: age order applied (sources.%s.age_order): by %s, ages %s to %s, %d without an age (last)",
                 name, name, rec["by"], rec["youngest"], rec["oldest"], rec["without_age"])
    if stats.malformed:
        log.warning("%s: %d malformed lines, counted and skipped or recovered (first: %s: %s); all counted in %s "
                    "(malformed_examples)", name, stats.malformed, stats.malformed_examples[0]["where"],
                    stats.malformed_examples[0]["why"], stats_path)
    if result.get("dropped_transcripts"):
        log.warning("%s: %d transcripts dropped whole for a header (%s), named in %s (dropped_transcripts)", name,
                    len(result["dropped_transcripts"]),
                    ", ".join(d["file"] for d in result["dropped_transcripts"][:5])
                    + (", ..." if len(result["dropped_transcripts"]) > 5 else ""), stats_path)
    return result
