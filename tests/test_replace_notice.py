"""A run that replaces results made with another config says so in dry runs too (`snakemake -n`), and a
real run pauses before its first job only when a person can stop it (terminal), unless POVSTIM_YES=1."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers.interrupt import sigint_as_in_a_terminal
from povstim import config as cfg
from povstim.preflight import runs

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "tests" / "configs" / "tiny.yaml"
NOTICE = "povstim: results/tiny/ was made with a different config; running this config replaces"


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_no_terminal_never_waits():
    slept = []
    err = io.StringIO()
    assert runs.pause_before_replacing("x", stdin=io.StringIO(), stderr=err, sleep=slept.append, environ={}) \
        == "no terminal"
    assert slept == [] and err.getvalue() == ""
    # a terminal on stdin but stderr to a file (nobody reads the countdown): no pause either
    assert runs.pause_before_replacing("x", stdin=Terminal(), stderr=err, sleep=slept.append, environ={}) \
        == "no terminal"
    assert slept == []


def test_terminal_counts_down_and_yes_skips_it():
    slept, err = [], Terminal()
    assert runs.pause_before_replacing("mine", seconds=3, stdin=Terminal(), stderr=err, sleep=slept.append,
                                       environ={}) == "paused"
    assert slept == [1, 1, 1]
    assert "replacing results of experiment 'mine' in  3 s; Ctrl-C stops the run now" in err.getvalue()
    assert "in  1 s" in err.getvalue()
    for value in ("1", "yes", "true"):
        slept, err = [], Terminal()
        assert runs.pause_before_replacing("mine", stdin=Terminal(), stderr=err, sleep=slept.append,
                                           environ={"POVSTIM_YES": value}) == "yes"
        assert slept == [] and "POVSTIM_YES is set" in err.getvalue()
    # POVSTIM_YES=0 is not a yes
    assert runs.pause_before_replacing("mine", seconds=1, stdin=Terminal(), stderr=Terminal(), sleep=slept.append,
                                       environ={"POVSTIM_YES": "0"}) == "paused"


def test_ctrl_c_during_the_pause_exits_130_before_any_job():
    def interrupt(_):
        raise KeyboardInterrupt

    err = Terminal()
    with pytest.raises(SystemExit) as exc:
        runs.pause_before_replacing("mine", stdin=Terminal(), stderr=err, sleep=interrupt, environ={})
    assert exc.value.code == 130
    assert "stopped before any job: nothing of results/mine/ was replaced" in err.getvalue()


def _snakemake(cwd: Path, *args: str, env_extra: dict | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "POVSTIM_YES")}
    env.update(env_extra or {})
    # stdin from /dev/null and output captured: a non-interactive run, as under CI or SLURM
    return subprocess.run([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--workflow-profile",
                           "none", "--cores", "1", *args], check=False, cwd=cwd, capture_output=True, text=True, env=env,
                          stdin=subprocess.DEVNULL, timeout=600)


@pytest.fixture
def changed(tmp_path):
    """results/tiny/config.yaml records lr 0.002; the config run now has tiny.yaml's 0.001."""
    config = cfg.load(TINY)
    runs.write_record({**config, "training": {**config["training"], "lr": 0.002}}, ["old.yaml"],
                      tmp_path / "results" / "tiny")
    return tmp_path


@pytest.mark.slow
@pytest.mark.heavy
def test_dry_run_says_it_and_a_real_run_without_terminal_does_not_wait(changed):
    record = changed / "results" / "tiny" / "config.yaml"
    before = record.read_text()
    proc = _snakemake(changed, "-n", "--configfile", str(TINY))
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    assert NOTICE in out and "training.lr: 0.002 -> 0.001" in out
    assert record.read_text() == before  # a dry run replaces nothing, not even the record
    # a real run (one cheap job) with no terminal: the notice, no countdown, and it goes on at once
    target = "results/tiny/corpus/clean/cds.txt"
    proc = _snakemake(changed, "--configfile", str(TINY), "--", target)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    assert NOTICE in out and "Ctrl-C stops the run now" not in out
    assert (changed / target).exists() and "lr: 0.001" in record.read_text()
    # same config now: no notice; with another change and POVSTIM_YES=1 it says it goes on without a pause
    proc = _snakemake(changed, "-n", "--configfile", str(TINY))
    assert NOTICE not in proc.stdout + proc.stderr
    other = yaml.safe_load(TINY.read_text())
    other["seeds"] = [1, 2]
    (changed / "other.yaml").write_text(yaml.safe_dump(other))
    proc = _snakemake(changed, "--configfile", "other.yaml", "--force", "--", target,
                      env_extra={"POVSTIM_YES": "1"})
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    assert "seeds: [1] -> [1, 2]" in out and "POVSTIM_YES is set: replacing results of experiment 'tiny'" in out


@pytest.mark.slow
def test_on_a_terminal_ctrl_c_during_the_pause_stops_the_run_before_any_job(changed):
    """A real terminal (a pty on stdin and stderr): the countdown shows, Ctrl-C (SIGINT to the process group, as a
    terminal sends it) exits 130, and no job ran: no output, the record still says lr 0.002."""
    import pty
    import select
    import signal

    record = changed / "results" / "tiny" / "config.yaml"
    before = record.read_text()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "POVSTIM_YES")}
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--workflow-profile",
                             "none", "--cores", "1", "--configfile", str(TINY), "--",
                             "results/tiny/corpus/clean/cds.txt"],
                            cwd=changed, stdin=follower, stdout=follower, stderr=follower, env=env,
                            start_new_session=True, preexec_fn=sigint_as_in_a_terminal)
    os.close(follower)
    seen = b""
    while b"Ctrl-C stops the run now" not in seen:  # synchronised on the countdown, not on time
        ready, _, _ = select.select([leader], [], [], 300)
        assert ready, seen.decode(errors="replace")[-2000:]
        try:
            seen += os.read(leader, 4096)
        except OSError:  # the process ended without a countdown
            break
    assert b"Ctrl-C stops the run now" in seen, seen.decode(errors="replace")[-2000:]
    os.killpg(proc.pid, signal.SIGINT)
    rc = proc.wait(timeout=600)  # a hang guard, not a speed bound: a busy machine may take long to exit
    while True:
        ready, _, _ = select.select([leader], [], [], 1)
        try:
            chunk = os.read(leader, 4096) if ready else b""
        except OSError:
            chunk = b""
        if not chunk:
            break
        seen += chunk
    os.close(leader)
    assert rc == 130, seen.decode(errors="replace")[-2000:]
    assert b"nothing of results/tiny/ was replaced" in seen
    assert record.read_text() == before and not (changed / "results/tiny/corpus/clean/cds.txt").exists()
    locks = changed / ".snakemake" / "locks"
    assert not locks.exists() or not any(locks.iterdir())  # the next run is not refused
