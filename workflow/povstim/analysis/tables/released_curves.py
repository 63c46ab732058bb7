"""Padovani et al. 2025's released learning curves (CHILDES vs Wikipedia; fpadovani/childes_vs_wiki,
``evaluation/scripts/json_results_clm/``) as an analysis input (``povstim release``, layout ``childes_vs_wiki``).

The authors release, per evaluation suite and language, one folder ``json_<suite folder>/`` (``json_fr_clams_ok``,
``json_de_fitclams_childes``, ``json_blimp_ok``, ...) holding one folder per training source,
``<lang>_<child|wiki>_clm_results/``, with one file per seed, ``results_paradigm_seed_<N>.json``::

    {"1000": {"simple_agrmt.txt": 0.514, "vp_coord.txt": 0.49, ...}, "2000": {...}, ...}

(checkpoint step -> paradigm file -> accuracy). The English, French and German suites share this layout; the
language is the source folder's prefix (``fr_child_clm_results``). Other files there (results_seed_N.json,
averages, variances) are the authors' summaries of the same numbers and are not read; a folder not named
``<lang>_<child|wiki>_clm_results`` (the German CLAMS folder's extra ``clm_results/``) is skipped with a warning.

The accuracies are fractions of the suite's minimal pairs, but the files do not say how many pairs: each
paradigm's count is the smallest n that makes every released accuracy of it (every source, seed and checkpoint)
a whole number of n (:func:`infer_items`; on the French CLAMS release it is each suite file's number of pairs),
or ``release.items_per_paradigm`` when that is a mapping.

Bad input stops with one line naming the file or folder: a folder in none of these layouts, a source folder
missing a seed the suite's other folders have, a seed's file missing a checkpoint or a paradigm the others have,
an accuracy that is not a number in [0, 1]. The authors' French CLAMS release lacks one checkpoint in one file
(fr_wiki_clm_results seed 13, step 92000; their averages there are over the other two seeds):
``release.missing_checkpoints: note`` (configs/release/childes-vs-wiki.yaml) reads it with that curve's gap noted.
"""

from __future__ import annotations

import json
import logging
import re
from fractions import Fraction
from pathlib import Path

import pandas as pd

from povstim.io import PovstimError

log = logging.getLogger("povstim.release")

SUITE_DIR = re.compile(r"^json_(?P<name>.+)$")
SOURCE_DIR = re.compile(r"^(?P<lang>[a-z]{2})_(?P<source>child|wiki)_clm_results$")
SEED_FILE = re.compile(r"^results_paradigm_seed_(?P<seed>[0-9]+)\.json$")
SOURCES = {"child": "childes", "wiki": "wikipedia"}
# where a checkout of fpadovani/childes_vs_wiki keeps the json folders
CHECKOUT_FOLDER = "evaluation/scripts/json_results_clm"
MAX_ITEMS = 100_000


def suite_folders(folder: str | Path) -> list[Path]:
    """The json_<suite> folders under ``folder`` (itself one, their parent, or a checkout) that hold a source
    folder with seed files; [] when there is none (not this layout)."""
    folder = Path(folder)
    candidates = [folder] if SUITE_DIR.match(folder.name) else []
    for base in (folder, folder / CHECKOUT_FOLDER):
        if base.is_dir():
            candidates += sorted(p for p in base.iterdir() if p.is_dir() and SUITE_DIR.match(p.name))
    return [p for p in candidates if any(SEED_FILE.match(f.name) for s in p.iterdir() if s.is_dir()
                                         for f in s.iterdir())]


def suite_name(folder: Path, lang: str) -> str:
    """clams_fr from json_fr_clams_ok, fitclams_childes_de from json_de_fitclams_childes, blimp_en from
    json_blimp_ok: the folder's name without json_, its language and the authors' _ok marker, then the language."""
    name = SUITE_DIR.match(folder.name)["name"]
    name = re.sub(rf"^{lang}_", "", name)
    name = re.sub(r"_ok$", "", name)
    return f"{name}_{lang}"


def _load(path: Path) -> dict:
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise PovstimError(f"{path}: cannot read as JSON ({exc})") from None
    if not isinstance(doc, dict) or not all(isinstance(v, dict) for v in doc.values()):
        raise PovstimError(f"{path}: expected checkpoint step -> {{paradigm file: accuracy}}")
    return doc


def _step(path: Path, key: str) -> int:
    try:
        return int(key)
    except ValueError:
        raise PovstimError(f"{path}: checkpoint {key!r} is not a step number") from None


def read_suite(folder: Path, missing_checkpoints: str = "error", notes: list | None = None) -> pd.DataFrame:
    """One row per source x seed x checkpoint x paradigm of one json_<suite> folder, checked complete: every
    source folder has the same seeds, every seed's file the same checkpoints (``missing_checkpoints: note``: a
    file may lack a checkpoint other than the last, said in ``notes``), every checkpoint the same paradigms."""
    notes = [] if notes is None else notes
    sources = []
    for sub in sorted(p for p in folder.iterdir() if p.is_dir()):
        m = SOURCE_DIR.match(sub.name)
        if m is None:
            log.warning("%s: not a <lang>_<child|wiki>_clm_results folder: skipped", sub)
            continue
        seeds = {int(SEED_FILE.match(f.name)["seed"]): f for f in sub.iterdir() if SEED_FILE.match(f.name)}
        sources.append((sub, m["lang"], SOURCES[m["source"]], seeds))
    if not sources:
        raise PovstimError(f"{folder}: no <lang>_<child|wiki>_clm_results folder with results_paradigm_seed_N.json")
    langs = {lang for _, lang, _, _ in sources}
    if len(langs) > 1:
        raise PovstimError(f"{folder}: source folders of several languages ({', '.join(sorted(langs))})")
    all_seeds = sorted(set().union(*(s for *_, s in sources)))
    for sub, _, _, seeds in sources:
        missing = [s for s in all_seeds if s not in seeds]
        if missing:
            raise PovstimError(f"{sub}: no {', '.join(f'results_paradigm_seed_{s}.json' for s in missing)} (expected "
                               f"seeds {', '.join(map(str, all_seeds))}, as the suite's other folders have)")
    lang = langs.pop()
    suite = suite_name(folder, lang)
    docs = {(src, seed): (path, _load(path)) for sub, _, src, seeds in sources for seed, path in seeds.items()}
    steps = sorted({_step(p, k) for p, d in docs.values() for k in d})
    paradigms = sorted({par for _, d in docs.values() for v in d.values() for par in v})
    rows = []
    for (src, seed), (path, doc) in sorted(docs.items()):
        have = {_step(path, k): v for k, v in doc.items()}
        missing = [s for s in steps if s not in have]
        if missing:
            what = (f"{path}: no checkpoint {', '.join(map(str, missing))} (expected the {len(steps)} "
                    f"checkpoints the suite's other files have: {steps[0]} ... {steps[-1]})")
            if missing_checkpoints == "error" or steps[-1] in missing:
                raise PovstimError(what + ("" if missing_checkpoints == "error" else
                                           "; the last checkpoint is the final table's and cannot be missing"))
            notes.append(what + ": its curve has a gap there; release.missing_checkpoints: note")
            log.warning(notes[-1])
        for step in (s for s in steps if s in have):
            accs = have[step]
            gone = [p for p in paradigms if p not in accs]
            if gone:
                raise PovstimError(f"{path}: checkpoint {step} has no paradigm {', '.join(gone)} (expected "
                                   f"{len(paradigms)}, as the suite's other checkpoints have)")
            for par in paradigms:
                a = accs[par]
                if isinstance(a, bool) or not isinstance(a, (int, float)) or not 0.0 <= float(a) <= 1.0:
                    raise PovstimError(f"{path}: checkpoint {step} paradigm {par}: accuracy {a!r} is not a number "
                                       "in [0, 1]")
                rows.append({"suite": suite, "language": lang, "source": src, "seed": seed, "step": step,
                             "paradigm": re.sub(r"\.(txt|csv)$", "", par), "accuracy": float(a),
                             "folder": f"{folder.name}/{path.parent.name}"})
    return pd.DataFrame(rows)


def infer_items(acc: pd.Series, where: str) -> int:
    """The smallest n <= MAX_ITEMS that makes every accuracy a whole number of n items."""
    values = sorted(set(acc.round(12)))
    n = 1
    for v in values:
        # the denominator of the nearest fraction with a small denominator; their least common multiple
        d = Fraction(float(v)).limit_denominator(MAX_ITEMS).denominator
        n = n * d // _gcd(n, d)
        if n > MAX_ITEMS:
            break
    if n > MAX_ITEMS or any(abs(v * n - round(v * n)) > 1e-6 for v in values):
        raise PovstimError(f"{where}: the accuracies are not whole numbers of any count of items up to {MAX_ITEMS} "
                           "(give release.items_per_paradigm as a mapping paradigm -> count)")
    return n


def _gcd(a: int, b: int) -> int:
    while b:
        a, b = b, a % b
    return a


def read_curves(folder: str | Path, items: int | dict | None = None,
                missing_checkpoints: str = "error") -> tuple[pd.DataFrame, list[str]]:
    """Every json_<suite> folder under ``folder``: (one row per suite x source x seed x checkpoint x paradigm with
    accuracy, n_correct and n_total, notes on checkpoints missing from a file); ``items``: a paradigm -> count
    mapping, else inferred per suite x paradigm."""
    folders = suite_folders(folder)
    if not folders:
        raise PovstimError(f"{folder}: no json_<suite>/<lang>_<child|wiki>_clm_results/results_paradigm_seed_N.json")
    notes: list[str] = []
    df = pd.concat([read_suite(f, missing_checkpoints, notes) for f in folders], ignore_index=True)
    counts = {}
    for (suite, par), g in df.groupby(["suite", "paradigm"]):
        if isinstance(items, dict) and par in items:
            counts[(suite, par)] = int(items[par])
        else:
            counts[(suite, par)] = infer_items(g["accuracy"], f"{folder}: {suite} paradigm {par}")
    n = [counts[(s, p)] for s, p in zip(df["suite"], df["paradigm"])]
    df["n_total"] = n
    df["n_correct"] = (df["accuracy"] * df["n_total"]).round().astype(int)
    bad = (df["accuracy"] * df["n_total"] - df["n_correct"]).abs() > 0.01
    if bad.any():
        r = df[bad].iloc[0]
        raise PovstimError(f"{folder}/{r['folder']}: {r['paradigm']} at step {r['step']}: accuracy {r['accuracy']!r} "
                           f"is not a whole number of {r['n_total']} items (release.items_per_paradigm)")
    log.info("%s: %d suite(s) (%s), %d curves", folder, len(folders), ", ".join(sorted(df["suite"].unique())),
             df.groupby(["suite", "source", "seed", "paradigm"]).ngroups)
    return df, notes


def final_table(df: pd.DataFrame) -> pd.DataFrame:
    """The last checkpoint per suite x paradigm x source: mean accuracy over seeds, its SD, each seed's, and the
    CHILDES - Wikipedia difference of the means."""
    last = df[df["step"] == df.groupby("suite")["step"].transform("max")]
    g = last.groupby(["suite", "paradigm", "source"])
    out = g.agg(step=("step", "first"), seeds=("seed", "nunique"), n_items=("n_total", "first"),
                accuracy=("accuracy", "mean"), sd=("accuracy", "std")).reset_index()
    wide = out.pivot(index=["suite", "paradigm"], columns="source", values="accuracy")
    if {"childes", "wikipedia"} <= set(wide.columns):
        diff = (wide["childes"] - wide["wikipedia"]).rename("childes_minus_wikipedia").reset_index()
        out = out.merge(diff, on=["suite", "paradigm"], how="left")
    return out
