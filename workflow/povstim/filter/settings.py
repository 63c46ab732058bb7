"""The ``filter:`` section as one frozen settings object (defaults: workflow/schemas/config/filter.schema.yaml)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from .. import dpe
from ..settings import build


@dataclass(frozen=True)
class FilterSettings:
    mode: str
    rules: tuple[str, ...]
    animate_nouns: tuple[str, ...] | None
    audit_sample: int
    seed: int
    on_malformed: str

    def __post_init__(self):
        dpe.check_rules(self.rules)

    @cached_property
    def context(self) -> dpe.Context:
        return dpe.Context.with_nouns(self.animate_nouns or ())

    def find(self, sent, mode: str | None = None) -> list[dpe.Match]:
        """The phenomena whose rule (this mode, or ``mode``) fires on ``sent``."""
        return dpe.find_dpe(sent, mode or self.mode, self.rules, self.context)


def filter_settings(given: dict | None = None, where: str = "--params", **overrides) -> FilterSettings:
    return build(FilterSettings, "filter", given, where=where, **overrides)
