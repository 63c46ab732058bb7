"""Settings of the ``probes`` config section, and its cross-field checks.

The schema (``workflow/schemas/config/probes.schema.yaml``) holds every default;
these frozen dataclasses have exactly its properties as fields and no defaults
of their own. :func:`check_probes` runs at config load time
(``povstim.config.check_references``), so a bad task name, an inoculation rate
that gives a fractional number of examples, or a task whose data would be
empty stops the run before any job starts, with the key named.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from .. import settings as S
from ..io import PovstimError


def _frozen(value):
    return tuple(value) if isinstance(value, list) else value


@dataclass(frozen=True)
class Items:
    train: int
    test: int
    control_train: int
    control_test: int


@dataclass(frozen=True)
class Grid:
    lr: tuple
    batch_size: tuple
    epochs: tuple


@dataclass(frozen=True)
class Gate:
    metric: str
    threshold: float


@dataclass(frozen=True)
class MsgsSettings:
    tasks: object  # "all" or a tuple of task names
    inoculation: tuple
    items: Items
    grid: Grid
    restarts: int
    warmup_ratio: float
    weight_decay: float
    adam_beta1: float
    adam_beta2: float
    adam_eps: float
    grad_clip: float
    gate: Gate
    checkpoints: bool
    seed: int
    eval_batch_size: int
    device: str
    threads: int

    @classmethod
    def from_section(cls, section: dict) -> "MsgsSettings":
        """From a validated, defaulted ``probes.msgs`` mapping."""
        nested = {"items": Items, "grid": Grid, "gate": Gate}
        values = {}
        for f in dataclasses.fields(cls):
            v = section[f.name]
            if f.name in nested:
                v = nested[f.name](**{k: _frozen(x) for k, x in v.items()})
            values[f.name] = _frozen(v)
        return cls(**values)


@dataclass(frozen=True)
class ProbesSettings:
    msgs: object  # MsgsSettings, or None when the config has no probes.msgs

    def __post_init__(self):
        if isinstance(self.msgs, dict):
            object.__setattr__(self, "msgs", MsgsSettings.from_section(self.msgs))


def msgs_settings(given: dict | None, where: str = "--params", **overrides) -> MsgsSettings:
    """The ``probes.msgs`` settings from a (maybe partial) msgs section, e.g. a rule's ``--params``."""
    msgs = dict(given or {})
    msgs.update({k: v for k, v in overrides.items() if v is not None})
    built = S.build(ProbesSettings, "probes", {"msgs": msgs}, where=where)
    check_msgs(S.section("probes", {"msgs": msgs}, where)["msgs"], where)
    return built.msgs


def check_probes(config: dict, source: str = "config") -> None:
    """Cross-field checks of a validated config's ``probes`` section (called by povstim.config)."""
    msgs = (config.get("probes") or {}).get("msgs")
    if msgs is not None:
        check_msgs(msgs, source)


def check_msgs(msgs: dict, source: str) -> None:
    # deferred: the MSGS generator and its lexicon load only for a config with probes (config.validate
    # runs this at every DAG build and `povstim check`)
    from .msgs.features import parse_task, resolve_tasks
    from .msgs.generate import DOMAINS, GenerationError, compatible, inoculation_count

    tasks = msgs["tasks"]
    if tasks != "all":
        seen = set()
        for i, name in enumerate(tasks):
            try:
                parse_task(name)
            except ValueError as exc:
                raise PovstimError(f"{source}: probes.msgs.tasks[{i}] ({name!r}) names an {exc}") from None
            if name in seen:
                raise PovstimError(f"{source}: probes.msgs.tasks[{i}]: task {name!r} is listed twice")
            seen.add(name)
    n_train = msgs["items"]["train"]
    for i, rate in enumerate(msgs["inoculation"]):
        try:
            inoculation_count(rate, n_train)
        except ValueError as exc:
            raise PovstimError(
                f"{source}: probes.msgs.inoculation[{i}] = {rate}: {exc}, so the inoculated training set cannot "
                f"have exactly this rate; choose probes.msgs.items.train (now {n_train}) so that every rate × "
                f"train is a whole number (e.g. 1000 or 10000 for 0.001/0.003/0.01)"
            ) from None
    for task in resolve_tasks(tasks):
        for domain in DOMAINS:
            try:
                compatible(task, domain)
            except GenerationError as exc:
                raise PovstimError(f"{source}: probes.msgs.tasks: {exc}") from None
