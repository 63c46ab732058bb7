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
from typing import Iterable, Iterator

from ..io import PovstimError

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


def matches_file(name: str, include: list[str]) -> bool:
    """Does a (maybe compressed) file name match the patterns? 'a.cha.gz' matches '*.cha'."""
    bare = re.sub(r"\.(gz|bz2|xz)$", "", name, flags=re.I)
    return _matches(name, include) or _matches(bare, include)


def _decode_lines(raw: io.BufferedIOBase, encoding: str) -> Iterator[str]:
    yield from io.TextIOWrapper(raw, encoding=encoding, errors="replace", newline=None)


def iter_members(path: Path, include: list[str] | None = None, encoding: str = "utf-8") -> Iterator[tuple[str, Iterable[str]]]:
    """Yield (member name, text lines) for a file, an archive's members, or a folder's files."""
    name = path.name.lower()
    if path.is_dir():
        for child in sorted(p for p in path.rglob("*") if p.is_file()):
            rel = child.relative_to(path).as_posix()
            if _matches(rel, include):
                yield from iter_members(child, None, encoding)
        return
    try:
        if name.endswith(".zip"):
            with zipfile.ZipFile(path) as zf:
                for info in sorted(zf.infolist(), key=lambda i: i.filename):
                    if info.is_dir() or not _matches(info.filename, include):
                        continue
                    with zf.open(info) as raw:
                        yield f"{path.name}/{info.filename}", _decode_lines(raw, encoding)
        elif name.endswith(ARCHIVE_SUFFIXES):
            with tarfile.open(path) as tf:
                members = sorted((m for m in tf.getmembers() if m.isfile()), key=lambda m: m.name)
                for m in members:
                    if not _matches(m.name, include):
                        continue
                    raw = tf.extractfile(m)
                    if raw is not None:
                        yield f"{path.name}/{m.name}", _decode_lines(raw, encoding)
        elif name.endswith(".gz"):
            with gzip.open(path, "rb") as raw:
                yield path.name, _decode_lines(raw, encoding)
        elif name.endswith(".bz2"):
            with bz2.open(path, "rb") as raw:
                yield path.name, _decode_lines(raw, encoding)
        elif name.endswith(".xz"):
            with lzma.open(path, "rb") as raw:
                yield path.name, _decode_lines(raw, encoding)
        else:
            with open(path, "rb") as raw:
                yield path.name, _decode_lines(raw, encoding)
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
