"""MSGS-style data from povstim's own lexicon: paradigms -> splits -> JSONL files.

An ambiguous task is generated in paradigms of 8 sentences, a 2 × 2 × 2 design
over the linguistic feature (LL), the surface feature (LS) and the domain (MSGS
§3, Table 2). One paradigm draws the words of one in-domain and one
out-of-domain core and realises each with both values of both features:

    in-domain,  LL = LS   -> train        (ambiguous)
    in-domain,  LL != LS  -> inoculating  (disambiguating)
    out-domain, LL != LS  -> test         (disambiguating)
    out-domain, LL = LS   -> aux          (ambiguous)

The label is always LL. A control task is generated in paradigms of 4
(feature value × domain): in-domain -> train, out-of-domain -> test.

The inoculated training set of rate r *replaces* r × N of the N training
examples with inoculating ones (MSGS §2), so it still has N examples, and
exactly r × N of them disambiguate; see :func:`training_set`.

Everything is a function of (seed, task name): adding a task or changing the
item counts of one task never changes another task's sentences.
"""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass
from pathlib import Path

from ...io import PovstimError, atomic_write, write_json
from .features import Task
from .lexicon import NEW_WORDS
from .linguistic import TEMPLATES, Template, max_words
from .surface import FRAMES, adjunct, length_threshold

SPLITS = {"control": ("train", "test"), "ambiguous": ("train", "inoculating", "test", "aux")}
DOMAINS = ("in", "out")


class GenerationError(ValueError):
    """A task that cannot be generated (no template fits): a config error, raised before any job runs."""


@dataclass(frozen=True)
class Counts:
    train: int  # ambiguous training examples
    test: int  # ambiguous disambiguating test examples (= aux examples)
    control_train: int
    control_test: int


def inoculation_count(rate: float, n_train: int) -> int:
    """rate × n_train as an exact whole number; ValueError when it is not one."""
    k = round(rate * n_train)
    if abs(rate * n_train - k) > 1e-6:
        raise ValueError(f"{rate} × {n_train} training examples = {rate * n_train:g} is not a whole number of examples")
    return int(k)


def _core_feature(task: Task) -> str:
    return task.linguistic or "neutral"


def _frame_name(task: Task) -> str:
    return task.surface or "neutral"


def compatible(task: Task, domain: str) -> list[Template]:
    """The core templates of ``task`` in ``domain`` whose both values the task's surface frame can carry."""
    frame = FRAMES[_frame_name(task)]
    probe = random.Random(0)
    out = []
    for t in TEMPLATES[_core_feature(task)]:
        if t.domain == domain and all(frame.requires(core, domain) for core in t.draw(probe)):
            out.append(t)
    if not out:
        raise GenerationError(
            f"task {task.name}: no {domain}-domain template of {_core_feature(task)} fits the "
            f"{_frame_name(task)} frame, so its {domain}-domain data would be empty"
        )
    return out


def threshold(task: Task) -> int | None:
    """The length feature's n for this task (it depends on the linguistic feature's core lengths, as in MSGS)."""
    return length_threshold(max_words(_core_feature(task))) if task.surface == "length" else None


def paradigm(task: Task, pid: int, rng: random.Random, templates: dict[str, list[Template]]) -> list[dict]:
    """One paradigm's records (8 for an ambiguous task, 4 for a control task)."""
    frame = FRAMES[_frame_name(task)]
    n = threshold(task)
    out = []
    for domain in DOMAINS:
        template = rng.choice(templates[domain])
        cores = template.draw(rng)
        size = frame.shared_adjunct_size(rng)
        shared = adjunct(rng, domain, size) if size else None
        if task.kind == "control":
            for value in (0, 1):
                if task.linguistic:
                    sentence = frame.build(cores[value], 0, domain, rng, shared)
                else:
                    sentence = frame.build(cores[0], value, domain, rng, shared, n)
                split = "train" if domain == "in" else "test"
                out.append(_record(task, sentence, value, value, pid, domain, template, split))
            continue
        for ll in (0, 1):
            for ls in (0, 1):
                sentence = frame.build(cores[ll], ls, domain, rng, shared, n)
                if domain == "in":
                    split = "train" if ll == ls else "inoculating"
                else:
                    split = "aux" if ll == ls else "test"
                rec = _record(task, sentence, ll, ll, pid, domain, template, split)
                rec["linguistic"], rec["surface"] = ll, ls
                out.append(rec)
    return out


def _record(task, sentence, label, value, pid, domain, template, split) -> dict:
    return {"sentence": sentence, "label": int(label), "linguistic": value if task.linguistic else None,
            "surface": value if task.surface else None, "domain": domain, "paradigm": pid,
            "template": template.name, "split": split}


def generate_task(task: Task, counts: Counts, inoculation: list[float], seed: int) -> dict[str, list[dict]]:
    """Every split of one task: {split: records}, each split shuffled with the seed."""
    templates = {d: compatible(task, d) for d in DOMAINS}
    if task.kind == "control":
        want = {"train": counts.control_train, "test": counts.control_test}
    else:
        k = max([inoculation_count(r, counts.train) for r in inoculation] + [0])
        # as many label-1 as label-0 inoculating examples: training_set takes ceil(k/2) of label 1
        want = {"train": counts.train, "inoculating": 2 * math.ceil(k / 2), "test": counts.test, "aux": counts.test}
    n_paradigms = max(math.ceil(n / 2) for n in want.values())
    rng = random.Random(f"povstim-msgs:{seed}:{task.name}")
    pools: dict[str, list[dict]] = {s: [] for s in SPLITS[task.kind]}
    for pid in range(n_paradigms):
        for rec in paradigm(task, pid, rng, templates):
            pools[rec["split"]].append(rec)
    out = {}
    for split, recs in pools.items():
        recs = recs[: want[split]]
        random.Random(f"povstim-msgs:{seed}:{task.name}:{split}").shuffle(recs)
        out[split] = recs
    return out


def training_set(train: list[dict], inoculating: list[dict], rate: float) -> list[dict]:
    """The training set of inoculation ``rate``: ``rate`` × N of the N ambiguous examples replaced.

    The inoculating examples are taken in file order, half with label 1 and half
    with label 0 (one more label-1 example when the count is odd), and each one
    replaces the last remaining ambiguous example with the same label, so the
    label balance of the training set never changes.
    """
    k = inoculation_count(rate, len(train))
    if k == 0:
        return list(train)
    ones = [r for r in inoculating if r["label"] == 1][: (k + 1) // 2]
    zeros = [r for r in inoculating if r["label"] == 0][: k // 2]
    if len(ones) + len(zeros) < k:
        raise PovstimError(f"inoculation rate {rate}: needs {k} inoculating examples, the data has {len(inoculating)}")
    drop = {1: len(ones), 0: len(zeros)}
    kept = []
    for rec in reversed(train):
        if drop[rec["label"]]:
            drop[rec["label"]] -= 1
            continue
        kept.append(rec)
    if any(drop.values()):
        raise PovstimError(f"inoculation rate {rate}: the training set lacks examples of a label to replace")
    kept.reverse()
    mixed = [r for pair in zip(ones, zeros) for r in pair] + ones[len(zeros):]
    return kept + mixed


def write_jsonl(path: Path, records: list[dict]) -> None:
    with atomic_write(path) as fh:
        for rec in records:
            fh.write(json.dumps(rec, sort_keys=True))
            fh.write("\n")


def read_jsonl(path: Path) -> list[dict]:
    try:
        with open(path, encoding="utf-8") as fh:
            return [json.loads(line) for line in fh if line.strip()]
    except FileNotFoundError:
        raise PovstimError(f"{path}: probe data file not found (run `povstim probe generate` first)") from None
    except json.JSONDecodeError as exc:
        raise PovstimError(f"{path}: not valid JSONL ({exc.msg} at line {exc.lineno})") from None


def write_data(out_dir: str | Path, tasks: list[Task], counts: Counts, inoculation: list[float], seed: int) -> dict:
    """Generate every task into ``out_dir/<task>/<split>.jsonl`` plus ``manifest.json``; return the manifest."""
    out_dir = Path(out_dir)
    manifest = {"seed": seed, "inoculation": list(inoculation), "items": counts.__dict__, "tasks": {},
                "new_words": list(NEW_WORDS)}
    total = 0
    for task in tasks:
        splits = generate_task(task, counts, inoculation, seed)
        for split, recs in splits.items():
            write_jsonl(out_dir / task.name / f"{split}.jsonl", recs)
            total += len(recs)
        manifest["tasks"][task.name] = {
            "kind": task.kind, "linguistic": task.linguistic, "surface": task.surface,
            "length_threshold": threshold(task), "counts": {s: len(r) for s, r in splits.items()},
        }
    manifest["sentences"] = total
    write_json(out_dir / "manifest.json", manifest)
    return manifest


def read_manifest(data_dir: str | Path) -> dict:
    path = Path(data_dir) / "manifest.json"
    if not path.is_file():
        raise PovstimError(f"{path}: no probe data manifest (run `povstim probe generate` first)")
    try:
        return json.loads(path.read_text())
    except ValueError:
        raise PovstimError(f"{path}: not valid JSON") from None
