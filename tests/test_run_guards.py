"""Guards around a run: config errors with file and line before any job, a report that cannot be
built for the wrong experiment, a stale lock explained, Ctrl-C as one line with exit 130."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from helpers.interrupt import sigint_as_in_a_terminal

from povstim import cli
from povstim.io import PovstimError
from povstim.preflight import runs

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "tests" / "configs" / "tiny.yaml"


def snakemake(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--workflow-profile",
                           "none", "--cores", "1", *args], cwd=cwd, capture_output=True, text=True, env=env)


# ---- config files ------------------------------------------------------------------------------------

def test_yaml_syntax_error_names_file_line_and_column(tmp_path, capsys):
    bad = tmp_path / "mine.yaml"
    bad.write_text("experiment: mine\nseeds: [1, 2\nsizes: [50k]\n")
    assert cli.main(["check", str(bad)]) == 1
    err = capsys.readouterr().err
    assert f"{bad}:3:6: not valid YAML" in err and "opened at line 2" in err and "Traceback" not in err


def test_snakemake_own_message_for_a_broken_configfile_and_the_embedded_one(tmp_path):
    # Snakemake parses --configfile before the Snakefile runs and does not name the line: the docs point
    # to `povstim check`, which does (above). The embedded config.yaml is read by the Snakefile itself.
    bad = tmp_path / "mine.yaml"
    bad.write_text("experiment: mine\nseeds: [1, 2\n")
    proc = snakemake(tmp_path, "-n", "--configfile", str(bad))
    assert proc.returncode != 0 and "Config file is not valid JSON or YAML" in proc.stdout + proc.stderr
    (tmp_path / "config.yaml").write_text("experiment: demo\nseeds: [1, 2\n")
    proc = snakemake(tmp_path, "-n")
    assert proc.returncode != 0
    assert "config.yaml:3:1: not valid YAML" in proc.stdout + proc.stderr
    assert not (tmp_path / "results").exists()


def test_cross_field_arch_error_stops_the_dry_run_before_any_job(tmp_path):
    config = yaml.safe_load(TINY.read_text())
    config["archs"]["gpt2-nano"].update(n_embd=32, n_head=3)
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(config))
    proc = snakemake(tmp_path, "-n", "--configfile", str(path))
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "archs.gpt2-nano" in out and "n_head" in out
    assert "Job stats" not in out and not (tmp_path / "results").exists()
    assert cli.main(["check", str(path)]) == 1


def test_schema_errors_name_file_line_and_key_in_check_and_in_snakemake(tmp_path, capsys):
    # The README promises file, line and key; schema errors once named only the file and the key.
    config = yaml.safe_load(TINY.read_text())
    config["seeds"] = "one"
    config["training"]["lrate"] = 0.1
    path = tmp_path / "c.yaml"
    text = yaml.safe_dump(config, sort_keys=False)
    path.write_text(text)
    lines = text.splitlines()
    seeds = lines.index("seeds: one") + 1
    lrate = next(i for i, line in enumerate(lines, 1) if line.strip() == "lrate: 0.1")
    want = [f"{path}:{seeds}: config key 'seeds': 'one' is not of type 'array'",
            f"{path}:{lrate}: unknown config key 'training.lrate'"]
    assert cli.main(["check", str(path)]) == 1
    err = capsys.readouterr().err
    assert all(w in err for w in want), err
    proc = snakemake(tmp_path, "-n", "--configfile", str(path))
    out = proc.stdout + proc.stderr
    want = [w.replace(str(path), "c.yaml") for w in want]  # the Snakefile names config files relative to the run
    assert proc.returncode != 0 and all(w in out for w in want), out[-3000:]
    assert "Job stats" not in out and not (tmp_path / "results").exists()


def test_cross_section_error_names_the_line_of_the_key_it_names(tmp_path, capsys):
    config = yaml.safe_load(TINY.read_text())
    corpus = next(iter(config["corpora"]))
    config["corpora"][corpus]["mixture"] = {"nope": 1.0}
    path = tmp_path / "c.yaml"
    text = yaml.safe_dump(config, sort_keys=False)
    path.write_text(text)
    line = next(i for i, x in enumerate(text.splitlines(), 1) if x.strip() == "mixture:")
    assert cli.main(["check", str(path)]) == 1
    assert f"{path}:{line}: corpora.{corpus}.mixture names source 'nope'" in capsys.readouterr().err


def test_key_locator_prefers_the_last_configfile_and_falls_back_to_the_section(tmp_path):
    from povstim import config as cfg

    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text("experiment: x\ntraining:\n  lr: 1\n  epochs: 2\nsizes: [1k, 2k]\n")
    b.write_text("# an override\ntraining:\n  lr: 3\n")
    locate = cfg.key_locator([str(a), str(b)])
    assert locate(("training", "lr")) == f"{b}:3"  # the later file wins, as in Snakemake
    assert locate(("training", "epochs")) == f"{a}:4"
    assert locate(("sizes", 1)) == f"{a}:5"
    assert locate(("training", "warmup")) == f"{b}:2"  # not set anywhere: its section
    assert locate(("nothing",)) is None


def test_check_reports_a_valid_config(capsys):
    assert cli.main(["check", str(TINY)]) == 0
    assert "OK: experiment 'tiny'" in capsys.readouterr().out


# ---- report ------------------------------------------------------------------------------------------

def test_report_path_must_belong_to_the_loaded_experiment(tmp_path):
    runs.check_report_path("results/tiny/report.html", "tiny", ["tiny.yaml"], tmp_path)
    (tmp_path / "results" / "mine").mkdir(parents=True)
    (tmp_path / "results" / "mine" / "config.yaml").write_text("experiment: mine\n")
    with pytest.raises(PovstimError) as err:
        runs.check_report_path("results/mine/report.html", "demo", [], tmp_path)
    msg = str(err.value)
    assert "experiment 'demo'" in msg and "--configfile results/mine/config.yaml" in msg
    with pytest.raises(PovstimError, match="belongs under results/tiny/"):
        runs.check_report_path("report.html", "tiny", ["tiny.yaml"], tmp_path)


def test_snakemake_report_for_the_wrong_experiment_stops(tmp_path):
    proc = snakemake(tmp_path, "--report", "results/demo/report.html", "--configfile", str(TINY))
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "experiment 'tiny'" in out and "results/tiny/report.html" in out
    assert not (tmp_path / "results" / "demo" / "report.html").exists()


def test_report_target_and_configfiles_from_argv():
    argv = ["snakemake", "--report", "results/x/r.html", "--configfile", "a.yaml", "b.yaml", "--cores", "2"]
    assert runs.report_target(argv) == "results/x/r.html"
    assert runs.configfile_args(argv) == " --configfile a.yaml b.yaml"
    assert runs.report_target(["snakemake", "--report=results/y.html"]) == "results/y.html"
    assert runs.report_target(["snakemake", "-n"]) is None


def test_record_of_the_config_reloads_to_the_same_config(tmp_path):
    from povstim import config as cfg

    config = cfg.load(TINY)
    path = runs.write_record(config, ["tests/configs/tiny.yaml"], tmp_path / "results" / "tiny")
    assert path.read_text().startswith("# The config that made these results")
    assert cfg.load(path) == config


# ---- locks -------------------------------------------------------------------------------------------

def _lock(tmp_path: Path) -> None:
    locks = tmp_path / ".snakemake" / "locks"
    locks.mkdir(parents=True)
    (locks / "0.input.lock").write_text(str(tmp_path / "results" / "x"))


def test_stale_lock_from_a_killed_run_is_explained_with_the_one_command(tmp_path):
    _lock(tmp_path)
    hint = runs.stale_lock_hint(tmp_path, ["snakemake", "--configfile", "mine.yaml", "--cores", "2"])
    assert hint is not None and "`snakemake --unlock --configfile mine.yaml`" in hint and "killed" in hint
    assert runs.stale_lock_hint(tmp_path / "elsewhere", ["snakemake"]) is None  # no lock, no message


def test_a_lock_held_by_a_live_snakemake_is_left_to_snakemake(tmp_path):
    _lock(tmp_path)
    fake = tmp_path / "snakemake"  # a process whose command is 'snakemake', running in this folder
    fake.symlink_to(shutil.which("sleep"))
    proc = subprocess.Popen([str(fake), "30"], cwd=tmp_path)
    try:
        time.sleep(0.3)
        assert runs.other_snakemake_running(tmp_path) is True
        assert runs.stale_lock_hint(tmp_path, ["snakemake"]) is None
    finally:
        proc.kill()
        proc.wait()


def _record(tmp_path: Path, pid: int, **extra) -> None:
    import json
    import socket

    folder = tmp_path / runs.RUNS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    rec = {"pid": pid, "host": socket.gethostname(), "command": "snakemake --cores 2 results/figures",
           "started": "2026-12-01 21:00:00 UTC", "experiment": "demo", **extra}
    (folder / f"{rec['host']}-{pid}.json").write_text(json.dumps(rec))


def test_the_lock_message_names_a_live_run_and_forbids_unlock(tmp_path):
    _lock(tmp_path)
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], cwd=tmp_path)
    try:
        _record(tmp_path, proc.pid)
        msg = runs.lock_message(tmp_path, ["snakemake", "--configfile", "mine.yaml"])
        assert f"PID {proc.pid} on host" in msg and "`snakemake --cores 2 results/figures`" in msg
        assert "started 2026-12-01 21:00:00 UTC" in msg and "Do NOT run `snakemake --unlock`" in msg
        assert f"kill {proc.pid}" in msg
    finally:
        proc.kill()
        proc.wait()
    # the same record, its process gone: a killed run's lock, and now --unlock is the advice
    msg = runs.lock_message(tmp_path, ["snakemake", "--configfile", "mine.yaml"])
    assert "left by a run that was killed" in msg and f"PID {proc.pid}" in msg and "no longer running" in msg
    assert "`snakemake --unlock --configfile mine.yaml`" in msg and "Do NOT" not in msg
    assert runs.forget_dead_runs(tmp_path) == 1 and not list((tmp_path / runs.RUNS_DIR).iterdir())


def test_a_reused_pid_is_not_mistaken_for_the_live_run(tmp_path):
    _lock(tmp_path)
    _record(tmp_path, os.getppid(), ticks="1")  # a live PID that started at another time than the run recorded
    assert "left by a run that was killed" in runs.lock_message(tmp_path, ["snakemake"])


def test_dry_runs_are_told_apart():
    assert runs.dry_run(["snakemake", "-n", "results/figures"]) and runs.dry_run(["snakemake", "-np"])
    assert runs.dry_run(["snakemake", "--dry-run"])
    assert not runs.dry_run(["snakemake", "--cores", "2", "--nolock"]) and not runs.dry_run(["snakemake", "-j", "2"])


@pytest.mark.slow
@pytest.mark.heavy  # two concurrent Snakemake runs; the lock messages for a live run are tested above without a second run
def test_a_second_snakemake_run_names_the_live_one_and_unlock_only_once_it_is_dead(tmp_path):
    """Two real Snakemake runs in one folder: the second is refused, naming the first's PID, command and start,
    and told not to --unlock; once the first is killed (-9), the lock is named a killed run's, --unlock advised."""
    config = yaml.safe_load(TINY.read_text())
    config["sources"]["cds"]["sentences"] = 3_000_000  # a synth job that runs while the second run comes
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(config))
    target = "results/tiny/corpus/clean/cds.txt"
    args = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--workflow-profile", "none",
            "--cores", "1", target, "--configfile", "c.yaml", "--config", "warm_start=False"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    first = subprocess.Popen(args, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    try:
        end = time.monotonic() + 600  # a hang guard on a busy machine, not a timing
        while not (tmp_path / "logs" / "tiny" / "synth" / "cds.log").exists():
            assert first.poll() is None and time.monotonic() < end, "the first run did not start its job"
            time.sleep(0.5)
        second = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True)
        out = second.stdout + second.stderr
        assert second.returncode != 0 and first.poll() is None
        assert f"another run is live there and holds files this run needs: PID {first.pid} on host" in out, out
        assert "--configfile c.yaml --config warm_start=False`, started 20" in out, out
        assert "Do NOT run `snakemake --unlock` while it runs" in out
        assert "It can be removed with the --unlock argument" not in out  # Snakemake's own advice, replaced
    finally:
        os.killpg(first.pid, signal.SIGKILL)  # Snakemake and its job: a kill -9 leaves the lock behind
        first.wait()
    third = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True)
    out = third.stdout + third.stderr
    assert third.returncode != 0
    assert f"the lock was left by a run that was killed (PID {first.pid} on host" in out, out
    assert "Remove the lock with `snakemake --unlock --configfile c.yaml`" in out and "Do NOT" not in out


# ---- interrupts --------------------------------------------------------------------------------------

def test_ctrl_c_in_any_stage_is_one_line_and_exit_130(monkeypatch, capsys):
    from povstim.preflight import check_cli

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(check_cli, "run", interrupted)
    assert cli.main(["check", str(TINY)]) == 130
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["povstim check: interrupted (Ctrl-C); unfinished outputs were not written"]


def test_ctrl_c_while_a_job_waits_for_the_warm_start_server_is_one_line(tmp_path, monkeypatch, capsys):
    """Replayed by hand: Ctrl-C under Snakemake while a train job waited for the warm-start server (still
    importing torch) left a KeyboardInterrupt traceback in the job's log, which Snakemake prints."""
    from povstim import warm

    server = tmp_path / "warm"
    server.mkdir()
    (server / "starting").touch()  # a live server still importing: no socket yet, so the job waits for it
    (server / "pid").write_text(str(os.getpid()))
    monkeypatch.setenv(warm.ENV_SOCKET, str(server / "povstim.sock"))
    monkeypatch.delenv(warm.ENV_CHILD, raising=False)
    waited = []

    def ctrl_c(seconds):  # the SIGINT lands while the job waits
        waited.append(seconds)
        raise KeyboardInterrupt

    monkeypatch.setattr(warm.time, "sleep", ctrl_c)
    try:
        rc = cli.main(["train", "--out-dir", str(tmp_path / "m")])
    except KeyboardInterrupt:
        pytest.fail("Ctrl-C while waiting for the warm-start server escaped povstim's main (a traceback)")
    assert waited, "the job did not wait for the starting server"
    assert rc == 130
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["povstim train: interrupted (Ctrl-C); unfinished outputs were not written"]


def test_end_line_of_an_interrupted_run_says_so_and_blames_no_cause():
    line = runs.end_line("mine", False, ".snakemake/log/x.log", interrupted=True)
    assert "interrupted (Ctrl-C)" in line and "FAILED" not in line and "Fix the cause" not in line
    assert "FAILED" in runs.end_line("mine", False, None)
    assert "Snakemake's log: a.log)" in runs.end_line("mine", False, ["a.log"])  # not "['a.log']"


def test_watch_interrupts_remembers_a_sigint_and_still_raises(monkeypatch):
    monkeypatch.setattr(runs, "_INTERRUPTS", [])
    previous = signal.getsignal(signal.SIGINT)
    try:
        sigint_as_in_a_terminal()
        runs.watch_interrupts()
        assert not runs.interrupted()
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)
        assert runs.interrupted()
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.mark.slow
def test_ctrl_c_under_snakemake_says_interrupted_and_exits_130(tmp_path):
    # Once exit 1 and "FAILED ... Fix the cause". Synchronised on Snakemake's own marker of a running job,
    # not on time: the Ctrl-C lands while a job runs, however slow the machine.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    log = tmp_path / "snakemake.err"
    with open(log, "w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--workflow-profile", "none",
             "--cores", "1", "--configfile", str(TINY)],
            cwd=tmp_path, stdout=err, stderr=subprocess.STDOUT, env=env, start_new_session=True,
            preexec_fn=sigint_as_in_a_terminal)
        incomplete = tmp_path / ".snakemake" / "incomplete"
        while proc.poll() is None and not (incomplete.is_dir() and any(incomplete.iterdir())):
            time.sleep(0.2)
        assert proc.poll() is None, log.read_text()[-3000:]
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal sends: the whole process group
        rc = proc.wait()
    out = log.read_text()
    assert rc == 130, out[-3000:]
    assert "povstim: run of experiment 'tiny' interrupted (Ctrl-C)" in out
    assert "FAILED" not in out and "Fix the cause" not in out
    locks = tmp_path / ".snakemake" / "locks"
    assert not locks.exists() or not any(locks.iterdir())  # the rerun is not refused


def test_truncated_posterior_is_never_summarised():
    import numpy as np
    import arviz as az
    from povstim.analysis.models.bayes import check_complete

    full = az.from_dict(posterior={"b": np.zeros((2, 100))})
    check_complete(full, chains=2, draws=100)
    cut = az.from_dict(posterior={"b": np.zeros((2, 37))})
    with pytest.raises(PovstimError, match="2 chain\\(s\\) x 37 draws, not 2 x 100"):
        check_complete(cut, chains=2, draws=100)


def test_a_sigint_that_the_sampler_swallows_is_still_recorded():
    """PyMC catches KeyboardInterrupt inside pm.sample and returns the draws so far; bayes._interrupts records the
    SIGINT anyway, so fit() raises instead of summarising a truncated trace (the whole path, with a real PyMC
    fit, is the heavy test below)."""
    from povstim.analysis.models.bayes import _interrupts

    before = signal.getsignal(signal.SIGINT)
    with _interrupts() as interrupted:
        try:  # what PyMC does with the Ctrl-C
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1)  # the handler runs at the next bytecode; the sleep is only a bound, never waited out
        except KeyboardInterrupt:
            pass
    assert interrupted == [signal.SIGINT]
    assert signal.getsignal(signal.SIGINT) is before  # the previous handler is back
    with _interrupts() as quiet:
        pass
    assert quiet == []


# heavy: a real PyMC fit compiled cold (74 s in the suite); the recording of a swallowed SIGINT is tested above,
# the truncated trace's refusal by test_truncated_posterior_is_never_summarised, Ctrl-C under Snakemake below
@pytest.mark.heavy
@pytest.mark.slow
def test_ctrl_c_during_the_bayesian_fit_stops_cleanly(tmp_path):
    # The fault the issue found: PyMC catches KeyboardInterrupt and returns the draws so far, and the old
    # code went on to summarise the truncated trace. Now: one line, exit 130, nothing written.
    rows = ["size,category,filtered,source,seed,phenomenon,n_correct,n_total"]
    for size in ("10k", "20k"):
        for cat, ph in (("A", "a1"), ("A", "a2"), ("B", "b1"), ("B", "b2")):
            for filt in ("true", "false"):
                for seed in (1, 2):
                    rows.append(f"{size},{cat},{filt},baby,{seed},{ph},{30 + seed + len(ph)},60")
    counts = tmp_path / "counts.csv"
    counts.write_text("\n".join(rows) + "\n")
    out = tmp_path / "fit"
    env = {**os.environ, "PYTHONPATH": str(REPO / "workflow")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "povstim", "analyze", "--counts", str(counts), "--formula",
         "size * filtered + category + (1|seed) + (1|phenomenon)", "--draws", "200000", "--tune", "200",
         "--chains", "2", "--cores", "2", "--sampler", "pymc", "--out", str(out)],
        stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
    # (stderr is read only at the end: the run logs a few lines, far below a pipe's buffer)
    # PyMC samples the two chains in two worker processes, started after compilation: wait for them, so the
    # Ctrl-C lands while draws are being collected (the case PyMC swallows), not during compilation.
    children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
    deadline = time.time() + 900
    while time.time() < deadline and proc.poll() is None:
        if children.exists() and len(children.read_text().split()) >= 2:
            break
        time.sleep(0.5)
    time.sleep(5)
    assert proc.poll() is None, "the fit ended before it could be interrupted"
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal sends: the whole process group
    lines, rest = [], proc.stderr.read()
    rc = proc.wait(timeout=120)
    err = "".join(lines) + rest
    assert rc == 130, err[-3000:]
    assert err.strip().splitlines()[-1] == "povstim analyze: interrupted (Ctrl-C); unfinished outputs were not written"
    assert "Traceback" not in err
    assert not out.exists() or not any(out.iterdir())


@pytest.mark.slow
def test_a_failing_run_ends_with_one_line_naming_the_failure_and_the_logs(tmp_path):
    config = yaml.safe_load(TINY.read_text())
    config["experiment"] = "broken"
    config["sources"]["cds"] = {"kind": "local", "format": "lines", "path": str(tmp_path / "missing.txt")}
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(config))
    proc = snakemake(tmp_path, "--configfile", str(path), "--", "results/broken/corpus/clean/cds.txt")
    err = proc.stdout + proc.stderr
    assert proc.returncode != 0
    log = tmp_path / "logs" / "broken" / "clean" / "cds.log"
    assert "sources.cds.path" in log.read_text() and "Traceback" not in log.read_text()
    assert "povstim: experiment 'broken' FAILED" in err and "logs/broken/" in err
    assert not (tmp_path / "results" / "broken" / "corpus" / "clean" / "cds.txt").exists()


def test_rerunning_an_experiment_with_another_config_warns_before_replacing(tmp_path):
    from povstim import config as cfg

    config = cfg.load(TINY)
    runs.write_record(config, ["tiny.yaml"], tmp_path)
    assert runs.overwrite_warning(tmp_path, config) is None
    changed = {**config, "training": {**config["training"], "lr": 0.002}}
    msg = runs.overwrite_warning(tmp_path, changed)
    assert "training.lr: 0.001 -> 0.002" in msg and "another `experiment:`" in msg


def test_speed_only_settings_are_not_a_change_of_results(tmp_path):
    """warm_start and prewarm_analysis change how fast a run goes, not what it computes: results made before
    either existed, or with another value, are not reported as made with a different config."""
    from povstim import config as cfg

    config = cfg.load(TINY)
    runs.write_record({k: v for k, v in config.items() if k not in ("warm_start", "prewarm_analysis")},
                      ["tiny.yaml"], tmp_path)
    assert runs.overwrite_warning(tmp_path, {**config, "warm_start": False, "prewarm_analysis": False}) is None
    assert "seeds" in runs.overwrite_warning(tmp_path, {**config, "seeds": [1, 2]})


def test_guardrail_lines_name_every_fired_check_and_count_the_rest(tmp_path):
    # Replayed: six checks fired and the end-of-run summary kept the first four (limit=4), dropping
    # reinsert_shortfall and size_label. Planted: six fired checks, 3 + 1 + 2 + 1 + 2 + 4 = 13 findings.
    from povstim.analysis.guardrails import checks as G
    counts = {"undertrained": 3, "equal_tokens": 1, "lexical_preference": 2, "below_chance": 1,
              "reinsert_shortfall": 2, "size_label": 4}
    result = {"fired": list(counts), "checks": {
        name: {"title": G.CHECKS[name], "fired": True,
               "findings": [G.Finding(name, f"{name}-scope{i}", f"detail {i}", "advice").as_dict()
                            for i in range(n)]} for name, n in counts.items()}}
    result["checks"]["baseline_solves"] = {"title": G.CHECKS["baseline_solves"], "fired": False, "findings": []}
    lines = runs.guardrail_lines(result, tmp_path / "guardrails.json")
    body, last = lines[:-1], lines[-1]
    assert len(body) == 6  # one line per fired check (first finding), none dropped
    for name, n in counts.items():
        (line,) = [x for x in body if f"{name}-scope0" in x]
        assert G.CHECKS[name] in line
        assert line.endswith(f"(+{n - 1} more)") if n > 1 else "more)" not in line
    assert "baseline_solves" not in " ".join(body)
    # hidden: 2 + 0 + 1 + 0 + 1 + 3 = 7
    assert "6 guardrail checks fired; 7 more findings not shown above" in last
    assert str(tmp_path / "guardrails.html") in last
    # two per check: 2 + 1 + 2 + 1 + 2 + 2 = 10 lines; hidden 1 + 0 + 0 + 0 + 0 + 2 = 3
    lines2 = runs.guardrail_lines(result, tmp_path / "guardrails.json", per_check=2)
    assert len(lines2) - 1 == 10
    assert "3 more findings not shown above" in lines2[-1]
    assert runs.guardrail_lines({"fired": [], "checks": {}}, tmp_path / "guardrails.json") == []
