"""Stage code hashes derived from imports (povstim/codehash.py).

The closures are checked against an independent implementation: the standard library's
``modulefinder``, which scans compiled bytecode (every ``IMPORT_NAME``, nested functions included)
instead of the syntax tree. Then every module of a copy of the package is edited in turn: exactly the
stages whose closure holds it change hash. Last, the user's view: ``snakemake -n`` after an edit.
"""

from __future__ import annotations

import modulefinder
import shutil
from pathlib import Path

import pytest
from povstim import codehash

REPO = Path(__file__).resolve().parents[1]
PKG = REPO / "workflow" / "povstim"
MAIN = "povstim.__main__"


class _Finder(modulefinder.ModuleFinder):
    """ModuleFinder limited to the povstim package that records who imports whom.

    Function bodies named in ``codehash.OTHER_PROCESS`` are not scanned (they run in the warm-start
    server, not in a job)."""

    def __init__(self, workflow_dir: Path):
        super().__init__(path=[str(workflow_dir)])
        self.edges: dict[str, set[str]] = {}
        self._scanning: list[str] = []

    def import_hook(self, name, caller=None, fromlist=None, level=-1):
        # third-party and stdlib modules are not followed (nor listed as bad modules: modulefinder keys
        # those by the bare name, so a stdlib `import io` would hide povstim's `from .io import ...`)
        if level in (0, -1) and name.partition(".")[0] != "povstim":
            return None
        return super().import_hook(name, caller, fromlist, level)


    def import_module(self, partname, fqname, parent):
        m = super().import_module(partname, fqname, parent)
        if m is not None and self._scanning:
            self.edges.setdefault(self._scanning[-1], set()).add(fqname)
        return m

    def ensure_fromlist(self, m, fromlist, recursive=0):
        super().ensure_fromlist(m, fromlist, recursive)
        # `from pkg import sub` of a submodule loaded before: modulefinder does not import it again
        for sub in fromlist:
            if f"{m.__name__}.{sub}" in self.modules and self._scanning:
                self.edges.setdefault(self._scanning[-1], set()).add(f"{m.__name__}.{sub}")

    def scan_code(self, co, m):
        # the module whose code is scanned imports (modulefinder passes no caller for `from . import x`)
        if co.co_name in codehash.OTHER_PROCESS.get(m.__name__, ()):
            return
        self._scanning.append(m.__name__)
        try:
            super().scan_code(co, m)
        finally:
            self._scanning.pop()

    def closure(self, *entries: str) -> set[str]:
        todo = []
        for entry in entries:
            self.import_hook(entry)
            parts = entry.split(".")
            todo += [".".join(parts[:i]) for i in range(1, len(parts) + 1)]
        seen: set[str] = set()
        while todo:
            name = todo.pop()
            if name not in seen:
                seen.add(name)
                todo.extend(self.edges.get(name, ()))
        return seen


def _finder_closures(pkg: Path) -> dict[str, set[str]]:
    finder = _Finder(pkg.parent)
    return {stage: finder.closure(MAIN, entry) for stage, entry in codehash.stages(pkg).items()}


@pytest.fixture(scope="module")
def finder_closures() -> dict[str, set[str]]:
    return _finder_closures(PKG)


def test_stages_are_the_cli_table():
    from povstim import cli

    assert codehash.stages() == {stage: module for stage, (module, _) in cli.STAGES.items()}


def test_every_stage_closure_is_what_modulefinder_finds(finder_closures):
    for stage, found in finder_closures.items():
        derived = set(codehash.stage_closure(stage))
        assert derived == found, (stage, sorted(derived - found), sorted(found - derived))


def test_one_stage_does_not_pull_in_the_others(finder_closures):
    """cli.py's import_module(STAGES[stage][0]) is the stage's entry, not an import of every stage."""
    tokenize = set(codehash.stage_closure("tokenize"))
    assert "povstim.tokenizer.cli" in tokenize
    for other in ("povstim.train.cli", "povstim.scoring.cli", "povstim.analysis.cli", "povstim.figures.cli"):
        assert other not in tokenize
    # devices (bf16 vs fp32) is imported by the training loop and the scorer
    for stage in ("train", "score", "score-group"):
        assert "povstim.devices" in codehash.stage_closure(stage), stage


def test_only_known_imports_are_computed():
    """A new import_module(<not a literal>) must be added to whoever can execute it (see codehash)."""
    assert {module for module, _ in codehash.computed_imports()} == {
        "povstim.cli",  # STAGES[stage][0]: the stage's entry module
        "povstim.warm",  # preload(): third-party libraries only (PRELOAD)
    }


def test_imports_the_scanner_follows(tmp_path):
    pkg = tmp_path / "povstim"
    for rel, text in {
        "__init__.py": "",
        "__main__.py": "from .cli import main\n",
        "cli.py": "import importlib\nfrom . import a\n"
                  "STAGES = {'one': ('povstim.one', 'help'), 'two': ('povstim.two', 'help')}\n"
                  "def main(stage):\n    importlib.import_module(STAGES[stage][0])\n",
        "a.py": "",
        "one.py": "def run():\n    from .sub import leaf\n    from povstim import lazy\n",
        "two.py": "import importlib\nimportlib.import_module('povstim.literal')\n"
                  "importlib.import_module('.rel', 'povstim.sub')\n",
        "sub/__init__.py": "",
        "sub/leaf.py": "from ..deep.x import name\n",
        "sub/rel.py": "",
        "deep/__init__.py": "",
        "deep/x.py": "name = 1\n",
        "lazy.py": "",
        "literal.py": "",
        "unused.py": "",
    }.items():
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text(text)
    common = {"povstim", "povstim.__main__", "povstim.cli", "povstim.a"}
    assert set(codehash.stage_closure("one", root=pkg)) == common | {
        "povstim.one", "povstim.sub", "povstim.sub.leaf", "povstim.deep", "povstim.deep.x", "povstim.lazy"}
    assert set(codehash.stage_closure("two", root=pkg)) == common | {
        "povstim.two", "povstim.literal", "povstim.sub", "povstim.sub.rel"}
    assert codehash.computed_imports(pkg) == [("povstim.cli", 5)]
    # an edit to a module only 'two' imports changes only 'two'
    before = {s: codehash.stage_hash(s, root=pkg) for s in ("one", "two")}
    with open(pkg / "literal.py", "a") as fh:
        fh.write("# edited\n")
    after = {s: codehash.stage_hash(s, root=pkg) for s in ("one", "two")}
    assert after["one"] == before["one"] and after["two"] != before["two"]


def test_editing_each_module_changes_exactly_the_stages_that_import_it(tmp_path):
    pkg = tmp_path / "povstim"
    shutil.copytree(PKG, pkg, ignore=shutil.ignore_patterns("__pycache__"))
    closures = _finder_closures(pkg)
    stages = list(closures)
    baseline = codehash.stage_hashes(pkg)  # all stages at once: each file looked at once
    assert baseline == {s: codehash.stage_hash(s, root=pkg) for s in stages}
    modules = codehash.module_files(pkg)
    assert len(modules) > 50
    unused = []
    for name, path in modules.items():
        original = path.read_bytes()
        try:
            path.write_bytes(original + b"\n# an edit\n")
            hashes = codehash.stage_hashes(pkg)
            changed = {s for s in stages if hashes[s] != baseline[s]}
        finally:
            path.write_bytes(original)
        expected = {s for s in stages if name in closures[s]}
        assert changed == expected, (name, sorted(changed - expected), sorted(expected - changed))
        if not expected:
            unused.append(name)
    # restored: the hashes are back
    assert codehash.stage_hashes(pkg) == baseline
    assert "povstim.codehash" in unused  # the Snakefile's, never a job's


def test_data_files_and_exclusions(tmp_path):
    pkg = tmp_path / "povstim"
    shutil.copytree(PKG, pkg, ignore=shutil.ignore_patterns("__pycache__"))
    table = "figures/children_table7.yaml"
    figures = codehash.stage_hash("figures", table, root=pkg)
    assert figures != codehash.stage_hash("figures", root=pkg)
    with open(pkg / table, "a") as fh:
        fh.write("# edited\n")
    assert codehash.stage_hash("figures", table, root=pkg) != figures
    with pytest.raises(FileNotFoundError, match="no data file"):
        codehash.stage_hash("figures", "figures/absent.yaml", root=pkg)
    # the parse rule leaves the dpe package out (it hashes the surface pre-tests itself)
    parse = codehash.stage_hash("parse", exclude=("dpe",), root=pkg)
    with open(pkg / "dpe" / "binding.py", "a") as fh:
        fh.write("# edited\n")
    assert codehash.stage_hash("parse", exclude=("dpe",), root=pkg) == parse
    with open(pkg / "parse" / "run.py", "a") as fh:
        fh.write("# edited\n")
    assert codehash.stage_hash("parse", exclude=("dpe",), root=pkg) != parse


def test_the_import_lists_cache_between_processes(tmp_path, monkeypatch):
    cache = tmp_path / "cache" / "imports.json"
    monkeypatch.setattr(codehash, "_FILES", {})
    monkeypatch.setattr(codehash, "_DISK", {})
    codehash.use_cache(cache)
    try:
        first = codehash.stage_hash("train")
        assert cache.is_file()
        codehash._FILES.clear()
        codehash._DISK.clear()
        monkeypatch.setattr(codehash, "_scan", lambda *a: pytest.fail("parsed again"))
        assert codehash.stage_hash("train") == first
    finally:
        codehash.use_cache(None)


# --- what the user sees: snakemake -n after an edit ------------------------------------------------------


def _fake_finished_run(project: Path) -> None:
    """Mark the tiny config's whole DAG done without running it: every output exists (extensionless
    outputs are the rules' directory() outputs) and `--touch --forceall` records each job's params."""
    from test_workflow import snakemake

    dry = snakemake(project, "-n", "results/figures")
    for line in (dry.stdout + dry.stderr).splitlines():
        if not line.startswith("    output: "):
            continue
        for out in line[len("    output: "):].split(", "):
            path = project / out.strip()
            if path.suffix:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text("{}" if path.suffix == ".json" else "")
            else:
                path.mkdir(parents=True, exist_ok=True)
    snakemake(project, "--touch", "--forceall", "results/figures")


@pytest.mark.slow  # five Snakemake invocations on the tiny config (no job runs): 40-75 s on 2 busy cores
def test_snakemake_reruns_what_imports_the_edited_module(tmp_path):
    from test_workflow import copy_project, scheduled_rules, snakemake

    project = copy_project(tmp_path / "p")
    _fake_finished_run(project)
    assert scheduled_rules(snakemake(project, "-n", "results/figures")) == {}

    pkg = project / "workflow" / "povstim"

    def rerun_after_appending(rel: str) -> dict[str, int]:
        target = pkg / rel
        original = target.read_bytes()
        try:
            target.write_bytes(original + b"\n# an edit\n")
            return scheduled_rules(snakemake(project, "-n", "results/figures"))
        finally:
            target.write_bytes(original)

    # the module that decides bf16 vs fp32 (devices.py, or a module of the devices package): training and
    # scoring import it, through function-level imports too; the corpus stages and the benchmark do not
    precision = next(p for p in sorted(pkg.rglob("*.py")) if "def train_precision(" in p.read_text())
    jobs = rerun_after_appending(str(precision.relative_to(pkg)))
    assert jobs.get("train") == 6 and jobs.get("score") == 6, jobs
    assert not {"synth", "assemble", "parse", "filter", "condition", "tokenizer", "benchmark"} & set(jobs), jobs
    # a module only one leaf stage imports: that stage and what follows it
    jobs = rerun_after_appending("analysis/guardrails/checks.py")
    assert set(jobs) == {"guardrails", "figures_index"}, jobs
