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

import csv
import json
import json.decoder
import json.scanner
import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..io import PovstimError

SELECT_KEYS = ("paradigm", "category", "task")


@dataclass(frozen=True)
class Row:
    raw: int
    age_months: float
    line: int


@dataclass
class Norms:
    test: str
    rows: list[Row]
    select: dict[str, list[str]] = field(default_factory=dict)
    path: str = ""

    @property
    def youngest(self) -> float:
        return self.rows[0].age_months

    @property
    def oldest(self) -> float:
        return self.rows[-1].age_months

    @property
    def age_range(self) -> str:
        return f"{format_age(self.youngest)}–{format_age(self.oldest)}"


@dataclass(frozen=True)
class AgeEquivalent:
    age_months: float   # NaN outside the table
    label: str          # "4;4", "< 3;0", "> 6;11"
    bound: str          # within | below | above


def format_age(months: float) -> str:
    """Months -> 'years;months' (52 -> '4;4')."""
    years = int(months // 12)
    rest = months - 12 * years
    return f"{years};{rest:g}"


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


# --------------------------------------------------------------------------- reading

def _check_rows(rows: list[Row], path, test: str) -> list[Row]:
    if not rows:
        raise PovstimError(f"{path}: norms table {test!r} has no rows")
    for prev, row in zip(rows, rows[1:]):
        if row.raw <= prev.raw:
            raise PovstimError(
                f"{path}, line {row.line}: norms table {test!r} is not monotone: raw score {row.raw} does not "
                f"increase over the previous row's {prev.raw} (line {prev.line}); list raw scores in increasing order"
            )
        if row.age_months < prev.age_months:
            raise PovstimError(
                f"{path}, line {row.line}: norms table {test!r} is not monotone: age {row.age_months:g} months "
                f"at raw score {row.raw} is younger than {prev.age_months:g} at raw score {prev.raw} (line {prev.line})"
            )
    return rows


def _row(raw, age, where: str, line: int) -> Row:
    try:
        raw_f = float(raw)
        age_f = float(age)
    except (TypeError, ValueError):
        raise PovstimError(f"{where}: raw and age_months must be numbers, got {raw!r} and {age!r}") from None
    if isinstance(raw, bool) or raw_f != int(raw_f) or raw_f < 0:
        raise PovstimError(f"{where}: raw score must be a non-negative integer (items correct), got {raw!r}")
    if not math.isfinite(age_f) or age_f < 0:
        raise PovstimError(f"{where}: age_months must be a non-negative number, got {age!r}")
    return Row(int(raw_f), age_f, line)


def _select(sel, where: str) -> dict[str, list[str]]:
    if sel is None:
        return {}
    if not isinstance(sel, dict):
        raise PovstimError(f"{where}: 'select' must be a mapping of {', '.join(SELECT_KEYS)} to lists of values")
    out = {}
    for k, v in sel.items():
        if k not in SELECT_KEYS:
            raise PovstimError(f"{where}: unknown select key {k!r} (known: {', '.join(SELECT_KEYS)})")
        vals = [v] if isinstance(v, str) else v
        if not isinstance(vals, list) or not vals or not all(isinstance(x, str) for x in vals):
            raise PovstimError(f"{where}: select.{k} must be a string or a list of strings")
        out[k] = list(vals)
    return out


class _LineDict(dict):
    """A JSON object that remembers the line it starts on (for errors naming the line)."""

    line = 0


def _json_with_lines(text: str):
    """json.loads, but every object is a _LineDict carrying its starting line."""
    decoder = json.JSONDecoder()

    def parse_object(s_and_end, *args, **kwargs):
        s, end = s_and_end
        obj, new_end = json.decoder.JSONObject(s_and_end, *args, **kwargs)
        out = _LineDict(obj)
        out.line = s.count("\n", 0, end) + 1
        return out, new_end

    decoder.parse_object = parse_object
    decoder.scan_once = json.scanner.py_make_scanner(decoder)  # the pure-Python scanner calls parse_object
    return decoder.decode(text)


def _read_json(path: Path) -> list[Norms]:
    try:
        data = _json_with_lines(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise PovstimError(f"{path}, line {exc.lineno}: not valid JSON ({exc.msg})") from None
    tests = data.get("tests") if isinstance(data, dict) else None
    if not isinstance(tests, list) or not tests:
        raise PovstimError(f"{path}: expected {{\"tests\": [{{\"test\": ..., \"rows\": [...]}}, ...]}}")
    out = []
    for t in tests:
        line = getattr(t, "line", 0)
        where = f"{path}, line {line}"
        if not isinstance(t, dict) or not isinstance(t.get("rows"), list):
            raise PovstimError(f"{where}: each test needs 'test' and a list of 'rows'")
        unknown = sorted(set(t) - {"test", "rows", "select", "description", "source"})
        if unknown:
            raise PovstimError(f"{where}: unknown key(s) {', '.join(unknown)} in a norms test")
        name = str(t.get("test", "total"))
        rows = []
        for r in t["rows"]:
            rl = getattr(r, "line", line)
            if not isinstance(r, dict) or "raw" not in r or "age_months" not in r:
                raise PovstimError(f"{path}, line {rl}: a norms row needs 'raw' and 'age_months'")
            rows.append(_row(r["raw"], r["age_months"], f"{path}, line {rl}", rl))
        out.append(Norms(name, _check_rows(rows, path, name), _select(t.get("select"), where), str(path)))
    return out


def _read_csv(path: Path) -> list[Norms]:
    try:
        fh = open(path, encoding="utf-8", newline="")
    except OSError as exc:
        raise PovstimError(f"cannot read {path}: {exc.strerror}") from None
    with fh:
        reader = csv.DictReader(fh)
        cols = reader.fieldnames or []
        missing = [c for c in ("raw", "age_months") if c not in cols]
        if missing:
            raise PovstimError(f"{path}, line 1: norms CSV lacks column(s) {', '.join(missing)} "
                               "(needs raw, age_months; optional test, paradigm, category, task)")
        tests: dict[str, tuple[list[Row], dict, int]] = {}
        for line, rec in enumerate(reader, 2):
            where = f"{path}, line {line}"
            name = (rec.get("test") or "total").strip()
            sel = {k: rec[k].split("|") for k in SELECT_KEYS if rec.get(k)}
            rows, first_sel, first_line = tests.setdefault(name, ([], sel, line))
            if sel != first_sel:
                raise PovstimError(f"{where}: the selection of test {name!r} differs from its first row (line "
                                   f"{first_line}); every row of a test must select the same items")
            rows.append(_row(rec["raw"], rec["age_months"], where, line))
    if not tests:
        raise PovstimError(f"{path}: norms CSV has no rows")
    return [Norms(name, _check_rows(rows, path, name), _select(sel, str(path)), str(path))
            for name, (rows, sel, _) in tests.items()]


def read_norms(path: str | Path) -> list[Norms]:
    path = Path(path)
    if not path.exists():
        raise PovstimError(f"{path}: no such norms file")
    if path.suffix == ".json":
        norms = _read_json(path)
    elif path.suffix == ".csv":
        norms = _read_csv(path)
    else:
        raise PovstimError(f"{path}: norms must be norms.json or norms.csv")
    names = [n.test for n in norms]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise PovstimError(f"{path}: test {dup[0]!r} is defined twice")
    return norms


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
