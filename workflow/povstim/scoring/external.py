"""Any checkpointed Hugging Face model: find its checkpoints (folders or hub revisions), score each, learning curves.

A model given by a **local folder** may hold its checkpoints in any of three layouts, all recognised:

* BabyLM's: a subfolder per checkpoint named by the words seen, ``chck_1M``, ``chck_10M`` ... (the names of the
  BabyLM 2025 evaluation pipeline's revisions, which a hub repository holds as branches and a local copy as folders);
* the Hugging Face Trainer's: ``checkpoint-500``, ``checkpoint-1000`` ... (the step);
* povstim's own: ``checkpoints/step{N}`` or, with word checkpoints, ``checkpoints/chck_{budget}``
  (``scoring.items.checkpoints``).

A checkpoint is a folder with ``config.json`` and weights. The folder itself is the final model (revision ``main``)
when it holds one. A **hub repository id** is loaded with ``from_pretrained(repo, revision=...)`` for each
revision: those given (``revisions``), else its branches named ``chck_*`` (``huggingface_hub.list_repo_refs``);
povstim downloads only when asked (``download: true``), else the local Hugging Face cache must hold them.

Learning curves' x-axis: the words seen, read from a ``chck_`` name (``chck_10M`` = 10,000,000 words) where there
is one, else the step. A ``chck_`` folder's step is its ``manifest.json``'s (povstim) or ``trainer_state.json``'s
``global_step`` (HF Trainer); when neither says, its step is its words seen (every row needs a distinct step).
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path

from ..io import PovstimError, parse_size

CHCK_RE = re.compile(r"^chck_(\d+(?:\.\d+)?[kKmMbB]?)$")
TRAINER_RE = re.compile(r"^checkpoint-(\d+)$")
STEP_RE = re.compile(r"^step(\d+)$")
WEIGHTS = ("model.safetensors", "pytorch_model.bin", "model.safetensors.index.json", "pytorch_model.bin.index.json")
log = logging.getLogger("povstim.score")
LAYOUTS = "chck_* (BabyLM), checkpoint-N (HF Trainer), checkpoints/step{N} or checkpoints/chck_* (povstim)"


@dataclass(frozen=True)
class Revision:
    """One scored version of a model: a local folder, or a hub repository at a revision."""

    name: str  # main, chck_10M, checkpoint-500, step200
    source: str  # the folder, or the hub repository id
    revision: str | None  # the hub revision (None: a local folder)
    step: int
    words: int | None  # words seen (from a chck_ name), else None
    final: bool


def is_model_folder(path: Path) -> bool:
    return (path / "config.json").is_file() and any((path / w).is_file() for w in WEIGHTS)


def chck_words(name: str) -> int | None:
    """Words seen of a ``chck_`` name: ``chck_10M`` -> 10000000; None for any other name."""
    m = CHCK_RE.match(name)
    return parse_size(m.group(1)) if m else None


def _folder_step(folder: Path, fallback: int) -> int:
    """A checkpoint folder's step: povstim's manifest.json, else the HF Trainer's trainer_state.json, else
    ``fallback``."""
    for name, key in (("manifest.json", "step"), ("trainer_state.json", "global_step")):
        f = folder / name
        if f.is_file():
            try:
                value = json.loads(f.read_text()).get(key)
            except (OSError, ValueError, AttributeError):
                raise PovstimError(f"{f} is not valid JSON") from None
            if isinstance(value, int):
                return value
    return fallback


def local_checkpoints(root: Path) -> list[Revision]:
    """The checkpoint folders of a local model folder, in any of the three layouts, by words seen or step."""
    out = []
    for folder in sorted([*root.glob("chck_*"), *root.glob("checkpoint-*"), *(root / "checkpoints").glob("*")]):
        if not folder.is_dir() or not is_model_folder(folder):
            continue
        words = chck_words(folder.name)
        trainer, step_m = TRAINER_RE.match(folder.name), STEP_RE.match(folder.name)
        if words is not None:
            step = _folder_step(folder, words)
        elif trainer:
            step = int(trainer.group(1))
        elif step_m and folder.parent.name == "checkpoints":
            step = int(step_m.group(1))
        else:
            continue
        name = str(folder.relative_to(root))
        out.append(Revision(name, str(folder), None, step, words, False))
    # povstim's word checkpoints make its step checkpoints resume points (scoring.items.checkpoints): keep those out
    if any(r.words is not None and r.name.startswith("checkpoints/") for r in out):
        out = [r for r in out if not STEP_RE.match(Path(r.name).name)]
    return sorted(out, key=lambda r: (r.words if r.words is not None else -1, r.step, r.name))


def find_revisions(model: str, checkpoints: bool = True, revisions=None, where: str = "--model",
                   download: bool = False) -> list[Revision]:
    """The versions of ``model`` to score: its checkpoints (when ``checkpoints``), then the final model.

    ``revisions``: only these checkpoint names (local subfolders, or hub revisions). Errors name ``where`` (the
    config key or flag) and the path: a folder that is neither a model nor holds checkpoints, no checkpoints when
    they are asked for, a named revision that is not there."""
    if is_local(model):
        return _local_revisions(Path(model).expanduser(), checkpoints, revisions, where)
    return _hub_revisions(model, checkpoints, revisions, where, download)


def is_local(model: str) -> bool:
    """Whether ``model`` names a local folder (it exists, or is written as a path) rather than a hub repository."""
    return Path(model).expanduser().exists() or model.startswith((".", "/", "~")) or model.count("/") > 1


def _local_revisions(path: Path, checkpoints: bool, revisions, where: str) -> list[Revision]:
    if not path.is_dir():
        raise PovstimError(f"{where}: model folder {path} does not exist" if not path.exists() else
                           f"{where}: {path} is a file; give the model's folder")
    found = local_checkpoints(path)
    final = is_model_folder(path)
    if not final and not found:
        raise PovstimError(f"{where}: {path} is not a model folder: it has no config.json with weights, and no "
                           f"checkpoint folders ({LAYOUTS}) holding them")
    if revisions:
        names = {r.name: r for r in found} | {Path(r.name).name: r for r in found}
        missing = [n for n in revisions if n not in names]
        if missing:
            raise PovstimError(f"{where}: {path} has no checkpoint {', '.join(missing)} (it has: "
                               f"{', '.join(r.name for r in found) or 'none'})")
        found = sorted({names[n] for n in revisions}, key=found.index)
    if checkpoints and not found:
        raise PovstimError(f"{where}: {path} holds no checkpoint folders ({LAYOUTS}), but checkpoints are asked "
                           "for (set checkpoints to false to score the final model only)")
    out = list(found) if checkpoints or revisions else []
    if final:
        from .items import final_step

        out.append(Revision("main", str(path), None, final_step(path), None, True))
    return out


def _hub_revisions(repo: str, checkpoints: bool, revisions, where: str, download: bool) -> list[Revision]:
    names = list(revisions or [])
    if checkpoints and not names:
        try:
            from huggingface_hub import list_repo_refs

            refs = list_repo_refs(repo)
        except Exception as exc:  # noqa: BLE001 -- offline, unknown repo, private repo: one message
            raise PovstimError(f"{where}: no local folder {repo}, and the revisions of hub repository {repo!r} "
                               f"cannot be listed ({type(exc).__name__}: "
                               f"{str(exc).splitlines()[0] if str(exc) else ''}); give them as revisions: "
                               "[chck_1M, ...] or score a local copy") from None
        names = sorted((b.name for b in refs.branches if CHCK_RE.match(b.name)),
                       key=lambda n: chck_words(n) or 0)
        if not names:
            raise PovstimError(f"{where}: hub repository {repo!r} has no chck_* branches, but checkpoints are "
                               "asked for (set checkpoints to false to score its main revision only)")
    out = [Revision(n, repo, n, chck_words(n) if chck_words(n) is not None else i, chck_words(n), False)
           for i, n in enumerate(names)]
    return out + [Revision("main", repo, "main", max([r.step for r in out], default=0) + 1, None, True)]


def score_revisions(pairs: list[dict], revs: list[Revision], settings, meta: dict, threads: int | None = None,
                    unigram=None, download: bool = False):
    """Item scores of every revision (scoring/run.py's scorer, one target each), with ``revision`` and
    ``words_seen`` columns (words seen from a chck_ name; the final model's when it is the same files as a
    chck_ folder, else empty)."""
    import numpy as np
    import torch

    from . import run
    from .items import pair_sentences, same_model
    from .prepare import Preparations

    if threads:
        torch.set_num_threads(threads)
    tasks = run._task_frames(pairs, settings, meta)
    run.check_metric(pairs, settings, tasks is not None, unigram)
    sentences = pair_sentences(pairs) if tasks is None else None
    final = [r for r in revs if r.final]
    root = Path(final[0].source if final else revs[0].source)
    order = final + [r for r in revs if not r.final]
    # a checkpoint holding the final model's files (BabyLM's main is usually its last chck_): the final rows, not a
    # second scoring
    same = {r.name for r in order[1:] if final and root.is_dir() and Path(r.source).is_dir()
            and same_model(Path(r.source), root)}
    targets = [(r.step, r.source, r.final, r.revision, download) for r in order if r.name not in same]
    prepared = Preparations(sentences) if sentences is not None else None
    try:
        frame = run._score_targets(pairs, targets, root, tasks, sentences, prepared, settings, meta, unigram)
    finally:
        if prepared is not None:
            prepared.close()
    if same:
        frame = _with_copies(frame, [r for r in order if r.name in same], order, settings, tasks is not None)
    by_step = {(r.step, r.final): r for r in revs}
    final_words = None
    if root.is_dir():  # a local final model saved at the last word budget: that budget's words
        final_words = next((r.words for r in revs if r.words is not None and not r.final
                            and same_model(Path(r.source), root)), None)
    keys = list(zip(frame["step"], frame["final"]))
    words = [final_words if final else by_step[(step, final)].words for step, final in keys]
    return frame.assign(revision=[by_step[k].name for k in keys],
                        words_seen=np.array([np.nan if w is None else float(w) for w in words]))


def _with_copies(frame, copies: list[Revision], order: list[Revision], settings, tasks: bool):
    """``frame`` plus the rows of each checkpoint in ``copies`` (the final model's files) made from the final rows:
    what scoring it would give (the same model, the same encodings), with a checkpoint's sensitivity columns (a
    causal checkpoint carries its own BOS setting only), in the order of ``order``."""
    import numpy as np
    import pandas as pd

    from . import run

    rows = frame[frame["final"]]
    parts = [frame]
    for r in copies:
        out = run.as_checkpoint_rows(rows, r.step)
        causal = (not tasks and settings.sensitivity and out["sum_bos_good"].notna().any()
                  and out["sum_nobos_good"].notna().any())  # a masked model's *_nobos columns stay empty
        if causal:
            other = "nobos" if settings.bos else "bos"
            for side in ("good", "bad"):
                out[f"sum_{other}_{side}"] = np.full(len(out), np.nan)
                out[f"ntok_{other}_{side}"] = np.zeros(len(out), dtype=np.int64)
        log.info("%s (step %d): the final model's files, its scores (not scored again)", r.source, r.step)
        parts.append(out)
    frame = pd.concat(parts, ignore_index=True)
    rank = {(r.step, r.final): k for k, r in enumerate(order)}
    key = [rank[(int(s), bool(f))] for s, f in zip(frame["step"], frame["final"])]
    return frame.iloc[np.argsort(key, kind="stable")].reset_index(drop=True)


def curve(frame):
    """Accuracy per suite x revision x paradigm, plus each revision's mean over paradigms (paradigm ``all``): the
    learning curve (x-axis: words_seen where the names give it, else step), checkpoints by words/step, then the
    final model."""
    import pandas as pd

    keys = ["suite", "revision", "step", "final"]
    frame = frame.assign(words_seen=frame["words_seen"].astype("float64"))
    per = (frame.groupby(keys + ["paradigm"], sort=False, dropna=False)
           .agg(words_seen=("words_seen", "first"), n=("correct", "size"), accuracy=("correct", "mean"))
           .reset_index())
    overall = (per.groupby(keys, sort=False, dropna=False)
               .agg(words_seen=("words_seen", "first"), n=("n", "sum"), accuracy=("accuracy", "mean")).reset_index()
               .assign(paradigm="all"))
    out = pd.concat([per, overall], ignore_index=True)
    out = out.sort_values(["suite", "final", "words_seen", "step", "paradigm"], kind="mergesort", na_position="last")
    return out.reset_index(drop=True)[["suite", "revision", "step", "words_seen", "final", "paradigm", "n",
                                       "accuracy"]]
