"""Published per-model accuracies as an analysis input (``povstim release``).

The POSH-BENCH authors release one CSV per trained model (xiulinyang/posh-bench,
``results/posh_gpt_results/results_gpt2_<arch>_<baby|wiki>_<size>[f]_<vocab>_<seed>_best.csv`` -- the
folder was ``posh_results/`` before their commit 5c4049b; either is found in a checkout --, written by
their benchmark_eval.py as ``pd.DataFrame({'best': {paradigm: accuracy}}).to_csv(...)``)::

    ,best
    island-adjunct,0.772
    island-complex-np,0.382
    ...

The model's arch, corpus, size, filtered flag and seed are in the file name (a configurable
regular expression, ``release.pattern``), the number of pairs behind each accuracy is given
(``release.items_per_paradigm``; POSH: 500), and ``n_correct = round(accuracy x items)``, as
POSH's own analysis recovers the counts. The result is the aggregated-count table the analysis
already takes (one row per model x paradigm), so Tables 3, 8 and 12 and Figures 1-2 come out of
the same functions as for our own item scores (``pipeline.counts_analysis``).

Bad input stops with an error naming the file: a name the pattern does not match, a paradigm
missing from a file, an accuracy outside [0, 1] or not a whole number of items, a model given twice.
"""

from __future__ import annotations

import fnmatch
import logging
import math
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from povstim.benchmarks.suite import POSH_CATEGORIES
from povstim.io import PovstimError, parse_size
from povstim.settings import build
from povstim.analysis.tables.tidy import normalise

log = logging.getLogger("povstim.release")


@dataclass(frozen=True)
class ReleaseSettings:
    """The ``release:`` section (defaults: workflow/schemas/config/release.schema.yaml)."""

    layout: str
    missing_checkpoints: str
    pattern: str
    glob: str
    ignore: tuple
    paradigm_column: str | None
    accuracy_column: str
    items_per_paradigm: int | dict
    paradigms: dict | None
    suite: str
    arch: str
    learners: dict


def release_settings(given: dict | None = None, where: str = "--params", **overrides) -> ReleaseSettings:
    return build(ReleaseSettings, "release", given, where=where, **overrides)


_TRUE = {"f", "true", "yes", "y", "1", "filtered"}
_FALSE = {"", "false", "no", "n", "0", "unfiltered"}


def _pattern(settings: ReleaseSettings, pattern: str | None = None, key: str = "release.pattern",
             seedless: bool = False) -> re.Pattern:
    pattern = settings.pattern if pattern is None else pattern
    try:
        rx = re.compile(pattern)
    except re.error as exc:
        raise PovstimError(f"{key} {pattern!r} is not a regular expression ({exc})") from None
    groups = set(rx.groupindex)
    missing = [g for g in ("size",) + (() if seedless else ("seed",)) if g not in groups]
    if not ({"condition", "source"} & groups):
        missing.append("condition or source")
    if missing:
        raise PovstimError(f"{key} needs the named group(s) {', '.join(missing)} "
                           f"(e.g. (?P<size>[0-9]+M)); it has {', '.join(sorted(groups)) or 'none'}")
    return rx


def release_pattern(settings: ReleaseSettings) -> re.Pattern:
    """``release.pattern``, compiled and checked (its named groups)."""
    return _pattern(settings)


def _paradigms(settings: ReleaseSettings) -> dict[str, str]:
    if settings.paradigms:
        return {normalise_paradigm(k): str(v) for k, v in settings.paradigms.items()}
    return dict(POSH_CATEGORIES)


def normalise_paradigm(name) -> str:
    """POSH's files spell paradigms with hyphens (island-adjunct); the benchmark with underscores."""
    return str(name).strip().replace("-", "_")


def _items(settings: ReleaseSettings, paradigm: str) -> int:
    n = settings.items_per_paradigm
    if isinstance(n, dict):
        norm = {normalise_paradigm(k): v for k, v in n.items()}
        if paradigm not in norm:
            raise PovstimError(f"release.items_per_paradigm gives no count for paradigm {paradigm!r}")
        return int(norm[paradigm])
    return int(n)


def model_of(path: Path, rx: re.Pattern, settings: ReleaseSettings, label: str | None = None,
             seed: int | None = None, key: str = "release.pattern") -> dict:
    """arch, condition, source, filtered, size, seed of one result file, from its name (``label``: an arch
    template over the name's groups; ``seed``: the seed of a name without one)."""
    m = rx.fullmatch(path.name)
    if m is None:
        raise PovstimError(f"{path}: file name does not match {key} {rx.pattern!r} "
                           "(skip it with release.ignore, or change the pattern)")
    g = {k: (v if v is not None else "") for k, v in m.groupdict().items()}
    flag = g.get("filtered", "").strip().lower()
    if flag not in _TRUE | _FALSE:
        raise PovstimError(f"{path}: cannot read filtered={g['filtered']!r} from the file name "
                           "(use f/true/yes/1 or nothing/false/no/0)")
    filtered = flag in _TRUE
    source = g.get("source") or g.get("condition")
    condition = g.get("condition") or (source + ("-f" if filtered else ""))
    size = g["size"]
    try:
        parse_size(size)
    except PovstimError:
        raise PovstimError(f"{path}: size {size!r} from the file name is not a word count like 10M") from None
    if "seed" in g or seed is None:
        try:
            seed = int(g["seed"])
        except ValueError:
            raise PovstimError(f"{path}: seed {g['seed']!r} from the file name is not an integer") from None
    arch = g.get("arch") or settings.arch
    if label is not None:
        try:
            arch = label.format(**g)
        except (KeyError, IndexError, ValueError) as exc:
            raise PovstimError(f"{path}: release.learners label {label!r} names a group the pattern has not "
                               f"({exc})") from None
    return {"arch": arch, "condition": condition, "source": source, "filtered": filtered, "size": size,
            "seed": seed}


def read_file(path: Path, settings: ReleaseSettings, paradigms: dict[str, str]) -> tuple[dict[str, float], list]:
    """paradigm -> accuracy of one result file (the required paradigms only), and the other paradigms."""
    try:
        df = pd.read_csv(path)
    except Exception as exc:  # pandas raises many types for a malformed file
        raise PovstimError(f"{path}: cannot read as CSV ({exc})") from None
    if df.empty or len(df.columns) < 2:
        raise PovstimError(f"{path}: expected a paradigm column and an accuracy column, found "
                           f"{', '.join(map(str, df.columns)) or 'nothing'}")
    pcol = settings.paradigm_column or df.columns[0]
    for col, key in ((pcol, "paradigm_column"), (settings.accuracy_column, "accuracy_column")):
        if col not in df.columns:
            raise PovstimError(f"{path}: no column {col!r} (release.{key}); columns: "
                               f"{', '.join(map(str, df.columns))}")
    names = [normalise_paradigm(x) for x in df[pcol]]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise PovstimError(f"{path}: paradigm(s) {', '.join(dup)} listed twice")
    acc = dict(zip(names, df[settings.accuracy_column]))
    missing = [p for p in paradigms if p not in acc]
    if missing:
        raise PovstimError(f"{path}: paradigm(s) {', '.join(missing)} missing (release.paradigms lists "
                           f"{len(paradigms)}; the file has {', '.join(names)})")
    out = {}
    for p in paradigms:
        try:
            a = float(acc[p])
        except (TypeError, ValueError):
            raise PovstimError(f"{path}: paradigm {p}: accuracy {acc[p]!r} is not a number") from None
        if math.isnan(a) or not 0.0 <= a <= 1.0:
            raise PovstimError(f"{path}: paradigm {p}: accuracy {acc[p]!r} is outside [0, 1]")
        out[p] = a
    return out, [n for n in names if n not in paradigms]


# Where a checkout of the POSH-BENCH authors' repository (xiulinyang/posh-bench) keeps the GPT-2 POSH-BENCH
# results: results/posh_gpt_results/ since their commit 5c4049b, posh_results/ before it.
CHECKOUT_FOLDERS = ("results/posh_gpt_results", "posh_results")


def results_folder(folder: str | Path, settings: ReleaseSettings) -> Path:
    """The folder of result files: ``folder`` itself when it holds files matching ``release.glob``, else, for a
    checkout of the authors' repository, its results folder in either layout (CHECKOUT_FOLDERS)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise PovstimError(f"{folder}: no such folder of released results")
    if any(p.is_file() for p in folder.glob(settings.glob)):
        return folder
    for sub in CHECKOUT_FOLDERS:
        if any(p.is_file() for p in (folder / sub).glob(settings.glob)):
            log.info("%s: reading %s/ (the authors' layout %s)", folder, sub,
                     "since their commit 5c4049b" if sub.startswith("results/") else "before their commit 5c4049b")
            return folder / sub
    return folder


@dataclass(frozen=True)
class _Source:
    """One folder of result files and how its names read: the results folder, or a learner's beside it."""

    folder: Path
    rx: re.Pattern
    glob: str
    label: str | None = None
    seedless: bool = False
    seed: int | None = None
    key: str = "release.pattern"


def _learner_sources(folder: Path, settings: ReleaseSettings) -> list[_Source]:
    """The release.learners folders next to the results folder that hold result files (checked patterns)."""
    out = []
    for name, spec in (settings.learners or {}).items():
        where = f"release.learners.{name}"
        rx = _pattern(settings, spec["pattern"], f"{where}.pattern", seedless=True)
        sub = folder.parent / name
        glob = spec.get("glob") or settings.glob
        if not sub.is_dir() or not any(p.is_file() for p in sub.glob(glob)):
            continue
        label = spec.get("label") or (None if "arch" in rx.groupindex else name)
        out.append(_Source(sub, rx, glob, label, "seed" not in rx.groupindex, spec.get("seed"), f"{where}.pattern"))
    return out


def read_released(folder: str | Path, settings: ReleaseSettings) -> pd.DataFrame:
    """One row per model x paradigm: suite, arch, condition, size, seed, category, paradigm, phenomenon,
    n_correct, n_total, source, filtered, file, learner ("" for the results folder's files, else the
    learner folder's name). ``folder``: the result files' folder, or a checkout of the
    POSH-BENCH authors' repository (its results/posh_gpt_results/, or posh_results/ in older checkouts).
    Other learners' folders beside it (``release.learners``: the authors' posh_lstm_results/ and
    posh_ngram_results/) are read too, their rows labelled by learner (lstm-small, ngram); an n-gram file's
    name has no seed, so it gets the smallest seed of the other files (one model, one existing seed group)."""
    folder = results_folder(folder, settings)
    main = _Source(folder, _pattern(settings), settings.glob)
    sources = [main] + _learner_sources(folder, settings)
    paradigms = _paradigms(settings)
    listed = []
    for src in sources:
        files = [p for p in sorted(src.folder.glob(src.glob)) if p.is_file()
                 and not any(fnmatch.fnmatch(p.name, g) for g in settings.ignore)]
        if not files and src is main:
            raise PovstimError(f"{folder}: no result files matching {settings.glob!r}"
                               + (f" (ignoring {', '.join(settings.ignore)})" if settings.ignore else ""))
        listed.append((src, files))
    seeded = [model_of(p, src.rx, settings, src.label, key=src.key)["seed"] for src, files in listed
              if not src.seedless for p in files]
    rows, seen, extra = [], {}, set()
    for src, files in listed:
        seed = src.seed if src.seed is not None else (min(seeded) if seeded else 0)
        if src.seedless:
            log.info("%s: file names carry no seed: labelled seed %d (a deterministic learner: one model)",
                     src.folder, seed)
        for path in files:
            model = model_of(path, src.rx, settings, src.label, seed if src.seedless else None, src.key)
            key = (model["arch"], model["condition"], model["size"], model["seed"])
            if key in seen:
                raise PovstimError(f"{path}: the same model ({', '.join(map(str, key))}) as {seen[key].name}")
            seen[key] = path
            accs, others = read_file(path, settings, paradigms)
            extra.update(others)
            for p, a in accs.items():
                n = _items(settings, p)
                k = round(a * n)  # POSH: correct = round(acc * n_per_phenomenon)
                if abs(a * n - k) > 0.01:
                    raise PovstimError(f"{path}: paradigm {p}: accuracy {a!r} is not a whole number of "
                                       f"{n} items (is release.items_per_paradigm right?)")
                rows.append({"suite": settings.suite,
                             **{k_: model[k_] for k_ in ("arch", "condition", "size", "seed")},
                             "category": paradigms[p], "paradigm": p, "phenomenon": p, "n_correct": int(k),
                             "n_total": n, "source": model["source"], "filtered": model["filtered"],
                             "file": path.name if src is main else f"{src.folder.name}/{path.name}",
                             "learner": "" if src is main else src.folder.name})
    if extra:
        log.warning("paradigm(s) not in release.paradigms ignored: %s", ", ".join(sorted(extra)))
    df = pd.DataFrame(rows)
    n_files = sum(len(files) for _, files in listed)
    log.info("%s: %d result files (%d models x %d paradigms)%s", folder, n_files, len(seen), len(paradigms),
             "".join(f"; {src.folder.name}: {len(files)}" for src, files in listed[1:]))
    return normalise(df, str(folder))
