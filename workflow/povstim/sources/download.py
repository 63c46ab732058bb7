"""Downloading a source's files: streamed, resumable, atomic, checksummed.

``resources/downloads/{source}/`` ends up holding the source's files under
their final names plus ``manifest.json`` (name, url, bytes, sha256 of each
file). The guarantees:

* **streamed**: files are written in 1 MiB chunks, never held in memory;
* **resumable**: bytes arrive in ``.partial/{name}.part``; a cut connection
  or timeout is retried (``retries`` times) from where it stopped with an
  HTTP ``Range`` request, and a later run resumes a ``.part`` left by an
  interrupted one. A server that ignores ``Range`` gets a fresh download;
* **atomic**: a file appears under its final name only complete and verified
  (``os.replace`` of the ``.part``); the manifest is written last;
* **verified**: the sha256 is compared with the configured one when given
  (and recorded in the manifest either way); a file already there with the
  right checksum is not downloaded again;
* **clear errors**: 404s, timeouts, truncations and checksum mismatches raise
  a :class:`PovstimError` naming the source and the URL. After a 404 or a
  mismatch nothing partial is left; after retries run out on a cut or a
  timeout only the hidden ``.partial/*.part`` stays, so the next run resumes.

urllib (standard library) is used rather than requests: no extra dependency,
and it is all this needs.
"""

from __future__ import annotations

import http.client
import json
import logging
import os
import socket
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from ..io import PovstimError, sha256_file, write_json
from .spec import source_spec

log = logging.getLogger(__name__)

CHUNK = 1 << 20
USER_AGENT = "povstim-download/0.1 (+https://github.com/; research corpus builder)"


@dataclass(frozen=True)
class RemoteFile:
    url: str
    name: str
    sha256: str | None = None


def remote_files(source: str, spec: dict) -> list[RemoteFile]:
    """The files a source spec lists: ``url`` (+ ``sha256``) or ``files: [{url, sha256, name}]``."""
    entries = []
    if spec.get("url"):
        entries.append({"url": spec["url"], "sha256": spec.get("sha256"), "name": spec.get("filename")})
    for f in spec.get("files") or []:
        entries.append(f if isinstance(f, dict) else {"url": f})
    if not entries:
        raise PovstimError(f"sources.{source}: kind '{spec.get('kind')}' needs `url` or `files` to download")
    out, seen = [], set()
    for e in entries:
        name = e.get("name") or Path(urllib.parse.unquote(urllib.parse.urlparse(e["url"]).path)).name
        if not name or name in (".", "..") or "/" in name:
            raise PovstimError(f"sources.{source}: cannot name the file of {e['url']}: give it a `name`")
        if name in seen:
            raise PovstimError(f"sources.{source}: two files would be saved as '{name}': give them distinct `name`s")
        seen.add(name)
        sha = (e.get("sha256") or "").lower() or None
        out.append(RemoteFile(url=e["url"], name=name, sha256=sha))
    return out


class _Progress:
    """A progress line on stderr: redrawn in place on a terminal, every 10% in a log."""

    def __init__(self, label: str, total: int | None, done: int, stream=None):
        self.label, self.total, self.done = label, total, done
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.last_draw = 0.0
        self.last_decile = -1

    def update(self, n: int) -> None:
        self.done += n
        now = time.monotonic()
        if self.total:
            decile = int(10 * self.done / self.total)
            if self.tty and now - self.last_draw < 0.2:
                return
            if not self.tty and decile == self.last_decile:
                return
            self.last_decile = decile
            text = f"{self.label}: {100 * self.done / self.total:5.1f}% ({self.done / 1e6:.1f}/{self.total / 1e6:.1f} MB)"
        else:
            if now - self.last_draw < (0.2 if self.tty else 10):
                return
            text = f"{self.label}: {self.done / 1e6:.1f} MB"
        self.last_draw = now
        self.stream.write(("\r" + text) if self.tty else text + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()


class _Transient(Exception):
    """A failure worth retrying from where the bytes stopped (cut, timeout, 5xx)."""


def _fetch_once(source: str, f: RemoteFile, part: Path, timeout: float, progress_stream=None) -> None:
    """One attempt: continue ``part`` from its current size to the end of the file."""
    offset = part.stat().st_size if part.exists() else 0
    req = urllib.request.Request(f.url, headers={"User-Agent": USER_AGENT})
    if offset:
        req.add_header("Range", f"bytes={offset}-")
    try:
        resp = urllib.request.urlopen(req, timeout=timeout)
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and offset:
            part.unlink()  # our .part is no prefix of this file (changed upstream): start over
            raise _Transient(f"HTTP 416 for a resume at byte {offset}") from None
        if exc.code >= 500 or exc.code == 429:
            raise _Transient(f"HTTP {exc.code} {exc.reason}") from None
        part.unlink(missing_ok=True)
        raise PovstimError(f"source '{source}': download of {f.url} failed: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, socket.timeout, TimeoutError, ConnectionError, http.client.HTTPException) as exc:
        reason = getattr(exc, "reason", exc)
        raise _Transient(f"cannot connect ({reason})") from None
    with resp:
        status = resp.status
        if offset and status == 200:
            offset = 0  # the server ignored Range: it sends the whole file again
        elif offset and status == 206:
            content_range = resp.headers.get("Content-Range", "")
            if not content_range.startswith(f"bytes {offset}-"):
                part.unlink()
                raise _Transient(f"server answered the resume with the wrong range '{content_range}'")
        length = resp.headers.get("Content-Length")
        expected = offset + int(length) if length is not None else None
        progress = _Progress(f"{source}/{f.name}", expected, offset, progress_stream)
        written = offset
        try:
            with open(part, "r+b" if offset else "wb") as out:
                out.seek(offset)
                out.truncate()
                while True:
                    try:
                        block = resp.read(CHUNK)
                    except http.client.IncompleteRead as exc:
                        out.write(exc.partial)
                        written += len(exc.partial)
                        raise _Transient(f"connection cut after {written} bytes") from None
                    except (socket.timeout, TimeoutError, ConnectionError, OSError) as exc:
                        raise _Transient(f"connection lost after {written} bytes ({exc})") from None
                    if not block:
                        break
                    out.write(block)
                    written += len(block)
                    progress.update(len(block))
        finally:
            progress.close()
        if expected is not None and written < expected:
            raise _Transient(f"truncated: got {written} of {expected} bytes")


def fetch(
    source: str,
    f: RemoteFile,
    out_dir: Path,
    retries: int = 3,
    timeout: float = 60.0,
    backoff: float = 1.0,
    progress_stream=None,
) -> dict:
    """Download one file into ``out_dir`` (resuming, verifying); return its manifest entry."""
    final = out_dir / f.name
    if final.exists():
        sha = sha256_file(final)
        if f.sha256 is None or sha == f.sha256:
            log.info("%s: %s already downloaded (sha256 %s)", source, f.name, sha[:12])
            return {"name": f.name, "url": f.url, "bytes": final.stat().st_size, "sha256": sha}
        log.warning("%s: %s has sha256 %s, expected %s: downloading again", source, f.name, sha[:12], f.sha256[:12])
        final.unlink()
    partial_dir = out_dir / ".partial"
    partial_dir.mkdir(parents=True, exist_ok=True)
    part = partial_dir / f"{f.name}.part"
    last_error = ""
    for attempt in range(retries + 1):
        try:
            _fetch_once(source, f, part, timeout, progress_stream)
            break
        except _Transient as exc:
            last_error = str(exc)
            size = part.stat().st_size if part.exists() else 0
            log.warning("%s: %s: %s (attempt %d/%d; %d bytes kept for resume)",
                        source, f.url, exc, attempt + 1, retries + 1, size)
            if attempt < retries:
                time.sleep(backoff * (2 ** attempt))
    else:
        raise PovstimError(
            f"source '{source}': download of {f.url} failed after {retries + 1} attempts: {last_error}"
            f" (the bytes so far are kept in {part}; run again to resume)"
        )
    sha = sha256_file(part)
    if f.sha256 and sha != f.sha256:
        part.unlink()
        raise PovstimError(
            f"source '{source}': checksum mismatch for {f.url}: expected sha256 {f.sha256}, got {sha} "
            f"(file discarded; if the file changed upstream, update sources.{source} sha256)"
        )
    size = part.stat().st_size
    os.replace(part, final)
    try:
        partial_dir.rmdir()
    except OSError:
        pass
    return {"name": f.name, "url": f.url, "bytes": size, "sha256": sha}


def download_source(source: str, spec: dict, out_dir: Path, progress_stream=None, backoff: float = 1.0) -> dict:
    """Download every file of a source and write ``manifest.json`` last; return the manifest.

    ``backoff``: seconds before the first retry (doubling each time); not a config key.
    """
    spec = source_spec(source, spec)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    files = remote_files(source, spec)
    entries = [
        fetch(
            source,
            f,
            out_dir,
            retries=int(spec["retries"]),
            timeout=float(spec["timeout"]),
            backoff=float(backoff),
            progress_stream=progress_stream,
        )
        for f in files
    ]
    manifest = {
        "source": source,
        "kind": spec.get("kind"),
        "license": spec.get("license", ""),
        "files": entries,
    }
    write_json(out_dir / "manifest.json", manifest)
    total = sum(e["bytes"] for e in entries)
    log.info("%s: %d file(s), %.1f MB -> %s", source, len(entries), total / 1e6, out_dir)
    return manifest


def read_manifest(out_dir: Path) -> dict:
    return json.loads((Path(out_dir) / "manifest.json").read_text())
