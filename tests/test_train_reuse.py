"""A void duplicate trains one model (train/reuse.py): a `povstim train` whose inputs are identical
to a run already trained into the experiment's index (same train, dev and tokenizer bytes, arch, training
settings, seed, code) links that model into its own folder instead of training; anything that changes the
weights (seed, arch, lr, tokenizer) trains; a killed first run leaves nothing to reuse."""

from __future__ import annotations

import json
import logging
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.tiny_models import tiny_corpus
from povstim import cli
from povstim.io import LOCK_FILE, folder_lock
from povstim.train import reuse
from povstim.train.loop import run_key
from povstim.train.params import resolve
from test_train_lock import _env, _holder, _wait_for

GPT2 = {"family": "gpt2", "n_layer": 1, "n_embd": 32, "n_head": 2, "n_inner": 64}
TRAINING = {"lr": 1e-3, "batch_size": 8, "context": 32, "warmup": 2, "max_steps": 6, "patience": 100,
            "eval_every": 3, "save_every": 3, "log_every": 3, "dropout": 0.1, "device": "cpu"}


@pytest.fixture(scope="module")
def corpora(tmp_path_factory):
    """Condition A's corpus and tokenizer, and condition B's: the same bytes in other files (a void twin)."""
    a = tmp_path_factory.mktemp("a")
    files = tiny_corpus(a)
    b = tmp_path_factory.mktemp("b")
    for name in ("train.txt", "dev.txt", "tokenizer.json"):
        shutil.copyfile(a / name, b / name)
    return {"a": files, "b": {k: str(b / Path(v).name) for k, v in files.items()}}


def argv(files: dict, out: Path, index: Path | None, seed: int = 1, condition: str = "a", arch=GPT2,
         training=TRAINING) -> list[str]:
    args = ["train", "--train", files["train"], "--dev", files["dev"], "--tokenizer", files["tokenizer"],
            "--arch", json.dumps(arch), "--params", json.dumps(training), "--seed", str(seed),
            "--out-dir", str(out), "--threads", "1", "--no-progress",
            "--meta", json.dumps({"arch": "nano", "condition": condition, "size": "1k"})]
    return args + (["--reuse-dir", str(index)] if index is not None else [])


def summary(folder: Path) -> dict:
    return json.loads((folder / "train_summary.json").read_text())


def files_of(folder: Path) -> dict[str, bytes]:
    """Every file under a model folder but its summary (timings, its own record), by relative path."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != "train_summary.json"}


@pytest.fixture(scope="module")
def trained(corpora, tmp_path_factory):
    """A trained into the index, then its twin B (reused), and B trained on its own without an index."""
    root = tmp_path_factory.mktemp("models")
    index = root / ".reuse"
    assert cli.main(argv(corpora["a"], root / "a", index)) == 0
    assert cli.main(argv(corpora["b"], root / "b", index, condition="b")) == 0
    assert cli.main(argv(corpora["b"], root / "alone", None, condition="b")) == 0
    return root


def test_the_twin_copies_the_model_trained_for_a_and_it_is_what_training_would_write(trained):
    a, b, alone = summary(trained / "a"), summary(trained / "b"), summary(trained / "alone")
    assert "reused" not in a and "reused" not in alone
    assert b["reused"]["model"]["condition"] == "a" and Path(b["reused"]["from"]) == (trained / "a").resolve()
    # its own record: `povstim score` labels the twin's rows with its own condition
    assert b["model"] == {"arch": "nano", "condition": "b", "size": "1k", "seed": 1}
    assert b["key"] == a["key"] == alone["key"] and b["steps"] == a["steps"] == 6
    # weights, config, tokenizer files, checkpoints: byte for byte what training B itself wrote (CPU)
    got, own = files_of(trained / "b"), files_of(trained / "alone")
    # the logs, trainer states and (through their hashes) manifests hold the run's timings: all else is the model
    weights = {k: v for k, v in own.items()
               if not k.endswith((".jsonl", "trainer_state.pt", "manifest.json"))}
    assert "model.safetensors" in weights and "checkpoints/step3/model.safetensors" in weights
    assert {k: got[k] for k in weights} == weights and set(got) == set(own)
    # every file is the twin's own (copies or copy-on-write clones, never hard links): damaging one folder's
    # checkpoint in place leaves the other's as it was
    for rel in got:
        if (trained / "a" / rel).exists():
            assert (trained / "b" / rel).stat().st_ino != (trained / "a" / rel).stat().st_ino, rel
            assert (trained / "b" / rel).stat().st_nlink == 1, rel
    ckpt = "checkpoints/step3/model.safetensors"
    before = (trained / "a" / ckpt).read_bytes()
    with open(trained / "b" / ckpt, "r+b") as fh:  # truncated in place, as a full disk or a killed writer would
        fh.truncate(10)
    assert (trained / "a" / ckpt).read_bytes() == before
    (trained / "b" / ckpt).write_bytes(before)
    rec = json.loads(next((trained / ".reuse").glob("*/trained.json")).read_text())
    assert (trained / ".reuse" / next((trained / ".reuse").iterdir()).name / rec["out_dir"]).resolve() == \
        (trained / "a").resolve()
    assert not list(trained.rglob(LOCK_FILE)) and not list(trained.rglob(".*.reuse.tmp"))


def test_a_rerun_of_the_twin_is_already_trained(corpora, trained, capsys):
    assert cli.main(argv(corpora["b"], trained / "b", trained / ".reuse", condition="b")) == 0
    assert "is already trained with these inputs" in capsys.readouterr().err


def test_a_rerun_into_the_recorded_folder_changes_neither_it_nor_the_index(corpora, trained, capsys):
    """Replayed by hand: `povstim train` into the finished folder that the index records said 'already
    trained' and left the folder alone, but rewrote the index's trained.json at every rerun (same bytes, new mtime)."""
    def state():
        return {p: (p.stat().st_mtime_ns, p.read_bytes()) for d in (trained / "a", trained / ".reuse")
                for p in sorted(d.rglob("*")) if p.is_file()}

    before = state()
    assert any(p.name == reuse.RECORD for p in before)
    assert cli.main(argv(corpora["a"], trained / "a", trained / ".reuse")) == 0
    assert "is already trained with these inputs" in capsys.readouterr().err
    assert state() == before


def test_a_different_seed_trains(corpora, trained, caplog):
    with caplog.at_level(logging.INFO, logger="povstim.train"):
        assert cli.main(argv(corpora["b"], trained / "b2", trained / ".reuse", seed=2, condition="b")) == 0
    assert "reused" not in summary(trained / "b2") and "done: 6 steps" in caplog.text
    assert (trained / "b2" / "model.safetensors").read_bytes() != (trained / "a" / "model.safetensors").read_bytes()


@pytest.mark.parametrize("change", ["arch", "lr", "tokenizer", "train", "checkpoint_words"])
def test_what_changes_the_weights_changes_the_key(corpora, tmp_path, change):
    """Each of these is another index folder, so nothing is reused across it."""
    files = dict(corpora["b"])
    arch, training = dict(GPT2), dict(TRAINING)
    if change == "arch":
        arch["n_embd"] = 16
    elif change == "lr":
        training["lr"] = 2e-3
    elif change == "checkpoint_words":
        training["checkpoint_words"] = ["1K"]
    else:  # a tokenizer or corpus one byte longer
        name = "tokenizer.json" if change == "tokenizer" else "train.txt"
        path = tmp_path / name
        text = Path(files[change if change == "tokenizer" else "train"]).read_text()
        path.write_text(text + (" " if change == "tokenizer" else "one more line .\n"))
        files[change] = str(path)

    def key(f, a, t):
        arch_, training_ = resolve(json.dumps(a), json.dumps(t))
        rk = run_key(arch_, training_, 1, f["train"], f["dev"], f["tokenizer"])
        return reuse.reuse_key(rk, training_)

    same = key(corpora["a"], GPT2, TRAINING)
    assert key(corpora["b"], GPT2, TRAINING) == same  # identical bytes in other files: the same run
    assert key(files, arch, training) != same


def test_a_record_whose_model_changed_since_is_not_reused(corpora, trained, tmp_path, caplog):
    """The index names A, but A's weights are not what it recorded (edited, half-copied): train."""
    root = tmp_path / "models"
    shutil.copytree(trained / "a", root / "a")
    index = root / ".reuse"
    shutil.copytree(trained / ".reuse", index)
    (root / "a" / "model.safetensors").write_bytes(b"not a model")
    with caplog.at_level(logging.INFO, logger="povstim.train"):
        assert cli.main(argv(corpora["b"], root / "b", index, condition="b")) == 0
    assert "reused" not in summary(root / "b") and "differ from those it recorded" in caplog.text


def _index_of(files: dict) -> str:
    arch, training = resolve(json.dumps(GPT2), json.dumps(TRAINING))
    return reuse.reuse_key(run_key(arch, training, 1, files["train"], files["dev"], files["tokenizer"]), training)


@pytest.mark.slow
def test_a_twin_waits_for_the_first_and_trains_itself_when_the_first_is_killed(corpora, tmp_path):
    """The first job holds the key's index folder; the twin (a real `povstim train`) waits there. The first is
    killed (-9) before it recorded a model: the twin takes the lock over and trains; nothing half is reused."""
    index = tmp_path / ".reuse"
    first = _holder(index / _index_of(corpora["a"]))  # what a killed first trainer holds: the lock, no record
    log = tmp_path / "twin.err"
    with log.open("w") as err_file:
        twin = subprocess.Popen([sys.executable, "-m", "povstim", *argv(corpora["b"], tmp_path / "b", index,
                                                                         condition="b")],
                                env=_env(), stdout=subprocess.DEVNULL, stderr=err_file, text=True)
    try:
        # the first is killed only once the twin says it waits on it (on a loaded machine the twin may reach the
        # index lock late: killed earlier, the first's lock is already stale and there is nothing to wait for)
        _wait_for(lambda: "waiting for PID" in log.read_text(), twin, "the twin's wait on the first")
        # still waiting on the first: no model yet (a hang guard, not a timing)
        assert twin.poll() is None and not (tmp_path / "b" / "model.safetensors").exists()
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    twin.wait(timeout=600)
    err = log.read_text()
    assert twin.returncode == 0, err[-2000:]
    assert "waiting for PID" in err and f"taking over the lock of PID {first.pid}" in err
    assert "reused" not in summary(tmp_path / "b") and (index / _index_of(corpora["a"]) / "trained.json").is_file()


def test_a_waiting_lock_is_taken_when_its_holder_lets_go(tmp_path, caplog):
    folder = tmp_path / "k"
    holder = subprocess.Popen([sys.executable, "-c",
                               "import sys, time; from povstim.io import folder_lock\n"
                               "with folder_lock(sys.argv[1], 'trained'):\n"
                               "    print('held', flush=True); sys.stdin.readline()\n", str(folder)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=_env())
    assert holder.stdout.readline().strip() == "held"
    import threading

    got = []

    def take():
        with folder_lock(folder, "trained", wait=True) as lock:
            got.append(json.loads(lock.read_text())["pid"])

    with caplog.at_level(logging.INFO, logger="povstim.io"):
        t = threading.Thread(target=take)
        t.start()
        _wait_for(lambda: "waiting for PID" in caplog.text, holder, "the waiter's line")
        assert not got
        holder.stdin.write("\n")
        holder.stdin.flush()
        holder.wait()
        t.join(60)
    assert got == [__import__("os").getpid()] and "taking over" not in caplog.text
