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
    animate_nouns: tuple[str, ...] | None
    audit_sample: int
    seed: int
    on_malformed: str

    def __post_init__(self):
        # the user's constructions join the registry before the names are checked
        use({"constructions": self.constructions})
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


def filter_rules(config: dict) -> tuple[str, ...]:
    """What the filter stage runs on a corpus: ``filter.rules`` and every phenomenon a condition names in
    its ``filter:`` list (in that order, once each). Each condition then removes its own (dpe.tsv has one
    row per sentence and phenomenon), so one parse and one filter run serve every condition."""
    section = config.get("filter") or {}
    out = list(section.get("rules") or ["question_formation", "binding"])
    for spec in (config.get("conditions") or {}).values():
        f = spec.get("filter")
        if isinstance(f, (list, tuple)):
            out.extend(r for r in f if r not in out)
    return tuple(out)
