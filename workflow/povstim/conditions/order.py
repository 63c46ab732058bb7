"""The order conditions appear in, in every table and figure: POSH's (Tables 3 and 8), others alphabetically.

A shared fact of the analysis tables and the figure style (which the filter's figure uses too), kept here,
below both, with nothing heavy to import.
"""

from __future__ import annotations

# POSH's order in Tables 3 and 8; other conditions follow alphabetically.
KNOWN_CONDITIONS = ["baby-f", "baby", "wiki"]


def condition_order(conditions) -> list[str]:
    conds = list(dict.fromkeys(str(c) for c in conditions))
    return [c for c in KNOWN_CONDITIONS if c in conds] + sorted(c for c in conds if c not in KNOWN_CONDITIONS)
