"""The package's import graph: no cycles, and no import from a lower layer into a higher one.

The graph is grimp's (import-linter's engine): every ``import`` statement of every module, those inside
functions included (a deferred import is still a dependency). Imports by name
(``importlib.import_module``: ``povstim.cli``'s stage table, the warm-start child's fresh ``povstim.cli``)
are entry points, not dependencies, and are not in it.

``LAYERS`` is the room map of docs/architecture.md ("Layers"), bottom first: a module may import
modules of its own layer or of a lower one. A name covers the module and everything under it; the most
specific name wins (``povstim.parse.conllu`` sits lower than the rest of ``povstim.parse``).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

grimp = pytest.importorskip("grimp")

WORKFLOW = Path(__file__).resolve().parents[1] / "workflow"

LAYERS: list[tuple[str, list[str]]] = [
    # process and file plumbing: no stage, no registry
    ("base", ["povstim", "povstim.__init__", "povstim.io", "povstim.schema", "povstim.settings",
              "povstim.forkmap", "povstim.hostmem", "povstim.devices", "povstim.codehash",
              "povstim.warm", "povstim.attention"]),
    # registries and shared building blocks that live in a stage's package: read at DAG build and by
    # several stages (families names the gpt2-recency model class in biases.recency, the LSTM's in lstm)
    ("shared", ["povstim.languages", "povstim.lexicon", "povstim.families", "povstim.biases.recency", "povstim.lstm",
                "povstim.parse.conllu", "povstim.parse.tokenize", "povstim.conditions.order",
                "povstim.figures.style", "povstim.filter.residual"]),
    # the DPE contract (on the tree format); the parse stage's prefilter is its surface pre-tests
    ("dpe", ["povstim.dpe", "povstim.constructions"]),
    ("corpus stages", ["povstim.sources", "povstim.synth", "povstim.corpus", "povstim.parse"]),
    ("filter stages", ["povstim.filter", "povstim.conditions"]),
    ("benchmarks", ["povstim.benchmarks"]),
    # which jobs a config asks for: reads the registries, DPE and benchmark facts above
    ("plan", ["povstim.plan"]),
    ("tokenizer", ["povstim.tokenizer"]),
    ("biases", ["povstim.biases"]),
    ("train", ["povstim.train"]),
    ("formal", ["povstim.formal"]),
    ("scoring", ["povstim.scoring"]),
    ("analysis", ["povstim.analysis"]),
    ("figures", ["povstim.figures"]),
    ("probes", ["povstim.probes"]),
    # whole-config validation and the user commands: may import anything
    ("commands", ["povstim.config", "povstim.preflight", "povstim.cli", "povstim.__main__"]),
]

# Known exceptions, each an import (importer, imported) left out of both checks. Empty it as they go.
EXPECTED: dict[tuple[str, str], str] = {}


@pytest.fixture(scope="module")
def graph():
    import sys

    sys.path.insert(0, str(WORKFLOW))
    try:
        return grimp.build_graph("povstim", include_external_packages=False, cache_dir=None)
    finally:
        sys.path.remove(str(WORKFLOW))


def _edges(graph) -> dict[tuple[str, str], list[str]]:
    out = {}
    for m in graph.modules:
        for i in graph.find_modules_directly_imported_by(m):
            if (m, i) in EXPECTED:
                continue
            out[(m, i)] = [f"{d['importer']}:{d['line_number']} {d['line_contents']}"
                           for d in graph.get_import_details(importer=m, imported=i)]
    return out


def layer_of(module: str) -> int:
    best, found = -1, None
    for n, (_, names) in enumerate(LAYERS):
        for name in names:
            if (module == name or module.startswith(name + ".")) and len(name) > best:
                best, found = len(name), n
    if found is None:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS here and to docs/architecture.md")
    return found


def _cycles(edges) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each as one cycle through it."""
    adj: dict[str, list[str]] = {}
    for a, b in edges:
        adj.setdefault(a, []).append(b)
        adj.setdefault(b, [])
    index, low, stack, on, comps = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in adj[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(comp)

    for v in sorted(adj):
        if v not in index:
            visit(v)
    cycles = []
    for comp in comps:  # one cycle through the component's first module, for the message
        members, start = set(comp), min(comp)
        path, seen = [start], {start}
        while True:
            nxt = next(w for w in sorted(adj[path[-1]]) if w in members and (w == start or w not in seen))
            if nxt == start:
                break
            path.append(nxt)
            seen.add(nxt)
        cycles.append(path + [start])
    return cycles


def test_no_import_cycles(graph):
    edges = _edges(graph)
    cycles = _cycles(edges)
    lines = []
    for cyc in cycles:
        lines.append(" -> ".join(cyc))
        lines += [f"    {d}" for a, b in zip(cyc, cyc[1:]) for d in edges[(a, b)]]
    assert not cycles, "import cycles:\n" + "\n".join(lines)


def test_no_upward_imports(graph):
    bad = [f"{LAYERS[layer_of(a)][0]} -> {LAYERS[layer_of(b)][0]}: {d}"
           for (a, b), details in sorted(_edges(graph).items()) if layer_of(b) > layer_of(a) for d in details]
    assert not bad, "imports from a lower layer into a higher one (docs/architecture.md, Layers):\n" + "\n".join(bad)


def test_every_module_has_a_layer(graph):
    for m in graph.modules:
        layer_of(m)


def test_expected_exceptions_still_exist(graph):
    """An exception that no longer occurs should leave EXPECTED (a warning, so a fix landing elsewhere is green)."""
    gone = [f"{a} -> {b}" for a, b in EXPECTED if not graph.direct_import_exists(importer=a, imported=b)]
    if gone:
        warnings.warn("no longer imported, remove from EXPECTED in tests/test_import_graph.py: " + ", ".join(gone))


def test_the_checks_catch_a_cycle_and_an_upward_import():
    assert _cycles({("a", "b"): [], ("b", "c"): [], ("c", "a"): [], ("c", "d"): []}) == [["a", "b", "c", "a"]]
    assert layer_of("povstim.parse.conllu") < layer_of("povstim.dpe") < layer_of("povstim.parse.run")
    assert layer_of("povstim.families") < layer_of("povstim.plan") < layer_of("povstim.config")
