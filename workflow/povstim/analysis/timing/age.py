"""Age-equivalent scores from a suite's normative data (BaBIEs §4.2).

Standardised tests for children (BVL, TROG-2, TCGB-2, Peabody) come with
tables that map a raw score (items correct) to the age at which that score is
typical. A suite folder may ship such a table as ``norms.json`` or
``norms.csv``; the analysis then reports each model's raw score and its age
equivalent, with the age range the table covers.

``norms.json``::

    {"tests": [
      {"test": "comprehension",                       # a name for the table
       "select": {"category": ["Sentence comprehension"]},   # optional: which items count
       "rows": [{"raw": 10, "age_months": 48},        # raw scores strictly increasing,
                {"raw": 14, "age_months": 54}, ...]}  # ages never decreasing
    ]}

``norms.csv``: columns ``test, raw, age_months`` and optionally ``paradigm``,
``category``, ``task`` (a selection; several values separated by ``|``; the same
on every row of a test). ``select`` keys are item fields (``paradigm``,
``category``, ``task``); without it every item of the suite counts.

Lookup of raw score *r*: the row with the largest ``raw`` <= *r* gives the age
(a score between two rows earns the lower row's age: the table credits an age
only once its score is reached). Exact boundaries are inside the table: *r*
equal to the first row's raw gets the youngest age, equal to the last row's
raw the oldest. Below the first row: "< youngest" (no number: the test does not
measure below its range); above the last row: "> oldest". Ages are shown as
years;months (CHAT's and the tests' notation: 52 months = 4;4).

A table that is not monotone (raw not strictly increasing, or age decreasing)
is an error naming the file and line.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from povstim.benchmarks.norms import SELECT_KEYS, Norms, Row, format_age, read_norms  # noqa: F401 (re-exported)
from povstim.io import PovstimError


@dataclass(frozen=True)
class AgeEquivalent:
    age_months: float   # NaN outside the table
    label: str          # "4;4", "< 3;0", "> 6;11"
    bound: str          # within | below | above


def lookup(norms: Norms, raw: int) -> AgeEquivalent:
    rows = norms.rows
    if raw < rows[0].raw:
        return AgeEquivalent(math.nan, f"< {format_age(norms.youngest)}", "below")
    if raw > rows[-1].raw:
        return AgeEquivalent(math.nan, f"> {format_age(norms.oldest)}", "above")
    best = rows[0]
    for row in rows:
        if row.raw <= raw:
            best = row
        else:
            break
    return AgeEquivalent(float(best.age_months), format_age(best.age_months), "within")


def find_norms(suite_dir: str | Path) -> Path | None:
    d = Path(suite_dir)
    found = [d / n for n in ("norms.json", "norms.csv") if (d / n).exists()]
    if len(found) > 1:
        raise PovstimError(f"{d} holds both norms.json and norms.csv: keep one")
    return found[0] if found else None


def suite_name(suite_dir: str | Path) -> str:
    """The suite a folder holds: its manifest's name, else its first item's, else the folder's name."""
    d = Path(suite_dir)
    if (d / "manifest.json").exists():
        try:
            return str(json.loads((d / "manifest.json").read_text(encoding="utf-8"))["suite"])
        except (ValueError, KeyError):
            raise PovstimError(f"{d / 'manifest.json'}: not a benchmark manifest (no 'suite')") from None
    for f in sorted(d.glob("*.jsonl")):
        for line in f.read_text(encoding="utf-8").splitlines():
            if line.strip():
                try:
                    return str(json.loads(line)["suite"])
                except (ValueError, KeyError, TypeError):
                    break
    return d.name


# --------------------------------------------------------------------------- the table

AGE_COLUMNS = ["suite", "test", "arch", "condition", "size", "seed", "n_items", "raw", "age_months",
               "age_equivalent", "bound", "age_range"]


def age_table(items: pd.DataFrame, suite: str, norms: list[Norms]) -> pd.DataFrame:
    """Raw score and age equivalent per final model x normed test of ``suite``.

    ``items``: the final item scores (tidy), with ``correct`` and the selection columns.
    """
    d = items[items["suite"] == suite]
    rows = []
    for nm in norms:
        sub = d
        for key, values in nm.select.items():
            if key not in sub.columns:
                raise PovstimError(f"{nm.path}: test {nm.test!r} selects by {key!r}, which the item scores lack")
            sub = sub[sub[key].astype(str).isin(values)]
        if sub.empty:
            raise PovstimError(f"{nm.path}: test {nm.test!r} selects no item of suite {suite!r} "
                               f"(select: {nm.select})")
        for keys, g in sub.groupby(["arch", "condition", "size", "seed"], sort=True):
            raw = int(g["correct"].sum())
            eq = lookup(nm, raw)
            rows.append(dict(zip(["arch", "condition", "size", "seed"], keys), suite=suite, test=nm.test,
                             n_items=len(g), raw=raw, age_months=eq.age_months, age_equivalent=eq.label,
                             bound=eq.bound, age_range=nm.age_range))
    return pd.DataFrame(rows, columns=AGE_COLUMNS)


def caption(suite: str, norms: list[Norms]) -> str:
    ranges = "; ".join(f"{n.test}: {n.age_range}" for n in norms)
    return (f"Age-equivalent scores on {suite}: raw score (items correct of the final model) looked up in the "
            f"suite's normative table ({Path(norms[0].path).name}); age as years;months. The tables cover "
            f"{ranges}; a score below or above a table's range is reported as '< youngest' or '> oldest'.")
