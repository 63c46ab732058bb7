"""Task kinds beyond minimal pairs (BaBIEs, Capone et al. 2024): the item schema and suite I/O.

Every benchmark item has ``suite, paradigm, category, item_id`` and a ``task``
(``minimal_pair`` when absent, so every existing suite stays valid). Per kind:

``minimal_pair``   ``good, bad`` — acceptability judgement (unchanged); optionally a critical
                   ``region`` of each sentence, ``{good: [start, end], bad: [start, end], unit:
                   chars|words}`` (:func:`check_region`), for ``scoring.metric: region``.
``multiple_choice`` ``stimulus, connective, options, answer`` — lexical, sentence and
                   idiom comprehension: each option is scored as the string
                   ``stimulus + " " + connective + " " + option`` (Italian *cioè*,
                   English *that is*), the model picks the lowest perplexity;
                   ``answer`` is one of ``options`` (at least two, all distinct).
``completion``     ``prompt, answers`` — sentence completion: the model continues
                   ``prompt``; ``answers`` lists the accepted completions (at least one).

``paradigm`` is the construction a test groups its items by (BaBIEs Tables 5-8:
"Reversible passive", "Noun"), ``category`` the task ("Sentence comprehension").
Items may carry more fields (``test``, ``source``, ...); they are kept.

A suite folder may also ship normative data, ``norms.json`` or ``norms.csv``
(raw score -> age, :mod:`povstim.analysis.timing.age`; read by :mod:`povstim.benchmarks.norms`), copied along by the importer.
"""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path

from .. import languages
from ..io import PovstimError, atomic_write, write_json
from .norms import read_norms

TASKS = ("minimal_pair", "multiple_choice", "completion")
DEFAULT_TASK = "minimal_pair"
COMMON = ("suite", "paradigm", "category", "item_id")
FIELDS = {
    "minimal_pair": ("good", "bad"),
    "multiple_choice": ("stimulus", "connective", "options", "answer"),
    "completion": ("prompt", "answers"),
}
NORMS_FILES = ("norms.json", "norms.csv")
# the fields of a minimal pair (validate_record)
REQUIRED = ("suite", "paradigm", "category", "item_id", "good", "bad")


# a minimal pair's optional critical region (scoring.metric: region, docs/evaluation.md)
REGION_UNITS = ("chars", "words")
_WORD_RE = re.compile(r"\S+")


def word_spans(sentence: str) -> list[tuple[int, int]]:
    """Character spans ``[start, end)`` of the sentence's whitespace-delimited words."""
    return [m.span() for m in _WORD_RE.finditer(sentence)]


def check_region(item: dict, place: str) -> None:
    """An item's optional ``region``: ``{good: [start, end], bad: [start, end], unit: chars|words}`` inside its
    sentences; errors name ``place`` (the file and line, or :func:`where`)."""
    region = item.get("region")
    if region is None:
        return
    if not isinstance(region, dict):
        raise PovstimError(f"{place}: 'region' must be an object {{good: [start, end], bad: [start, end], unit: "
                           f"chars|words}}, not {region!r}")
    unit = region.get("unit", "chars")
    if unit not in REGION_UNITS:
        raise PovstimError(f"{place}: region unit {unit!r} is not one of {', '.join(REGION_UNITS)}")
    unknown = sorted(set(region) - {"good", "bad", "unit"})
    if unknown:
        raise PovstimError(f"{place}: region has unknown key(s) {', '.join(unknown)} (keys: good, bad, unit)")
    for side in ("good", "bad"):
        span = region.get(side)
        if not (isinstance(span, list) and len(span) == 2 and all(isinstance(v, int) and not isinstance(v, bool)
                                                                  for v in span)):
            raise PovstimError(f"{place}: region.{side} must be [start, end] (two integers, end excluded), "
                               f"not {span!r}")
        size = len(item[side]) if unit == "chars" else len(word_spans(item[side]))
        a, b = span
        if not 0 <= a < b <= size:
            what = "characters" if unit == "chars" else "words"
            raise PovstimError(f"{place}: region.{side} [{a}, {b}) is outside the {side} sentence "
                               f"({size} {what}: {item[side]!r}); a region is [start, end) with 0 <= start < end "
                               f"<= {size}")


def task_of(item: dict) -> str:
    return item.get("task", DEFAULT_TASK)


def _text(obj: dict, key: str, where: str, empty_ok: bool = False) -> str:
    value = obj[key]
    if not isinstance(value, str) or (not empty_ok and not value.strip()):
        raise PovstimError(f"{where}: field '{key}' must be a {'' if empty_ok else 'non-empty '}string, got {value!r}")
    return value


def _texts(obj: dict, key: str, where: str) -> list[str]:
    value = obj[key]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise PovstimError(f"{where}: field '{key}' must be a list of non-empty strings, got {value!r}")
    return value


def validate_item(obj, where: str) -> dict:
    """Check one item of a task kind other than ``minimal_pair`` (those go through suite.py unchanged).

    Errors name ``where`` (the file and line) and what is wrong.
    """
    if not isinstance(obj, dict):
        raise PovstimError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    task = task_of(obj)
    if task not in TASKS:
        raise PovstimError(f"{where}: unknown task {task!r} (known: {', '.join(TASKS)})")
    need = COMMON + FIELDS[task]
    missing = [k for k in need if k not in obj]
    if missing:
        raise PovstimError(f"{where}: a {task} item lacks field(s) {', '.join(missing)} (needs {', '.join(need)})")
    if task == "multiple_choice":
        _text(obj, "stimulus", where)
        _text(obj, "connective", where, empty_ok=True)
        options = _texts(obj, "options", where)
        if len(options) < 2:
            raise PovstimError(f"{where}: a multiple_choice item needs at least two options, got {len(options)}")
        dup = [o for o, c in Counter(options).items() if c > 1]
        if dup:
            raise PovstimError(f"{where}: option {dup[0]!r} occurs twice (options must be distinct)")
        answer = obj["answer"]
        if answer not in options:
            raise PovstimError(f"{where}: answer {answer!r} is not one of the options {options}")
    elif task == "completion":
        _text(obj, "prompt", where)
        answers = obj["answers"]
        if isinstance(answers, list) and not answers:
            raise PovstimError(f"{where}: a completion item needs at least one accepted answer in 'answers'")
        _texts(obj, "answers", where)
    obj["item_id"] = str(obj["item_id"])
    return obj


def validate_record(obj, where: str) -> dict:
    if not isinstance(obj, dict):
        raise PovstimError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    if obj.get("task", "minimal_pair") != "minimal_pair":
        # Other task kinds (multiple choice, completion)
        return validate_item(obj, where)
    missing = [k for k in REQUIRED if k not in obj]
    if missing:
        raise PovstimError(f"{where}: missing field(s) {', '.join(missing)} (need {', '.join(REQUIRED)})")
    for k in ("good", "bad"):
        if not isinstance(obj[k], str) or not obj[k].strip():
            raise PovstimError(f"{where}: field '{k}' must be a non-empty string")
    obj["item_id"] = str(obj["item_id"])
    if isinstance(obj.get("region"), dict):  # a critical region (any other 'region' field is kept as it was)
        check_region(obj, f"{where} (item {obj['item_id']!r})")
    return obj


def iter_jsonl(path: str | Path):
    """(line number, object) for each non-empty line of a JSONL file; errors name the file and line."""
    path = Path(path)
    try:
        fh = open(path, encoding="utf-8")
    except OSError as exc:
        raise PovstimError(f"cannot read suite file {path}: {exc.strerror}") from None
    with fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                yield n, json.loads(line)
            except json.JSONDecodeError as exc:
                # the whole reason and where on the line: exc.msg alone is clipped ("Invalid control character at")
                at = line[max(0, exc.pos - 30):exc.pos + 30].rstrip("\n")
                raise PovstimError(f"{path}:{n}:{exc.colno}: not valid JSON: {exc.msg} column {exc.colno} of line "
                                   f"{n} (near {at!r})") from None


def safe_file_name(paradigm: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9_.\-]+", paradigm):
        raise PovstimError(
            f"paradigm name {paradigm!r} cannot be a file name: use letters, digits, '_', '-' or '.'"
        )
    return f"{paradigm}.jsonl"


# --------------------------------------------------------------------------- import / write

def import_suite(path: str | Path, suite: str, connective: str | None = None) -> tuple[list[dict], list[Path]]:
    """Items of a benchmark-schema suite (a folder of ``*.jsonl`` or one file), any task kinds.

    ``suite`` replaces each item's ``suite`` field (the config's name wins);
    ``connective`` fills multiple-choice items that have none (a suite-wide
    default, BaBIEs' *cioè*). Returns (items, norms files found next to them).
    """

    path = Path(path)
    if path.is_dir():
        files = sorted(path.glob("*.jsonl"))
        if not files:
            raise PovstimError(f"suite folder {path} holds no .jsonl files")
        norms_dir = path
    elif path.exists():
        files, norms_dir = [path], None  # a single file is a suite without norms
    else:
        raise PovstimError(f"suite {path} does not exist")
    items = []
    for f in files:
        for n, obj in iter_jsonl(f):
            if isinstance(obj, dict):
                obj["suite"] = suite
                if task_of(obj) == "multiple_choice" and "connective" not in obj and connective is not None:
                    obj["connective"] = connective
            items.append(validate_record(obj, f"{f}, line {n}"))
    if not items:
        raise PovstimError(f"suite {path} holds no items")
    seen = Counter((r["paradigm"], r["item_id"]) for r in items)
    dup = [k for k, c in seen.items() if c > 1]
    if dup:
        raise PovstimError(f"suite {path}: item_id {dup[0][1]!r} occurs more than once in paradigm {dup[0][0]!r}")
    norms = [norms_dir / n for n in NORMS_FILES if norms_dir is not None and (norms_dir / n).exists()]
    if len(norms) > 1:
        raise PovstimError(f"suite folder {path} holds both norms.json and norms.csv: keep one")
    return items, norms


def import_items(suite: str, spec: dict) -> tuple[list[dict], list[Path], dict]:
    """``benchmarks.<suite>`` of kind ``suite`` -> (items, norms files, manifest params)."""
    known = {"kind", "path", "connective", "language"}
    unknown = sorted(set(spec) - known)
    if unknown:
        raise PovstimError(f"benchmarks.{suite}: unknown key(s) {', '.join(unknown)} for a suite of kind 'suite'")
    if "path" not in spec:
        raise PovstimError(f"benchmarks.{suite}: a suite of kind 'suite' needs 'path' (a folder, a .jsonl or builtin:NAME)")
    connective = spec.get("connective")
    if connective is None and spec.get("language"):
        connective = languages.get(spec["language"], f"benchmarks.{suite}.language").connective
    items, norms = import_suite(resolve_path(spec["path"]), suite, connective)
    return items, norms, dict(spec)


def write_items(out_dir: str | Path, items: list[dict], params: dict, norms: list[Path] = ()) -> dict:
    """One ``{paradigm}.jsonl`` per paradigm (items in input order), the norms file, ``manifest.json``."""

    out_dir = Path(out_dir)
    if not items:
        raise PovstimError("the suite has no items: nothing to write")
    by_paradigm: dict[str, list[dict]] = {}
    for it in items:
        by_paradigm.setdefault(it["paradigm"], []).append(it)
    out_dir.mkdir(parents=True, exist_ok=True)
    for paradigm in sorted(by_paradigm):
        with atomic_write(out_dir / safe_file_name(paradigm)) as fh:
            for it in by_paradigm[paradigm]:
                fh.write(json.dumps(it, ensure_ascii=False) + "\n")
    for f in norms:
        # Validate before copying: a bad norms table fails the benchmark job, not the analysis.
        read_norms(f)
        shutil.copyfile(f, out_dir / f.name)
    categories: dict[str, str] = {}
    for it in items:
        categories.setdefault(it["paradigm"], it["category"])
    manifest = {
        "suite": items[0]["suite"],
        "n_items": len(items),
        "n_pairs": sum(task_of(it) == "minimal_pair" for it in items),
        "tasks": dict(sorted(Counter(task_of(it) for it in items).items())),
        "paradigms": {p: len(v) for p, v in sorted(by_paradigm.items())},
        "categories": {k: categories[k] for k in sorted(categories)},
        "norms": [f.name for f in norms],
        "params": params,
    }
    write_json(out_dir / "manifest.json", manifest)
    return manifest


def builtin_suite(name: str) -> Path:
    """An example suite shipped with the package: ``it`` or ``en`` (original items written for povstim)."""
    root = Path(__file__).resolve().parent / "suites"
    path = root / name
    if not path.is_dir():
        known = sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
        raise PovstimError(f"no built-in suite {name!r} (built in: {', '.join(known)})")
    return path


def resolve_path(path: str) -> Path:
    """A suite path from a config: ``builtin:NAME`` names a shipped example suite, anything else a path."""
    if str(path).startswith("builtin:"):
        return builtin_suite(str(path)[len("builtin:"):])
    return Path(path).expanduser()
