"""Warm start (povstim/warm.py): jobs forked from a server that has torch imported write exactly what a
fresh process writes, keep their exit status, stdout/stderr and Ctrl-C, see code edited after the server
started, and run on their own when the server cannot vouch for a fresh process.

The Snakemake side (the server a run starts, and warm vs cold byte-identical DAG outputs) is in
tests/test_workflow.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import tiny_models as tiny
from povstim import warm

REPO = Path(__file__).resolve().parents[1]
SENTENCES = [f"the {a} {v} the {b} ." for a in ("dog", "cat", "bird", "girl") for v in ("sees", "likes", "hears")
             for b in ("boy", "man", "tree")]
PAIRS = [{"good": "the dog sees the boy .", "bad": "the dog see the boy ."},
         {"good": "the cat likes the man .", "bad": "the cat like the man ."},
         {"good": "the girl hears the tree .", "bad": "the girl hear the tree ."}]


@pytest.fixture(scope="module")
def code(tmp_path_factory) -> Path:
    """A private copy of workflow/ (PYTHONPATH of the server and its jobs), so a test may edit it."""
    dst = tmp_path_factory.mktemp("code") / "workflow"
    shutil.copytree(REPO / "workflow", dst, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    return dst


@pytest.fixture(scope="module")
def server(code):
    """A server that keeps a ready child, as on a GPU machine (auto keeps none on a CPU): train and score jobs here
    run in one, every other stage in a child forked for it."""
    saved = os.environ.get(warm.ENV_SOCKET)
    os.environ[warm.ENV_READY] = "1"
    try:
        srv = warm.start(str(code))
    finally:
        del os.environ[warm.ENV_READY]
    assert srv.ready() and Path(srv.socket).exists()  # listening once its imports are done
    # the test process itself must not delegate: only the subprocesses given the socket do
    os.environ.pop(warm.ENV_SOCKET)
    if saved is not None:
        os.environ[warm.ENV_SOCKET] = saved
    yield srv
    text = log_text(srv)
    srv.stop()
    assert srv.process.returncode is not None
    # no ready child outlives its server
    for pid in ready_pids(text):
        deadline = time.monotonic() + 10
        while running(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not running(pid), text


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    return tiny.build(tmp_path_factory.mktemp("m") / "gpt2", SENTENCES, "causal", vocab_size=300, train_steps=5)


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("suite") / "pairs.jsonl"
    path.write_text("".join(json.dumps({"sentence_good": p["good"], "sentence_bad": p["bad"], "UID": "agreement",
                                        "pairID": i}) + "\n" for i, p in enumerate(PAIRS)))
    return path


def env_for(code: Path, server=None, **extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in (warm.ENV_SOCKET, warm.ENV_CHILD)}
    env["PYTHONPATH"] = str(code)
    if server is not None:
        env[warm.ENV_SOCKET] = server.socket
    env.update(extra)
    return env


def povstim(args, env, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "povstim", *args], env=env, capture_output=True, text=True, **kw)


def log_text(server) -> str:
    return (server.folder / "server.log").read_text()


def forked(server, needle: str) -> list[str]:
    return [line for line in log_text(server).splitlines() if ": povstim " in line and needle in line]


READY = re.compile(r"ready child (\d+): (.*); waiting for a job")


def ready_pids(text: str) -> list[int]:
    """The ready children a server's log announces, in order."""
    return [int(m.group(1)) for m in READY.finditer(text)]


def wait_for(predicate, what: str, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def idle_ready(server) -> int | None:
    """The ready child waiting now (announced, alive, no job run in it yet), or None."""
    used = {int(line.split("pid ", 1)[1].split(":", 1)[0]) for line in forked(server, "(in a ready child)")}
    idle = [pid for pid in ready_pids(log_text(server)) if pid not in used and running(pid)]
    return idle[-1] if idle else None


def waiting_ready(server) -> int:
    wait_for(lambda: idle_ready(server) is not None, "no ready child waits")
    return idle_ready(server)


def job_pid(server, needle: str) -> int:
    """The pid of the child that ran the job whose command line holds ``needle``."""
    return int(forked(server, needle)[-1].split("pid ", 1)[1].split(":", 1)[0])


def score_args(model, suite, out):
    return ["score", "--model", str(model), "--suite", str(suite), "--format", "blimp", "--params",
            json.dumps({"device": "cpu", "batch_size": 2}), "--threads", "1", "--out", str(out)]


def test_a_score_job_in_the_server_writes_what_a_fresh_process_writes(server, code, model, suite, tmp_path):
    cold = povstim(score_args(model, suite, tmp_path / "cold.parquet"), env_for(code))
    hot = povstim(score_args(model, suite, tmp_path / "warm.parquet"), env_for(code, server))
    assert cold.returncode == 0, cold.stderr
    assert hot.returncode == 0, hot.stderr
    assert forked(server, str(tmp_path / "warm.parquet")), log_text(server)  # it did run in a forked child
    assert not forked(server, str(tmp_path / "cold.parquet"))
    assert (tmp_path / "warm.parquet").read_bytes() == (tmp_path / "cold.parquet").read_bytes()
    # the job's own stderr (its log in a Snakemake run) gets the job's log lines
    assert "3 pairs x 1 model(s) and checkpoint(s) scored" in hot.stderr


def test_a_score_job_runs_in_a_child_that_was_ready_before_it_came(server, code, model, suite, tmp_path):
    """A ready child (forked ahead, its CUDA driver started -- none on this CPU) takes a train or score job whose
    visible GPUs are the server's; a new one is forked for the next job. Output as a fresh process's."""
    cold = povstim(score_args(model, suite, tmp_path / "cold.parquet"), env_for(code))
    assert cold.returncode == 0, cold.stderr
    for name in ("a", "b"):
        waiting = waiting_ready(server)
        before = log_text(server)
        assert f"ready child {waiting}: torch has no CUDA in" in before  # it tried to start the driver
        hot = povstim(score_args(model, suite, tmp_path / f"{name}.parquet"), env_for(code, server))
        assert hot.returncode == 0, hot.stderr
        line = forked(server, str(tmp_path / f"{name}.parquet"))
        assert line and line[0].endswith("(in a ready child)"), log_text(server)
        assert job_pid(server, str(tmp_path / f"{name}.parquet")) == waiting
        assert f"pid {waiting}: exit 0" in log_text(server)
        assert (tmp_path / f"{name}.parquet").read_bytes() == (tmp_path / "cold.parquet").read_bytes()
        assert "3 pairs x 1 model(s) and checkpoint(s) scored" in hot.stderr  # the job's stderr is its own
    assert job_pid(server, "a.parquet") != job_pid(server, "b.parquet")  # each job its own ready child


def test_other_visible_gpus_or_another_stage_get_a_child_of_their_own(server, code, model, suite, tmp_path):
    """A ready child's driver started with the server's CUDA_VISIBLE_DEVICES: a job that sees other GPUs would not
    find its own, so it gets a fresh fork (still warm, not refused); so does a stage that does not start CUDA
    first, and the ready child keeps waiting for the next job."""
    waiting = waiting_ready(server)
    out = tmp_path / "hidden.parquet"
    proc = povstim(score_args(model, suite, out), env_for(code, server, CUDA_VISIBLE_DEVICES=""))
    assert proc.returncode == 0, proc.stderr
    assert forked(server, str(out)) and not forked(server, str(out))[0].endswith("(in a ready child)")
    assert job_pid(server, str(out)) != waiting
    with stage_stub(code, "def add_arguments(p): pass\ndef run(args):\n    print('ran', flush=True)\n"):
        assert povstim(["dyck"], env_for(code, server)).stdout == "ran\n"
    assert not forked(server, "dyck")[-1].endswith("(in a ready child)")
    assert idle_ready(server) == waiting  # still the one waiting


def test_a_ready_child_that_dies_waiting_is_replaced(server, code, model, suite, tmp_path):
    victim = waiting_ready(server)
    os.kill(victim, signal.SIGKILL)
    wait_for(lambda: f"ready child {victim}: exited with -9 before a job came" in log_text(server),
             "the server did not notice")
    replacement = waiting_ready(server)
    assert replacement != victim
    out = tmp_path / "after.parquet"
    proc = povstim(score_args(model, suite, out), env_for(code, server))
    assert proc.returncode == 0, proc.stderr
    assert forked(server, str(out))[0].endswith("(in a ready child)")
    assert job_pid(server, str(out)) == replacement


def test_how_many_ready_children(tmp_path, capsys):
    """auto: one where a job would find a GPU and torch can start its driver, none elsewhere; or a count."""
    (tmp_path / "nvidia0").touch()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert warm.ready_count({}, cuda_build=True, dev_dir=str(tmp_path)) == 1
    assert warm.ready_count({warm.ENV_READY: "auto"}, cuda_build=True, dev_dir=str(tmp_path)) == 1
    assert warm.ready_count({}, cuda_build=False, dev_dir=str(tmp_path)) == 0  # a CPU wheel: no driver to start
    assert warm.ready_count({}, cuda_build=True, dev_dir=str(empty)) == 0  # no GPU on this machine
    assert warm.ready_count({"CUDA_VISIBLE_DEVICES": ""}, cuda_build=True, dev_dir=str(tmp_path)) == 0  # hidden
    import torch

    if not (torch.version.cuda or torch.version.hip):  # this machine's torch is a CPU wheel: none for it
        assert warm.ready_count({}, dev_dir=str(tmp_path)) == 0
    assert warm.ready_count({warm.ENV_READY: "2"}, cuda_build=False, dev_dir=str(empty)) == 2
    assert warm.ready_count({warm.ENV_READY: "0"}, cuda_build=True, dev_dir=str(tmp_path)) == 0
    assert warm.ready_count({warm.ENV_READY: "many"}, cuda_build=True, dev_dir=str(tmp_path)) == 0
    assert "POVSTIM_WARM_READY='many' is neither auto nor a count" in capsys.readouterr().out


@pytest.mark.heavy  # a Bambi fit twice; the server's equality is tested on the dose job
def test_an_analysis_job_in_the_server_writes_what_a_fresh_process_writes(server, code, tmp_path):
    """analyze is forked too (PyMC, Bambi, ArviZ and nutpie preloaded): the same tables and posterior draws."""
    import arviz
    import numpy as np

    counts = tmp_path / "counts.csv"
    counts.write_text("size,paradigm,n_correct,n_total\n50k,a,30,50\n150k,a,40,50\n50k,b,20,50\n150k,b,35,50\n")

    def args(out):
        return ["analyze", "--counts", str(counts), "--formula", "size", "--out", str(out), "--draws", "100",
                "--tune", "100", "--chains", "2", "--seed", "3", "--cores", "1", "--sampler", "nutpie"]

    cold = povstim(args(tmp_path / "cold"), env_for(code))
    hot = povstim(args(tmp_path / "warm"), env_for(code, server))
    assert cold.returncode == 0, cold.stderr
    assert hot.returncode == 0, hot.stderr
    assert forked(server, str(tmp_path / "warm")), log_text(server)
    for name in ("summary.csv", "table12.csv", "data.csv"):
        assert (tmp_path / "warm" / name).read_bytes() == (tmp_path / "cold" / name).read_bytes(), name
    a, b = (arviz.from_netcdf(tmp_path / d / "posterior.nc").posterior for d in ("cold", "warm"))
    assert all(np.array_equal(a[v].values, b[v].values) for v in a.data_vars)


@pytest.mark.slow  # two Bambi fits on the loaded 2-core machine: 71 s
def test_a_dose_job_in_the_server_writes_what_a_fresh_process_writes(server, code, tmp_path):
    """dose is forked too (Bambi and matplotlib preloaded): the same fit, cells, curve and figures."""
    import pandas as pd

    rows = [{"condition": c, "seed": seed, "paradigm": p, "category": "Question Formation",
             "correct": i < k + seed, "final": True}
            for c, k in (("q-dose0", 8), ("q-dose1e-3", 11), ("q-dose1e-2", 15)) for seed in (1, 2)
            for p in ("qf_a", "qf_b") for i in range(20)]
    pd.DataFrame(rows).to_parquet(tmp_path / "items.parquet")
    series = {"q": {"construction": "question_formation",
                    "members": {"q-dose0": 0.0, "q-dose1e-3": 1e-3, "q-dose1e-2": 1e-2}}}
    params = {"draws": 100, "tune": 100, "chains": 1, "seed": 3, "target_accept": 0.9}

    def args(out):
        return ["dose", "--items", str(tmp_path / "items.parquet"), "--series", json.dumps(series),
                "--params", json.dumps(params), "--out-dir", str(out)]

    cold = povstim(args(tmp_path / "cold"), env_for(code))
    hot = povstim(args(tmp_path / "warm"), env_for(code, server))
    assert cold.returncode == 0, cold.stderr
    assert hot.returncode == 0, hot.stderr
    assert forked(server, str(tmp_path / "warm")), log_text(server)
    names = sorted(p.name for p in (tmp_path / "cold").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "warm").iterdir())
    assert {"q.json", "q_cells.csv", "q_curve.csv", "dose_q.png"} <= set(names)
    for name in names:
        assert (tmp_path / "warm" / name).read_bytes() == (tmp_path / "cold" / name).read_bytes(), name


def test_a_training_job_in_the_server_trains_the_same_model(server, code, tmp_path):
    from test_train import GPT2, TRAINING, corpus as _  # noqa: F401 -- the same tiny recipe as test_train
    from povstim.tokenizer import bpe
    from test_tokenizer import write_corpus

    train = write_corpus(tmp_path / "train.txt", 400, seed=1)
    dev = write_corpus(tmp_path / "dev.txt", 40, seed=2)
    tok = tmp_path / "tokenizer.json"
    bpe.save(bpe.train_file(train, {"vocab_size": 300}), tok)
    training = {**TRAINING, "max_steps": 12, "eval_every": 6, "save_every": 6}

    def args(out):
        return ["train", "--train", str(train), "--dev", str(dev), "--tokenizer", str(tok), "--arch", json.dumps(GPT2),
                "--params", json.dumps(training), "--seed", "3", "--out-dir", str(out), "--threads", "1",
                "--no-progress"]

    cold = povstim(args(tmp_path / "cold"), env_for(code))
    hot = povstim(args(tmp_path / "warm"), env_for(code, server))
    assert cold.returncode == 0 and hot.returncode == 0, cold.stderr + hot.stderr
    assert forked(server, str(tmp_path / "warm"))
    for name in ("model.safetensors", "tokenizer.json", "config.json"):
        assert (tmp_path / "warm" / name).read_bytes() == (tmp_path / "cold" / name).read_bytes(), name


def test_errors_keep_their_message_and_exit_status(server, code, suite, tmp_path):
    missing = tmp_path / "no-such-model"
    proc = povstim(score_args(missing, suite, tmp_path / "x.parquet"), env_for(code, server))
    assert proc.returncode == 1
    assert proc.stderr.strip().endswith(f"povstim score: error: model folder {missing} does not exist")
    assert forked(server, str(missing))
    # argparse's own exit status (2) and usage text on stderr
    proc = povstim(["score", "--no-such-flag"], env_for(code, server))
    assert proc.returncode == 2 and "the following arguments are required: --suite, --out" in proc.stderr
    # stdout is the job's stdout
    proc = povstim(["score", "--help"], env_for(code, server))
    assert proc.returncode == 0 and "POSH-BENCH's published metric" in proc.stdout


@contextlib.contextmanager
def stage_stub(code: Path, text: str, module: str = "formal/cli.py"):
    """`povstim dyck` (a warm stage; or the stage of ``module``) made to run ``text``, in the tests' private copy
    of the code."""
    target = code / "povstim" / module
    original = target.read_text()
    target.write_text(text)
    try:
        yield
    finally:
        target.write_text(original)


def test_ctrl_c_reaches_the_job_and_a_killed_client_stops_it(server, code, tmp_path):
    """SIGINT to the client (Snakemake stopping a job) interrupts the forked job like a local one; a client
    killed outright (SIGKILL: nothing forwarded) makes the server stop its child. The same for a job in a ready
    child (score-group)."""
    script = ("import time\n"
              "def add_arguments(p): pass\n"
              "def run(args):\n    print('started', flush=True)\n    time.sleep(60)\n")
    for stage, module in (("dyck", "formal/cli.py"), ("score-group", "scoring/group_cli.py")):
        with stage_stub(code, script, module):
            for sig, rc, said in ((signal.SIGINT, 130, "interrupted (Ctrl-C)"), (signal.SIGKILL, -9, None)):
                if stage == "score-group":
                    waiting_ready(server)
                proc = subprocess.Popen([sys.executable, "-m", "povstim", stage], env=env_for(code, server),
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                assert proc.stdout.readline().strip() == "started"
                line = forked(server, f"povstim {stage}")[-1]
                assert line.endswith("(in a ready child)") == (stage == "score-group"), line
                pid = int(line.split("pid ")[1].split(":")[0])
                proc.send_signal(sig)
                out, err = proc.communicate(timeout=30)
                assert proc.returncode == rc, err
                if said:
                    assert said in err
                deadline = time.monotonic() + 10
                while f"pid {pid}: exit" not in log_text(server) and time.monotonic() < deadline:
                    time.sleep(0.1)
                assert f"pid {pid}: exit" in log_text(server), log_text(server)
                with pytest.raises(ProcessLookupError):
                    os.kill(pid, 0)


def test_code_edited_after_the_server_started_is_the_code_that_runs(server, code, suite, tmp_path):
    target = code / "povstim" / "scoring" / "cli.py"
    original = target.read_text()
    try:
        target.write_text(original.replace("POSH-BENCH's published metric", "AN EDIT AFTER START"))
        proc = povstim(["score", "--help"], env_for(code, server))
    finally:
        target.write_text(original)
    assert proc.returncode == 0 and "AN EDIT AFTER START" in proc.stdout
    assert forked(server, "score --help")


def test_a_job_whose_import_time_environment_differs_runs_on_its_own(server, code, model, suite, tmp_path):
    out = tmp_path / "hf.parquet"
    proc = povstim(score_args(model, suite, out), env_for(code, server, HF_HUB_OFFLINE="1"))
    assert proc.returncode == 0, proc.stderr
    assert not forked(server, str(out))
    assert "environment differs from the server's in HF_HUB_OFFLINE" in log_text(server)
    # stages that do not import torch never go to the server
    assert warm.delegate(["plan"], "plan", env_for(code, server)) is None


def test_snakemakes_per_job_thread_count_sizes_the_childs_pools(server, code, tmp_path):
    """Snakemake sets OMP_NUM_THREADS={threads} per job; the child sizes torch's pool from it, as a fresh
    process does when it loads torch."""
    stub = ("def add_arguments(p): pass\n"
            "def run(args):\n    import torch\n    print('threads', torch.get_num_threads(), flush=True)\n")
    with stage_stub(code, stub):
        for n in ("1", str(os.cpu_count() + 1)):  # torch caps the second at its default, warm or cold
            proc = povstim(["dyck"], env_for(code, server, OMP_NUM_THREADS=n))
            cold = povstim(["dyck"], env_for(code, OMP_NUM_THREADS=n))
            assert proc.stdout == cold.stdout, proc.stderr
        assert povstim(["dyck"], env_for(code, server, OMP_NUM_THREADS="1")).stdout == "threads 1\n"
    assert len(forked(server, "dyck")) >= 2


def test_the_childs_collector_never_walks_the_servers_libraries(server, code, tmp_path):
    """The server freezes what it holds (torch, transformers: hundreds of thousands of objects) before it forks:
    the job's full collections skip them, yet still collect the job's own garbage."""
    stub = ("import gc, weakref\n"
            "def add_arguments(p): pass\n"
            "def run(args):\n"
            "    frozen = gc.get_freeze_count()\n"
            "    class Node: pass\n"
            "    a, b = Node(), Node()\n"
            "    a.other, b.other = b, a\n"
            "    gone = weakref.ref(a)\n"
            "    del a, b\n"
            "    gc.collect()\n"
            "    print(frozen, gc.isenabled(), gone() is None, flush=True)\n")
    with stage_stub(code, stub):
        warm_out = povstim(["dyck"], env_for(code, server))
        cold_out = povstim(["dyck"], env_for(code))
    frozen, enabled, collected = warm_out.stdout.split()
    assert int(frozen) > 100_000, warm_out.stdout  # torch alone leaves more than that
    assert enabled == "True" and collected == "True"
    assert cold_out.stdout.split() == ["0", "True", "True"]  # a fresh process freezes nothing of itself
    assert forked(server, "dyck")


def test_no_server_or_a_dead_one_means_the_job_runs_on_its_own(code, model, suite, tmp_path):
    dead = tmp_path / "gone" / "povstim.sock"
    proc = povstim(score_args(model, suite, tmp_path / "s.parquet"), env_for(code, **{warm.ENV_SOCKET: str(dead)}))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "s.parquet").exists()


def test_refusal_and_enabled():
    identity = warm._identity()
    env = {"PATH": "/bin", "HF_HOME": "/h", "OMP_NUM_THREADS": "2", "CUDA_VISIBLE_DEVICES": "0"}
    base = warm._import_env(env)
    # PATH is not read at import; the GPU choice and the thread counts are the child's
    assert base == {"HF_HOME": "/h"}
    ok = {"identity": identity, "env": {**env, "CUDA_VISIBLE_DEVICES": "1", "OMP_NUM_THREADS": "4",
                                        "POVSTIM_GPU_SHARE": "4"}}
    assert warm.refusal(ok, base, identity) is None
    assert "a different Python" in warm.refusal({**ok, "identity": {**identity, "executable": "/other"}}, base, identity)
    assert "SLURM_JOB_ID" in warm.refusal({**ok, "env": {**env, "SLURM_JOB_ID": "7"}}, base, identity)
    assert warm.enabled(True, local_exec=True, dryrun=False, isolated=False)
    assert not warm.enabled(False, local_exec=True, dryrun=False, isolated=False)
    assert not warm.enabled(True, local_exec=False, dryrun=False, isolated=False)  # SLURM: jobs run elsewhere
    assert not warm.enabled(True, local_exec=True, dryrun=False, isolated=True)  # --sdm conda/apptainer: their own Python
    # a variable torch sets for itself at import may come from a parent that imported torch: same value, fine
    assert warm.refusal({**ok, "env": {**env, "TORCHINDUCTOR_CACHE_DIR": "/c"}}, base, identity,
                        {"TORCHINDUCTOR_CACHE_DIR": "/c"}) is None
    assert "TORCHINDUCTOR_CACHE_DIR" in warm.refusal({**ok, "env": {**env, "TORCHINDUCTOR_CACHE_DIR": "/d"}}, base,
                                                     identity, {"TORCHINDUCTOR_CACHE_DIR": "/c"})


def test_a_library_that_starts_cuda_at_import_stops_the_server(tmp_path, monkeypatch):
    """CUDA is not fork-safe: had the server asked for the device count (cuInit), a forked job's
    torch.cuda.is_available() would be False and it would silently train on the CPU. The CPU wheel has
    no CUDA, so its availability check is made to take the CUDA build's path (cudaGetDeviceCount)."""
    import torch

    calls = []
    device_count = lambda: calls.append(1) or 1  # noqa: E731
    monkeypatch.setattr(torch.cuda, "_is_compiled", lambda: True)
    monkeypatch.setattr(torch._C, "_cuda_getDeviceCount", device_count, raising=False)
    monkeypatch.delenv("PYTORCH_NVML_BASED_CUDA_CHECK", raising=False)
    (tmp_path / "asks_for_cuda.py").write_text("import torch\nHAS_CUDA = torch.cuda.is_available()\n")
    (tmp_path / "quiet_lib.py").write_text("import torch\nX = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert warm.preload(("torch", "quiet_lib")) == ["torch", "quiet_lib"]
    with pytest.raises(RuntimeError, match="CUDA was initialised while preloading"):
        warm.preload(("torch", "asks_for_cuda"))
    assert calls == [1]  # the library's check really went through (the watch passed it on)
    torch.cuda.is_available()  # the watch is gone after preloading: the original is back
    assert calls == [1, 1] and torch._C._cuda_getDeviceCount is device_count


def test_a_killed_snakemake_leaves_no_server_job_or_socket_behind(code, tmp_path):
    """Snakemake killed outright (SIGKILL, OOM): its onerror never runs. The server watches its pid, stops
    the job it forked and removes its socket folder -- no orphan process keeps a GPU or the socket."""
    script = ("import time\n"
              "def add_arguments(p): pass\n"
              "def run(args):\n    print('started', flush=True)\n    time.sleep(60)\n")
    log = tmp_path / "warm_start.log"
    stand_in = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from povstim import warm; "
         f"s = warm.start({str(code)!r}, log={str(log)!r}); print(s.process.pid, s.socket, flush=True); "
         "time.sleep(120)"], env=env_for(code, **{warm.ENV_READY: "1"}), stdout=subprocess.PIPE, text=True)
    try:
        server_pid, sock = stand_in.stdout.readline().split()
        with stage_stub(code, script):
            job = subprocess.Popen([sys.executable, "-m", "povstim", "dyck"],
                                   env=env_for(code, **{warm.ENV_SOCKET: sock}), stdout=subprocess.PIPE, text=True)
            assert job.stdout.readline().strip() == "started"
            child = int([ln for ln in log.read_text().splitlines() if ": povstim dyck" in ln][0].split("pid ")[1]
                        .split(":")[0])
            stand_in.kill()
            stand_in.wait()
            deadline = time.monotonic() + 20
            while running(int(server_pid)) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert not running(int(server_pid)), log.read_text()
            assert not running(child)
            ready = ready_pids(log.read_text())
            assert ready and ready[0] != child  # a dyck job: not given the ready child, which the server stops
            wait_for(lambda: not running(ready[0]), f"ready child {ready[0]} outlived its server")
            assert not Path(sock).parent.exists()  # socket, pid file and private folder removed
            job.communicate(timeout=30)
            assert job.returncode != 0  # the job was stopped, not left to finish
    finally:
        stand_in.kill()
        with contextlib.suppress(ProcessLookupError, ValueError, NameError):
            os.kill(int(server_pid), signal.SIGKILL)


def running(pid: int) -> bool:
    """Checked with ps, not with the module's own helper: listed and not a zombie."""
    state = subprocess.run(["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True).stdout.strip()
    return bool(state) and not state.startswith("Z")
