"""The family registry is the one place that switches on a model family.

Code elsewhere asks ``povstim.families`` for a property (split head, padding mask, position offset, ...)
instead of comparing a config's ``model_type`` with a family's name: adding a family must not mean
hunting for ``== "gpt2"`` across the package.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from povstim import families

PKG = Path(__file__).resolve().parents[1] / "workflow" / "povstim"
# where a family is defined (its own name is data there, not a switch)
DEFINES_FAMILIES = {PKG / "families.py", PKG / "biases" / "recency.py"}


def _strings(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [s for elt in node.elts for s in _strings(elt)]
    return []


def _family_switches(path: Path, names: set[str], root: Path = PKG) -> list[str]:
    found = []
    where = path.relative_to(root)
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for side in [node.left, *node.comparators]:
                found += [f"{where}:{node.lineno}: compares with {s!r}"
                          for s in _strings(side) if s in names]
        elif isinstance(node, ast.Dict):
            found += [f"{where}:{node.lineno}: dict keyed on {k.value!r}"
                      for k in node.keys if isinstance(k, ast.Constant) and k.value in names]
    return found


def test_no_module_outside_the_registry_switches_on_a_family_name():
    names = set(families.FAMILIES) | {t for f in families.FAMILIES.values() for t in f.model_types}
    assert {"gpt2", "roberta"} <= names  # the scan looks for the names that matter
    switches = [hit for path in sorted(PKG.rglob("*.py")) if path not in DEFINES_FAMILIES
                for hit in _family_switches(path, names)]
    assert switches == [], "switch on a family name outside povstim.families:\n" + "\n".join(switches)


def test_the_scan_finds_a_switch_when_there_is_one(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text('def f(cfg):\n    return cfg.model_type in ("roberta", "x")\nD = {"gpt2": 1}\nE = "gpt2"\n')
    hits = sorted(_family_switches(bad, {"gpt2", "roberta"}, root=tmp_path))
    assert hits == ["bad.py:2: compares with 'roberta'", "bad.py:3: dict keyed on 'gpt2'"]


@pytest.mark.parametrize("model_type, offset", [
    ("roberta", 2),      # RoBERTa: position ids start at padding_idx + 1 = 2 (modeling_roberta)
    ("xlm-roberta", 2),  # the same embedding class, a hub model type no povstim family saves as
    ("gpt2", 0),
    ("llama", 0),        # rotary: no reserved positions
])
def test_position_offsets_come_from_the_registry(model_type, offset):
    assert families.position_offset(model_type) == offset


def test_padding_properties_belong_to_the_families_that_were_measured():
    assert families.get("gpt2").unmasked_padding and not families.get("gpt2").host_padding_mask
    assert families.get("roberta").host_padding_mask and not families.get("roberta").unmasked_padding
    # the recency bias adds a mask of its own to attention: its rows must keep an explicit padding mask
    assert not families.get("gpt2-recency").unmasked_padding
