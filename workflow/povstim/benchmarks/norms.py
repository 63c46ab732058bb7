"""A suite's normative data, ``norms.json`` or ``norms.csv`` (the format: :mod:`povstim.analysis.timing.age`): reading
and checking it.

It sits with the benchmarks, below the analysis that looks scores up in it, because the benchmark job validates
a suite's norms before copying them along (``benchmarks.tasks.write_items``): a bad table fails that job, not
the analysis.
"""

from __future__ import annotations

import csv
import json
import json.decoder
import json.scanner
import math
from dataclasses import dataclass, field
from pathlib import Path

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


def format_age(months: float) -> str:
    """Months -> 'years;months' (52 -> '4;4')."""
    years = int(months // 12)
    rest = months - 12 * years
    return f"{years};{rest:g}"


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
