#!/usr/bin/env python
"""Wheels for a GPU machine without internet: what povstim (and gpu_bench's peers) need there that its Python
lacks, in one folder to copy over and install with `pip install --no-index --no-deps`.

    # on the GPU machine (no internet needed): what its Python already has
    python3 -m pip list --format=freeze > have.txt
    # here (where pip reaches an index), with the same povstim checkout and its .venv:
    .venv/bin/python scripts/gpu_wheels.py --have have.txt --out .whl
    # there:
    python3 -m pip install --no-index --no-deps .whl/*.whl     # compiles bytecode once (no --no-compile)

What goes in the folder: povstim's dependency closure and minicons' (gpu_bench's scoring peer), read from the
installed packages' metadata here, with each requirement's environment markers evaluated for the target's
Python (``--python-version``, Linux x86-64), each package at the version installed here (the versions povstim
pins and tests). A package is left out when the target already has it:

* at the same version;
* at any version, if it is ``--trust``ed (default: torch and the CUDA, numeric and array libraries a GPU image
  is built around -- a torch wheel from here would be a CPU build, and numpy, scipy and pyarrow are ABI bases
  the image's other packages were built against);
* at a version every requirement on it in the closure allows, if povstim does not pin it itself (a transitive
  dependency); a name in ``have.txt`` without a version counts as allowed (nothing to check it against).

povstim's own pins (transformers, pandas, snakemake, ...: the byte-identical results depend on them) are
carried whenever the target's version differs or is unknown. ``--max-mb`` bounds the folder (a transfer limit,
say); over it, PuLP's solver binaries for other platforms are dropped, then transformers' model folders other
than ``--keep-models`` (povstim's families GPT-2, RoBERTa and BERT; Llama, Mistral and Qwen2, other people's
causal models the tree scorer takes; Bloom and BART, which peft imports, and the HF Trainer imports peft where it
is installed), and if that is not enough the script stops with the largest wheels. A package on the target that
imports another dropped model folder then fails to import there: add the folder to ``--keep-models`` or raise
``--max-mb``.

Nothing is installed here. Wheels come from pip's configured index (``pip download --only-binary=:all:``); a
package published as source only is built into a wheel here (``pip wheel``), which must come out pure Python,
or the script stops and names it. A local build here (a version like ``2.13.0+cpu``) is never carried: the script
says to install the target's own.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path
from typing import NamedTuple

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

# the GPU image's own builds, whatever their version (see the module docstring)
TRUST = ("torch", "triton", "nvidia-*", "cuda-*", "numpy", "scipy", "pyarrow", "numba", "llvmlite", "h5py",
         "pillow", "psutil", "setuptools", "pip")
# povstim's families and the hub models its tree scorer takes; bloom and bart because peft (in GPU images: the HF
# Trainer of gpu_bench's peers imports it when installed) imports them at import time
KEEP_MODELS = ("auto", "gpt2", "roberta", "bert", "llama", "mistral", "qwen2", "encoder_decoder", "bloom", "bart")
PLATFORMS = ("manylinux_2_39_x86_64", "manylinux_2_35_x86_64", "manylinux_2_34_x86_64", "manylinux_2_31_x86_64",
             "manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_24_x86_64", "manylinux_2_17_x86_64",
             "manylinux2014_x86_64", "manylinux1_x86_64", "linux_x86_64")


def target_env(python_version: str) -> dict:
    """Marker values of a CPython ``python_version`` (e.g. '3.12') on Linux x86-64."""
    if not re.fullmatch(r"3\.\d+", python_version):
        raise SystemExit(f"gpu_wheels: --python-version must look like 3.12, not {python_version!r}")
    env = default_environment()
    env.update(python_version=python_version, python_full_version=f"{python_version}.0", sys_platform="linux",
               platform_system="Linux", platform_machine="x86_64", os_name="posix", implementation_name="cpython",
               platform_python_implementation="CPython")
    return env


class Pkg(NamedTuple):
    name: str
    version: str  # installed here
    pinned: bool  # required by the root itself, or one of ``also``
    wants: tuple[str, ...] = ()  # the version specifiers the closure's requirements put on it


def closure(root: str, env: dict, also=()) -> dict[str, Pkg]:
    """Everything ``root`` ('povstim', which itself is not carried: the checkout is) and the packages ``also``
    require on ``env``, ``also`` themselves included, as installed here, by canonical name."""
    top = Requirement(root)
    found: dict[str, tuple[str, str]] = {}
    direct: set[str] = {canonicalize_name(Requirement(x).name) for x in also}
    wants: dict[str, set[str]] = {}
    missing: set[str] = set()
    # the root's requirements are its pins; the packages of ``also`` are pinned themselves, their own requirements
    # are transitive (checked against the target's versions)
    todo = [(top.name, frozenset(top.extras), True)] + [
        (r.name, frozenset(r.extras), False) for r in map(Requirement, also)]
    asked: dict[str, set[str]] = {}  # the extras already followed per package ("" for its plain requirements)
    while todo:
        name, extras, is_root = todo.pop()
        key = canonicalize_name(name)
        new = ({""} | set(extras)) - asked.get(key, set())
        if not new or key in missing:
            continue
        asked.setdefault(key, set()).update(new)
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            missing.add(key)
            continue
        found[key] = (dist.metadata["Name"], dist.version)
        for line in dist.requires or []:
            req = Requirement(line)
            # a requirement of an extra counts when that extra is asked for, the others whenever their markers hold
            if req.marker is None or any(req.marker.evaluate({**env, "extra": e}) for e in new):
                dep = canonicalize_name(req.name)
                if is_root:
                    direct.add(dep)
                if str(req.specifier):
                    wants.setdefault(dep, set()).add(str(req.specifier))
                todo.append((req.name, frozenset(req.extras), False))
    if missing:  # the versions to carry are the ones installed here
        raise SystemExit(f"gpu_wheels: required on the target but not installed here: {', '.join(sorted(missing))} "
                         f"(install povstim with `pip install -e \".[test]\"`; a target Python other than this one's "
                         "may need more)")
    return {k: Pkg(n, v, k in direct, tuple(sorted(wants.get(k, ()))))
            for k, (n, v) in found.items() if k != canonicalize_name(top.name)}


def read_have(path: Path) -> dict[str, str | None]:
    """A target's packages from `pip list --format=freeze` (name==version), `pip list` (name version) or bare
    names; blank lines, comments, pip's table header and editable installs are skipped."""
    have = {}
    for n, line in enumerate(path.read_text().splitlines(), 1):
        line = line.split("#")[0].strip()
        if not line or line.startswith(("-e ", "Package ", "---")):
            continue
        m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*(?:(?:==|\s)\s*(\S+))?", line) or \
            re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)\s*@\s*\S+", line)
        if m is None:
            raise SystemExit(f"gpu_wheels: {path}:{n}: not a package line: {line!r}")
        have[canonicalize_name(m.group(1))] = m.group(2) if m.lastindex and m.lastindex >= 2 else None
    return have


def trusted(name: str, trust) -> bool:
    return any(re.fullmatch(re.escape(canonicalize_name(t)).replace(r"\*", ".*"), name) for t in trust)


def choose(found: dict[str, Pkg], have: dict, trust=TRUST) -> list[tuple[str, str, str]]:
    """(name, version, why) of every package to carry, sorted by name (rules: the module docstring)."""
    out = []
    for key, p in sorted(found.items()):
        there = have.get(key, "")
        if key not in have:
            out.append((p.name, p.version, "missing"))
        elif there == p.version or trusted(key, trust):
            continue
        elif p.pinned:
            out.append((p.name, p.version, "pinned; the target's version is unknown" if there is None
                        else f"pinned; the target has {there}"))
        elif there is not None:
            refused = [w for w in p.wants if not _allows(w, there)]
            if refused:
                out.append((p.name, p.version, f"the target has {there}; required: {', '.join(refused)}"))
    return out


def local_builds(wanted: list[tuple[str, str, str]]) -> tuple[list, list]:
    """``wanted`` split into what an index can give and local builds (a version like torch's ``2.13.0+cpu``), which no
    index has and which are this machine's builds anyway (a CPU torch): those must be installed on the target."""
    def local(v):
        try:
            return Version(v).local is not None
        except InvalidVersion:
            return False
    return [w for w in wanted if not local(w[1])], [w for w in wanted if local(w[1])]


def _allows(specifier: str, version: str) -> bool:
    try:
        return SpecifierSet(specifier).contains(Version(version), prereleases=True)
    except InvalidVersion:
        return False  # a version pip itself would not compare: carry ours


def download(wanted: list[tuple[str, str, str]], out: Path, python_version: str, index_url: str | None = None) -> list[str]:
    """``pip download`` of exactly these versions' wheels for the target, none of their dependencies. A package
    published as source only is built into a wheel here, which must come out pure Python (``py3-none-any``: a
    compiled one would be this machine's Python's); returns the names so built."""
    out.mkdir(parents=True, exist_ok=True)
    base = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    fetch = base + ["download", "--quiet", "--no-deps", "--only-binary=:all:", "--python-version", python_version,
                    "--implementation", "cp", "--dest", str(out)]
    for p in PLATFORMS:
        fetch += ["--platform", p]
    index = ["--index-url", index_url] if index_url else []
    todo, built = [f"{n}=={v}" for n, v, _ in wanted], []
    while todo:
        proc = subprocess.run(fetch + index + todo, capture_output=True, text=True)
        if proc.returncode == 0:
            break
        # pip stops at the first requirement with no wheel for the target: build that one, fetch the rest again
        m = re.search(r"No matching distribution found for (\S+)", proc.stderr)
        if m is None or m.group(1) not in todo:
            raise SystemExit(f"gpu_wheels: pip download failed:\n{_pip_error(proc.stderr)}")
        req = m.group(1)
        todo.remove(req)
        made = subprocess.run(base + ["wheel", "--quiet", "--no-deps", "--wheel-dir", str(out), *index, req],
                              capture_output=True, text=True)
        name = canonicalize_name(req.split("==")[0]).replace("-", "_")
        wheels = [w for w in out.glob("*.whl") if canonicalize_name(w.name.split("-")[0]).replace("-", "_") == name]
        if made.returncode != 0 or not wheels:
            raise SystemExit(f"gpu_wheels: {req} has no wheel for the target and building one failed:\n"
                             f"{_pip_error(made.stderr)}")
        if not all(w.name.endswith("-py3-none-any.whl") for w in wheels):
            raise SystemExit(f"gpu_wheels: {req} has no wheel for the target, and the one built here is not pure "
                             f"Python ({wheels[0].name}): build it on the target's platform")
        built.append(req)
    return built


def _pip_error(stderr: str) -> str:
    # pip's warnings about configured indexes that do not exist are noise here
    return "\n".join(x for x in stderr.splitlines() if not x.startswith("WARNING: Location"))[-3000:]


def slim(wheel: Path, dropped) -> int:
    """Drop the files ``dropped(path)`` picks from a wheel, in place (its RECORD then lists only what is left, so
    pip installs it as any wheel); returns the bytes saved."""
    before = wheel.stat().st_size
    tmp = wheel.with_suffix(".slim")
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            if dropped(info.filename):
                continue
            data = src.read(info)
            if info.filename.endswith(".dist-info/RECORD"):
                lines = data.decode().splitlines(keepends=True)
                data = "".join(x for x in lines if not dropped(x.split(",")[0])).encode()
            dst.writestr(info, data)
    tmp.replace(wheel)
    return before - wheel.stat().st_size


def other_platforms_solvers(path: str) -> bool:
    """PuLP's bundled CBC binaries for platforms other than the target's (Linux x86-64): of no use there."""
    return path.startswith("pulp/solverdir/cbc/") and not path.startswith("pulp/solverdir/cbc/linux/i64/")


def other_models(keep):
    """transformers' model folders other than ``keep``."""
    folder = re.compile(r"transformers/models/([^/]+)/")
    return lambda path: (m := folder.match(path)) is not None and m.group(1) not in keep


def mib(wheels: list[Path]) -> float:
    return sum(w.stat().st_size for w in wheels) / 2**20


def items(text: str) -> list[str]:
    """A comma-separated option's entries."""
    return [x for x in text.split(",") if x]


def fit(wheels: list[Path], max_mb: float, keep_models) -> None:
    """Slim wheels until the folder is under ``max_mb``: first what the target cannot use, then transformers'
    model folders other than ``keep_models`` (which can break a target package that imports one)."""
    for prefix, dropped, what in (("pulp-", other_platforms_solvers, "CBC binaries for other platforms"),
                                  ("transformers-", other_models(keep_models),
                                   f"model folders but {','.join(keep_models)}")):
        if mib(wheels) <= max_mb:
            return
        for w in wheels:
            if w.name.startswith(prefix):
                print(f"  {w.name}: {what} dropped ({slim(w, dropped) / 2**20:.1f} MiB less)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--have", type=Path, help="the target's `pip list --format=freeze` (default: it has nothing)")
    ap.add_argument("--out", type=Path, default=Path(".whl"), help="the folder (default .whl); wheels already in "
                    "it are replaced: two versions of a package stop the install there")
    ap.add_argument("--python-version", default="3.12", help="the target's Python (default 3.12)")
    ap.add_argument("--root", default="povstim", help="what to carry the closure of, itself left out (default "
                    "povstim: the checkout travels)")
    ap.add_argument("--also", default="minicons", help="more packages to carry with their closures, "
                    "comma-separated (default: minicons, gpu_bench's scoring peer)")
    ap.add_argument("--trust", default=",".join(TRUST), help="packages the target's own build of is used "
                    "whatever its version, comma-separated, * allowed (default: %(default)s)")
    ap.add_argument("--keep-models", default=",".join(KEEP_MODELS), help="transformers model folders kept when "
                    "the folder is over --max-mb (default: %(default)s)")
    ap.add_argument("--max-mb", type=float, default=None, help="the folder's size bound in MiB (default: none)")
    ap.add_argument("--index-url", default=None, help="pip's index (default: pip's configuration)")
    ap.add_argument("--dry-run", action="store_true", help="list what would be carried; download nothing")
    a = ap.parse_args(argv)

    if a.have is not None and not a.have.is_file():
        raise SystemExit(f"gpu_wheels: --have {a.have}: no such file")
    also = items(a.also)
    found = closure(a.root, target_env(a.python_version), also)
    have = read_have(a.have) if a.have is not None else {}
    wanted = choose(found, have, items(a.trust))
    wanted, yours = local_builds(wanted)
    for name, version, why in wanted:
        print(f"  {name}=={version}  ({why})")
    print(f"{len(wanted)} of the {len(found)} packages {' and '.join([a.root, *also])} need there to carry")
    for name, version, why in yours:
        print(f"gpu_wheels: not carried: {name} ({why}); {version} is this machine's own build, which no index has: "
              f"install a {name} for the target there", file=sys.stderr)
    if a.dry_run or not wanted:
        return 0
    for w in a.out.glob("*.whl"):  # two versions of one package stop `pip install .whl/*.whl` there
        w.unlink()
    for req in download(wanted, a.out, a.python_version, a.index_url):
        print(f"  {req}: no wheel on the index; built here (pure Python)")
    wheels = sorted(a.out.glob("*.whl"))
    if a.max_mb is not None:
        fit(wheels, a.max_mb, tuple(items(a.keep_models)))
    size = mib(wheels)
    print(f"{len(wheels)} wheels, {size:.1f} MiB in {a.out}")
    if a.max_mb is not None and size > a.max_mb:
        for w in sorted(wheels, key=lambda w: -w.stat().st_size)[:10]:
            print(f"  {w.stat().st_size / 2**20:6.1f} MiB  {w.name}")
        print(f"gpu_wheels: {size:.1f} MiB is over --max-mb {a.max_mb:g}; trust more of the target's packages "
              "(--trust) or raise the bound", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
