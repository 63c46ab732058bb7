"""`povstim analyze-prewarm` (analysis/models/prewarm.py): while the models train, compile the Bayesian model that
`analyze` will fit, from the config's models and the suite alone -- the design must be the one the real
scores give, the compiled code must be what `analyze` then finds in the cache, and the command must get out
of the way (lowest priority, stop when analyze starts or the run ends, never fail)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers.simulate import CONDITIONS, simulate_scores, write_score_files
from povstim.analysis.models import prewarm
from povstim.analysis.tables import tidy
from povstim.analysis.pipeline import analysis_settings, model_design, model_items, model_spec

REPO = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(REPO / "workflow")}


def posh_suite(folder: Path, per_paradigm: int = 4) -> Path:
    """A generated POSH suite folder, as the benchmark job writes it (its items are not the scored ones)."""
    from povstim.benchmarks import posh, words
    from povstim.benchmarks.suite import write_suite

    paradigms = sorted({t.paradigm for t in posh.TEMPLATES})
    pairs = [p for par in paradigms
             for p in posh.generate(words.default_lexicon(), per_paradigm, seed=1, paradigms=[par])]
    write_suite(folder, pairs, {"kind": "generated"})
    return folder


def models_of(scores) -> list[dict]:
    keys = scores[["arch", "condition", "size", "seed"]].drop_duplicates()
    return [{k: (int(v) if k == "seed" else v) for k, v in row.items()} for row in keys.to_dict("records")]


@pytest.mark.parametrize("given", [
    {"models": ["table12", "three_level"], "min_groups": 2},  # (1|seed) kept: two seeds
    {"formula": "(size + category) * filtered + source + (1|seed) + (1|phenomenon)"},  # (1|seed) dropped
])
def test_the_prewarm_compiles_the_design_the_scores_will_give(tmp_path, given):
    scores = simulate_scores(items=8)  # 3 conditions x 2 sizes x 2 seeds x POSH's 9 paradigms
    settings = analysis_settings(given)
    suite, df = model_items(tidy.final_items(scores), settings, CONDITIONS, None)
    ours = prewarm.designs(models_of(scores), {"posh": posh_suite(tmp_path / "posh")}, CONDITIONS, None, settings)
    assert [name for name, _ in ours] == list(settings.models)
    for name, design in ours:
        real = model_design(df, settings, "binomial", **model_spec(name, settings, df))  # as analyze builds it
        assert design.bambi_formula() == real.bambi_formula()
        assert design.expanded() == real.expanded() and design.dropped == real.dropped
        assert list(design.data.columns) == list(real.data.columns) and len(design.data) == len(real.data)
        assert design.codes == real.codes


def test_it_compiles_only_once_three_quarters_of_a_cpu_have_been_idle_for_three_seconds_in_a_row():
    # what the README's run on 2 cores looks like (0.0 idle) vs `--cores 1` on them (0.89-1.10 idle)
    seen = iter([0.2, 1.5, 0.5, 0.8, 0.75, 1.2, 0.0])
    prewarm.wait_for_idle_cpu(measure=lambda: next(seen))
    assert next(seen) == 0.0  # it started after the 3rd idle sample in a row (0.8, 0.75, 1.2)
    # no /proc/stat to tell: it does not wait (nice 19 alone keeps it out of the way)
    assert prewarm.wait_for_idle_cpu(measure=lambda: None) < 1
    idle = prewarm.idle_cpus(0.2)
    assert idle is None or 0 <= idle <= os.cpu_count() + 0.01


def run_prewarm(tmp_path: Path, *extra: str, suites: dict | None = None, timeout: float = 60):
    argv = prewarm.command(sys.executable, [], suites or {"posh": str(tmp_path / "never")}, {}, {}, {},
                           str(tmp_path / "analyze.log"), 300.0) + list(extra)
    log = tmp_path / "prewarm.log"
    proc = prewarm.launch(argv, str(REPO / "workflow"), str(log))
    return proc, log


def test_it_stops_as_soon_as_analyze_starts_and_at_the_lowest_priority(tmp_path):
    proc, log = run_prewarm(tmp_path)
    time.sleep(3)  # waiting for a suite that never comes
    assert proc.poll() is None
    (tmp_path / "analyze.log").write_text("")  # what the analyze job's `> {log}` does
    assert proc.wait(timeout=10) == 0
    text = log.read_text()
    # its own session (launch), so its autogroup can be lowered without touching the run's
    autogroup = os.access("/proc/self/autogroup", os.W_OK)
    assert "priority lowered: nice 19" + (", autogroup nice 19" if autogroup else "") in text
    assert "analyze started after" in text and "stopped (what was compiled stays cached)" in text


def test_it_stops_when_the_run_is_gone_and_never_fails(tmp_path):
    run = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(2)"])
    proc, log = run_prewarm(tmp_path, "--watch-pid", str(run.pid))
    run.wait()
    assert proc.wait(timeout=10) == 0
    assert f"the run (pid {run.pid}) ended after" in log.read_text()
    # a suite that is not there: logged, exit status 0 (analyze then compiles as it always did)
    bad = subprocess.run([sys.executable, "-m", "povstim", "analyze-prewarm", "--models", "[]", "--suites",
                          json.dumps({"posh": str(tmp_path / "never")})], env=ENV, capture_output=True, text=True)
    assert bad.returncode == 0 and "nothing more compiled ahead (TimeoutError: suite" in bad.stderr


@pytest.mark.slow
@pytest.mark.heavy
def test_after_a_prewarm_analyze_finds_all_its_compiled_code_in_the_cache(tmp_path):
    """An empty PyTensor cache; the prewarm from the config's models and the suite; then the real analyze on
    the real scores finds every operation's compiled code (numba functions, C modules) in the cache."""
    scores = simulate_scores(items=6)
    paths = write_score_files(scores, tmp_path / "results")
    suite = posh_suite(tmp_path / "posh")
    params = {"draws": 100, "tune": 100, "chains": 2, "sampler": "nutpie"}  # nutpie: the demo's sampler
    cache = tmp_path / "pytensor"
    env = {**ENV, "PYTENSOR_FLAGS": f"base_compiledir={cache}"}
    argv = prewarm.command(sys.executable, models_of(scores), {"posh": str(suite)}, CONDITIONS, {}, params,
                           str(tmp_path / "analyze.log"), 0.0)
    # The command as the run starts it, except its wait for an idle CPU (tested above with made-up samples):
    # on a machine whose cores others keep busy that wait never ends (a 600 s timeout failed on 2 shared
    # cores). No timeout either: at nice 19 on a busy machine the compile is slow, not stuck.
    assert argv[1:4] == ["-m", "povstim", "analyze-prewarm"]
    argv = [sys.executable, "-c", "import sys; from povstim.analysis import prewarm; "
            "prewarm.wait_for_idle_cpu = lambda *a, **k: 0.0; from povstim.cli import main; "
            "sys.exit(main(sys.argv[1:]))", *argv[3:]]
    pre = subprocess.run(argv, env=env, capture_output=True, text=True)
    assert pre.returncode == 0 and "table12: nutpie code compiled in" in pre.stderr, pre.stderr[-2000:]

    def cached():
        return {p.relative_to(cache) for p in cache.rglob("*") if p.is_file() and p.suffix in (".nbi", ".so")}

    before = cached()
    assert any(p.suffix == ".nbi" for p in before)  # numba's cache index files: the prewarm compiled into it
    out = subprocess.run([sys.executable, "-m", "povstim", "analyze", "--scores", *map(str, paths), "--conditions",
                          json.dumps(CONDITIONS), "--params", json.dumps(params), "--out-dir", str(tmp_path / "an"),
                          "--cores", "1"], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert (tmp_path / "an" / "bayes" / "summary.csv").exists()
    # every PyTensor operation's compiled code was there; only a whole-graph function, whose graph holds the
    # data (the real counts, not the made-up ones), may be compiled anew
    added = {p.name.split("-")[0] for p in cached() - before}
    assert added <= {"string.numba_funcified_fgraph"}, added
