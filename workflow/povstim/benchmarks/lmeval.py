"""Minimal-pair suites as lm-evaluation-harness tasks, and lm-evaluation-harness minimal-pair tasks as suites.

**Export** (:func:`export_suite`, ``povstim export-lm-eval``): one folder per suite, in the layout of the harness's
own minimal-pair tasks (``lm_eval/tasks/multiblimp``, ``blimp_nl``): a ``_template_yaml`` every task includes, one
task YAML per paradigm (``povstim_<suite>_<paradigm>``), a group YAML (``povstim_<suite>``: the accuracy over all
items) and the items as local JSON lines (``data/<paradigm>.jsonl``, read with ``dataset_path: json`` and
``data_files``: nothing from the hub). A task is ``output_type: multiple_choice`` with an empty context and no target
delimiter, so the harness scores each sentence as log p(sentence | BOS) summed over its tokens -- its prefix token is
the tokenizer's BOS, else its EOS, and the sentence is encoded without special tokens, as ``povstim score`` does with
``scoring.bos`` (the default). The choices are listed bad sentence first (``doc_to_target: 1``): the harness's
``acc`` takes the first of equal scores, so a tie is counted wrong, as povstim counts it.

**Import** (:func:`read_task_folder`, importer format ``lm_eval``): every task YAML under a folder (``include:``
resolved as the harness does), each a multiple-choice task whose ``doc_to_choice`` lists two fields
(``{{[sentence_good, sentence_bad]}}`` as BLiMP-NL, ``{{[sen, wrong_sen]}}`` as MultiBLiMP) and whose
``doc_to_target`` (0 or 1) says which is the grammatical one; the items come from local files (``dataset_path:
json`` or ``csv`` with ``dataset_kwargs.data_files``, or ``dataset_path`` a local copy of a hub dataset whose
``dataset_name`` subfolder holds them).
"""

from __future__ import annotations

import csv
import glob
import json
import re
from pathlib import Path

import yaml

from ..io import PovstimError, atomic_dir, atomic_write
from .suite import Pair, category_for, iter_jsonl

EXPECTED = ('output_type: multiple_choice, doc_to_text: "", doc_to_choice: "{{[sentence_good, sentence_bad]}}" or '
            '"{{[sen, wrong_sen]}}" (two fields of the items), doc_to_target: 0 or 1 (the grammatical one)')
_CHOICE = re.compile(r"^\{\{\s*\[\s*([A-Za-z_][A-Za-z0-9_]*)\s*,\s*([A-Za-z_][A-Za-z0-9_]*)\s*\]\s*\}\}$")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_DATA_EXT = {".jsonl": "json", ".json": "json", ".csv": "csv", ".tsv": "csv"}


def _slug(name: str) -> str:
    return _UNSAFE.sub("_", name).strip("_") or "x"


def task_names(suite: str, paradigms: list[str]) -> dict[str, str]:
    """paradigm -> its task's name, ``povstim_<suite>_<paradigm>`` (characters a file name cannot hold as ``_``)."""
    names = {p: f"povstim_{_slug(suite)}_{_slug(p)}" for p in paradigms}
    seen: dict[str, str] = {}
    for p, name in names.items():
        if name in seen:
            raise PovstimError(f"suite {suite}: paradigms {seen[name]!r} and {p!r} both become task {name}; rename one")
        seen[name] = p
    return names


def template(suite: str) -> dict:
    """The keys every task of a suite shares (its ``_template_yaml``)."""
    return {
        "dataset_path": "json",
        "output_type": "multiple_choice",
        "test_split": "test",
        "doc_to_text": "",
        "target_delimiter": "",
        # bad first: acc is argmax over the choices, which takes the first of equal scores -- a tie is wrong
        "doc_to_choice": "{{[sentence_bad, sentence_good]}}",
        "doc_to_target": 1,
        "num_fewshot": 0,
        "metric_list": [{"metric": "acc", "aggregation": "mean", "higher_is_better": True}],
        "metadata": {"version": 1.0, "povstim_suite": suite},
    }


def export_suite(pairs: list[dict], suite: str, out: Path) -> dict[str, int]:
    """Write ``pairs`` (schema dicts of one suite) as an lm-eval task folder ``out``; return items per task."""
    for p in pairs:
        if p.get("task", "minimal_pair") != "minimal_pair":
            raise PovstimError(f"suite {suite}, item {p.get('paradigm')}/{p.get('item_id')}: a {p['task']} item; "
                               "export-lm-eval exports minimal pairs only")
    by_paradigm: dict[str, list[dict]] = {}
    for p in pairs:
        by_paradigm.setdefault(str(p["paradigm"]), []).append(p)
    names = task_names(suite, list(by_paradigm))
    out = Path(out)
    counts = {}
    with atomic_dir(out) as tmp:
        _dump(tmp / "_template_yaml", template(suite))
        (tmp / "data").mkdir()
        for paradigm, items in by_paradigm.items():
            name = names[paradigm]
            data = f"{_slug(paradigm)}.jsonl"
            with atomic_write(tmp / "data" / data) as fh:
                for p in items:
                    fh.write(json.dumps({"sentence_good": p["good"], "sentence_bad": p["bad"], "paradigm": paradigm,
                                         "category": str(p["category"]), "item_id": str(p["item_id"])},
                                        ensure_ascii=False) + "\n")
            # data_files by absolute path: the datasets library resolves a relative one against the working
            # directory, not the YAML's folder
            _dump(tmp / f"{name}.yaml", {"task": name, "include": "_template_yaml",
                                         "dataset_kwargs": {"data_files": {"test": str((out / "data" / data)
                                                                                       .resolve())}}})
            counts[name] = len(items)
        group = f"povstim_{_slug(suite)}"
        _dump(tmp / f"_{group}.yaml", {
            "group": group, "task": sorted(counts),
            "aggregate_metric_list": [{"metric": "acc", "aggregation": "mean", "weight_by_size": True}],
            "metadata": {"version": 1.0}})
    return counts


def _dump(path: Path, obj: dict) -> None:
    with atomic_write(path) as fh:
        yaml.safe_dump(obj, fh, sort_keys=False, allow_unicode=True)


# --------------------------------------------------------------------------- import


class _Loader(yaml.SafeLoader):
    """The harness's YAML: ``!function module.name`` tags are read as ``{"!function": "module.name"}``."""


_Loader.add_constructor("!function", lambda loader, node: {"!function": loader.construct_scalar(node)})


def load_task_yaml(path: Path, seen: tuple[Path, ...] = ()) -> dict:
    """A task YAML with its ``include:`` files merged in (the included keys first, the file's own win), as the
    harness's loader does; errors name the file, line and column."""
    path = Path(path)
    if path.resolve() in seen:
        raise PovstimError(f"{path}: include cycle ({' -> '.join(str(p) for p in seen)})")
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PovstimError(f"{seen[-1] if seen else path}: included file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PovstimError(f"cannot read {path}: {exc}") from None
    try:
        cfg = yaml.load(text, Loader=_Loader)  # noqa: S506 (a SafeLoader with one more tag)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        raise PovstimError(f"{where}: not valid YAML: {exc.problem or exc.context}") from None
    if not isinstance(cfg, dict):
        raise PovstimError(f"{path}: expected a YAML mapping (an lm-eval task config)")
    includes = cfg.pop("include", None)
    if includes is None:
        return cfg
    merged: dict = {}
    for inc in includes if isinstance(includes, list) else [includes]:
        inc_path = Path(inc) if Path(inc).is_absolute() else path.parent / inc
        merged.update(load_task_yaml(inc_path, (*seen, path.resolve())))
    merged.update(cfg)
    return merged


def choice_fields(cfg: dict, where: Path) -> tuple[str, str]:
    """(good field, bad field) from a task's doc_to_choice and doc_to_target; else one line with what is expected."""
    problems = []
    if cfg.get("output_type") != "multiple_choice":
        problems.append(f"output_type {cfg.get('output_type')!r}")
    if str(cfg.get("doc_to_text", "")).strip():
        problems.append(f"doc_to_text {cfg['doc_to_text']!r} (a context before the sentences)")
    if isinstance(cfg.get("process_docs"), dict):
        problems.append(f"process_docs {cfg['process_docs']['!function']!r} (Python povstim does not run)")
    choice = cfg.get("doc_to_choice")
    m = _CHOICE.match(choice.strip()) if isinstance(choice, str) else None
    if m is None:
        problems.append(f"doc_to_choice {choice!r}")
    target = cfg.get("doc_to_target")
    if isinstance(target, str) and target.strip() in ("0", "1"):
        target = int(target)
    if target not in (0, 1) or isinstance(target, bool):
        problems.append(f"doc_to_target {target!r}")
    if problems:
        raise PovstimError(f"{where}: povstim cannot read task {cfg.get('task')!r} as minimal pairs: "
                           f"{'; '.join(problems)}; expected {EXPECTED}")
    fields = m.group(1), m.group(2)
    return fields[target], fields[1 - target]


def _local(name: str, where: Path) -> Path | None:
    """A data path as the datasets library finds it (the working directory), else beside the task YAML."""
    for base in (Path.cwd(), where.parent):
        p = Path(name) if Path(name).is_absolute() else base / name
        if p.exists():
            return p
    return None


def _data_files(cfg: dict, where: Path) -> list[tuple[Path, str]]:
    """(file, json|csv) for each data file of the split the harness evaluates (test_split, else validation_split)."""
    path = cfg.get("dataset_path")
    split = cfg.get("test_split") or cfg.get("validation_split")
    kwargs = cfg.get("dataset_kwargs") or {}
    if path in ("json", "csv"):
        files = kwargs.get("data_files")
        if isinstance(files, dict):
            if split not in files:
                raise PovstimError(f"{where}: dataset_kwargs.data_files has no {split!r} split (the task's "
                                   f"{'test_split' if cfg.get('test_split') else 'validation_split'}); it has "
                                   f"{', '.join(map(str, files)) or 'none'}")
            files = files[split]
        if isinstance(files, str):
            files = [files]
        if not files or not all(isinstance(f, str) for f in files):
            raise PovstimError(f"{where}: dataset_path {path} needs dataset_kwargs.data_files (a file, a list, or "
                               "{split: files})")
        out = []
        for name in files:
            if "://" in name:
                raise PovstimError(f"{where}: data file {name} is remote; povstim reads local files only")
            hits = sorted(glob.glob(name if Path(name).is_absolute() else str(Path.cwd() / name))) or sorted(
                glob.glob(str(where.parent / name)))
            if not hits:
                raise PovstimError(f"{where}: data file {name} does not exist (looked in {Path.cwd()} and "
                                   f"{where.parent})")
            out += [(Path(h), path) for h in hits]
        return out
    local = _local(str(path), where) if isinstance(path, str) and path else None
    if local is None or not local.is_dir():
        raise PovstimError(f"{where}: dataset_path {path!r} is not local data; povstim reads dataset_path: json (or "
                           "csv) with dataset_kwargs.data_files, or dataset_path a local folder (a downloaded copy of "
                           "the hub dataset, its dataset_name subfolder holding the items)")
    folder = local / str(cfg["dataset_name"]) if cfg.get("dataset_name") else local
    files = sorted(p for p in folder.glob("*") if p.suffix in _DATA_EXT) if folder.is_dir() else []
    if not files:
        raise PovstimError(f"{where}: {folder} holds no .jsonl, .json, .csv or .tsv items")
    return [(f, _DATA_EXT[f.suffix]) for f in files]


def _records(f: Path, kind: str, kwargs: dict):
    """(row number, record) of one data file."""
    if kind == "json":
        with open(f, encoding="utf-8") as fh:
            head = fh.read(1)
        if head == "[":
            try:
                rows = json.loads(f.read_text(encoding="utf-8"))
            except ValueError as exc:
                raise PovstimError(f"{f}: not valid JSON: {exc}") from None
            yield from enumerate(rows, 1)
        else:
            yield from iter_jsonl(f)
        return
    delimiter = kwargs.get("delimiter") or kwargs.get("sep") or ("\t" if f.suffix == ".tsv" else ",")
    try:
        with open(f, encoding="utf-8", newline="") as fh:
            yield from enumerate(csv.DictReader(fh, delimiter=delimiter), 2)  # row 1 is the header
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise PovstimError(f"cannot read {f}: {exc}") from None


def task_configs(path: Path) -> list[tuple[Path, dict]]:
    """Every task config (a YAML whose ``task`` is a name) under a folder, or the one file given."""
    path = Path(path)
    if not path.exists():
        raise PovstimError(f"lm_eval task folder {path} does not exist")
    files = [path] if path.is_file() else sorted(
        p for p in path.rglob("*.yaml") if not any(part.startswith(".") for part in p.relative_to(path).parts))
    configs = [(f, cfg) for f in files for cfg in [load_task_yaml(f)] if isinstance(cfg.get("task"), str)]
    if not configs:
        raise PovstimError(f"{path}: no lm-eval task YAML (a *.yaml file with task: NAME) in it")
    return configs


def read_task_folder(path: Path, suite: str) -> list[Pair]:
    """The minimal pairs of every task under ``path``. A pair's paradigm is its item's ``paradigm``, ``UID``
    (BLiMP) or ``phenomenon`` (MultiBLiMP) field, else the task's name; its item id the ``item_id`` or ``pairID``
    field, else ``<task>:<row>``."""
    out = []
    for where, cfg in task_configs(path):
        good_f, bad_f = choice_fields(cfg, where)
        task = cfg["task"]
        row = 0
        for f, kind in _data_files(cfg, where):
            for n, rec in _records(f, kind, cfg.get("dataset_kwargs") or {}):
                if not isinstance(rec, dict):
                    raise PovstimError(f"{f}, row {n}: expected a JSON object")
                missing = [k for k in (good_f, bad_f) if not str(rec.get(k) or "").strip()]
                if missing:
                    raise PovstimError(f"{f}, row {n}: no {' or '.join(missing)} field, which task {task}'s "
                                       f"doc_to_choice ({where.name}) reads; expected fields {good_f}, {bad_f} "
                                       f"(found: {', '.join(rec) or 'none'})")
                paradigm = str(rec.get("paradigm") or rec.get("UID") or rec.get("phenomenon") or task)
                category = rec.get("category") or category_for(paradigm, str(rec.get("linguistics_term") or paradigm))
                item = rec.get("item_id", rec.get("pairID"))
                extra = {k: v for k, v in rec.items() if k not in (good_f, bad_f, "paradigm", "category", "item_id",
                                                                   "suite", "task", "good", "bad") and k}
                extra["lm_eval_task"] = task
                out.append(Pair(suite=suite, paradigm=paradigm, category=str(category),
                                item_id=str(item) if item not in (None, "") else f"{task}:{row}",
                                good=str(rec[good_f]), bad=str(rec[bad_f]), extra=extra))
                row += 1
    return out
