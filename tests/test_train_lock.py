"""One trainer per model folder: a folder a live `povstim train` holds is refused by a second one,
naming the holder's PID and host; a lock a killed trainer left is taken over with a warning naming it."""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers.tiny_models import tiny_corpus
from povstim import cli
from povstim.io import LOCK_FILE, PovstimError, folder_lock

REPO = Path(__file__).resolve().parents[1]
GPT2 = {"family": "gpt2", "n_layer": 1, "n_embd": 32, "n_head": 2, "n_inner": 64}
# long enough to be running when the second trainer comes; killed by the test
TRAINING = {"lr": 1e-3, "batch_size": 8, "context": 32, "warmup": 2, "max_steps": 100_000, "patience": 100_000,
            "eval_every": 5, "save_every": 5, "log_every": 5, "dropout": 0.1, "device": "cpu"}


def _env() -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO / "workflow"), "POVSTIM_NO_PROGRESS": "1"}
    env.pop("POVSTIM_WARM_SOCKET", None)
    return env


def _wait_for(pred, proc, what: str, limit: float = 600.0) -> None:
    # a hang guard on a busy machine, not a timing
    end = time.monotonic() + limit
    while not pred():
        assert proc.poll() is None, f"the holder exited before {what}: {proc.stderr.read() if proc.stderr else ''}"
        assert time.monotonic() < end, f"no {what} after {limit} s"
        time.sleep(0.2)


def _holder(folder: Path) -> subprocess.Popen:
    """Another process holding ``folder`` through the same lock `povstim train` takes."""
    code = ("import sys, time; from povstim.io import folder_lock\n"
            "with folder_lock(sys.argv[1], 'trained', 'povstim train --out-dir ' + sys.argv[1]):\n"
            "    print('held', flush=True); time.sleep(600)\n")
    proc = subprocess.Popen([sys.executable, "-c", code, str(folder)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=_env())
    assert proc.stdout.readline().strip() == "held", proc.stderr.read()
    return proc


def test_a_live_holder_is_refused_by_name_and_a_killed_ones_lock_is_taken_over(tmp_path, caplog):
    folder = tmp_path / "m"
    proc = _holder(folder)
    try:
        with pytest.raises(PovstimError) as err, folder_lock(folder, "trained"):
            pass
        msg = str(err.value)
        assert f"{folder} is being trained by another live process: PID {proc.pid} on host {socket.gethostname()}" \
            in msg and f"`povstim train --out-dir {folder}`" in msg and f"kill {proc.pid}" in msg
        assert (folder / LOCK_FILE).exists()  # the refused one leaves the holder's lock alone
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert json.loads((folder / LOCK_FILE).read_text())["pid"] == proc.pid  # what a kill -9 leaves behind
    with caplog.at_level(logging.WARNING, logger="povstim.io"), folder_lock(folder, "trained") as lock:
        assert json.loads(lock.read_text())["pid"] == os.getpid()
    assert f"taking over the lock of PID {proc.pid} on host {socket.gethostname()}" in caplog.text
    assert "no longer running" in caplog.text
    assert not (folder / LOCK_FILE).exists()  # let go at the end


def test_without_flock_a_live_pid_on_this_host_still_refuses(tmp_path, monkeypatch):
    """File systems without flock (some network mounts): the record alone decides."""
    import errno
    import fcntl

    def no_flock(fd, op):
        raise OSError(errno.ENOLCK, "No locks available")

    folder = tmp_path / "m"
    folder.mkdir()
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        (folder / LOCK_FILE).write_text(json.dumps({"pid": proc.pid, "host": socket.gethostname()}))
        monkeypatch.setattr(fcntl, "flock", no_flock)
        with pytest.raises(PovstimError, match=f"PID {proc.pid} on host"), folder_lock(folder, "trained"):
            pass
    finally:
        proc.kill()
        proc.wait()
    with folder_lock(folder, "trained"):  # the same record, its process gone: stale
        pass


@pytest.mark.slow
def test_a_second_trainer_is_refused_while_a_live_one_trains_the_folder(tmp_path, capsys, caplog):
    """Two real `povstim train` processes into one folder: the second is refused in one line naming the first's
    PID and changes nothing; after the first is killed (-9) a rerun takes its lock over."""
    corpus = tiny_corpus(tmp_path)
    out = tmp_path / "m"
    argv = ["train", "--train", corpus["train"], "--dev", corpus["dev"], "--tokenizer", corpus["tokenizer"],
            "--arch", json.dumps(GPT2), "--params", json.dumps(TRAINING), "--seed", "1", "--out-dir", str(out),
            "--threads", "1", "--no-progress"]
    first = subprocess.Popen([sys.executable, "-m", "povstim", *argv], env=_env(), stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(lambda: (out / LOCK_FILE).is_file() and (out / LOCK_FILE).stat().st_size, first, "its lock")
        capsys.readouterr()
        assert cli.main(argv) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith(f"povstim train: error: {out} is being trained by another live "
                                                   f"process: PID {first.pid} on host"), err
        assert first.poll() is None  # the first trains on, its lock untouched
        assert json.loads((out / LOCK_FILE).read_text())["pid"] == first.pid
        _wait_for(lambda: (out / "checkpoints" / "step5").is_dir(), first, "its first checkpoint")
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    # the killed trainer's lock is taken over (a short run from scratch: --force)
    short = [a if a != json.dumps(TRAINING) else json.dumps({**TRAINING, "max_steps": 5}) for a in argv]
    with caplog.at_level(logging.INFO):
        assert cli.main([*short, "--force"]) == 0
    assert f"taking over the lock of PID {first.pid}" in caplog.text
    assert not (out / LOCK_FILE).exists()
