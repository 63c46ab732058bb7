"""A full disk in every stage: one line naming the output being written, exit 1, no traceback and
nothing half-written (no temporary file, the named output absent).

The stages write into a real, tiny, full file system: a tmpfs mounted for the test (root only; skipped with the
reason otherwise). The same code path is also run without root, by a size limit on the process
(RLIMIT_FSIZE: a write past it fails with EFBIG, as the kernel reports a file too large for its file system)."""

from __future__ import annotations

import errno
import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from povstim import cli
from povstim.io import PovstimError, atomic_write, no_space, write_lines

REPO = Path(__file__).resolve().parents[1]
ROOM = 4096  # bytes left free (one page): a stage starts writing, then the disk is full
TRAINING = {"lr": 1e-3, "batch_size": 8, "context": 64, "warmup": 1, "max_steps": 4, "patience": 100,
            "eval_every": 2, "save_every": 2, "log_every": 2, "dropout": 0.1, "device": "cpu"}
ARCH = {"family": "gpt2", "n_layer": 1, "n_embd": 32, "n_head": 2, "n_inner": 64}


def _mount_tmpfs(where: Path, size: str) -> str | None:
    """Mount a tmpfs at ``where``; None on success, else why it cannot be."""
    where.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        return "mounting a tmpfs needs root"
    try:
        proc = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                              capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"cannot run mount ({exc})"
    return None if proc.returncode == 0 else f"mount -t tmpfs failed: {proc.stderr.strip()}"


def _fill(root: Path, room: int) -> None:
    """Fill the file system of ``root`` with one file, then free ``room`` bytes of it."""
    filler = root / "filler.bin"
    block = b"\0" * (1 << 16)
    with open(filler, "wb", buffering=0) as fh:
        try:
            while True:
                fh.write(block)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    os.truncate(filler, max(0, filler.stat().st_size - room))


@pytest.fixture
def full_disk(tmp_path):
    """A folder on a tiny tmpfs with ``ROOM`` bytes free."""
    mnt = tmp_path / "full"
    why = _mount_tmpfs(mnt, "2m")
    if why:
        pytest.skip(why)
    try:
        _fill(mnt, ROOM)
        yield mnt / "out"
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict:
    """Every stage's inputs, made by the stages themselves on an ordinary disk (tiny sizes)."""
    d = tmp_path_factory.mktemp("inputs")
    synth = {"kind": "synthetic", "register": "child", "sentences": 800, "seed": 11,
             "dpe_rate": {"question_formation": 0.02, "binding": 0.01}}
    gold = {"backend": "gold", "batch_size": 256, "cache_dir": str(d / "cache"), "device": "cpu", "fallback": None,
            "prefilter": True, "prefilter_check": 200, "shards": 1}
    steps = [
        ["synth", "--params", json.dumps(synth), "--out-text", f"{d}/cds.txt", "--out-conllu", f"{d}/cds.conllu"],
        ["assemble", "--input", f"cds={d}/cds.txt", "--mixture", '{"cds": 1.0}', "--words", "3k", "--seed", "1",
         "--tolerance", "0.02", "--corpus-name", "baby", "--out", f"{d}/base.txt", "--stats", f"{d}/stats.json"],
        ["parse", "--input", f"{d}/base.txt", "--gold", f"{d}/cds.conllu", "--params", json.dumps(gold),
         "--filter-params", '{"rules": ["question_formation", "binding"]}', "--language", "en", "--shard", "0",
         "--n-shards", "1", "--out", f"{d}/0.conllu"],
        ["filter", f"{d}/0.conllu", "--base", f"{d}/base.txt", "--params",
         '{"mode": "posh", "rules": ["question_formation", "binding"]}', "--out", f"{d}/dpe.tsv",
         "--summary", f"{d}/summary.json", "--audit-dir", f"{d}/audit", "--cores", "1"],
        ["condition", "--base", f"{d}/base.txt", "--dpe", f"{d}/dpe.tsv", "--split",
         '{"dev_fraction": 0.1, "seed": 1}', "--out-train", f"{d}/train.txt", "--out-dev", f"{d}/dev.txt",
         "--stats", f"{d}/condition.json", "--out-audit", f"{d}/operations.tsv"],
        ["tokenize", "--train", f"{d}/train.txt", "--params", '{"vocab_size": 300}', "--out", f"{d}/tokenizer.json"],
    ]
    for argv in steps:
        assert cli.main(argv) == 0, argv
    lines = [f"The child number {i} saw a red ball in the garden today." for i in range(600)]
    write_lines(d / "mine.txt", lines)
    return {"d": d}


@pytest.fixture(scope="module")
def trained(inputs) -> dict:
    """A trained tiny model and a suite for the score stage (torch: only the tests that score ask for it)."""
    d = inputs["d"]
    for argv in (
        ["train", "--train", f"{d}/train.txt", "--dev", f"{d}/dev.txt", "--tokenizer", f"{d}/tokenizer.json",
         "--arch", json.dumps(ARCH), "--params", json.dumps(TRAINING), "--seed", "1", "--out-dir", f"{d}/model",
         "--threads", "1", "--no-progress"],
        ["benchmark", "--suite", "posh", "--params", '{"kind": "generated", "pairs_per_paradigm": 4, "seed": 1}',
         "--out-dir", f"{d}/posh"],
    ):
        assert cli.main(argv) == 0, argv
    return inputs


def stage_commands(d: Path, out: Path) -> dict[str, list[str]]:
    """Each stage's command with its outputs under ``out``."""
    local = {"kind": "local", "format": "lines", "path": str(d / "mine.txt")}
    synth = {"kind": "synthetic", "register": "child", "sentences": 800, "seed": 11}
    gold = {"backend": "gold", "cache_dir": str(d / "cache"), "device": "cpu", "shards": 1}
    return {
        "clean": ["clean", "--source", "mine", "--params", json.dumps(local), "--out", f"{out}/mine.txt",
                  "--stats", f"{out}/mine.stats.json"],
        "synth": ["synth", "--params", json.dumps(synth), "--out-text", f"{out}/cds.txt", "--out-conllu",
                  f"{out}/cds.conllu"],
        "assemble": ["assemble", "--input", f"cds={d}/cds.txt", "--mixture", '{"cds": 1.0}', "--words", "3k",
                     "--seed", "1", "--tolerance", "0.02", "--corpus-name", "baby", "--out", f"{out}/base.txt",
                     "--stats", f"{out}/stats.json"],
        "parse": ["parse", "--input", f"{d}/base.txt", "--gold", f"{d}/cds.conllu", "--params", json.dumps(gold),
                  "--language", "en", "--shard", "0", "--n-shards", "1", "--out", f"{out}/0.conllu"],
        "filter": ["filter", f"{d}/0.conllu", "--base", f"{d}/base.txt", "--params",
                   '{"mode": "posh", "rules": ["question_formation", "binding"], "audit_sample": 1000}',
                   "--out", f"{out}/dpe.tsv", "--summary", f"{out}/summary.json", "--audit-dir", f"{out}/audit",
                   "--cores", "1"],
        "condition": ["condition", "--base", f"{d}/base.txt", "--dpe", f"{d}/dpe.tsv", "--split",
                      '{"dev_fraction": 0.1, "seed": 1}', "--out-train", f"{out}/train.txt", "--out-dev",
                      f"{out}/dev.txt", "--stats", f"{out}/condition.json", "--out-audit", f"{out}/operations.tsv"],
        "tokenize": ["tokenize", "--train", f"{d}/train.txt", "--params", '{"vocab_size": 300}', "--out",
                     f"{out}/tokenizer.json"],
        "word-stats": ["word-stats", f"{d}/0.conllu", "--out", f"{out}/words.tsv"],
        "benchmark": ["benchmark", "--suite", "posh", "--params",
                      '{"kind": "generated", "pairs_per_paradigm": 40, "seed": 1}', "--out-dir", f"{out}/posh"],
        "train": ["train", "--train", f"{d}/train.txt", "--dev", f"{d}/dev.txt", "--tokenizer",
                  f"{d}/tokenizer.json", "--arch", json.dumps(ARCH), "--params", json.dumps(TRAINING), "--seed", "1",
                  "--out-dir", f"{out}/model", "--threads", "1", "--no-progress"],
        "score": ["score", "--model", f"{d}/model", "--suite", f"{d}/posh", "--params",
                  '{"batch_size": 32, "device": "cpu", "checkpoints": true}', "--threads", "1",
                  "--out", f"{out}/posh.parquet"],
    }


def _leftovers(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.name.endswith(".tmp")]


STAGES = ["clean", "synth", "assemble", "parse", "filter", "condition", "tokenize", "word-stats", "benchmark",
          "train", pytest.param("score", marks=pytest.mark.slow)]  # score: a model trained first


@pytest.mark.parametrize("stage", STAGES)
def test_a_full_disk_is_one_line_naming_the_output_in_every_stage(stage, request, inputs, full_disk, capsys):
    if stage == "score":
        request.getfixturevalue("trained")
    argv = stage_commands(inputs["d"], full_disk)[stage]
    assert cli.main(argv) == 1
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith(f"povstim {stage}: error:")]
    assert len(lines) == 1, err
    line = lines[0]
    assert line.startswith(f"povstim {stage}: error: no space left on device writing {full_disk}/"), line
    assert "Traceback" not in err and "Errno" not in line, err
    named = Path(line.split(" writing ", 1)[1].split(" (free space", 1)[0])
    assert not any(part.endswith(".tmp") for part in named.parts), named  # the output, not a temporary file
    assert not named.is_file(), f"{named} was left behind"
    assert not _leftovers(full_disk), _leftovers(full_disk)


def _limited(limit: int):
    def preexec():
        # the kernel sends SIGXFSZ past RLIMIT_FSIZE; ignored, the write fails with EFBIG as a full disk's does
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return preexec


@pytest.mark.parametrize("stage", ["clean", pytest.param("score", marks=pytest.mark.slow)])
def test_a_file_size_limit_is_the_same_one_line_without_root(stage, request, inputs, tmp_path):
    """No mount needed: the process may not write more than 8 KB to a file (EFBIG) -- a real write failing in
    the kernel, through the same writers (clean: povstim.io; score: pyarrow's writer inside atomic_path)."""
    if stage == "score":
        request.getfixturevalue("trained")
    out = tmp_path / "out"
    argv = stage_commands(inputs["d"], out)[stage]
    env = {**os.environ, "PYTHONPATH": str(REPO / "workflow"), "POVSTIM_NO_PROGRESS": "1"}
    env.pop("POVSTIM_WARM_SOCKET", None)
    proc = subprocess.run([sys.executable, "-m", "povstim", *argv], capture_output=True, text=True, env=env,
                          preexec_fn=_limited(8 * 1024), timeout=600)
    assert proc.returncode == 1, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith(f"povstim {stage}: error:")]
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert lines[0].startswith(f"povstim {stage}: error: file too large for its file system or size limit "
                               f"writing {out}/"), lines[0]
    assert not _leftovers(out)


def test_the_writers_name_the_output_and_remove_their_temporary_file(tmp_path):
    target = tmp_path / "a" / "b.txt"
    with pytest.raises(PovstimError, match=f"no space left on device writing {target} "):
        with atomic_write(target) as fh:
            fh.write("half")
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    assert not target.exists() and not list(target.parent.iterdir())
    # a library's own error that keeps only the OS's text (pyarrow, safetensors)
    assert no_space(OSError("Error writing bytes to file. Detail: [errno 122] Disk quota exceeded")) \
        == "disk quota exceeded"
    assert no_space(RuntimeError("I/O error: No space left on device (os error 28)")) == "no space left on device"
    assert no_space(OSError(errno.EACCES, "Permission denied")) is None
    assert no_space(PovstimError("no space left on device writing x")) is None


def test_cli_main_names_the_output_flag_when_a_library_writes_outside_the_writers(tmp_path, monkeypatch, capsys):
    """A stage that lets a library write its output directly (no povstim.io writer): cli.main still gives the
    one line, naming the OS error's file, else the stage's --out flags."""
    import povstim.tokenizer.cli as tok_cli

    def full(args):
        raise RuntimeError(f"std::ios failure: [errno 28] {os.strerror(errno.ENOSPC)}")

    monkeypatch.setattr(tok_cli, "run", full)
    out = tmp_path / "tok.json"
    assert cli.main(["tokenize", "--train", "x.txt", "--out", str(out)]) == 1
    err = capsys.readouterr().err.strip()
    assert err == (f"povstim tokenize: error: no space left on device writing {out} (free space on its file "
                   "system, then run the same command again; nothing half-written was kept)")
    # an unrelated error still has its traceback (a bug must stay visible)
    monkeypatch.setattr(tok_cli, "run", lambda args: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        cli.main(["tokenize", "--train", "x.txt", "--out", str(out)])
