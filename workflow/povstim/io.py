"""Small I/O helpers shared by every stage.

Outputs are always written atomically (temp file in the same folder, then
``os.replace``) so a killed job never leaves a half-written file that a later
run could mistake for a finished one.

A full disk, an exceeded quota or a file over the size limit (ENOSPC, EDQUOT,
EFBIG) while an atomic writer writes is one :class:`PovstimError` naming the
output ("no space left on device writing PATH"), and the temporary file is
removed; :func:`no_space` also recognises the errors libraries (pyarrow, torch,
safetensors) re-raise with only the OS's text, and ``povstim.cli.main`` turns
one that escapes a stage outside these writers into the same line.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import logging
import os
import re
import shutil
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterable, Iterator


class PovstimError(Exception):
    """An error caused by the user's input or config; printed without a traceback."""


class NoSpaceError(PovstimError):
    """A write that failed for want of space (a full disk, a quota, a size limit): ``path`` names the output."""

    def __init__(self, why: str, path):
        self.why, self.path = why, Path(path)
        super().__init__(no_space_message(why, path))


# errno -> what the one-line message says; a write stops the same way for each
NO_SPACE_ERRNOS = {errno.ENOSPC: "no space left on device", errno.EDQUOT: "disk quota exceeded",
                   errno.EFBIG: "file too large for its file system or size limit"}
# torch, safetensors and pyarrow re-raise a full disk as their own errors, keeping only the OS's text
_NO_SPACE_TEXT = {**{os.strerror(e): why for e, why in NO_SPACE_ERRNOS.items()},
                  **{f"os error {e}": why for e, why in NO_SPACE_ERRNOS.items()},
                  **{f"errno {e}]": why for e, why in NO_SPACE_ERRNOS.items()},
                  "StorageFull": NO_SPACE_ERRNOS[errno.ENOSPC], "QuotaExceeded": NO_SPACE_ERRNOS[errno.EDQUOT],
                  "FileTooLarge": NO_SPACE_ERRNOS[errno.EFBIG]}


def no_space(exc: BaseException | None) -> str | None:
    """Why a write failed when ``exc`` (or an exception it was raised from) is a full disk, an exceeded quota or
    a file too large ("no space left on device", ...), else None. A PovstimError is not: it already says it."""
    seen = set()
    while exc is not None and id(exc) not in seen and not isinstance(exc, PovstimError):
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno in NO_SPACE_ERRNOS:
            return NO_SPACE_ERRNOS[exc.errno]
        text = str(exc)
        for key, why in _NO_SPACE_TEXT.items():
            if key in text:
                return why
        exc = exc.__cause__ or exc.__context__
    return None


def no_space_message(why: str, path) -> str:
    """The one line a full disk gives (every stage, every writer)."""
    return (f"{why} writing {path} (free space on its file system, then run the same command again; "
            "nothing half-written was kept)")


@contextlib.contextmanager
def writing(path: str | os.PathLike):
    """Turn a full disk (quota, size limit) while writing ``path`` into one PovstimError that names it."""
    try:
        yield
    except Exception as exc:
        why = no_space(exc)
        if why:
            raise NoSpaceError(why, path) from None
        raise


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; rename it into place on success.

    A full disk while the caller writes the temporary file (a library's writer too: pyarrow, torch) is a
    PovstimError naming ``path``; the temporary file is removed on any failure."""
    path = Path(path)
    tmp_path = None
    try:
        with writing(path):
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            os.close(fd)
            tmp_path = Path(tmp)
            yield tmp_path
            # mkstemp creates 0600 files; give outputs the mode a plain open() would.
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp_path, 0o666 & ~umask)
            os.replace(tmp_path, path)
    finally:
        if tmp_path is not None and tmp_path.exists():
            tmp_path.unlink()


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "w", encoding: str | None = "utf-8"):
    """Open a file for writing that only appears at ``path`` once closed without error."""
    with atomic_path(path) as tmp:
        kwargs = {} if "b" in mode else {"encoding": encoding, "newline": "\n"}
        with open(tmp, mode, **kwargs) as fh:
            yield fh


@contextlib.contextmanager
def atomic_dir(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a fresh hidden folder beside ``path`` (``.NAME.tmp``) to write a folder output into; on success it
    replaces ``path`` (an older folder there is removed), on any failure it is removed. A full disk is a
    PovstimError naming the output (``path``, or the file in it), never the hidden folder."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with writing(path):
            if tmp.is_symlink() or tmp.is_file():
                tmp.unlink()
            elif tmp.exists():
                shutil.rmtree(tmp)
            tmp.mkdir(parents=True)
            yield tmp
            if path.is_symlink() or path.is_file():
                path.unlink()
            elif path.exists():
                shutil.rmtree(path)
            os.replace(tmp, path)
    except NoSpaceError as exc:
        if exc.path == tmp or tmp in exc.path.parents:  # a writer inside the hidden folder: name its final place
            raise NoSpaceError(exc.why, path / exc.path.relative_to(tmp)) from None
        raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


LOCK_FILE = ".povstim.lock"
_FLOCK_UNSUPPORTED = (errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS)


def pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` runs on this machine."""
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    except (OverflowError, ValueError):
        return False
    return True


def _holder(fd: int) -> dict:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        data = os.read(fd, 1 << 16).decode("utf-8", "replace").strip()
        return json.loads(data) if data else {}
    except (OSError, ValueError):
        return {}


def describe_holder(holder: dict) -> str:
    """'PID 123 on host h (`command`, since 2026-12-01 21:40:03 UTC)' from a lock record."""
    parts = [f"PID {holder.get('pid', '?')} on host {holder.get('host', '?')}"]
    extra = [f"`{holder['command']}`" if holder.get("command") else "",
             f"since {holder['started']}" if holder.get("started") else ""]
    extra = [e for e in extra if e]
    return parts[0] + (f" ({', '.join(extra)})" if extra else "")


def _live_here(holder: dict) -> bool:
    return bool(holder) and holder.get("host") == socket.gethostname() and pid_alive(holder.get("pid", 0))


@contextlib.contextmanager
def folder_lock(folder: str | os.PathLike, doing: str, command: str = "", wait: bool = False):
    """Hold ``folder`` for this process alone while the block runs (``folder/.povstim.lock``).

    The lock is the kernel's (``flock``): it ends with the process, however it ends, so a lock a killed
    process left is taken over (a warning names it) and a live holder is refused with a PovstimError naming
    its PID, host, command and start -- or, ``wait=True``, waited for (an info line names it; the shared
    model a void duplicate reuses, train/reuse.py). The file records who holds it, for that message; it is
    removed when the block ends. Where a file system has no ``flock``, the record alone decides: a holder on
    this host whose PID is gone is stale."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK_FILE
    log = logging.getLogger("povstim.io")
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            kernel = True
        except OSError as exc:
            if exc.errno in _FLOCK_UNSUPPORTED:
                kernel = False
            elif exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                holder = _holder(fd)
                if wait:
                    log.info("%s: waiting for %s, which holds it", folder, describe_holder(holder))
                    fcntl.flock(fd, fcntl.LOCK_EX)  # blocks until the holder lets go or dies
                    kernel = True
                    try:  # the holder removed its file on letting go: lock the one now there instead
                        same = os.stat(path).st_ino == os.fstat(fd).st_ino
                    except FileNotFoundError:
                        same = False
                    if same:
                        break
                    os.close(fd)
                    continue
                os.close(fd)
                raise PovstimError(
                    f"{folder} is being {doing} by another live process: {describe_holder(holder)}; wait for it "
                    f"to finish or stop it (kill {holder.get('pid', 'PID')}), then run this again") from None
            else:
                os.close(fd)
                raise
        try:  # the file may have been removed (and made anew) by the holder that just let go: lock that one
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same and wait and not kernel and _live_here(_holder(fd)):
            os.close(fd)  # no flock here: the record alone says when the holder is gone
            time.sleep(1.0)
            continue
        if same:
            break
        os.close(fd)
    old = _holder(fd)
    if old and not kernel and old.get("host") == socket.gethostname() and pid_alive(old.get("pid", 0)):
        os.close(fd)
        raise PovstimError(f"{folder} is being {doing} by another live process: {describe_holder(old)}; wait "
                           f"for it to finish or stop it (kill {old.get('pid')}), then run this again")
    try:
        if old:
            log.warning("%s: taking over the lock of %s, which is no longer running (killed or crashed)", path,
                        describe_holder(old))
        me = {"pid": os.getpid(), "host": socket.gethostname(), "command": command,
              "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())}
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, (json.dumps(me, sort_keys=True) + "\n").encode())
        yield path
    finally:
        with contextlib.suppress(OSError):
            if os.stat(path).st_ino == os.fstat(fd).st_ino:
                os.unlink(path)
        os.close(fd)


def write_lines(path: str | os.PathLike, lines: Iterable[str]) -> int:
    """Write one item per line (UTF-8, '\\n'), atomically; return the line count."""
    n = 0
    with atomic_write(path) as fh:
        for line in lines:
            fh.write(line)
            fh.write("\n")
            n += 1
    return n


def open_text(path: str | os.PathLike, what: str):
    """``path`` opened to read UTF-8 text; a file that cannot be opened is one error naming ``what`` and the path
    (what goes wrong while reading it is the caller's)."""
    try:
        return open(path, encoding="utf-8")
    except OSError as exc:
        raise PovstimError(f"cannot read {what} {path}: {exc.strerror}") from None


def read_lines(path: str | os.PathLike) -> list[str]:
    """Read a one-item-per-line UTF-8 file, dropping the trailing newline of each line."""
    with open(path, encoding="utf-8") as fh:
        return [line.rstrip("\n") for line in fh]


def iter_sentences(path: str | os.PathLike, what: str = "corpus") -> Iterator[str]:
    """The lines of a corpus in the project's text format: UTF-8, one sentence per line, no empty lines.

    The one reader of that format (every stage uses it, streaming or through
    :func:`read_sentences`), so every stage reports a missing file, bad UTF-8,
    an empty line or an empty file the same way, naming the file and line.
    Blank lines at the very end of a file (an editor's trailing newlines) are
    ignored; a blank line before another sentence is an error.
    """
    path = Path(path)
    n = kept = 0
    blank_at = 0
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            for n, line in enumerate(fh, 1):
                line = line.rstrip("\n").rstrip("\r")
                if not line.strip():
                    blank_at = blank_at or n
                    continue
                if blank_at:
                    raise PovstimError(f"{path}:{blank_at}: empty line in {what} {path.name} "
                                       "(one sentence per line, no empty lines)")
                if "\x00" in line:
                    raise PovstimError(f"{path}:{n}: NUL byte in {what} {path.name} (binary data, not text)")
                kept += 1
                yield line
    except FileNotFoundError:
        raise PovstimError(f"{what} {path} does not exist") from None
    except IsADirectoryError:
        raise PovstimError(f"{what} {path} is a folder, not a text file") from None
    except UnicodeDecodeError as exc:
        raise PovstimError(f"{path}:{n + 1}: not UTF-8 ({exc.reason})") from None
    if kept == 0:
        raise PovstimError(f"{what} {path} is empty")


def read_sentences(path: str | os.PathLike, what: str = "corpus") -> list[str]:
    """All lines of a corpus (see :func:`iter_sentences`)."""
    return list(iter_sentences(path, what))


def write_tsv(path: str | os.PathLike, header, rows) -> int:
    """A tab-separated table (header + rows of values), atomically; return the row count."""
    return write_lines(path, ["\t".join(header)] + ["\t".join(str(v) for v in r) for r in rows]) - 1


def write_json(path: str | os.PathLike, obj) -> None:
    with atomic_write(path) as fh:
        json.dump(obj, fh, indent=2, sort_keys=True, default=str)
        fh.write("\n")


def json_object_arg(text: "str | dict | None", flag: str, allow_file: bool = False) -> dict:
    """A command-line JSON object (a config section passed by a rule), or a clear error naming the flag.

    With ``allow_file``, a value that is not inline JSON may name a .json file holding the object.
    """
    if isinstance(text, dict):
        return dict(text)
    if not text:
        return {}
    if allow_file and not text.lstrip().startswith("{") and Path(text).is_file():
        text = Path(text).read_text(encoding="utf-8")
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PovstimError(f"{flag}: not valid JSON ({exc.msg} at column {exc.colno}): {text!r}") from None
    if not isinstance(obj, dict):
        raise PovstimError(f"{flag}: expected a JSON object, got {text!r}")
    return obj


_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmMbB]?)\s*$")
_SIZE_MULT = {"": 1, "k": 1_000, "m": 1_000_000, "b": 1_000_000_000}


def load_yaml(path: str | os.PathLike,
              mapping: str | None = "a mapping of config keys at the top level (experiment:, sources:, ...)",
              what: str = "config file"):
    """A YAML file's document; a YAML syntax error names the file, line and column.

    ``mapping``: what the top level must be, said when it is not a mapping (None: any document; an empty
    file is None). ``what``: the kind of file, named when it does not exist."""
    import yaml  # deferred: most commands read no YAML

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PovstimError(f"{what} {path} does not exist") from None
    except UnicodeDecodeError as exc:
        raise PovstimError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise yaml_error(path, text, exc) from None
    if mapping is not None and not isinstance(doc, dict):
        raise PovstimError(f"{path}: expected {mapping}, got {type(doc).__name__}")
    return doc


def yaml_error(path, text: str, exc) -> PovstimError:
    """A YAML syntax error of ``text`` (the file ``path``) as one error naming the file, line and column,
    with the line and a caret under the column."""
    import yaml

    if not isinstance(exc, yaml.MarkedYAMLError):
        return PovstimError(f"{path}: not valid YAML: {exc}")
    mark = exc.problem_mark or exc.context_mark
    where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
    what = "; ".join(x for x in (exc.context, exc.problem) if x)
    ctx = exc.context_mark
    if ctx is not None and mark is not None and ctx.line != mark.line:
        what = what.replace(exc.context, f"{exc.context} (opened at line {ctx.line + 1}, column {ctx.column + 1})", 1)
    line = text.splitlines()[mark.line] if mark and mark.line < len(text.splitlines()) else ""
    shown = f"\n    {line}\n    {' ' * mark.column}^" if line.strip() else ""
    return PovstimError(f"{where}: not valid YAML: {what}{shown}")


def project_dir() -> Path:
    """The project folder relative paths resolve against: the working directory's nearest folder (itself or a
    parent) that holds a ``Snakefile``, else the working directory. A Snakemake run resolves a config's relative
    paths against its Snakefile's folder (``rules/common.smk: repo_path``); a ``povstim`` command run in the
    same checkout resolves them the same way -- never against the checkout povstim was installed from."""
    cwd = Path.cwd()
    return next((d for d in (cwd, *cwd.parents) if (d / "Snakefile").is_file()), cwd)


def project_path(path: str | os.PathLike, base: str | os.PathLike | None = None) -> Path:
    """Where a path of a config points: as written when absolute (``~`` expanded), else relative to ``base`` or,
    by default, to :func:`project_dir` -- the one rule for relative paths."""
    p = Path(path).expanduser()
    return p if p.is_absolute() else Path(base if base is not None else project_dir()) / p


def parse_size(size: str | int) -> int:
    """'300k' -> 300000, '10M' -> 10000000, 5000 -> 5000."""
    if isinstance(size, int):
        return size
    m = _SIZE_RE.match(str(size))
    if not m:
        raise PovstimError(f"cannot read size {size!r}: use a word count like 300k, 10M or 5000")
    value = float(m.group(1)) * _SIZE_MULT[m.group(2).lower()]
    return int(round(value))


def code_hash(*parts: str | os.PathLike) -> str:
    """Hash the Python sources of the given modules/packages (paths).

    Rules put this in ``params`` so editing a stage's code reruns that stage
    and everything downstream, and nothing upstream.
    """
    h = hashlib.sha256()
    files: list[Path] = []
    for part in parts:
        p = Path(part)
        if p.is_dir():
            files.extend(sorted(p.rglob("*.py")))
        elif p.exists():
            files.append(p)
        else:
            raise FileNotFoundError(f"code_hash: no such module path {p}")
    for f in sorted(set(files)):
        h.update(f.name.encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


def sha256_file(path: str | os.PathLike, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(chunk), b""):
            h.update(block)
    return h.hexdigest()


def progress(iterable=None, *, total: int | None = None, desc: str = "", unit: str = "it"):
    """A tqdm progress bar on stderr for a long stage.

    On a terminal it redraws in place; in a log file (every Snakemake job) it writes one line every 30 s
    at most, so logs stay short; ``POVSTIM_NO_PROGRESS=1`` turns it off.
    """
    from tqdm import tqdm

    tty = sys.stderr.isatty()
    return tqdm(iterable, total=total, desc=desc, unit=unit, file=sys.stderr, mininterval=1.0 if tty else 30.0,
                maxinterval=1e9 if not tty else 10.0, disable=bool(os.environ.get("POVSTIM_NO_PROGRESS")),
                dynamic_ncols=tty, ascii=not tty)
