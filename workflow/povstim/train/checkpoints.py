"""The checkpoint store of one training run: resume, checkpoints, best-so-far weights, pruning, the final folder.

Layout of an output folder DIR while training runs:

    DIR/checkpoints/step{N}/   model folder (config, weights, tokenizer) + the log up to step N
                               (train_log.jsonl) + manifest.json; the newest two also hold
                               trainer_state.pt (optimizer, RNG, early-stopping state), so a killed
                               job resumes at the newest and falls back to the one before it
    DIR/checkpoints/chck_{B}/  with training.checkpoint_words: the model after the first step whose words seen
                               reach budget B (chck_1M, BabyLM's names), + the log up to it and manifest.json
                               (its step, words seen, budget); learning-curve snapshots, never resumed from
    DIR/best/step{N}/          the best-by-dev-loss weights so far (+ manifest.json)
    DIR/train_log.partial.jsonl

and when the run finishes, DIR itself becomes the best model (config.json, model.safetensors,
tokenizer files), with train_log.jsonl and train_summary.json, and only the last checkpoint keeps
trainer_state.pt. None of the checkpoint files are Snakemake outputs, so a failed job's checkpoints
survive for the rerun to resume from.

**Every folder is verified before it is used.** A checkpoint (or best) folder is written as a hidden
``.step{N}.tmp`` folder, its files made readable as the umask says (0644 by default), then sealed
with ``manifest.json`` -- the sha256 of each of its files, written last -- and renamed into place.
Resuming checks every file of the newest checkpoint holding trainer_state.pt against its manifest,
and the best weights it refers to; a missing, truncated or altered file is a warning naming it, and
the run falls back to the checkpoint before it, else starts from scratch: a damaged checkpoint never
stops a run. Hidden ``.tmp`` folders left by a killed write are removed.

**A full disk** (ENOSPC, EDQUOT, EFBIG) while writing a checkpoint, the best weights, the log or the final
model is a :class:`povstim.io.PovstimError` naming the path ("no space left on device writing …",
``povstim.io.writing``, as for every stage), and leaves no ``.tmp`` folder behind.

A checkpoint also records a key (hash of data, tokenizer, arch, training params, seed and the training
code): when anything changed, old checkpoints are discarded instead of resumed.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import torch

# a full disk is io's to report, for every stage alike (no_space, writing)
from ..io import atomic_write, sha256_file, writing, write_json

log = logging.getLogger("povstim.train")
STATE_FILE = "trainer_state.pt"
MANIFEST = "manifest.json"
LOG_FILE = "train_log.jsonl"
SUMMARY_FILE = "train_summary.json"
# a finished folder's files (the train rule's outputs, rules/train.smk) beside train_summary.json
FINAL_FILES = ("config.json", "model.safetensors", LOG_FILE)
# checkpoints that keep trainer_state.pt while a run trains: the newest, and the one to fall back on
KEEP_STATES = 2
_STEP_RE = re.compile(r"^step(\d+)$")
WORDS_PREFIX = "chck_"  # train/budgets.PREFIX
@dataclass
class RunState:
    """Where the loop is; a checkpoint's trainer_state.pt holds it (with the optimizer and RNG states)."""

    step: int = 0
    best_loss: float = math.inf
    best_step: int = 0
    elapsed: float = 0.0
    finished: bool = False
    stop_reason: str = ""
    tokens_seen: int = 0  # training tokens (non-pad) of every step so far: sizes compare by it
    decay_start: int | None = None  # schedule wsd: the step the plateau was found and the lr decay began


def steps(folder: Path, need: str | None = None) -> list[int]:
    """The N of every ``step{N}`` folder in ``folder`` (holding the file ``need``), ascending."""
    if not folder.is_dir():
        return []
    out = []
    for p in folder.iterdir():
        m = _STEP_RE.match(p.name)
        if m and p.is_dir() and (need is None or (p / need).exists()):
            out.append(int(m.group(1)))
    return sorted(out)


def seal(folder: Path, **meta) -> None:
    """Give ``folder``'s files the umask's mode and write its manifest (their sha256s) last."""
    umask = os.umask(0)
    os.umask(umask)
    files = {}
    for f in sorted(folder.iterdir()):
        if f.is_file() and f.name != MANIFEST:
            # safetensors writes weights 0600; a model folder's files are ordinary files
            os.chmod(f, 0o666 & ~umask)
            files[f.name] = sha256_file(f)
    with open(folder / MANIFEST, "w", encoding="utf-8") as fh:
        fh.write(json.dumps({**meta, "files": files}, indent=1, sort_keys=True) + "\n")
    os.chmod(folder / MANIFEST, 0o666 & ~umask)


def damage(folder: Path, state: bool = True) -> str | None:
    """What is wrong with a sealed folder (naming the file), or None when every file matches its manifest;
    ``state=False`` skips trainer_state.pt (older checkpoints drop it)."""
    manifest = folder / MANIFEST
    try:
        files = json.loads(manifest.read_text(encoding="utf-8"))["files"]
        files = dict(files)
    except (OSError, ValueError, KeyError, TypeError):
        return f"{manifest} is missing or unreadable"
    for name, digest in sorted(files.items()):
        if name == STATE_FILE and not state:
            continue
        path = folder / name
        if not path.is_file():
            return f"{path} is missing"
        if sha256_file(path) != digest:
            return f"{path} is damaged (its sha256 differs from {MANIFEST}'s)"
    return None


def _replace_dir(tmp: Path, final: Path) -> None:
    if final.exists():
        shutil.rmtree(final)
    os.replace(tmp, final)


class CheckpointStore:
    """The checkpoints, best weights, log and final model of the run in ``out`` whose inputs hash to ``key``."""

    def __init__(self, out: Path, key: str):
        self.out, self.key = Path(out), key
        self.ckpt_dir = self.out / "checkpoints"
        self.best_dir = self.out / "best"
        self.partial_log = self.out / "train_log.partial.jsonl"

    def steps(self) -> list[int]:
        """The steps of the checkpoints on disk."""
        return steps(self.ckpt_dir)

    def finished(self) -> dict | None:
        """The train_summary.json of a finished run of this key whose final files are all there, else None
        (nothing trained yet, a run from other inputs, a crashed or interrupted one, outputs deleted)."""
        try:
            summary = json.loads((self.out / SUMMARY_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(summary, dict) or summary.get("key") != self.key or self.partial_log.exists():
            return None
        if not all((self.out / name).is_file() for name in FINAL_FILES):
            return None
        return summary

    def start_afresh(self) -> None:
        """Forget the run in ``out`` (``povstim train --force``): checkpoints, best weights, the partial log and
        train_summary.json go, so that the folder is not a finished run until this one finishes; the final
        files are replaced when it does."""
        self.discard()
        (self.out / SUMMARY_FILE).unlink(missing_ok=True)

    # ------------------------------------------------------------- writing
    @contextlib.contextmanager
    def _sealed(self, final: Path, **meta):
        """Yield a fresh hidden folder to write ``final``'s files into; seal it and rename it into place.
        On any failure the hidden folder is removed (and a full disk is a PovstimError naming ``final``)."""
        tmp = final.parent / f".{final.name}.tmp"
        try:
            with writing(final):
                if tmp.exists():
                    shutil.rmtree(tmp)
                tmp.mkdir(parents=True)
                yield tmp
                seal(tmp, **meta)
                _replace_dir(tmp, final)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)

    def save(self, state: RunState, extra: dict, write_model) -> None:
        """checkpoints/step{N}: ``write_model(folder)`` writes the model folder; ``state`` and ``extra``
        (optimizer, RNG states) go to trainer_state.pt with the key, the log so far beside them."""
        with self._sealed(self.ckpt_dir / f"step{state.step}", step=state.step, best_step=state.best_step) as tmp:
            write_model(tmp)
            # through a Python file: a full disk stays an OSError (torch's own writer reports "iostream error")
            with open(tmp / STATE_FILE, "wb") as fh:
                torch.save({"key": self.key, **vars(state), **extra}, fh)
            # the log up to this step travels with the checkpoint, so a resumed run continues it exactly
            if self.partial_log.exists():
                shutil.copyfile(self.partial_log, tmp / LOG_FILE)
        # only the newest checkpoints keep the optimizer state (the last one alone once the run is finished):
        # older ones stay as learning-curve snapshots
        self.prune_states(1 if state.finished else KEEP_STATES)
        self.prune_best(state.best_step)

    def save_words(self, name: str, step: int, words: int, write_model) -> None:
        """checkpoints/chck_{name}: the model at ``step``, the first whose words seen (``words``) reach the budget
        ``name``; the log so far beside it. No trainer state: a run resumes from its step checkpoints."""
        final = self.ckpt_dir / f"{WORDS_PREFIX}{name}"
        with self._sealed(final, step=step, words=words, budget=name) as tmp:
            write_model(tmp)
            if self.partial_log.exists():
                shutil.copyfile(self.partial_log, tmp / LOG_FILE)

    def word_checkpoints(self) -> dict[str, int]:
        """budget name -> step of the sealed chck_* folders on disk."""
        out = {}
        if self.ckpt_dir.is_dir():
            for p in sorted(self.ckpt_dir.glob(f"{WORDS_PREFIX}*")):
                try:
                    out[p.name[len(WORDS_PREFIX):]] = int(json.loads((p / MANIFEST).read_text("utf-8"))["step"])
                except (OSError, ValueError, KeyError, TypeError):
                    out[p.name[len(WORDS_PREFIX):]] = -1  # unreadable: the resume below rewrites it
        return out

    def prune_states(self, keep: int) -> None:
        """trainer_state.pt stays in the newest ``keep`` checkpoints only."""
        for s in steps(self.ckpt_dir, STATE_FILE)[:-keep]:
            (self.ckpt_dir / f"step{s}" / STATE_FILE).unlink()

    def save_best(self, step: int, write_weights) -> None:
        """best/step{step}: ``write_weights(folder)`` writes the weights."""
        with self._sealed(self.best_dir / f"step{step}", step=step, best_step=step) as tmp:
            write_weights(tmp)
        self.prune_best(step)

    def prune_best(self, best_step: int) -> None:
        """Remove best weights nobody needs: all but ``best_step`` and those a resumable checkpoint refers to."""
        keep = {best_step}
        for s in steps(self.ckpt_dir, STATE_FILE):
            try:
                keep.add(json.loads((self.ckpt_dir / f"step{s}" / MANIFEST).read_text(encoding="utf-8"))["best_step"])
            except (OSError, ValueError, KeyError, TypeError):
                pass  # a damaged checkpoint: resume will not use it
        for s in steps(self.best_dir):
            if s not in keep:
                shutil.rmtree(self.best_dir / f"step{s}")

    def write_log(self, entry: dict) -> None:
        self.partial_log.parent.mkdir(parents=True, exist_ok=True)
        with writing(self.partial_log), open(self.partial_log, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry, sort_keys=True) + "\n")

    def finalize(self, best_step: int, write_tokenizer, summary: dict) -> None:
        """DIR becomes the best model (its weights, the tokenizer), with train_summary.json and
        train_log.jsonl; the working copies (best/, the partial log) go."""
        best = self.best_dir / f"step{best_step}"
        for name in sorted(os.listdir(best)):
            if not name.startswith(".") and name != MANIFEST:
                with writing(self.out / name), open(best / name, "rb") as src, \
                        atomic_write(self.out / name, "wb") as dst:
                    shutil.copyfileobj(src, dst)
        with writing(self.out):
            write_tokenizer(self.out)
        with writing(self.out / SUMMARY_FILE):
            write_json(self.out / SUMMARY_FILE, summary)
        with writing(self.out / LOG_FILE), open(self.partial_log, "rb") as src, \
                atomic_write(self.out / LOG_FILE, "wb") as dst:
            shutil.copyfileobj(src, dst)
        self.prune_states(1)  # a run that resumed its finished state had not pruned yet
        shutil.rmtree(self.best_dir)
        self.partial_log.unlink()

    # ------------------------------------------------------------- resuming
    def resume(self, restore) -> RunState | None:
        """The state of the newest checkpoint that verifies, after ``restore(folder, state)`` has loaded its
        weights, optimizer and RNG states; None (every checkpoint discarded) when there is none to resume."""
        self._remove_unfinished_writes()
        damaged = False
        for step in reversed(steps(self.ckpt_dir, STATE_FILE)):
            folder = self.ckpt_dir / f"step{step}"
            state, problem = self._load(folder)
            if problem is None and state.get("key") != self.key:
                log.info("checkpoints in %s come from other data/params/code: starting from scratch", self.ckpt_dir)
                break
            if (problem is None and state.get("finished") and not (self.out / "model.safetensors").exists()
                    and not self.partial_log.exists()):
                # The run had finished and its outputs are gone: they were deleted on purpose (snakemake
                # --forcerun/-R deletes a job's outputs first). Forcing a stage must redo it, so train afresh.
                # A crash never leaves a *finished* checkpoint without outputs but with the partial log (which
                # finalize removes last): that run resumes and writes its final model again.
                log.info("%s holds a finished run but its outputs were deleted (a forced rerun): training from "
                         "scratch", self.ckpt_dir)
                break
            if problem is None:
                problem = self._best_weights(state["best_step"])
            if problem is not None:
                log.warning("cannot resume from %s: %s; trying the checkpoint before it", folder, problem)
                damaged = True
                continue
            restore(folder, state)
            # checkpoints and log lines from after this point belong to the killed run's future; replay rewrites them
            for s in steps(self.ckpt_dir):
                if s > step:
                    shutil.rmtree(self.ckpt_dir / f"step{s}")
            for name, s in self.word_checkpoints().items():
                if s > step or s < 0:
                    shutil.rmtree(self.ckpt_dir / f"{WORDS_PREFIX}{name}")
            if (folder / LOG_FILE).exists():
                shutil.copyfile(folder / LOG_FILE, self.partial_log)
            elif self.partial_log.exists():
                self.partial_log.unlink()
            run = RunState(**{k: state[k] for k in ("step", "best_loss", "best_step", "elapsed", "finished",
                                                    "stop_reason")}, tokens_seen=int(state.get("tokens_seen", 0)),
                           decay_start=state.get("decay_start"))
            log.info("resumed from %s (step %d, best dev loss %.4f at step %d)", folder, run.step, run.best_loss,
                     run.best_step)
            return run
        else:
            if damaged:
                log.warning("no usable checkpoint in %s: training from scratch", self.ckpt_dir)
        self.discard()
        return None

    def _load(self, folder: Path) -> tuple[dict | None, str | None]:
        """(trainer state, None) of a checkpoint whose files all match its manifest, else (None, what is wrong)."""
        problem = damage(folder)
        if problem is not None:
            return None, problem
        try:
            return torch.load(folder / STATE_FILE, map_location="cpu", weights_only=True), None
        except Exception as exc:  # noqa: BLE001 - any unreadable state is a damaged checkpoint
            return None, f"{folder / STATE_FILE} cannot be read ({exc})"

    def _best_weights(self, best_step: int) -> str | None:
        """Make sure best/step{best_step} is whole (a finished run removed best/: the checkpoint of that step
        holds the same weights); what is wrong when it cannot be."""
        if not best_step:
            return None
        best = self.best_dir / f"step{best_step}"
        if best.is_dir() and damage(best) is None:
            return None
        source = self.ckpt_dir / f"step{best_step}"
        if not source.is_dir() or damage(source, state=False) is not None:
            return f"the best weights of step {best_step} ({best}) are missing or damaged"
        with self._sealed(best, step=best_step, best_step=best_step) as tmp:
            for f in sorted(source.iterdir()):
                if f.is_file() and f.name not in (STATE_FILE, MANIFEST, LOG_FILE):
                    shutil.copyfile(f, tmp / f.name)
        return None

    def _remove_unfinished_writes(self) -> None:
        """Hidden .tmp folders are writes a killed job did not finish: never read, removed."""
        for folder in (self.ckpt_dir, self.best_dir):
            if folder.is_dir():
                for tmp in sorted([*folder.glob(".step*.tmp"), *folder.glob(f".{WORDS_PREFIX}*.tmp")]):
                    log.info("removing %s (an unfinished write)", tmp)
                    shutil.rmtree(tmp, ignore_errors=True)

    def discard(self) -> None:
        for folder in (self.ckpt_dir, self.best_dir):
            if folder.exists():
                shutil.rmtree(folder)
        if self.partial_log.exists():
            self.partial_log.unlink()
