"""The config schema: loading it and describing its validation errors.

The schema is split by top-level section: ``workflow/schemas/config.schema.yaml``
lists the sections, and ``workflow/schemas/config/<section>.schema.yaml`` holds
each one, so the stage that owns a section owns its schema. Every object is
closed (``additionalProperties: false``), so a misspelled key is an error that
names it instead of a silently ignored setting. This module is light (jsonschema
and PyYAML only): every stage's command line loads it to build its settings.
"""

from __future__ import annotations

import copy
import difflib
import functools
from pathlib import Path

import jsonschema
import yaml

# LibYAML's loader when present: every stage command loads the schema, so its parse time is per job.
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

SCHEMA_DIR = Path(__file__).resolve().parents[1] / "schemas"
# results/figures indexes the last run's figures (rules/analysis.smk), so no experiment may be called that.
RESERVED_EXPERIMENTS = ("figures",)


@functools.lru_cache(maxsize=1)
def _load_schema() -> dict:
    root = yaml.load((SCHEMA_DIR / "config.schema.yaml").read_text(), Loader=_Loader)
    for section in list(root.get("properties", {})):
        part = SCHEMA_DIR / "config" / f"{section}.schema.yaml"
        if part.exists():
            listed = root["properties"][section] or {}
            root["properties"][section] = yaml.load(part.read_text(), Loader=_Loader)
            if "default" in listed:  # optional sections: config.schema.yaml says `default: {}`
                root["properties"][section]["default"] = listed["default"]
    # An arch's `training:` block overrides the training section key by key: it
    # takes the training schema's keys and checks, but none of its defaults
    # (a filled-in default would silently override the experiment's value).
    arch = root["properties"].get("archs", {}).get("additionalProperties", {})
    if isinstance(arch, dict) and "training" in arch.get("properties", {}):
        arch["properties"]["training"] = _without_defaults(root["properties"]["training"])
    # Likewise a suite's `scoring:` block overrides the scoring section for that suite.
    suite = root["properties"].get("benchmarks", {}).get("additionalProperties", {})
    if isinstance(suite, dict) and "scoring" in suite.get("properties", {}) and "scoring" in root["properties"]:
        suite["properties"]["scoring"] = {**_without_defaults(root["properties"]["scoring"]),
                                          "description": suite["properties"]["scoring"].get("description", "")}
    return root


def load_schema() -> dict:
    """The whole config schema (sections merged in), as a fresh copy."""
    return copy.deepcopy(_load_schema())


def _without_defaults(schema):
    if isinstance(schema, dict):
        return {k: _without_defaults(v) for k, v in schema.items() if k != "default"}
    if isinstance(schema, list):
        return [_without_defaults(v) for v in schema]
    return schema


def _path_str(path) -> str:
    return ".".join(str(p) for p in path) or "<top level>"


def _subschema_at(schema: dict, path) -> dict:
    """Follow an error's path through properties/patternProperties/additionalProperties."""
    node = schema
    for key in path:
        if not isinstance(node, dict):
            return {}
        props = node.get("properties", {})
        if isinstance(key, str) and key in props:
            node = props[key]
        elif isinstance(node.get("additionalProperties"), dict):
            node = node["additionalProperties"]
        elif "patternProperties" in node:
            node = next(iter(node["patternProperties"].values()))
        elif "items" in node:
            node = node["items"]
        else:
            return {}
    return node if isinstance(node, dict) else {}


def _describe(error: jsonschema.ValidationError, schema: dict, source: str, locate=None) -> str:
    def at(path) -> str:  # "file:line" of the key when the caller can find it in its file(s), else the source
        return (locate(tuple(path)) if locate else None) or source

    where = _path_str(error.absolute_path)
    if error.validator == "additionalProperties":
        # The schema that closed the object (it may be an if/then branch) lists what is allowed.
        allowed = sorted(error.schema.get("properties") or _subschema_at(schema, error.absolute_path).get("properties", {}))
        extra = [k for k in error.instance if k not in allowed] if isinstance(error.instance, dict) else []
        msgs = []
        for key in extra:
            full = f"{where}.{key}" if error.absolute_path else key
            hint = difflib.get_close_matches(key, allowed, n=1)
            tip = f" (did you mean '{hint[0]}'?)" if hint else ""
            msgs.append(f"{at([*error.absolute_path, key])}: unknown config key '{full}'{tip}; allowed here: "
                        f"{', '.join(allowed)}")
        if msgs:
            return "; ".join(msgs)
    return f"{at(error.absolute_path)}: config key '{where}': {error.message}"


def describe_errors(errors, schema: dict, source: str, locate=None) -> str:
    """One message naming each bad key (at most five), shallowest first; ``locate(path)`` gives a key's
    "file:line" (None where it cannot), which then replaces ``source``."""
    errors = sorted(errors, key=lambda e: (len(e.absolute_path), str(e.absolute_path)))
    return "\n".join(_describe(e, schema, source, locate) for e in errors[:5])


