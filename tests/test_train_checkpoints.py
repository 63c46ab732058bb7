"""Checkpoints that cannot break a run: verified resume with fallback, a full disk as one error
naming the path with nothing half-written left, file modes that follow the umask, POVSTIM_NO_PROGRESS."""

from __future__ import annotations

import builtins
import errno
import json
import logging
import os
import shutil
from pathlib import Path

import pytest
import povstim.io
from povstim import cli
from povstim.io import PovstimError

from helpers.interrupt import stop_at
from helpers.tiny_models import tiny_corpus
from povstim.train import checkpoints
from povstim.train.loop import Trainer
from povstim.train.params import resolve

GPT2 = {"family": "gpt2", "n_layer": 2, "n_embd": 32, "n_head": 2, "n_inner": 64}
TRAINING = {"lr": 3e-3, "batch_size": 8, "context": 32, "warmup": 4, "max_steps": 30, "patience": 1000,
            "eval_every": 10, "save_every": 10, "log_every": 5, "dropout": 0.1, "device": "cpu"}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return tiny_corpus(tmp_path_factory.mktemp("corpus"))


def trainer(corpus, out, progress=False) -> Trainer:
    a, t = resolve(GPT2, TRAINING)
    return Trainer(arch=a, training=t, seed=1, out_dir=str(out), threads=1, progress=progress, **corpus)


def cli_args(corpus, out):
    return ["train", "--train", corpus["train"], "--dev", corpus["dev"], "--tokenizer", corpus["tokenizer"],
            "--arch", json.dumps(GPT2), "--params", json.dumps(TRAINING), "--seed", "1", "--out-dir", str(out),
            "--threads", "1", "--no-progress"]


def killed_at(corpus, out, step: int) -> Path:
    """A run stopped as a kill would when it starts ``step`` (after the checkpoints before it)."""
    stop_at(trainer(corpus, out), step)
    return Path(out)


def weights(folder: Path) -> bytes:
    return (folder / "model.safetensors").read_bytes()


def hidden_leftovers(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.name.startswith(".") or p.name.endswith(".tmp")]


@pytest.fixture(scope="module")
def reference(corpus, tmp_path_factory):
    out = tmp_path_factory.mktemp("ref") / "m"
    trainer(corpus, out).run()
    return out


@pytest.fixture(scope="module")
def killed(corpus, tmp_path_factory):
    """Killed at step 25: checkpoints step10 and step20 both hold trainer_state.pt (the newest two)."""
    out = killed_at(corpus, tmp_path_factory.mktemp("killed") / "m", 25)
    assert sorted(p.parent.name for p in out.glob("checkpoints/step*/trainer_state.pt")) == ["step10", "step20"]
    for s in (10, 20):
        assert checkpoints.damage(out / "checkpoints" / f"step{s}") is None
    return out


def test_a_finished_run_keeps_one_state_and_a_manifest_per_checkpoint(reference):
    assert [p.parent.name for p in reference.glob("checkpoints/*/trainer_state.pt")] == ["step30"]
    for s in (10, 20, 30):
        folder = reference / "checkpoints" / f"step{s}"
        manifest = json.loads((folder / checkpoints.MANIFEST).read_text())
        assert manifest["step"] == s and "model.safetensors" in manifest["files"]
        assert checkpoints.damage(folder, state=s == 30) is None
    assert not (reference / checkpoints.MANIFEST).exists()  # the final model folder is as before
    assert not hidden_leftovers(reference)


def truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])


@pytest.mark.parametrize("name", ["model.safetensors", "trainer_state.pt", "config.json", "tokenizer.json",
                                  "train_log.jsonl", "manifest.json"])
def test_a_damaged_checkpoint_falls_back_to_the_one_before_it(corpus, reference, killed, tmp_path, caplog, name):
    out = tmp_path / "m"
    shutil.copytree(killed, out)
    bad = out / "checkpoints" / "step20" / name
    truncate(bad)
    caplog.set_level(logging.INFO, logger="povstim.train")
    assert cli.main(cli_args(corpus, out)) == 0
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(str(bad) in w for w in warnings), warnings  # the warning names the bad file
    assert any("resumed from" in r.getMessage() and r.getMessage().split()[2].endswith("step10")
               for r in caplog.records)
    # replayed from step 10: the same bytes as an uninterrupted run
    assert weights(out) == weights(reference)
    for s in (10, 20, 30):
        assert weights(out / "checkpoints" / f"step{s}") == weights(reference / "checkpoints" / f"step{s}")
    assert (out / "train_log.jsonl").read_text().count("\n") == (reference / "train_log.jsonl").read_text().count("\n")


def test_every_checkpoint_damaged_trains_from_scratch(corpus, reference, killed, tmp_path, caplog):
    out = tmp_path / "m"
    shutil.copytree(killed, out)
    truncate(out / "checkpoints" / "step20" / "model.safetensors")
    truncate(out / "checkpoints" / "step10" / "trainer_state.pt")
    caplog.set_level(logging.INFO, logger="povstim.train")
    assert cli.main(cli_args(corpus, out)) == 0
    assert any("training from scratch" in r.getMessage() for r in caplog.records)
    assert weights(out) == weights(reference)


def test_damaged_best_weights_are_rebuilt_from_their_checkpoint_or_skipped(corpus, reference, killed, tmp_path):
    best_step = json.loads((killed / "checkpoints" / "step20" / checkpoints.MANIFEST).read_text())["best_step"]
    out = tmp_path / "m"
    shutil.copytree(killed, out)
    truncate(out / "best" / f"step{best_step}" / "model.safetensors")
    assert cli.main(cli_args(corpus, out)) == 0
    assert weights(out) == weights(reference)


def test_stale_tmp_folders_are_removed_at_resume(corpus, reference, killed, tmp_path):
    out = tmp_path / "m"
    shutil.copytree(killed, out)
    for stale in (out / "checkpoints" / ".step30.tmp", out / "best" / ".step30.tmp"):
        stale.mkdir(parents=True)
        (stale / "model.safetensors").write_bytes(b"half a file")
    assert cli.main(cli_args(corpus, out)) == 0
    assert not hidden_leftovers(out)
    assert weights(out) == weights(reference)


def _no_space_on(real_open, match):
    """``open`` whose files named by ``match`` fail to write as a full disk does."""

    class Full:
        def __init__(self, fh):
            self.fh = fh

        def write(self, data):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        def __getattr__(self, name):
            return getattr(self.fh, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

    def fake_open(file, mode="r", *args, **kw):
        fh = real_open(file, mode, *args, **kw)
        return Full(fh) if ("w" in mode or "a" in mode) and match(Path(file)) else fh

    return fake_open


def _check_no_space(corpus, out, capsys, where: str) -> None:
    assert cli.main(cli_args(corpus, out)) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("povstim train: error: no space left on device writing "), err
    assert where in err[0], err
    assert not hidden_leftovers(out), hidden_leftovers(out)


def test_a_full_disk_writing_the_trainer_state_is_one_error_and_leaves_no_tmp(corpus, reference, tmp_path,
                                                                              monkeypatch, capsys):
    out = tmp_path / "m"
    # the lowest write torch.save uses here: the Python file the store opens for trainer_state.pt
    monkeypatch.setattr(checkpoints, "open", _no_space_on(builtins.open, lambda p: p.name == "trainer_state.pt"),
                        raising=False)
    _check_no_space(corpus, out, capsys, str(out / "checkpoints" / "step10"))
    monkeypatch.undo()
    assert cli.main(cli_args(corpus, out)) == 0  # space again: the rerun finishes
    assert weights(out) == weights(reference)


def test_a_full_disk_writing_weights_is_one_error(corpus, tmp_path, monkeypatch, capsys):
    """safetensors writes from Rust (no Python write to intercept): its error carries the OS's text."""
    import safetensors
    import transformers.modeling_utils

    def full(*a, **k):
        raise safetensors.SafetensorError("Error while serializing: I/O error: No space left on device (os error 28)")

    monkeypatch.setattr(transformers.modeling_utils, "safe_save_file", full)
    out = tmp_path / "m"
    _check_no_space(corpus, out, capsys, str(out / "best" / "step10"))


def test_a_full_disk_writing_the_final_model_or_the_log_is_one_error(corpus, reference, tmp_path, monkeypatch,
                                                                    capsys, caplog):
    import povstim.io

    out = tmp_path / "m"
    # atomic_write's temporary file of the final weights (.model.safetensors.XXXX.tmp)
    monkeypatch.setattr(povstim.io, "open", _no_space_on(builtins.open, lambda p: p.name.startswith(".model.")),
                        raising=False)
    _check_no_space(corpus, out, capsys, str(out / "model.safetensors"))
    monkeypatch.undo()
    caplog.set_level(logging.INFO, logger="povstim.train")
    assert cli.main(cli_args(corpus, out)) == 0  # resumes the finished run and writes its final model
    assert any(r.getMessage().startswith("resumed from") and "step 30" in r.getMessage() for r in caplog.records)
    assert weights(out) == weights(reference)
    assert (out / "train_log.jsonl").read_bytes().count(b"\n") == (reference / "train_log.jsonl").read_bytes().count(b"\n")
    log_out = tmp_path / "log"
    monkeypatch.setattr(checkpoints, "open", _no_space_on(builtins.open, lambda p: p.name.endswith("partial.jsonl")),
                        raising=False)
    _check_no_space(corpus, log_out, capsys, str(log_out / "train_log.partial.jsonl"))


def test_no_space_is_recognised_through_wrapping_errors():
    try:
        try:
            raise OSError(errno.EDQUOT, os.strerror(errno.EDQUOT))
        except OSError:
            raise RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 64 vs 0")
    except RuntimeError as exc:
        assert povstim.io.no_space(exc)
    assert not povstim.io.no_space(RuntimeError("basic_ios::clear: iostream error"))
    with pytest.raises(PovstimError, match="no space left on device writing /x/y"), povstim.io.writing(Path("/x/y")):
        raise OSError(errno.ENOSPC, "No space left on device")


@pytest.mark.parametrize("umask", [0o022, 0o002])
def test_checkpoint_and_final_files_follow_the_umask(corpus, tmp_path, umask):
    old = os.umask(umask)
    try:
        a, t = resolve(GPT2, {**TRAINING, "max_steps": 10})
        Trainer(arch=a, training=t, seed=1, out_dir=str(tmp_path / "m"), threads=1, progress=False, **corpus).run()
    finally:
        os.umask(old)
    want = 0o666 & ~umask
    for f in [tmp_path / "m" / "model.safetensors", *(tmp_path / "m" / "checkpoints" / "step10").iterdir()]:
        assert f.stat().st_mode & 0o777 == want, (f, oct(f.stat().st_mode))


def test_povstim_no_progress_silences_the_training_bar(corpus, tmp_path, monkeypatch, capsys):
    a, t = resolve(GPT2, {**TRAINING, "max_steps": 4, "eval_every": 4, "save_every": 4})
    Trainer(arch=a, training=t, seed=1, out_dir=str(tmp_path / "bar"), threads=1, progress=True, **corpus).run()
    assert "train: " in capsys.readouterr().err  # the bar, as before
    monkeypatch.setenv("POVSTIM_NO_PROGRESS", "1")
    Trainer(arch=a, training=t, seed=1, out_dir=str(tmp_path / "quiet"), threads=1, progress=True, **corpus).run()
    assert "train: " not in capsys.readouterr().err


def test_killed_after_its_last_checkpoint_the_run_resumes_finished_and_writes_its_model(corpus, reference, tmp_path,
                                                                                       monkeypatch, caplog):
    """Killed between the last checkpoint and the final model (before older optimizer states were pruned):
    the rerun resumes the finished state instead of retraining, and ends with the uninterrupted run's folder."""
    real = checkpoints.CheckpointStore.prune_states

    def killed_on_finish(self, keep):
        if keep == 1:
            raise KeyboardInterrupt
        return real(self, keep)

    monkeypatch.setattr(checkpoints.CheckpointStore, "prune_states", killed_on_finish)
    out = tmp_path / "m"
    with pytest.raises(KeyboardInterrupt):
        trainer(corpus, out).run()
    monkeypatch.undo()
    assert not (out / "model.safetensors").exists()
    assert sorted(p.parent.name for p in out.glob("checkpoints/*/trainer_state.pt")) == ["step10", "step20", "step30"]
    caplog.set_level(logging.INFO, logger="povstim.train")
    assert cli.main(cli_args(corpus, out)) == 0
    assert any(r.getMessage().startswith("resumed from") and "step 30" in r.getMessage() for r in caplog.records)
    assert [p.parent.name for p in out.glob("checkpoints/*/trainer_state.pt")] == ["step30"]
    assert weights(out) == weights(reference)
    assert not (out / "best").exists() and not hidden_leftovers(out)
