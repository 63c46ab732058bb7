"""One source of settings: the config schema.

Every default and every constraint of a config value is written once, in
``workflow/schemas/``. :func:`povstim.config.validate` fills the defaults of a
whole config at load time (the Snakefile's config then holds every value a rule
passes on). A stage's command line receives its section as JSON (``--params``)
— from a rule, complete; by hand, often partial — and turns it into one frozen
settings object with :func:`build`, which validates and fills the section with
the very same schema. No stage keeps a second copy of a default.

A settings class is a frozen dataclass whose fields are exactly the section's
schema properties, without defaults of their own (``tests/test_settings.py``
checks both, so a default can never exist in two places)::

    @dataclass(frozen=True)
    class ScoringSettings:
        reduction: str
        bos: bool
        ...

    settings = build(ScoringSettings, "scoring", given_json_dict, batch_size=args.batch_size)
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any, TypeVar

from .io import PovstimError

T = TypeVar("T")


def _filler(base):
    """A jsonschema validator class that also fills in ``default`` values.

    Defaults are set before the properties are validated, so a defaulted
    object (``default: {}``) gets its own properties' defaults filled too.
    """
    import jsonschema

    validate_properties = base.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for name, sub in properties.items():
                if isinstance(sub, dict) and "default" in sub and name not in instance:
                    instance[name] = copy.deepcopy(sub["default"])
        yield from validate_properties(validator, properties, instance, schema)

    return jsonschema.validators.extend(base, {"properties": set_defaults})


def validator(schema: dict, fill: bool = True):
    import jsonschema

    base = jsonschema.Draft202012Validator
    cls = _filler(base) if fill else base
    return cls(schema)


def section(name: str, given: dict | None = None, where: str = "--params") -> dict:
    """``given`` (a section, maybe partial) validated, with the schema's defaults filled in.

    Errors name the key as it is written in a config file (``scoring.batch_size``),
    prefixed by ``where`` (the flag or file the section came from).
    """
    # deferred: the schema pulls jsonschema, which a stage's --help does not need
    from .schema import describe_errors, load_schema

    if given is not None and not isinstance(given, dict):
        raise PovstimError(f"{where}: the {name} section must be a mapping, got {type(given).__name__}")
    root = load_schema()
    if name not in root.get("properties", {}):
        raise PovstimError(f"no config section {name!r} in the schema")
    # Validate {name: given} against the whole (non-required) schema, so $refs
    # resolve and error paths read like config keys.
    schema = {k: v for k, v in root.items() if k != "required"}
    doc = {name: copy.deepcopy(given) if given is not None else {}}
    errors = list(validator(schema).iter_errors(doc))
    if errors:
        raise PovstimError(describe_errors(errors, schema, where))
    return doc[name]


def field_names(cls) -> list[str]:
    return [f.name for f in dataclasses.fields(cls)]


def build(cls: type[T], name: str, given: dict | None = None, where: str = "--params", **overrides: Any) -> T:
    """A frozen ``cls`` from section ``name``: ``given`` + non-None ``overrides`` (CLI flags), validated and
    defaulted by the schema."""
    data = dict(given or {})
    data.update({k: v for k, v in overrides.items() if v is not None})
    full = section(name, _jsonable(data), where)
    fields = field_names(cls)
    extra = sorted(set(full) - set(fields))
    if extra:  # the schema allowed a key this stage does not know: a programming error, say it plainly
        raise PovstimError(f"{name}: key(s) {', '.join(extra)} are in the schema but not in {cls.__name__}")
    return cls(**{f: _frozen(full.get(f)) for f in fields})


def _jsonable(value):
    """Tuples (a settings object's lists, Python callers) as the JSON arrays the schema expects."""
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    return value


def _frozen(value):
    """Lists become tuples and mappings stay mappings: settings objects are hashable where it matters."""
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return value


def as_dict(settings) -> dict:
    """A settings object back as a plain (JSON-able) section."""
    out = {}
    for f in dataclasses.fields(settings):
        v = getattr(settings, f.name)
        out[f.name] = list(v) if isinstance(v, tuple) else v
    return out
