"""Reading files and archives as distributed, and the small per-format cleaners.

A downloaded (or local) source is a list of files; each may be plain text,
``.gz``/``.bz2``/``.xz``, ``.zip`` or ``.tar[.gz|.bz2|.xz]``/``.tgz``. Archive
members are read in sorted name order (deterministic) and can be selected
with ``include`` glob patterns (``Eng-NA/**/*.cha``).

Each ``format`` turns a member's lines into paragraphs (text units that the
normaliser sentence-splits when ``split_sentences`` is on) or sentences:

* ``plain``: paragraphs separated by blank lines, wrapped lines joined;
* ``lines``: one sentence/utterance per line already (OpenSubtitles mono);
* ``gutenberg``: Project Gutenberg eBooks; the licence header/footer (outside
  ``*** START OF`` .. ``*** END OF``) is removed, then like ``plain``;
* ``opensubtitles``: one line per subtitle; dialogue dashes, ``♪`` lyrics and
  bracketed sound descriptions are removed;
* ``switchboard``: ISIP/MS-State ``*-trans.text`` lines
  (``sw2001A-ms98-a-0001 0.97 2.14 words``): ids and times, ``[noise]``-style
  tags, partial words ``th[e]-`` and ``{braces}`` are removed;
* ``bnc_xml``: BNC XML edition ``<s>`` elements (tags stripped);
* ``tinystories``: stories separated by ``<|endoftext|>``.

Lines that are not text -- bytes that are invalid in the source's encoding, or
NUL bytes -- are never passed on: each one is reported to a ``bad_line``
callback with its file and line number (``povstim clean`` counts, reports and
drops them, or stops, by the source's ``invalid_text`` setting). Decoding uses
``surrogateescape``, so an invalid byte is recognisable (a lone surrogate) and
cannot be confused with a genuine U+FFFD in valid text.
"""

from __future__ import annotations

import bz2
import fnmatch
import gzip
import html
import io
import lzma
import re
import tarfile
import zipfile
from pathlib import Path
from typing import Callable, Iterable, Iterator

from ..io import PovstimError

# bad_line(where "file:line", the line with invalid bytes shown as \xNN, why, reason key)
BadLine = Callable[[str, str, str, str], None]
_INVALID_BYTE_RE = re.compile("[\udc80-\udcff]")

TEXT_FORMATS = ("plain", "lines", "gutenberg", "opensubtitles", "switchboard", "bnc_xml", "tinystories")

_TAG_RE = re.compile(r"<[^>]+>")
_GUTENBERG_START_RE = re.compile(r"^\*\*\*\s*START OF (THE|THIS) PROJECT GUTENBERG", re.I)
_GUTENBERG_END_RE = re.compile(r"^\*\*\*\s*END OF (THE|THIS) PROJECT GUTENBERG", re.I)
_SUBTITLE_NOISE_RE = re.compile(r"\[[^\]]*\]|\([^)]*\)|\u266a[^\u266a]*\u266a?|^\s*-\s*|\s-\s(?=[A-Z])|\{[^}]*\}")
_SWB_HEAD_RE = re.compile(r"^\S+\s+[\d.]+\s+[\d.]+\s*")
_SWB_NOISE_RE = re.compile(r"\[(?:noise|laughter|silence|vocalized-noise)\]|<[^>]*>|\{[^}]*\}", re.I)
_SWB_PARTIAL_RE = re.compile(r"\S*\[[^\]]*\]\S*-|\S+-(?=\s|$)|-\S*\[[^\]]*\]\S*")
# [laughter-word] -> word; [said/meant] -> meant.
_SWB_BRACKET_RE = re.compile(r"\[laughter-([^\]]*)\]|\[[^\]/]*/([^\]]*)\]")
_BNC_S_RE = re.compile(r"<s\b[^>]*>(.*?)</s>", re.S)

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar", ".zip")


def _matches(name: str, include: list[str] | None) -> bool:
    if not include:
        return True
    return any(fnmatch.fnmatch(name, pat) or fnmatch.fnmatch(Path(name).name, pat) for pat in include)


def selected(rel: str, include: list[str] | None) -> bool:
    """Does a folder's file (its path relative to the folder) pass the patterns, as ``iter_members`` reads it?"""
    return _matches(rel, include)


def matches_file(name: str, include: list[str]) -> bool:
    """Does a (maybe compressed) file name match the patterns? 'a.cha.gz' matches '*.cha'."""
    bare = re.sub(r"\.(gz|bz2|xz)$", "", name, flags=re.I)
    return _matches(name, include) or _matches(bare, include)


def shown(line: str) -> str:
    """A line for a message: invalid bytes (lone surrogates) as \\xNN, NUL as \\x00."""
    return line.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace").replace("\x00", "\\x00")


def line_problem(line: str, encoding: str = "utf-8") -> tuple[str, str] | None:
    """(reason key, why) when a decoded line is not text, else None."""
    m = _INVALID_BYTE_RE.search(line)
    if m:
        byte = ord(m.group(0)) - 0xDC00
        return "invalid_bytes", f"not valid {encoding} (byte 0x{byte:02x} at column {m.start() + 1})"
    if "\x00" in line:
        return "nul_bytes", f"NUL byte at column {line.index(chr(0)) + 1}"
    return None


def _strict(where: str, line: str, why: str, reason: str) -> None:
    raise PovstimError(f"{where}: {why}")


def _decode_lines(raw: io.BufferedIOBase, encoding: str, where: str, bad_line: BadLine | None) -> Iterator[str]:
    bad_line = bad_line or _strict
    lines = io.TextIOWrapper(raw, encoding=encoding, errors="surrogateescape", newline=None)
    for n, line in enumerate(lines, 1):
        problem = line_problem(line, encoding)
        if problem is None:
            yield line
        else:
            bad_line(f"{where}:{n}", shown(line.rstrip("\n")), problem[1], problem[0])


def iter_members(path: Path, include: list[str] | None = None, encoding: str = "utf-8",
                 bad_line: BadLine | None = None) -> Iterator[tuple[str, Iterable[str]]]:
    """Yield (member name, text lines) for a file, an archive's members, or a folder's files.

    Lines that are not text (invalid bytes, NUL) go to ``bad_line`` instead of the
    caller; without one they are an error naming the file and line.
    """
    name = path.name.lower()
    if path.is_dir():
        for child in sorted(p for p in path.rglob("*") if p.is_file()):
            if selected(child.relative_to(path).as_posix(), include):
                yield from iter_members(child, None, encoding, bad_line)
        return
    try:
        if name.endswith(".zip"):
            with zipfile.ZipFile(path) as zf:
                for info in sorted(zf.infolist(), key=lambda i: i.filename):
                    if info.is_dir() or not _matches(info.filename, include):
                        continue
                    with zf.open(info) as raw:
                        yield f"{path.name}/{info.filename}", _decode_lines(raw, encoding, f"{path}/{info.filename}", bad_line)
        elif name.endswith(ARCHIVE_SUFFIXES):
            with tarfile.open(path) as tf:
                members = sorted((m for m in tf.getmembers() if m.isfile()), key=lambda m: m.name)
                for m in members:
                    if not _matches(m.name, include):
                        continue
                    raw = tf.extractfile(m)
                    if raw is not None:
                        yield f"{path.name}/{m.name}", _decode_lines(raw, encoding, f"{path}/{m.name}", bad_line)
        elif name.endswith(".gz"):
            with gzip.open(path, "rb") as raw:
                yield path.name, _decode_lines(raw, encoding, str(path), bad_line)
        elif name.endswith(".bz2"):
            with bz2.open(path, "rb") as raw:
                yield path.name, _decode_lines(raw, encoding, str(path), bad_line)
        elif name.endswith(".xz"):
            with lzma.open(path, "rb") as raw:
                yield path.name, _decode_lines(raw, encoding, str(path), bad_line)
        else:
            with open(path, "rb") as raw:
                yield path.name, _decode_lines(raw, encoding, str(path), bad_line)
    except (OSError, EOFError, zipfile.BadZipFile, tarfile.TarError, lzma.LZMAError) as exc:
        raise PovstimError(f"{path}: cannot read it as {name.rsplit('.', 1)[-1]} ({exc})") from None


def _paragraphs(lines: Iterable[str]) -> Iterator[str]:
    buf: list[str] = []
    for line in lines:
        line = line.strip()
        if line:
            buf.append(line)
        elif buf:
            yield " ".join(buf)
            buf = []
    if buf:
        yield " ".join(buf)


def _gutenberg_body(lines: Iterable[str]) -> Iterator[str]:
    inside = None  # None: no START marker seen yet
    head: list[str] = []
    for line in lines:
        if inside is None:
            if _GUTENBERG_START_RE.match(line):
                inside = True
                head = []
                continue
            head.append(line)
            if len(head) > 2000:  # no marker in the first 2000 lines: the whole file is text
                inside = True
                yield from head
                head = []
            continue
        if _GUTENBERG_END_RE.match(line):
            return
        yield line
    yield from head


def units(fmt: str, lines: Iterable[str]) -> Iterator[str]:
    """Text units of one member: paragraphs (to be sentence-split) or sentences."""
    if fmt in ("plain",):
        yield from _paragraphs(lines)
    elif fmt == "gutenberg":
        yield from _paragraphs(_gutenberg_body(lines))
    elif fmt == "lines":
        for line in lines:
            yield line.strip()
    elif fmt == "opensubtitles":
        for line in lines:
            yield html.unescape(_TAG_RE.sub(" ", _SUBTITLE_NOISE_RE.sub(" ", line))).strip()
    elif fmt == "switchboard":
        for line in lines:
            text = _SWB_HEAD_RE.sub("", line.strip())
            text = _SWB_BRACKET_RE.sub(lambda m: m.group(1) or m.group(2) or "", text)
            text = _SWB_NOISE_RE.sub(" ", text)
            text = _SWB_PARTIAL_RE.sub(" ", text)
            text = text.replace("_1", "").replace("[", "").replace("]", "")
            yield text.strip()
    elif fmt == "bnc_xml":
        # BNC files are one XML document; <s> elements never nest, so a regex over
        # the whole text is both safe and much faster than a DOM.
        text = "".join(lines)
        for m in _BNC_S_RE.finditer(text):
            yield html.unescape(_TAG_RE.sub("", m.group(1))).strip()
    elif fmt == "tinystories":
        buf: list[str] = []
        for line in lines:
            if "<|endoftext|>" in line:
                before, _, after = line.partition("<|endoftext|>")
                buf.append(before)
                yield " ".join(x.strip() for x in buf if x.strip())
                buf = [after]
            else:
                buf.append(line)
        if any(x.strip() for x in buf):
            yield " ".join(x.strip() for x in buf if x.strip())
    else:
        raise PovstimError(f"unknown text format '{fmt}' (known: {', '.join(TEXT_FORMATS)})")
