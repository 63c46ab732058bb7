"""One training per identical run: a void duplicate -- a condition whose training text is another's
(BABY got nothing back, so its corpus is BABY-F's byte for byte) -- is not trained again.

Which conditions are duplicates is known only once the condition stage has written their corpora, so the DAG
cannot drop the job; the train job itself finds the duplicate, content-addressed. Its key is the run's resume key
(``loop.run_key``: the sha256 of the train, dev and tokenizer files, the arch, the training settings, the seed, a
bias's extra inputs and the training code) plus what that key leaves out but the folder's files depend on
(``training.checkpoint_words``: the word checkpoints) and the versions of torch and transformers. The experiment's
train jobs share an index folder (``--reuse-dir``; the rules pass ``results/<exp>/models/.reuse``) with one
sub-folder per key:

    .reuse/<key>/.povstim.lock   held (io.folder_lock, PID recorded) by the job training that key, for its whole run
    .reuse/<key>/trained.json    written once that run has finished: its folder and its final files' sha256

A second job with the same key waits on the lock, then finds ``trained.json``, checks that the folder it names is
still that finished run (its train_summary.json key, its final files' sha256) and makes its own folder a copy of
it: the rule's outputs (config, weights, log) copied, so that Snakemake finds them newer than the twin's inputs,
every other file (checkpoints, tokenizer files) cloned (a reflink where the file system has them, else a copy:
never a hard link, which would let a file damaged or rewritten in one folder damage its twin), and
``train_summary.json`` rewritten with its own ``model`` record and ``reused`` naming the model it came from.
On CPU the weights, config, tokenizer files
and checkpoints are byte for byte what training it would have written (training is deterministic there); the
log and summary keep the first run's timings and say it was reused. A first job killed mid-training leaves no
``trained.json`` (it is written after the final model), and its lock dies with it: the waiting job takes the lock
over and trains itself. A different seed, arch, training setting, tokenizer or training code is another key: it
trains.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
from importlib import metadata
from pathlib import Path

from ..io import LOCK_FILE, PovstimError, sha256_file, write_json
from .checkpoints import FINAL_FILES, SUMMARY_FILE, CheckpointStore

log = logging.getLogger("povstim.train")

RECORD = "trained.json"
# what the copy leaves out: the source's lock, its summary (rewritten), working files a finished run has none of
_SKIP = {LOCK_FILE, SUMMARY_FILE, "train_log.partial.jsonl", "best"}


def reuse_key(run_key: str, training) -> str:
    """The index key of a run: its resume key + ``checkpoint_words`` + the torch/transformers versions."""
    versions = {}
    for pkg in ("torch", "transformers"):
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            versions[pkg] = None
    payload = {"run": run_key, "checkpoint_words": training.checkpoint_words, "versions": versions}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:20]


def final_hashes(folder: Path) -> dict[str, str]:
    return {name: sha256_file(folder / name) for name in FINAL_FILES}


def _read_record(index: Path) -> tuple[Path, dict] | None:
    """(the folder ``index/trained.json`` names, the record); None when there is none or it cannot be read."""
    try:
        rec = json.loads((index / RECORD).read_text(encoding="utf-8"))
        return (index / rec["out_dir"]).resolve(), rec
    except (OSError, ValueError, KeyError, TypeError):
        return None


def source_of(index: Path, run_key: str, out: Path) -> tuple[Path, dict] | None:
    """(the folder, its train_summary.json) of the finished run ``index/trained.json`` names, when it is still
    that run (key and final files as recorded) and not ``out`` itself; None otherwise (nothing trained yet, a
    killed first job, a folder deleted, retrained or changed since)."""
    found = _read_record(index)
    if found is None:
        return None
    folder, rec = found
    if folder == out.resolve() or rec.get("key") != run_key:
        return None
    summary = CheckpointStore(folder, run_key).finished()
    if summary is None:
        log.info("%s names %s, which no longer holds that finished run: training", index / RECORD, folder)
        return None
    if final_hashes(folder) != rec.get("files"):
        log.warning("%s: the files of %s differ from those it recorded (changed since): training instead of "
                    "reusing them", index / RECORD, folder)
        return None
    return folder, summary


def recorded(index: Path, run_key: str, out: Path) -> bool:
    """``index/trained.json`` already names ``out`` as the finished run of ``run_key``, with its final files as
    they are now: a rerun into the finished folder then leaves the index as it is (nothing changed)."""
    found = _read_record(index)
    if found is None:
        return False
    folder, rec = found
    return folder == out.resolve() and rec.get("key") == run_key and rec.get("files") == final_hashes(out)


def record(index: Path, out: Path, run_key: str, summary: dict) -> None:
    """``index/trained.json``: ``out`` holds the finished run of ``run_key`` (path relative to the index, so the
    results folder may move)."""
    write_json(index / RECORD, {"out_dir": os.path.relpath(out.resolve(), index.resolve()), "key": run_key,
                                "model": summary.get("model"), "files": final_hashes(out)})


FICLONE = 0x40049409  # Linux's ioctl for a copy-on-write clone (btrfs, XFS, ...)


def _clone(src: Path, dst: Path) -> None:
    """``dst``, a file of its own with ``src``'s bytes: a copy-on-write clone where the file system makes one (no
    second copy on disk until either side is written), else a copy. Never a hard link: the twins would share one
    inode, and a checkpoint truncated or rewritten in one model's folder would be so in the other's too."""
    try:
        import fcntl

        with open(src, "rb") as fi, open(dst, "wb") as fo:
            fcntl.ioctl(fo.fileno(), FICLONE, fi.fileno())
        return
    except (OSError, ImportError):  # no reflinks here (ext4, tmpfs, another file system): copy the bytes
        pass
    shutil.copyfile(src, dst)


def _copy(src: Path, dst: Path) -> None:
    """The train rule's outputs are copied, not linked: a link shares the source's mtime, older than the twin's
    own inputs may be, and Snakemake would take the twin's model for outdated at every later run (touching the
    shared file instead would make the source's scores look outdated)."""
    shutil.copyfile(src, dst)


def _clone_tree(src: Path, dst: Path) -> None:
    dst.mkdir()
    for p in sorted(src.iterdir()):
        if p.name.startswith("."):  # a hidden .tmp folder is a write nobody finished
            continue
        if p.is_dir():
            _clone_tree(p, dst / p.name)
        elif p.is_file():
            _clone(p, dst / p.name)


def copy_model(source: Path, summary: dict, out: Path, run_key: str, meta: dict, seed: int) -> dict:
    """Make ``out`` the finished run ``source`` holds (its files cloned, the checkpoints too); its summary is
    ``summary`` with this model's ``model`` record and ``reused``. Written so that a kill leaves ``out`` unfinished
    (no train_summary.json until every other file is in place), never a half model read as finished."""
    store = CheckpointStore(out, run_key)
    store.start_afresh()  # anything a run of other inputs (or a killed one) left
    out.mkdir(parents=True, exist_ok=True)
    for p in sorted(source.iterdir()):
        if p.name in _SKIP or p.name.startswith("."):
            continue
        tmp = out / f".{p.name}.reuse.tmp"
        if tmp.is_dir():
            shutil.rmtree(tmp)
        elif tmp.exists():
            tmp.unlink()
        if p.is_dir():
            _clone_tree(p, tmp)
            if (out / p.name).exists():
                shutil.rmtree(out / p.name)
        else:
            (_copy if p.name in FINAL_FILES else _clone)(p, tmp)
        os.replace(tmp, out / p.name)
    mine = {**summary, "model": {**meta, "seed": int(seed)},
            "reused": {"from": str(source), "model": summary.get("model"), "key": run_key,
                       "reason": "identical train, dev and tokenizer files, arch, training settings, seed and code"}}
    write_json(out / SUMMARY_FILE, mine)  # last: until it is there, the folder is no finished run
    return mine


def describe(source: Path, summary: dict, train: str) -> str:
    """The job log's line about a reused model."""
    was = (summary.get("model") or {}).get("condition") or source
    return (f"reused the model trained for {was} ({source}): identical corpus (train.txt sha256 "
            f"{sha256_file(train)[:16]}…, the same dev and tokenizer files), arch, training settings, seed and "
            "code: not trained again")


def check_index(index: str | None) -> Path | None:
    if index is None:
        return None
    path = Path(index)
    if path.exists() and not path.is_dir():
        raise PovstimError(f"--reuse-dir {index}: not a folder")
    return path
