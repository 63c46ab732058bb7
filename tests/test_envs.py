"""The conda envs in envs/ agree with the Python lock (pyproject.toml), every
rule names one, and each rule's env holds every third-party package the
povstim code that rule runs imports.

Conda channels are unreachable here, so this checks the env files statically
instead of building them; a wrong pin or a missing package fails here rather
than on a user's cluster.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
PKG = REPO / "workflow" / "povstim"
ENVS = REPO / "envs"
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([A-Za-z0-9.+!_-]+)$")


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def lock_pins() -> dict[str, str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    pins = {}
    for dep in project["dependencies"]:
        m = PIN.match(dep.replace(" ", ""))
        assert m, f"pyproject.toml dependency {dep!r} is not an exact pin"
        pins[norm(m.group(1))] = m.group(2)
    return pins


def env_files() -> list[Path]:
    return sorted(ENVS.glob("*.yaml"))


def env_pins(path: Path) -> tuple[str | None, dict[str, str]]:
    """(python version, {package: version}) of a conda env file."""
    spec = yaml.safe_load(path.read_text())
    python = None
    pins: dict[str, str] = {}
    for dep in spec["dependencies"]:
        if isinstance(dep, dict):
            for pip_dep in dep.get("pip", []):
                if pip_dep.startswith("-"):
                    continue  # a pip option such as --index-url
                m = PIN.match(pip_dep.replace(" ", ""))
                assert m, f"{path.name}: pip entry {pip_dep!r} is not an exact 'name==version' pin"
                pins[norm(m.group(1))] = m.group(2)
            continue
        name, _, version = dep.partition("=")
        if norm(name) == "python":
            python = version.lstrip("=")
        elif norm(name) != "pip":
            assert version.startswith("=") or version, f"{path.name}: conda entry {dep!r} is not pinned"
            pins[norm(name)] = version.lstrip("=")
    return python, pins


# --- rules -> stages -> imports ---------------------------------------------

RULE = re.compile(r"^(?:rule|checkpoint)\s+(\w+)\s*:", re.M)


def rule_blocks() -> dict[str, str]:
    blocks = {}
    for smk in sorted((REPO / "rules").glob("*.smk")):
        text = smk.read_text()
        starts = list(RULE.finditer(text))
        for i, m in enumerate(starts):
            end = starts[i + 1].start() if i + 1 < len(starts) else len(text)
            # a rule ends at the next top-level (unindented) statement
            body = text[m.end() : end]
            top = re.search(r"^\S", body, re.M)
            blocks[m.group(1)] = body[: top.start()] if top else body
    return blocks


def rule_env(block: str) -> str | None:
    m = re.search(r"^\s+conda:\s*\n\s+\"([^\"]+)\"", block, re.M)
    return m.group(1) if m else None


def rule_stage(block: str) -> str | None:
    m = re.search(r"\{POVSTIM\}\s+([a-z][a-z-]*)", block)
    return m.group(1) if m else None


def stage_modules() -> dict[str, str]:
    sys.path.insert(0, str(REPO / "workflow"))
    try:
        from povstim.cli import STAGES
    finally:
        sys.path.pop(0)
    return {name: module for name, (module, _) in STAGES.items()}


def module_path(module: str) -> Path | None:
    rel = Path(*module.split("."))
    for candidate in (REPO / "workflow" / rel.with_suffix(".py"), REPO / "workflow" / rel / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _optional(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """True for an import inside `try: ... except ImportError` (an optional extra)."""
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.Try):
            for handler in node.handlers:
                names = []
                if isinstance(handler.type, ast.Name):
                    names = [handler.type.id]
                elif isinstance(handler.type, ast.Tuple):
                    names = [e.id for e in handler.type.elts if isinstance(e, ast.Name)]
                if {"ImportError", "ModuleNotFoundError"} & set(names):
                    return True
    return False


def third_party_imports(module: str) -> tuple[set[str], set[str]]:
    """(top-level third-party import names, povstim modules visited) of `module`
    and every povstim module it imports, at any depth (lazy imports included)."""
    seen: set[str] = set()
    external: set[str] = set()
    todo = [module]
    while todo:
        mod = todo.pop()
        if mod in seen:
            continue
        seen.add(mod)
        path = module_path(mod)
        if path is None:
            continue
        tree = ast.parse(path.read_text(), filename=str(path))
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[: len(base) - node.level + 1]
                    prefix = ".".join(base + ([node.module] if node.module else []))
                    todo.append(prefix)
                    todo.extend(f"{prefix}.{a.name}" for a in node.names)
                    continue
                names = [node.module or ""]
            else:
                continue
            if _optional(node, parents):
                continue
            for name in names:
                if name.split(".")[0] == "povstim":
                    todo.append(name)
                    todo.extend(f"{name}.{a.name}" for a in getattr(node, "names", []))
                else:
                    external.add(name.split(".")[0])
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    return {n for n in external if n and n not in stdlib}, seen


def test_every_env_is_pinned_to_the_lock():
    lock = lock_pins()
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    py_major_minor = re.search(r">=\s*(\d+\.\d+)", project["requires-python"]).group(1)
    assert env_files(), "envs/ has no conda env files"
    for path in env_files():
        spec = yaml.safe_load(path.read_text())
        assert spec.get("channels") and "conda-forge" in spec["channels"], f"{path.name}: use conda-forge"
        assert "defaults" not in spec["channels"], f"{path.name}: the anaconda defaults channel needs a licence"
        python, pins = env_pins(path)
        assert python == py_major_minor, f"{path.name}: python={python}, pyproject requires {py_major_minor}"
        assert pins, f"{path.name} pins no packages"
        for name, version in pins.items():
            assert name in lock, f"{path.name}: {name} is not a dependency in pyproject.toml"
            assert version == lock[name], f"{path.name}: {name}=={version} but pyproject.toml pins {lock[name]}"


def test_every_lock_pin_is_used_by_some_env():
    used = set()
    for path in env_files():
        used |= set(env_pins(path)[1])
    # snakemake and the config validation (jsonschema) run in the workflow's
    # own process, never inside a rule's env
    missing = set(lock_pins()) - used - {"snakemake", "jsonschema"}
    assert not missing, f"pyproject.toml pins {sorted(missing)} but no env in envs/ carries them"


def test_every_rule_names_an_existing_env():
    blocks = rule_blocks()
    assert {"synth", "train", "score", "analyze"} <= set(blocks), sorted(blocks)
    for rule, block in blocks.items():
        if re.search(r"^\s+(shell|run|script|notebook|wrapper):", block, re.M) is None:
            continue  # a target-only rule (e.g. `all`) runs nothing
        env = rule_env(block)
        assert env, f"rule {rule} names no conda env"
        assert (REPO / "rules" / env).resolve().is_file(), f"rule {rule}: {env} does not exist"


def optional_extras() -> set[str]:
    """Packages of pyproject's optional extras (e.g. `spacy` for
    parser.backend: spacy), test tools aside: code may import them only for
    the option that needs them, and envs need not carry them."""
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"].get("optional-dependencies", {})
    return {norm(re.match(r"[A-Za-z0-9._-]+", dep).group(0))
            for group, deps in extras.items() if group != "test" for dep in deps}


def installed_closure(pins) -> set[str]:
    """The pinned packages plus everything they require (as installed here):
    what `pip install` of the env's list brings along."""
    todo, seen = list(pins), set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = importlib.metadata.requires(name) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        for req in requires:
            if "extra ==" in req:
                continue
            todo.append(norm(re.match(r"[A-Za-z0-9._-]+", req).group(0)))
    return seen


def test_each_rule_env_holds_what_its_code_imports():
    """E.g. rule train's env must carry torch and transformers, analyze's bambi."""
    dists = importlib.metadata.packages_distributions()
    stages = stage_modules()
    optional = optional_extras()
    problems = []
    checked = 0
    for rule, block in rule_blocks().items():
        stage, env = rule_stage(block), rule_env(block)
        if stage is None or env is None:
            continue
        assert stage in stages, f"rule {rule} calls `povstim {stage}`, which cli.STAGES does not know"
        module = stages[stage]
        checked += 1
        if module_path(module) is None:
            problems.append(f"rule {rule}: stage module {module} does not exist")
            continue
        imports, _ = third_party_imports(module)
        _, pins = env_pins((REPO / "rules" / env).resolve())
        available = installed_closure(pins)
        for name in sorted(imports):
            owners = {norm(d) for d in dists.get(name, [])}
            if owners & optional:
                continue
            if not owners:
                problems.append(f"rule {rule} ({module}) imports {name}, which no installed distribution provides")
            elif not owners & available:
                problems.append(f"rule {rule} ({module}) imports {name} ({', '.join(sorted(owners))}) "
                                f"but {env} neither pins it nor gets it through a pinned package")
        checked += 1
    assert checked >= 5
    assert not problems, "\n".join(problems)


def test_import_scan_sees_lazy_and_relative_imports(tmp_path, monkeypatch):
    """The scanner follows povstim-internal imports and counts imports inside
    functions, but skips `try: import x except ImportError` extras."""
    pkg = tmp_path / "workflow" / "povstim" / "demo"
    pkg.mkdir(parents=True)
    (tmp_path / "workflow" / "povstim" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "cli.py").write_text("import json\nfrom .model import fit\n")
    (pkg / "model.py").write_text(
        "def fit():\n    import torch\n    return torch\n"
        "try:\n    import spacy\nexcept ImportError:\n    spacy = None\n"
        "from ..io_helpers import save\n"
    )
    (tmp_path / "workflow" / "povstim" / "io_helpers.py").write_text("import yaml\n")
    monkeypatch.setattr(sys.modules[__name__], "REPO", tmp_path)
    imports, seen = third_party_imports("povstim.demo.cli")
    assert imports == {"torch", "yaml"}
    assert {"povstim.demo.cli", "povstim.demo.model", "povstim.io_helpers"} <= seen


def test_env_pin_parser_rejects_loose_pins(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nchannels: [conda-forge]\ndependencies:\n  - python=3.11\n  - pip:\n      - torch>=2\n")
    with pytest.raises(AssertionError, match="not an exact"):
        env_pins(bad)


@pytest.mark.slow
def test_snakemake_lint_finds_no_rule_without_an_env(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(tmp_path),
         "--configfile", str(REPO / "tests" / "configs" / "tiny.yaml"), "--lint"],
        capture_output=True, text=True, timeout=600,
    )
    out = proc.stdout + proc.stderr
    assert "Lints for" in out or proc.returncode == 0, out[-3000:]  # the linter ran
    assert "Specify a conda environment" not in out, out
    assert "conda environment or container" not in out, out
