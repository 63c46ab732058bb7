"""The ``filter:`` section as one frozen settings object (defaults: workflow/schemas/config/filter.schema.yaml)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from .. import dpe
from ..constructions.library import use, warn_untargeted
from ..settings import build


@dataclass(frozen=True)
class FilterSettings:
    mode: str
    rules: tuple[str, ...]
    constructions: tuple | str
    blimp_vocabulary: str | None
    animate_nouns: tuple[str, ...] | None
    audit_sample: int
    seed: int
    on_malformed: str

    def __post_init__(self):
        # the user's constructions join the registry before the names are checked
        use({"constructions": self.constructions, "blimp_vocabulary": self.blimp_vocabulary})
        dpe.check_rules(self.rules)
        warn_untargeted(self.rules)

    @cached_property
    def context(self) -> dpe.Context:
        return dpe.Context.with_nouns(self.animate_nouns or ())

    def find(self, sent, mode: str | None = None) -> list[dpe.Match]:
        """The phenomena whose rule (this mode, or ``mode``) fires on ``sent``."""
        return dpe.find_dpe(sent, mode or self.mode, self.rules, self.context)


def filter_settings(given: dict | None = None, where: str = "--params", **overrides) -> FilterSettings:
    return build(FilterSettings, "filter", given, where=where, **overrides)


def condition_filter(spec: dict, rules) -> tuple[str, ...] | None:
    """The phenomena a condition removes: every one of ``rules`` (``filter: true``), the ones it names
    (``filter: [aann, passive]``), or None (unfiltered)."""
    f = spec.get("filter")
    if isinstance(f, (list, tuple)):
        return tuple(f)
    return tuple(rules) if f else None


def removal_rules(config: dict) -> tuple[str, ...]:
    """What a condition that removes "everything" removes (``filter: true``, ``remove`` with
    ``constructions: true``): ``filter.rules`` and every phenomenon a condition names in its ``filter:``
    list (in that order, once each)."""
    section = config.get("filter") or {}
    out = list(section.get("rules") or ["question_formation", "binding"])
    for spec in (config.get("conditions") or {}).values():
        f = spec.get("filter")
        if isinstance(f, (list, tuple)):
            out.extend(r for r in f if r not in out)
    return tuple(out)


def filter_rules(config: dict) -> tuple[str, ...]:
    """What the parse and filter stages run on a corpus: :func:`removal_rules`, then every construction a
    condition's corpus operations or dose series name (remove, reinsert, add, replace), so a
    construction named only there need not be listed in ``filter.rules`` too. Each condition then removes
    its own (dpe.tsv has one row per sentence and phenomenon), so one parse and one filter run serve every
    condition; :func:`condition_phenomena` keeps ``filter: true`` to :func:`removal_rules`."""
    out = list(removal_rules(config))
    for spec in (config.get("conditions") or {}).values():
        out.extend(c for c in _named(spec) if c not in out)
    return tuple(out)


def _named(spec: dict) -> list[str]:
    """The constructions a condition's operations and dose series name (``remove: true`` names none beyond
    :func:`removal_rules`). Read from the spec here rather than through ``conditions.operations``, so that the
    filter stage's code hash (its imports) does not hold the operations and their variants."""
    out: list[str] = []
    for o in spec.get("operations") or []:
        if o.get("op") == "remove" and isinstance(o.get("constructions"), list):
            out += o["constructions"]
        elif o.get("op") == "reinsert":
            out += list(o.get("rates") or {})
        elif o.get("op") in ("add", "replace") and o.get("construction"):
            out.append(o["construction"])
    if isinstance(spec.get("dose"), dict) and spec["dose"].get("construction"):  # before expand_dose
        out.append(spec["dose"]["construction"])
    return out


def condition_phenomena(config: dict, spec: dict) -> tuple[str, ...] | None:
    """The phenomena an old-style (``filter:``) condition removes from dpe.tsv when that is not every row:
    its ``filter:`` list, or, for ``filter: true`` when operations made the filter run more than
    :func:`removal_rules`, those rules; None: every row (the condition's ``--phenomena``)."""
    f = spec.get("filter")
    if isinstance(f, (list, tuple)):
        return tuple(f)
    if f and not spec.get("operations"):
        rules = removal_rules(config)
        return rules if rules != filter_rules(config) else None
    return None
