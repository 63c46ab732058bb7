"""Each stage's code hash, derived from its imports (the ``code=`` param of every rule).

A rule's job runs ``python -m povstim <stage>``: ``povstim/__main__.py`` -> ``povstim/cli.py`` ->
``importlib.import_module(STAGES[stage][0])``. The Python that job can execute is the *import closure*
of ``povstim.__main__`` plus the stage's module from ``cli.STAGES``, found here by reading the sources
with :mod:`ast` (nothing is imported):

- every ``import`` / ``from ... import`` statement anywhere in a file, inside functions too (a lazy
  import runs when its function does), relative ones resolved against the file's package;
- ``from pkg import name`` counts ``pkg.name`` when that is a module; importing ``a.b.c`` counts the
  packages ``a`` and ``a.b`` (their ``__init__.py`` runs first);
- ``importlib.import_module("povstim.x")`` / ``__import__("povstim.x")`` with a literal string counts
  ``povstim.x`` for the file that calls it. The one computed import, ``cli.py``'s
  ``import_module(STAGES[stage][0])``, is the stage's own entry: it never pulls every stage into every
  closure. :func:`computed_imports` lists calls whose module is not a literal (the tests fail on a new one).

Only modules of the package count (third-party libraries are not hashed). Data files a stage reads are
not imports: a rule names them (``stage_code("figures", "figures/children_table7.yaml")``).

The hash is over the closure's files (path relative to the package, sha256 of the bytes) and those data files.
A file is read and parsed once per process, again only when its size or mtime changes, and its import
list is kept between processes by content (:func:`use_cache`; the Snakefile's is under ``.snakemake/``):
every rule's hash at DAG build costs ~30 ms of CPU, ~0.4 s the first time (parsing the whole package).

``python -m povstim.codehash [STAGE ...]`` prints each stage's hash and closure.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

PACKAGE = "povstim"
ROOT = Path(__file__).resolve().parent
MAIN = f"{PACKAGE}.__main__"

# Functions whose imports run in another process, never in a stage's job: the warm-start server
# (``python -m povstim.warm``, started by the Snakefile) counts its ready children with ``devices`` before
# it forks a job, and the forked job drops every povstim module and imports its stage afresh. A top-level
# function or class of the module, by name; an import moved out of it to the module's top counts again.
OTHER_PROCESS: dict[str, frozenset[str]] = {
    f"{PACKAGE}.warm": frozenset({"main", "serve", "ready_count"}),
}

# path -> ((mtime_ns, size), sha256 of the bytes, imported names, computed-import line numbers)
_FILES: dict[Path, tuple[tuple[int, int], bytes, tuple[str, ...], tuple[int, ...]]] = {}
# The import lists of files already parsed, by their content (use_cache): cache file -> its entries
# this file's own bytes are part of each key: changing how imports are read invalidates them all
_SCANNER = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]
_DISK: dict[Path | None, dict] = {}


def module_files(root: str | os.PathLike = ROOT) -> dict[str, Path]:
    """Every module of the package at ``root``: dotted name -> file (a package's name -> its ``__init__.py``)."""
    root = Path(root)
    cached = _TREES.get(root)
    if cached is not None and all(_mtime(d) == m for d, m in cached[0]):
        return cached[1]
    folders: list[tuple[str, int | None]] = []
    found: dict[str, Path] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        folders.append((dirpath, _mtime(dirpath)))
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__" and not d.startswith("."))
        rel = Path(dirpath).relative_to(root).parts
        for name in filenames:
            if not name.endswith(".py"):
                continue
            stem = name[:-3]
            parts = (PACKAGE, *rel) if stem == "__init__" else (PACKAGE, *rel, stem)
            found[".".join(parts)] = Path(dirpath) / name
    _TREES[root] = (folders, found)
    return found


def _mtime(folder: str) -> int | None:
    try:
        return os.stat(folder).st_mtime_ns
    except OSError:
        return None


# root -> ([(folder, mtime_ns)], modules): walked again when a folder's entries change
_TREES: dict[Path, tuple[list[tuple[str, int | None]], dict[str, Path]]] = {}


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def _literal(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _dynamic_call(node: ast.Call) -> bool:
    """``importlib.import_module(...)`` (any ``x.import_module``), ``import_module(...)`` or ``__import__(...)``."""
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr == "import_module"
    return isinstance(func, ast.Name) and func.id in ("import_module", "__import__")


def _resolve(base: str, name: str, level: int) -> str | None:
    """The absolute name of ``from <level dots><name>`` in package ``base`` (None: above the top)."""
    if level == 0:
        return name
    parts = base.split(".")
    if level - 1 >= len(parts):
        return None
    parts = parts[: len(parts) - (level - 1)]
    return ".".join(parts + [name] if name else parts)


def _statements(node: ast.AST):
    """``node`` and every statement nested in it (function, class, if/try/with/loop/match bodies)."""
    todo = [node]
    while todo:
        stmt = todo.pop()
        yield stmt
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            for child in getattr(stmt, field, ()):
                if isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case)):
                    todo.append(child)


def _scan(source: bytes, module: str, is_package: bool, where: Path) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """The names a file may import (candidates; not all are modules) and the lines of computed imports."""
    try:
        tree = ast.parse(source, filename=str(where))
    except SyntaxError:
        # the job fails on it anyway; the file itself is still hashed (as part of whoever imports it)
        return (), ()
    package = module if is_package else module.rpartition(".")[0]
    names: list[str] = []
    computed: list[int] = []
    elsewhere = OTHER_PROCESS.get(module, frozenset())
    body = [s for s in tree.body if getattr(s, "name", None) not in elsewhere]
    # import statements are statements: walk statement bodies only, unless the file may call import_module
    walk = ast.walk if b"import_module" in source or b"__import__" in source else _statements
    for node in (n for stmt in body for n in walk(stmt)):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(package, node.module or "", node.level)
            if base is None:
                continue
            names.append(base)
            names.extend(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
        elif isinstance(node, ast.Call) and _dynamic_call(node):
            name = _literal(node.args[0]) if node.args else None
            if name is None:
                computed.append(node.lineno)
                continue
            if name.startswith("."):
                anchor = _literal(node.args[1]) if len(node.args) > 1 else None
                anchor = anchor or next((_literal(k.value) for k in node.keywords if k.arg == "package"), None)
                stripped = name.lstrip(".")
                name = _resolve(anchor, stripped, len(name) - len(stripped)) if anchor else None
            if name:
                names.append(name)
    return tuple(dict.fromkeys(m for n in names for m in _with_parents(n))), tuple(computed)


def _file(path: Path, module: str) -> tuple[bytes, tuple[str, ...], tuple[int, ...]]:
    """A file's sha256, imports and computed imports, read again only when its size or mtime changed."""
    st = path.stat()
    key = (st.st_mtime_ns, st.st_size)
    cached = _FILES.get(path)
    if cached is None or cached[0] != key:
        data = path.read_bytes()
        digest = hashlib.sha256(data).digest()
        package = _is_package(path)
        content = hashlib.sha256(f"{_SCANNER}\0{module}\0{package}\0{sorted(OTHER_PROCESS.get(module, ()))}\0"
                                 .encode() + digest).hexdigest()[:32]
        disk = _disk()
        disk["used"].add(content)
        if content in disk["files"]:
            names, computed = (tuple(x) for x in disk["files"][content])
        else:
            names, computed = _scan(data, module, package, path)
            disk["files"][content] = [names, computed]
            disk["dirty"] = True
        cached = _FILES[path] = (key, digest, names, computed)
    return cached[1], cached[2], cached[3]


def use_cache(path: str | os.PathLike | None) -> None:
    """Keep the import lists of parsed files in ``path`` (JSON, by file content) between processes: parsing
    the whole package takes ~0.4 s of CPU, reading them a few ms. The Snakefile keeps them under ``.snakemake/``."""
    global _CACHE
    _CACHE = Path(path) if path is not None else None


_CACHE: Path | None = None


def _disk() -> dict:
    if _CACHE not in _DISK:
        files = {}
        if _CACHE is not None:
            try:
                files = json.loads(_CACHE.read_text())
            except (OSError, ValueError):
                pass
        _DISK[_CACHE] = {"files": files if isinstance(files, dict) else {}, "dirty": False, "used": set()}
    return _DISK[_CACHE]


def _save() -> None:
    """Write the import lists parsed since the last save (atomically; one that cannot be written is not kept)."""
    disk = _DISK.get(_CACHE)
    if _CACHE is None or not disk or not disk["dirty"]:
        return
    disk["dirty"] = False
    if len(disk["files"]) > 4 * max(len(disk["used"]), 100):  # mostly old versions of edited files
        disk["files"] = {k: v for k, v in disk["files"].items() if k in disk["used"]}
    try:
        _CACHE.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=_CACHE.parent, prefix=_CACHE.name, suffix=".tmp")
        with os.fdopen(fd, "w") as fh:
            json.dump(disk["files"], fh)
        os.replace(tmp, _CACHE)
    except OSError:
        pass


def _with_parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


def _closure(entries, root, seen_files: dict) -> dict[str, tuple[Path, bytes]]:
    """name -> (file, sha256) of the closure; ``seen_files`` (name -> its _file answer) is shared by the
    closures of one call, so each file is looked at once."""
    modules = module_files(root)
    seen: dict[str, tuple[Path, bytes]] = {}
    todo = [m for e in entries for m in _with_parents(e)]
    while todo:
        name = todo.pop()
        if name in seen or name not in modules:
            continue
        if name not in seen_files:
            seen_files[name] = _file(modules[name], name)
        digest, names, _ = seen_files[name]
        seen[name] = (modules[name], digest)
        todo.extend(m for m in names if m in modules and m not in seen)
    _save()
    return dict(sorted(seen.items()))


def stages(root: str | os.PathLike = ROOT) -> dict[str, str]:
    """``cli.STAGES`` read from the source: stage -> its entry module (dotted)."""
    path = Path(root) / "cli.py"
    st = path.stat()
    key = (path, st.st_mtime_ns, st.st_size)
    if key not in _STAGES:
        tree = ast.parse(path.read_bytes())
        for node in tree.body:
            target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
            if isinstance(target, ast.Name) and target.id == "STAGES" and isinstance(node.value, ast.Dict):
                _STAGES[key] = {ast.literal_eval(k): ast.literal_eval(v)[0]
                                for k, v in zip(node.value.keys, node.value.values)}
                break
        else:
            raise ValueError(f"no STAGES table in {path}")
    return _STAGES[key]


_STAGES: dict[tuple, dict[str, str]] = {}


def stage_closure(stage: str, root: str | os.PathLike = ROOT) -> dict[str, Path]:
    """What ``python -m povstim <stage>`` can execute of the package: ``povstim.__main__`` + the stage's module."""
    return {name: path for name, (path, _) in _stage_closure(stage, root, {}).items()}


def _stage_closure(stage: str, root, seen_files: dict) -> dict[str, tuple[Path, bytes]]:
    table = stages(root)
    if stage not in table:
        raise KeyError(f"no stage {stage!r} in cli.STAGES (stages: {', '.join(table)})")
    return _closure([MAIN, table[stage]], root, seen_files)


def stage_hash(stage: str, *data: str | os.PathLike, exclude=(), root: str | os.PathLike = ROOT,
               _seen_files: dict | None = None) -> str:
    """The hash of a stage's import closure and of the data files ``data`` (paths relative to the package).

    ``exclude``: subpackages/modules (relative dotted names, e.g. ``"dpe"``) left out of the hash though
    imported, for a rule that hashes the part of them it depends on itself (the parse rule: the DPE
    surface pre-tests, ``dpe.surface_hash``). What they import is still followed.
    """
    root = Path(root)
    dropped = tuple(f"{PACKAGE}.{e}" for e in exclude)
    h = hashlib.sha256()
    for name, (path, digest) in _stage_closure(stage, root, {} if _seen_files is None else _seen_files).items():
        if any(name == d or name.startswith(d + ".") for d in dropped):
            continue
        rel = name.replace(".", "/") + ("/__init__.py" if _is_package(path) else ".py")
        h.update(rel.encode() + b"\0" + digest)
    for extra in sorted(set(map(str, data))):
        path = root / extra
        if not path.is_file():
            raise FileNotFoundError(f"stage_hash({stage!r}): no data file {path}")
        h.update(b"data:" + Path(extra).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def stage_hashes(root: str | os.PathLike = ROOT) -> dict[str, str]:
    """Every stage's :func:`stage_hash` (no data files), each file looked at once."""
    seen_files: dict = {}
    return {stage: stage_hash(stage, root=root, _seen_files=seen_files) for stage in stages(root)}


def computed_imports(root: str | os.PathLike = ROOT) -> list[tuple[str, int]]:
    """``(module, line)`` of every ``import_module``/``__import__`` call whose module is not a literal."""
    return [(name, line) for name, path in module_files(root).items() for line in _file(path, name)[2]]


def main(argv: list[str]) -> int:
    for stage in argv or list(stages()):
        files = stage_closure(stage)
        print(f"{stage}\t{stage_hash(stage)}\t{len(files)} modules: {' '.join(n.partition('.')[2] or n for n in files)}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
