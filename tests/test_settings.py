"""One source of settings: every default lives in the schema, and nowhere else.

Each stage builds one frozen settings object from its validated config section
(povstim.settings.build). These tests fail when a default appears a second time
in code — as a dataclass field default, a CLI flag default for a config key, or
a module-level ``*DEFAULTS`` table — or when a settings class and its schema
section disagree on the keys.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from povstim import schema
from povstim.analysis.timing.acquisition import AcquisitionSettings
from povstim.analysis.guardrails.checks import GuardrailSettings
from povstim.analysis.pipeline import AnalysisSettings
from povstim.analysis.models.power import PowerSettings
from povstim.analysis.tables.released import ReleaseSettings
from povstim.conditions.build import SplitSettings
from povstim.devices.sharing import GpuSettings
from povstim.filter.settings import FilterSettings
from povstim.filter.validate import ValidationSettings
from povstim.io import PovstimError
from povstim.parse.run import ParserSettings
from povstim.scoring.run import ScoringSettings
from povstim.settings import build, section
from povstim.tokenizer.bpe import TokenizerSettings
from povstim.tokenizer.study import StudySettings
from povstim.train.params import TrainingSettings

PKG = Path(__file__).resolve().parents[1] / "workflow" / "povstim"

# settings class -> its config section
SETTINGS = {
    AcquisitionSettings: "acquisition",
    AnalysisSettings: "analysis",
    GuardrailSettings: "guardrails",
    PowerSettings: "power",
    ReleaseSettings: "release",
    SplitSettings: "split",
    FilterSettings: "filter",
    ValidationSettings: "filter_validation",
    GpuSettings: "gpus",
    ParserSettings: "parser",
    ScoringSettings: "scoring",
    TokenizerSettings: "tokenizer",
    StudySettings: "vocab_study",
    TrainingSettings: "training",
}


@pytest.mark.parametrize("cls", SETTINGS, ids=lambda c: c.__name__)
def test_settings_fields_are_the_schema_keys_without_defaults(cls):
    props = set(schema.load_schema()["properties"][SETTINGS[cls]]["properties"])
    fields = {f.name for f in dataclasses.fields(cls)}
    assert fields == props, f"{cls.__name__} and the {SETTINGS[cls]} schema disagree: {fields ^ props}"
    with_default = [f.name for f in dataclasses.fields(cls)
                    if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING]
    assert not with_default, f"{cls.__name__} has code defaults {with_default}: put them in the schema"
    assert cls.__dataclass_params__.frozen


def test_empty_section_gets_exactly_the_schema_defaults():
    sec = schema.load_schema()["properties"]["scoring"]["properties"]
    s = build(ScoringSettings, "scoring", {})
    for key, spec in sec.items():
        expected = spec["default"]
        if expected == {} and "properties" in spec:  # an object section: its own keys' defaults
            expected = {k: v["default"] for k, v in spec["properties"].items()}
        assert getattr(s, key) == expected, key
    # a flag overrides, and the schema checks the result
    assert build(ScoringSettings, "scoring", {}, batch_size=7).batch_size == 7
    with pytest.raises(PovstimError, match="scoring.batch_size"):
        build(ScoringSettings, "scoring", {"batch_size": 0})


def test_arch_training_overrides_get_no_defaults():
    # a default filled into archs.<name>.training would silently override the experiment's training section
    filled = section("archs", {"bb": {"family": "roberta", "training": {"batch_size": 16}}})
    assert filled["bb"]["training"] == {"batch_size": 16}


def _cli_modules():
    return sorted(PKG.rglob("*cli.py"))


def _schema_keys() -> set[str]:
    keys: set[str] = set()

    def walk(node):
        if isinstance(node, dict):
            keys.update((node.get("properties") or {}).keys())
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(schema.load_schema())
    return keys


def flag_defaults(source: str, keys: set[str]) -> list[str]:
    """Flags of ``source`` (a cli.py) that set a config key and carry a default of their own."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument"):
            continue
        flags = [a.value for a in node.args if isinstance(a, ast.Constant) and str(a.value).startswith("--")]
        dest = next((k.value.value for k in node.keywords if k.arg == "dest"), None)
        names = {dest} if dest else {f.lstrip("-").replace("-", "_") for f in flags}
        default = next((k.value for k in node.keywords if k.arg == "default"), None)
        if default is None or (isinstance(default, ast.Constant) and default.value is None):
            continue
        if isinstance(default, (ast.List, ast.Tuple)) and not default.elts:
            continue  # repeatable flags start from an empty list
        out.extend(sorted(names & keys))
    return out


def test_no_cli_flag_repeats_a_config_default():
    """A flag that sets a config key must default to None (the schema then decides)."""
    keys = _schema_keys()
    offenders = {str(p.relative_to(PKG)): flag_defaults(p.read_text(), keys) for p in _cli_modules()}
    offenders = {k: v for k, v in offenders.items() if v}
    assert not offenders, f"CLI flags with their own default for a config key: {offenders}"


def test_no_module_keeps_a_defaults_table():
    offenders = []
    for path in sorted(PKG.rglob("*.py")):
        for node in ast.parse(path.read_text()).body:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
            for t in targets:
                if isinstance(t, ast.Name) and t.id.endswith("DEFAULTS") and isinstance(node.value, ast.Dict):
                    offenders.append(f"{path.relative_to(PKG)}: {t.id}")
    assert not offenders, f"default tables beside the schema: {offenders}"


def test_drift_detector_catches_a_planted_default():
    """The check has teeth: a flag with its own default for a config key is found, a None default is not."""
    keys = _schema_keys()
    assert flag_defaults('p.add_argument("--batch-size", type=int, default=64)', keys) == ["batch_size"]
    assert flag_defaults('p.add_argument("--batch-size", type=int)', keys) == []
    assert flag_defaults('p.add_argument("--no-bos", dest="bos", action="store_false", default=True)', keys) == ["bos"]


def _schema_defaults() -> dict[str, set]:
    """key -> the reprs of every scalar default the schema gives a key of that name, in any section."""
    found: dict[str, set] = {}

    def walk(node):
        if isinstance(node, dict):
            for key, spec in (node.get("properties") or {}).items():
                if isinstance(spec, dict) and "default" in spec and not isinstance(spec["default"], (dict, list)):
                    found.setdefault(key, set()).add(repr(spec["default"]))
                walk(spec)
            for key in ("additionalProperties", "items", "then", "else"):
                walk(node.get(key))
            for key in ("oneOf", "anyOf", "allOf"):
                for sub in node.get(key) or []:
                    walk(sub)
        return found

    return walk(schema.load_schema())


# `.get(key, literal)` on dicts that are not config sections: a model's metadata (seed), and a
# source's language, whose fallback is the experiment's `language` (resolved by the plan).
NOT_CONFIG_GETS = {("scoring/items.py", "seed"), ("analysis/guardrails/checks.py", "seed"),
                   ("sources/clean.py", "language")}


def _default_gets(source: str, rel: str, defaults: dict[str, set]) -> list[str]:
    hits = []
    for node in ast.walk(ast.parse(source, rel)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
                and len(node.args) == 2 and all(isinstance(a, ast.Constant) for a in node.args)):
            key, value = node.args[0].value, node.args[1].value
            if key in defaults and repr(value) in defaults[key] and (rel, key) not in NOT_CONFIG_GETS:
                hits.append(f"{rel}:{node.lineno}: .get({key!r}, {value!r})")
    return hits


def test_no_code_falls_back_to_a_schema_default():
    """``spec.get("vocabulary", "auto")`` on a schema-filled section is a second copy of the default."""
    defaults = _schema_defaults()
    hits = [h for path in sorted(PKG.rglob("*.py"))
            for h in _default_gets(path.read_text(), path.relative_to(PKG).as_posix(), defaults)]
    assert not hits, "schema defaults repeated in code (read the filled section instead):\n" + "\n".join(hits)


def test_default_get_detector_catches_a_planted_copy():
    planted = 'def f(spec):\n    return spec.get("vocabulary", "auto"), spec.get("vocabulary", "other")\n'
    assert _default_gets(planted, "benchmarks/x.py", _schema_defaults()) == [
        "benchmarks/x.py:2: .get('vocabulary', 'auto')"]
