"""Compile the Bayesian model's sampler code while the models still train (``povstim analyze-prewarm``).

``analyze`` ends every DAG, and before its sampler draws anything PyTensor turns the model into compiled code:
numba code for nutpie, C code for PyMC's NUTS. Both are cached on disk (PyTensor's compile directory,
``~/.pytensor``), so only the first fit on a machine pays in full: the embedded demo's ``analyze`` took
29.8 s with an empty cache and 16.7 s with a filled one (2 cores, nutpie). That first fit is what a newcomer's
first run, a CI run and every run on a freshly lent GPU machine get; on a GPU machine the CPU cores sit
mostly idle while the models train.

A Snakemake run whose DAG holds an ``analyze`` job therefore starts this command when the run starts
(``Snakefile`` ``onstart``, with the warm-start server; :func:`command`). It waits for the suite the model is
fitted on, builds the items ``analyze`` will fit -- every model of the config x every item of that suite, with
made-up verdicts -- through the same functions (``pipeline.model_items``, ``pipeline.model_design``), and fits
every model of ``analysis.models`` with the sampler ``analyze`` will use for a handful of draws. That compiles
the same code into the cache; the draws are thrown away and nothing is written outside the cache. It changes
no result: compiled code is the same code whether it comes from the cache or not (the demo's summary.csv is
byte-identical after a cold, a warm and a prewarmed fit).

It only takes CPU nothing else wants: it starts compiling once 3/4 of a CPU has been idle for 3 s
(:func:`wait_for_idle_cpu`; the README's run on 2 cores never leaves that much), and it runs at nice 19,
in its own session whose autogroup it also sets to nice 19 (where the kernel groups tasks by session, a
plain nice would only rank it inside its own group).
It stops the moment ``analyze`` starts (its log file changes), so the two never compile the same thing at once.
Anything that goes wrong is logged and the command still exits 0: the fit then compiles as it always did.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from povstim.warm import alive as running  # the warm-start server's own check (a zombie counts as gone)

# numpy/pandas are imported where used: the Snakefile imports this module to start the command

log = logging.getLogger("povstim.analyze-prewarm")

# draws and tuning steps of the throw-away fit: enough for every compiled function to run
DRAWS = 10
POLL_S = 0.5
# how long a run's prewarm waits for the suite the model is fitted on (the benchmark job writes it early on;
# a run that stops first ends the prewarm with it: --watch-pid)
SUITE_WAIT_S = 3600.0


def lower_priority() -> str:
    """nice 19 for this process and, when it leads its own session, for its autogroup; says what was set."""
    done = [f"nice {os.nice(19 - os.nice(0))}"]
    if os.getsid(0) == os.getpid():  # never the autogroup of a session other processes are in
        try:
            Path("/proc/self/autogroup").write_text("19")
            done.append("autogroup nice 19")
        except OSError:  # no autogroups (macOS, kernels without them)
            pass
    return ", ".join(done)


def stop_when(path: Path | None, watch_pid: int | None, on_stop) -> None:
    """Call ``on_stop`` (from a daemon thread) once ``path`` is created, removed or written to, or once the
    process ``watch_pid`` (the Snakemake run) is gone."""
    if path is None and watch_pid is None:
        return

    def signature():
        try:
            st = path.stat()
            return st.st_ino, st.st_mtime_ns, st.st_size
        except (OSError, AttributeError):
            return None

    def alive():
        return watch_pid is None or running(watch_pid)

    first = signature()

    def watch():
        while signature() == first and alive():
            time.sleep(POLL_S)
        on_stop("analyze started" if alive() else f"the run (pid {watch_pid}) ended")

    threading.Thread(target=watch, daemon=True, name="analyze-started").start()


def idle_cpus(interval: float = 1.0, stat: Path = Path("/proc/stat")) -> float | None:
    """How many CPUs were idle over the next ``interval`` seconds (None: no /proc/stat to tell)."""
    def sample():
        fields = [int(x) for x in stat.read_text().split("\n", 1)[0].split()[1:]]
        return fields[3] + (fields[4] if len(fields) > 4 else 0), sum(fields)  # idle + iowait, all
    try:
        idle0, total0 = sample()
        time.sleep(interval)
        idle1, total1 = sample()
    except (OSError, ValueError, IndexError):
        return None
    busy_total = total1 - total0
    return (idle1 - idle0) / busy_total * (os.cpu_count() or 1) if busy_total > 0 else None


def wait_for_idle_cpu(need: float = 0.75, seconds: int = 3, measure=idle_cpus) -> float:
    """Wait until at least ``need`` CPUs have been idle for ``seconds`` one-second samples in a row: a
    machine whose cores the run keeps busy gets no compile competing with its jobs, not even at nice 19.
    Returns the seconds waited. (The README's run on 2 cores: 0.00 CPUs idle from its first job to analyze;
    `--cores 1` on them: 0.89-1.10, the 10th to 90th percentile of one-second samples.)"""
    t0, streak = time.monotonic(), 0
    while streak < seconds:
        idle = measure()
        if idle is None:  # cannot tell (no /proc): nice 19 alone
            break
        streak = streak + 1 if idle >= need else 0
    return time.monotonic() - t0


def wait_for_suite(folder: Path, wait_s: float) -> bool:
    """Whether the suite folder's manifest appears within ``wait_s`` seconds (the benchmark job writes it)."""
    deadline = time.monotonic() + wait_s
    while not (folder / "manifest.json").exists():
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL_S)
    return True


def synthetic_scores(models: list[dict], pairs: list[dict], suite: str, seed: int = 0):
    """Final-model item rows as the score files will hold them (the columns the analysis reads), one per
    model x item, with made-up verdicts: the design depends on the predictors, not on the verdicts."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    items = pd.DataFrame({"paradigm": [p["paradigm"] for p in pairs], "category": [p["category"] for p in pairs],
                          "item_id": [p["item_id"] for p in pairs]})
    frames = []
    for m in models:
        frame = items.copy()
        for key in ("arch", "condition", "size"):
            frame[key] = str(m[key])
        frame["seed"] = int(m["seed"])
        frames.append(frame)
    df = pd.concat(frames, ignore_index=True)
    df["suite"], df["step"], df["final"] = suite, 0, True
    df["correct"] = rng.random(len(df)) < 0.6
    return df


def designs(models: list[dict], suites: dict[str, Path], meta: dict | None, arch_meta: dict | None,
            settings, wait_s: float = 0.0) -> list[tuple[str, object]]:
    """[(model name, design)] that ``analyze`` will fit, from the config's models and the suite's items."""
    # deferred: pandas, the analysis and the suite readers, only when a prewarm runs (the Snakefile imports
    # this module at every DAG build)
    import pandas as pd

    from povstim.benchmarks.importers import load_pairs
    from povstim.analysis.tables import tidy
    from povstim.analysis.pipeline import model_design, model_items, model_spec, model_suite

    suite = model_suite(settings, pd.Series(sorted(suites)))
    folder = Path(suites[suite])
    if not wait_for_suite(folder, wait_s):
        raise TimeoutError(f"suite {folder} did not appear within {wait_s:.0f} s")
    scores = synthetic_scores(models, load_pairs(folder), suite)
    _, df = model_items(tidy.final_items(scores), settings, meta, arch_meta)
    return [(name, model_design(df, settings, settings.family, **model_spec(name, settings, df)))
            for name in settings.models]


def prewarm(models: list[dict], suites: dict[str, Path], meta: dict | None, arch_meta: dict | None, settings,
            wait_s: float = 0.0) -> list[str]:
    """Fit every model of ``settings.models`` for DRAWS draws with the sampler the real fit will use; returns
    a line per model."""
    from povstim.analysis.models import bayes

    sampler = bayes.resolve_sampler(settings.sampler, settings.chains * (settings.tune + settings.draws))
    # two chains: the fit's own summary wants R-hat, which needs two (one core: they run one after the other)
    small = dataclasses.replace(settings, draws=DRAWS, tune=DRAWS, chains=2, sampler=sampler)
    built = designs(models, suites, meta, arch_meta, settings, wait_s)
    log.info("a CPU (3/4 of one) idle for 3 s (after %.0f s of waiting): compiling", wait_for_idle_cpu())
    done = []
    for name, design in built:
        t0 = time.perf_counter()
        bayes.fit(design, small, cores=1)
        done.append(f"{name}: {sampler} code compiled in {time.perf_counter() - t0:.1f} s")
        log.info("%s", done[-1])
    return done


def command(python: str, models: list, suites: dict, meta: dict, arch_meta: dict, analysis: dict,
            started: str, wait_s: float, watch_pid: int | None = None) -> list[str]:
    """The ``povstim analyze-prewarm`` command line for a run's analyze job (``started``: its log file;
    ``watch_pid``: the Snakemake process, whose end also stops it)."""
    as_json = lambda x: json.dumps(x, sort_keys=True)  # noqa: E731
    return [python, "-m", "povstim", "analyze-prewarm", "--models", as_json(models), "--suites", as_json(suites),
            "--conditions", as_json(meta), "--archs", as_json(arch_meta), "--params", as_json(analysis),
            "--until-started", started, "--wait", str(wait_s)] + (
                ["--watch-pid", str(watch_pid)] if watch_pid else [])


def launch(argv: list[str], pythonpath: str, log_path: str) -> subprocess.Popen:
    """Start ``argv`` in the background, in its own session (its own autogroup: lower_priority), its output
    to ``log_path``. A run's warm-start server (POVSTIM_WARM_SOCKET, inherited) forks it with PyMC imported."""
    Path(log_path).parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "wb") as out:
        return subprocess.Popen(argv, env={**os.environ, "PYTHONPATH": pythonpath}, stdin=subprocess.DEVNULL,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def stop(process: subprocess.Popen | None) -> None:
    """End a prewarm still running when the run ends (its client forwards SIGTERM to the forked child)."""
    if process is not None and process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


def cpu_seconds() -> float:
    import resource

    use = resource.getrusage(resource.RUSAGE_SELF)
    return use.ru_utime + use.ru_stime


def exit_now(message: str) -> None:
    """Leave at once, from any thread (the compiler holds the main thread), logging why."""
    log.info("%s (%.1f CPU-s used)", message, cpu_seconds())
    for handler in logging.getLogger().handlers:
        handler.flush()
    sys.stderr.flush()
    os._exit(0)
