"""Importers: existing minimal-pair suites into the benchmark schema.

- ``blimp``: BLiMP jsonl (``sentence_good``, ``sentence_bad``, ``UID``, ``pairID``,
  ``linguistics_term``); a file or a folder of files.
- ``zorro``: Zorro txt, one sentence per line, odd lines (1st, 3rd, ...)
  ungrammatical and even lines grammatical; paradigm = file name.
- ``scamp``: SCaMP tsv, ``good<TAB>bad`` per line; paradigm = file name.
- ``posh``: the POSH-BENCH release format, one sentence per line, bad then good;
  paradigm = file name.
- ``jsonl`` / ``csv``: generic files with named columns (``columns`` maps
  ``good, bad, paradigm, category, item_id`` to column names; ``good`` and
  ``bad`` are required, the rest optional).
- ``clams``: CLAMS (Mueller et al. 2020) as released per language (``fr_evalset/``):
  ``True<TAB>sentence`` then ``False<TAB>sentence`` per pair; paradigm = file name.
- ``fit_clams``: FIT-CLAMS (Padovani et al. 2025), frequency-controlled CLAMS with one
  vocabulary per training domain: one sentence per CSV row (quoted where it holds a
  comma), grammatical then ungrammatical; a domain folder (``fr_/childes``) gives
  paradigms by file name, a language folder (``fr_/``) gives ``<domain>_<file>`` for
  each domain subfolder, so the CHILDES and Wikipedia vocabularies are separate paradigms
  of one category.
- ``multiblimp``: MultiBLiMP 1.0's released TSV (Jumelet et al. 2025; one file per
  language, ``<lang>/data.tsv`` on the hub): a header row, ``sen`` (grammatical) and
  ``wrong_sen`` (ungrammatical) required, ``phenomenon`` (SV-#, SV-P, SP-G, ...) the paradigm,
  ``lang`` the ISO 639-3 code, every other column kept.
- ``lm_eval``: an lm-evaluation-harness task folder of minimal-pair tasks (the MultiBLiMP / BLiMP-NL layout:
  ``doc_to_choice: "{{[sen, wrong_sen]}}"`` or ``"{{[sentence_good, sentence_bad]}}"``, local data files;
  ``povstim export-lm-eval`` writes them): :mod:`povstim.benchmarks.lmeval`.

A suite carries its language (:func:`suite_language`): the English-only formats are English,
CLAMS, FIT-CLAMS and MultiBLiMP say theirs in ``language:`` or in their release's folder names
(``fr_evalset``, ``de_``, ``fra``), and a suite in another language than the corpora the models
are trained on is a config error (``config.check_references``).

Categories follow POSH Table 10 for the phenomena it lists; other paradigms
keep the suite's own grouping (BLiMP ``linguistics_term``, Zorro's phenomenon
prefix), so cross-suite comparison happens exactly where Table 10 says.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from .. import languages
from ..io import PovstimError
from .suite import Pair, category_for, iter_jsonl, posh_paradigm_name, read_suite
from .tasks import check_region

FORMATS = ("blimp", "zorro", "scamp", "posh", "jsonl", "csv", "clams", "fit_clams", "multiblimp", "lm_eval")
_DEFAULT_EXT = {"blimp": ".jsonl", "zorro": ".txt", "scamp": ".tsv", "posh": ".txt", "jsonl": ".jsonl", "csv": ".csv",
                "clams": ".txt", "fit_clams": ".csv", "multiblimp": ".tsv"}
# Formats whose items are written in one language (the suite generator, POSH-BENCH, writes English too).
FORMAT_LANGUAGE = {"generated": "en", "blimp": "en", "zorro": "en", "scamp": "en", "posh": "en"}
# Formats whose language a config must say or their release's folder names tell.
MULTILINGUAL = ("clams", "fit_clams", "multiblimp", "lm_eval")


def _files(path: Path, kind: str) -> list[Path]:
    if path.is_dir():
        ext = _DEFAULT_EXT[kind]
        files = sorted(p for p in path.iterdir() if p.is_file() and p.name.endswith(ext))
        if not files:
            raise PovstimError(f"{kind} suite folder {path} holds no *{ext} files")
        return files
    if not path.exists():
        raise PovstimError(f"{kind} suite {path} does not exist")
    return [path]


def _read_text_lines(path: Path) -> list[str]:
    try:
        with open(path, encoding="utf-8") as fh:
            lines = [line.rstrip("\r\n") for line in fh]
    except (OSError, UnicodeDecodeError) as exc:
        raise PovstimError(f"cannot read {path}: {exc}") from None
    while lines and not lines[-1].strip():
        lines.pop()
    for n, line in enumerate(lines, 1):
        if not line.strip():
            raise PovstimError(f"{path}, line {n}: empty line inside the file")
    return lines


def import_blimp(path: Path, suite: str) -> list[Pair]:
    out = []
    for f in _files(path, "blimp"):
        for n, obj in iter_jsonl(f):
            missing = [k for k in ("sentence_good", "sentence_bad") if k not in obj]
            if missing:
                raise PovstimError(f"{f}, line {n}: BLiMP record lacks {', '.join(missing)}")
            paradigm = obj.get("UID") or f.stem
            extra = {k: v for k, v in obj.items() if k not in ("sentence_good", "sentence_bad")}
            out.append(
                Pair(
                    suite=suite,
                    paradigm=paradigm,
                    category=category_for(paradigm, obj.get("linguistics_term") or paradigm),
                    item_id=str(obj.get("pairID", n - 1)),
                    good=obj["sentence_good"],
                    bad=obj["sentence_bad"],
                    extra=extra,
                )
            )
    return out


def _alternating(path: Path, kind: str, suite: str, bad_first: bool, category_of) -> list[Pair]:
    out = []
    for f in _files(path, kind):
        lines = _read_text_lines(f)
        if len(lines) % 2:
            raise PovstimError(
                f"{f}: {len(lines)} lines, an odd number; {kind} files pair each "
                f"{'bad' if bad_first else 'good'} line with the next one"
            )
        paradigm = f.stem if kind != "posh" else posh_paradigm_name(f.stem)
        for i in range(0, len(lines), 2):
            first, second = lines[i], lines[i + 1]
            bad, good = (first, second) if bad_first else (second, first)
            out.append(
                Pair(suite=suite, paradigm=paradigm, category=category_of(paradigm),
                     item_id=str(i // 2), good=good, bad=bad, extra={"line": i + 1})
            )
    return out


def import_zorro(path: Path, suite: str) -> list[Pair]:
    # Zorro groups paradigms by phenomenon: "island-effects-adjunct_island" -> island-effects
    def cat(paradigm: str) -> str:
        return category_for(paradigm, paradigm.rsplit("-", 1)[0] if "-" in paradigm else paradigm)

    return _alternating(path, "zorro", suite, bad_first=True, category_of=cat)


def import_posh(path: Path, suite: str) -> list[Pair]:
    return _alternating(path, "posh", suite, bad_first=True, category_of=lambda p: category_for(p, p))


def import_scamp(path: Path, suite: str) -> list[Pair]:
    out = []
    for f in _files(path, "scamp"):
        paradigm = f.stem
        for n, line in enumerate(_read_text_lines(f), 1):
            parts = line.split("\t")
            if len(parts) != 2 or not all(p.strip() for p in parts):
                raise PovstimError(f"{f}, line {n}: expected 'good<TAB>bad', found {len(parts)} field(s)")
            out.append(
                Pair(suite=suite, paradigm=paradigm, category=category_for(paradigm, paradigm),
                     item_id=str(n - 1), good=parts[0], bad=parts[1], extra={"line": n})
            )
    return out


def _from_columns(rows, where, columns: dict, suite: str, default_paradigm: str) -> list[Pair]:
    col = {"good": "good", "bad": "bad", "paradigm": "paradigm", "category": "category", "item_id": "item_id"}
    col.update(columns or {})
    out = []
    for n, row in rows:
        for k in ("good", "bad"):
            if col[k] not in row or not str(row[col[k]] or "").strip():
                raise PovstimError(f"{where}, row {n}: no value in column {col[k]!r} (the {k} sentence)")
        paradigm = str(row.get(col["paradigm"]) or default_paradigm)
        category = str(row.get(col["category"]) or category_for(paradigm, paradigm))
        item_id = str(row.get(col["item_id"]) if row.get(col["item_id"]) not in (None, "") else n)
        used = {col[k] for k in col}
        extra = {k: v for k, v in row.items() if k not in used and k not in ("suite",)}
        region = extra.get("region")
        if isinstance(region, str) and region.strip().startswith("{"):  # a CSV cell: a critical region as JSON
            try:
                extra["region"] = region = json.loads(region)
            except ValueError:
                raise PovstimError(f"{where}, row {n}: column 'region' is not JSON ({region!r}); write "
                                   '{"good": [start, end], "bad": [start, end]}') from None
        pair = Pair(suite=suite, paradigm=paradigm, category=category, item_id=item_id,
                    good=str(row[col["good"]]), bad=str(row[col["bad"]]), extra=extra)
        if isinstance(region, dict):  # a critical region (scoring.metric: region); another 'region' column is kept
            check_region(pair.to_json(), f"{where}, row {n} (item {item_id!r})")
        out.append(pair)
    return out


def import_csv(path: Path, suite: str, columns: dict | None = None) -> list[Pair]:
    out = []
    for f in _files(path, "csv"):
        with open(f, encoding="utf-8", newline="") as fh:
            dialect = "excel-tab" if f.suffix == ".tsv" else "excel"
            reader = csv.DictReader(fh, dialect=dialect)
            rows = [(i, r) for i, r in enumerate(reader, 2)]  # row 1 is the header
        out += _from_columns(rows, f, columns or {}, suite, f.stem)
    return out


def import_jsonl(path: Path, suite: str, columns: dict | None = None) -> list[Pair]:
    out = []
    for f in _files(path, "jsonl"):
        rows = []
        for n, obj in iter_jsonl(f):
            if not isinstance(obj, dict):
                raise PovstimError(f"{f}, line {n}: expected a JSON object")
            rows.append((n, obj))
        out += _from_columns(rows, f, columns or {}, suite, f.stem)
    return out


def import_clams(path: Path, suite: str) -> list[Pair]:
    out = []
    for f in _files(path, "clams"):
        lines = _read_text_lines(f)
        for n, line in enumerate(lines, 1):
            label = line.split("\t", 1)[0]
            if "\t" not in line or label not in ("True", "False") or not line.split("\t", 1)[1].strip():
                raise PovstimError(f"{f}, line {n}: expected 'True<TAB>sentence' or 'False<TAB>sentence' (CLAMS)")
            if label != ("True" if n % 2 else "False"):
                raise PovstimError(f"{f}, line {n}: a {label} line where CLAMS pairs each True line with the "
                                   "False line after it")
        if len(lines) % 2:
            raise PovstimError(f"{f}, line {len(lines)}: a True line without its False line")
        for i in range(0, len(lines), 2):
            out.append(Pair(suite=suite, paradigm=f.stem, category=category_for(f.stem, f.stem), item_id=str(i // 2),
                            good=lines[i].split("\t", 1)[1], bad=lines[i + 1].split("\t", 1)[1],
                            extra={"line": i + 1}))
    return out


def _fit_clams_domain(folder: Path, suite: str, prefix: str) -> list[Pair]:
    out = []
    for f in _files(folder, "fit_clams"):
        try:
            with open(f, encoding="utf-8", newline="") as fh:
                rows = list(csv.reader(fh))
        except (OSError, UnicodeDecodeError, csv.Error) as exc:
            raise PovstimError(f"cannot read {f}: {exc}") from None
        while rows and not any(c.strip() for c in rows[-1]):
            rows.pop()
        for n, row in enumerate(rows, 1):
            if len(row) != 1 or not row[0].strip():
                raise PovstimError(f"{f}, row {n}: expected one sentence per row (FIT-CLAMS), found {len(row)} "
                                   "field(s)")
        if len(rows) % 2:
            raise PovstimError(f"{f}: {len(rows)} rows, an odd number; FIT-CLAMS pairs each grammatical row "
                               "with the ungrammatical one after it")
        paradigm = f"{prefix}{f.stem}"
        for i in range(0, len(rows), 2):
            out.append(Pair(suite=suite, paradigm=paradigm, category=category_for(f.stem, f.stem),
                            item_id=str(i // 2), good=rows[i][0], bad=rows[i + 1][0],
                            extra={"line": i + 1, **({"domain": prefix[:-1]} if prefix else {})}))
    return out


def import_fit_clams(path: Path, suite: str) -> list[Pair]:
    domains = sorted(p for p in path.iterdir() if p.is_dir()) if path.is_dir() else []
    if domains and not any(p.suffix == ".csv" for p in path.iterdir() if p.is_file()):
        return [pair for d in domains for pair in _fit_clams_domain(d, suite, f"{d.name}_")]
    return _fit_clams_domain(path, suite, "")


def import_multiblimp(path: Path, suite: str, language: str | None = None) -> list[Pair]:
    code3 = languages.get(language).chat if language else None
    out = []
    for f in _files(path, "multiblimp"):
        default_paradigm = f.parent.name if f.stem == "data" else f.stem  # <lang>/data.tsv as released
        try:
            with open(f, encoding="utf-8", newline="") as fh:
                reader = csv.DictReader(fh, dialect="excel-tab")
                header = reader.fieldnames or []
                rows = list(enumerate(reader, 2))  # row 1 is the header
        except (OSError, UnicodeDecodeError, csv.Error) as exc:
            raise PovstimError(f"cannot read {f}: {exc}") from None
        missing = [c for c in ("sen", "wrong_sen") if c not in header]
        if missing:
            raise PovstimError(f"{f}, row 1: the MultiBLiMP header lacks {', '.join(missing)} "
                               f"(found: {', '.join(header) or 'nothing'})")
        for n, row in rows:
            for col in ("sen", "wrong_sen"):
                if not (row.get(col) or "").strip():
                    raise PovstimError(f"{f}, row {n}: no value in column {col!r}")
            if code3 and row.get("lang") and row["lang"] != code3:
                raise PovstimError(f"{f}, row {n}: lang {row['lang']!r}, but the suite's language is {language} "
                                   f"({code3}); set benchmarks.{suite}.language to the file's language")
            paradigm = row.get("phenomenon") or default_paradigm
            extra = {k: v for k, v in row.items() if k not in ("sen", "wrong_sen") and k}
            out.append(Pair(suite=suite, paradigm=paradigm, category=category_for(paradigm, paradigm),
                            item_id=str(n - 1), good=row["sen"], bad=row["wrong_sen"], extra=extra))
    return out


def suite_language(spec: dict, where: str) -> str | None:
    """The language a suite's items are written in: its format's (English-only formats), its ``language:``,
    or the release's folder names (CLAMS ``fr_evalset``, FIT-CLAMS ``fr_``, MultiBLiMP ``fra``); None for a
    generic format that says none. A multilingual format whose language cannot be told is an error."""
    kind = spec.get("kind")
    if kind in FORMAT_LANGUAGE:
        lang = FORMAT_LANGUAGE[kind]
        if spec.get("language") and spec["language"] != lang:
            raise PovstimError(f"{where}.language: {spec['language']!r}, but {kind} suites are in {lang}")
        return lang
    if spec.get("language"):
        return languages.get(spec["language"], f"{where}.language").code
    if kind in MULTILINGUAL:
        by_chat = {lang.chat: code for code, lang in languages.LANGUAGES.items()}
        for part in reversed(Path(str(spec.get("path", ""))).parts):
            stem = part.split("_")[0].lower()
            if "_" in part and stem in languages.LANGUAGES:
                return stem
            if part.lower() in by_chat:
                return by_chat[part.lower()]
        raise PovstimError(f"{where}.language: say which language the {kind} suite {spec.get('path')!r} is in "
                           f"(known: {', '.join(sorted(languages.LANGUAGES))}); its path does not tell")
    return None


def import_suite(kind: str, path: str | Path, suite: str, columns: dict | None = None,
                 language: str | None = None) -> list[Pair]:
    path = Path(path)
    if kind == "blimp":
        pairs = import_blimp(path, suite)
    elif kind == "zorro":
        pairs = import_zorro(path, suite)
    elif kind == "scamp":
        pairs = import_scamp(path, suite)
    elif kind == "posh":
        pairs = import_posh(path, suite)
    elif kind == "csv":
        pairs = import_csv(path, suite, columns)
    elif kind == "jsonl":
        pairs = import_jsonl(path, suite, columns)
    elif kind == "clams":
        pairs = import_clams(path, suite)
    elif kind == "fit_clams":
        if not path.exists():
            raise PovstimError(f"fit_clams suite {path} does not exist")
        pairs = import_fit_clams(path, suite)
    elif kind == "multiblimp":
        pairs = import_multiblimp(path, suite, language)
    elif kind == "lm_eval":
        from .lmeval import read_task_folder

        pairs = read_task_folder(path, suite)
    else:
        raise PovstimError(f"unknown suite format {kind!r}; use one of {', '.join(FORMATS)}")
    if not pairs:
        raise PovstimError(f"{kind} suite {path} holds no pairs")
    return pairs


def sniff_format(path: Path) -> tuple[str | None, str]:
    """Guess the importer format of a suite file or folder from its contents: (format or None, why).

    BLiMP JSONL (``sentence_good``/``sentence_bad``), SCaMP TSV and CSV are told apart by their fields;
    Zorro and the POSH-BENCH release are both alternating bad/good text lines, so ``.txt`` is only
    suggested, never guessed.
    """
    import json

    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
    elif path.exists():
        files = [path]
    else:
        return None, f"{path} does not exist"
    if path.is_dir() and any(path.rglob("*.yaml")):
        return "lm_eval", f"{path.name} holds lm-eval task YAML files"
    by_ext = {}
    for f in files:
        by_ext.setdefault(f.suffix.lower(), f)
    if ".jsonl" in by_ext:
        f = by_ext[".jsonl"]
        try:
            with open(f, encoding="utf-8") as fh:
                first = next((line for line in fh if line.strip()), "")
            keys = set(json.loads(first)) if first else set()
        except (OSError, UnicodeDecodeError, ValueError, TypeError):
            return None, f"{f} is not JSON lines"
        if {"sentence_good", "sentence_bad"} <= keys:
            return "blimp", f"{f.name} has sentence_good/sentence_bad fields (BLiMP)"
        if {"good", "bad"} <= keys:
            return "jsonl", f"{f.name} has good/bad fields"
        return None, (f"{f.name} has fields {', '.join(sorted(keys))}: no good/bad sentence fields; put it in a "
                      "config's benchmarks: section with kind: jsonl and columns: {good: ..., bad: ...}")
    if ".tsv" in by_ext:
        return "scamp", f"{by_ext['.tsv'].name} is tab-separated good/bad pairs (SCaMP)"
    if ".csv" in by_ext:
        return "csv", f"{by_ext['.csv'].name} is CSV (columns good, bad; others via a config's columns:)"
    if ".txt" in by_ext:
        return None, ("text files of alternating bad/good lines: pass --format zorro (Zorro) or --format posh "
                      "(the POSH-BENCH release)")
    return None, f"no .jsonl, .tsv, .csv or .txt suite files in {path}"


def load_pairs(path: str | Path, fmt: str | None = None, suite: str | None = None) -> list[dict]:
    """Pairs as schema dicts from a suite folder/file in the benchmark schema or any importer format.

    ``fmt`` None reads the benchmark schema, or else the format :func:`sniff_format` recognises (logged);
    when it cannot tell, the error names the ``--format`` to pass.
    """
    import logging

    path = Path(path)
    if not path.exists():
        raise PovstimError(f"suite {path} does not exist")
    if fmt in (None, "jsonl"):
        if path.is_dir() or path.suffix == ".jsonl":
            try:
                return read_suite(path)
            except PovstimError as exc:
                if fmt is None:
                    guess, why = sniff_format(path)
                    if guess is None:
                        raise PovstimError(f"{exc}; {why}; formats: --format {{{','.join(FORMATS)}}}") from None
                    logging.getLogger("povstim.score").info("reading %s as %s (%s); pass --format to choose",
                                                            path, guess, why)
                    fmt = guess
        # a generic jsonl with its own columns
    if fmt is None:
        guess, why = sniff_format(path)
        if guess is None:
            raise PovstimError(f"cannot tell the format of {path}: {why}")
        logging.getLogger("povstim.score").info("reading %s as %s (%s); pass --format to choose", path, guess, why)
        fmt = guess
    name = suite or path.stem
    return [p.to_json() for p in import_suite(fmt, path, name)]
