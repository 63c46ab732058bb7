"""Loading and validating an experiment config.

The schema is split by top-level section: ``workflow/schemas/config.schema.yaml``
lists the sections, and ``workflow/schemas/config/<section>.schema.yaml`` holds
each one, so the stage that owns a section owns its schema. Every object is
closed (``additionalProperties: false``), so a misspelled key is an error that
names it instead of a silently ignored setting.
"""

from __future__ import annotations

import copy
import difflib
import functools
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from .io import PovstimError

SCHEMA_DIR = Path(__file__).resolve().parents[1] / "schemas"


@functools.lru_cache(maxsize=1)
def _load_schema() -> dict:
    root = yaml.safe_load((SCHEMA_DIR / "config.schema.yaml").read_text())
    for section in list(root.get("properties", {})):
        part = SCHEMA_DIR / "config" / f"{section}.schema.yaml"
        if part.exists():
            listed = root["properties"][section] or {}
            root["properties"][section] = yaml.safe_load(part.read_text())
            if "default" in listed:  # optional sections: config.schema.yaml says `default: {}`
                root["properties"][section]["default"] = listed["default"]
    # An arch's `training:` block overrides the training section key by key: it
    # takes the training schema's keys and checks, but none of its defaults
    # (a filled-in default would silently override the experiment's value).
    arch = root["properties"].get("archs", {}).get("additionalProperties", {})
    if isinstance(arch, dict) and "training" in arch.get("properties", {}):
        arch["properties"]["training"] = _without_defaults(root["properties"]["training"])
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


def _describe(error: jsonschema.ValidationError, schema: dict, source: str) -> str:
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
            msgs.append(f"unknown config key '{full}'{tip}; allowed here: {', '.join(allowed)}")
        if msgs:
            return f"{source}: " + "; ".join(msgs)
    return f"{source}: config key '{where}': {error.message}"


def describe_errors(errors, schema: dict, source: str) -> str:
    """One message naming each bad key (at most five), shallowest first."""
    errors = sorted(errors, key=lambda e: (len(e.absolute_path), str(e.absolute_path)))
    return "\n".join(_describe(e, schema, source) for e in errors[:5])


def validate(config: dict, source: str = "config") -> dict:
    """Validate the config and fill in the schema's defaults (in place); raise PovstimError naming a bad key.

    After this, every section and key that has a default in the schema is present:
    the schema is the only place a default is written (see povstim.settings).
    """
    from .settings import validator

    schema = load_schema()
    errors = list(validator(schema, fill=True).iter_errors(config))
    if errors:
        raise PovstimError(describe_errors(errors, schema, source))
    check_references(config, source)
    return config


def check_references(config: dict, source: str = "config") -> None:
    """Cross-section checks a JSON schema cannot express."""
    sources = config.get("sources", {})
    corpora = config.get("corpora", {})
    for name, corpus in corpora.items():
        for src in corpus.get("mixture", {}):
            if src not in sources:
                raise PovstimError(
                    f"{source}: corpora.{name}.mixture names source '{src}', which is not under sources "
                    f"(known: {', '.join(sorted(sources))})"
                )
    sizes = [str(s) for s in config.get("sizes", [])]
    for name, corpus in corpora.items():
        for src, share in corpus.get("mixture", {}).items():
            if isinstance(share, dict):
                for size in share:
                    if str(size) not in sizes:
                        raise PovstimError(
                            f"{source}: corpora.{name}.mixture.{src} names size '{size}', which is not in sizes"
                        )
    from . import plan  # late: plan reads a validated config

    for name in corpora:
        for size in sizes:
            try:
                plan.mixture(config, name, size)
            except PovstimError as exc:
                raise PovstimError(f"{source}: {exc}") from None
    for name, cond in config.get("conditions", {}).items():
        if cond["from"] not in corpora:
            raise PovstimError(
                f"{source}: conditions.{name}.from is '{cond['from']}', which is not under corpora "
                f"(known: {', '.join(sorted(corpora))})"
            )
    from . import families
    from .train.params import check_training, merged_training

    known_archs = set(config.get("archs", {}))
    if "training" in config:
        check_training(config["training"], "training")
    for name, arch in config.get("archs", {}).items():
        try:  # cross-field checks (n_embd divisible by n_head, ...) before any job runs
            families.resolve_arch(arch, f"archs.{name}")
            check_training(merged_training(config.get("training"), arch), f"archs.{name}.training")
        except PovstimError as exc:
            raise PovstimError(f"{source}: {exc}") from None
        for size in arch.get("sizes", []) or []:
            if str(size) not in [str(s) for s in config.get("sizes", [])]:
                raise PovstimError(f"{source}: archs.{name}.sizes names size '{size}', which is not in sizes")
    for name, cond in config.get("conditions", {}).items():
        for size in cond.get("sizes", []) or []:
            if str(size) not in [str(s) for s in config.get("sizes", [])]:
                raise PovstimError(f"{source}: conditions.{name}.sizes names size '{size}', which is not in sizes")
    if not known_archs:
        raise PovstimError(f"{source}: archs is empty: name at least one architecture")
    from . import biases

    biases.check_config(config, source)  # Exp. 3 bias blocks: unknown bias, r, Dyck k, TPT parses


def load(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    try:
        config = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise PovstimError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(config, dict):
        raise PovstimError(f"{path}: expected a mapping of config keys at the top level")
    return validate(config, source=str(path))
