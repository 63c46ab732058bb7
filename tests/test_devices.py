"""GPU placement: concurrent jobs claim distinct CUDA_VISIBLE_DEVICES slots.

No GPU here, so the only thing faked is torch's CUDA (is_available, device_count);
the slot parsing, the flock-based claiming, the waiting, the release on exit
(even on SIGKILL) and Snakemake's `--resources gpu=N` scheduling all run for
real.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from povstim.devices import precision, slots, threads
from povstim.devices.slots import acquire_gpu, lock_dir, resolve_device, visible_slots
from povstim.io import PovstimError

REPO = Path(__file__).resolve().parents[1]

# A job that claims a GPU as training/scoring do.
CLAIM = textwrap.dedent(
    """
    import sys, time, types
    # The GPU is the one thing faked: a torch whose CUDA reports devices
    # (importing real torch per process would also cost seconds).
    torch = types.ModuleType("torch")
    torch.cuda = types.SimpleNamespace(is_available=lambda: True, device_count=lambda: 8, set_device=lambda i: None)
    sys.modules["torch"] = torch
    from povstim.devices.slots import resolve_device
    print(resolve_device(sys.argv[1]), flush=True)
    sys.stdin.readline()          # hold the GPU until told to stop
    """
)


def claim_process(tmp_path, visible="4,7", requested="auto", **env):
    full_env = {
        **os.environ,
        "PYTHONPATH": str(REPO / "workflow"),
        "CUDA_VISIBLE_DEVICES": visible,
        "POVSTIM_GPU_LOCK_DIR": str(tmp_path / "locks"),
        **env,
    }
    full_env.pop("SLURM_JOB_ID", None)
    full_env.update(env)
    return subprocess.Popen(
        [sys.executable, "-c", CLAIM, requested],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full_env,
    )


def test_visible_slots_follow_cuda_visible_devices():
    assert visible_slots({"CUDA_VISIBLE_DEVICES": "2,3"}) == ["2", "3"]
    assert visible_slots({"CUDA_VISIBLE_DEVICES": " 1 , 0 "}) == ["1", "0"]
    assert visible_slots({"CUDA_VISIBLE_DEVICES": "GPU-8a1f,GPU-77b2"}) == ["GPU-8a1f", "GPU-77b2"]
    # CUDA stops at the first invalid entry; "" and -1 hide every GPU
    assert visible_slots({"CUDA_VISIBLE_DEVICES": "0,-1,2"}) == ["0"]
    assert visible_slots({"CUDA_VISIBLE_DEVICES": ""}) == []
    assert visible_slots({"CUDA_VISIBLE_DEVICES": "-1"}) == []
    assert visible_slots({}, device_count=3) == ["0", "1", "2"]


def test_lock_dir_is_per_slurm_job(tmp_path):
    base = {"POVSTIM_GPU_LOCK_DIR": str(tmp_path)}
    assert lock_dir(base) == tmp_path
    # SLURM numbers each job's GPUs from 0, so jobs must not share slot names
    assert lock_dir({**base, "SLURM_JOB_ID": "812"}) == tmp_path / "job812"
    assert lock_dir({}).name == "povstim-gpu-locks"


def test_slots_are_exclusive_and_reusable_after_release(tmp_path):
    a = acquire_gpu(["4", "7"], tmp_path)
    b = acquire_gpu(["4", "7"], tmp_path)
    assert (a.index, a.device_id, a.torch_device) == (0, "4", "cuda:0")
    assert (b.index, b.device_id, b.torch_device) == (1, "7", "cuda:1")
    with pytest.raises(PovstimError, match="all 2 GPU"):
        acquire_gpu(["4", "7"], tmp_path, wait=0.2, poll=0.05)
    a.release()
    c = acquire_gpu(["4", "7"], tmp_path, wait=0.2, poll=0.05)
    assert c.device_id == "4"
    assert (tmp_path / "gpu4.lock").read_text().strip() == str(os.getpid())
    b.release()
    c.release()


def test_a_claim_records_how_long_it_waited_for_a_slot(tmp_path):
    # a job's log reports GPU-slot waiting apart from its work (train: `time: ... wait`), so a DAG whose small
    # jobs queue for gpus.slots shows it; exclusive and shared claims alike
    import threading

    for share in (1, 2):
        folder = tmp_path / f"share{share}"
        held = [acquire_gpu(["0"], folder, share=share) for _ in range(share)]
        assert all(h.waited < 0.2 for h in held)  # free: no wait
        threading.Timer(0.6, held[-1].release).start()
        t0 = time.monotonic()
        late = acquire_gpu(["0"], folder, share=share, poll=0.05)
        assert 0.5 <= late.waited <= time.monotonic() - t0 + 1e-6
        for h in [*held, late]:
            h.release()


def test_no_visible_slot_is_a_clear_error(tmp_path):
    with pytest.raises(PovstimError, match="CUDA_VISIBLE_DEVICES lists no device"):
        acquire_gpu([], tmp_path)


def test_cpu_and_bad_requests(monkeypatch):
    import torch

    assert resolve_device("cpu") == "cpu"
    with pytest.raises(PovstimError, match="unknown device 'tpu'"):
        resolve_device("tpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert resolve_device("auto") == "cpu"
    assert resolve_device(None) == "cpu"
    with pytest.raises(PovstimError, match="no CUDA device is visible"):
        resolve_device("cuda")


def test_explicit_cuda_index_claims_nothing(monkeypatch, tmp_path):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setenv("POVSTIM_GPU_LOCK_DIR", str(tmp_path))
    assert resolve_device("cuda:1") == "cuda:1"
    assert not list(tmp_path.iterdir())
    with pytest.raises(PovstimError, match="does not exist: 2 CUDA"):
        resolve_device("cuda:5")


def test_in_process_claim_is_held_and_reused(monkeypatch, tmp_path):
    import torch

    current = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "set_device", current.append)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "5,3")
    monkeypatch.setenv("POVSTIM_GPU_LOCK_DIR", str(tmp_path))
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    other = acquire_gpu(["5", "3"], tmp_path)  # another job holds GPU 5
    try:
        assert resolve_device("auto") == "cuda:1"
        assert current == [1]  # the claimed GPU is also the current device
        # a second call in the same job (e.g. scoring several checkpoints)
        # keeps its GPU instead of deadlocking on its own lock
        assert resolve_device("cuda") == "cuda:1"
        with pytest.raises(PovstimError, match="stayed busy"):
            acquire_gpu(["3"], tmp_path, wait=0.1, poll=0.05)
    finally:
        slots.release_gpu()
        other.release()
    acquire_gpu(["3"], tmp_path, wait=0.1).release()


def test_a_jobs_cuda_start_up_is_timed_in_its_parts(monkeypatch, tmp_path):
    """The parts a score job logs ("device cuda:0 ready in ...s (driver ..., slot ..., torch ...)"): each part's
    own time, so a GPU run shows what a warm-start ready child saved (the driver's start-up)."""
    import types

    import torch

    # A virtual clock, advanced only by the faked driver and torch calls: the parts are exact whatever else
    # runs on the machine (real sleeps with upper bounds on the parts fail on a busy machine).
    clock = [0.0]
    monkeypatch.setattr(slots, "time", types.SimpleNamespace(
        perf_counter=lambda: clock[0], monotonic=lambda: clock[0],
        sleep=lambda s: clock.__setitem__(0, clock[0] + s)))

    def slow(seconds, result=None):
        def call(*_args):
            clock[0] += seconds
            return result
        return call

    monkeypatch.setattr(torch.cuda, "is_available", slow(0.3, True))
    monkeypatch.setattr(torch.cuda, "set_device", slow(0.15))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2")
    monkeypatch.setenv("POVSTIM_GPU_LOCK_DIR", str(tmp_path))
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    parts = {}
    try:
        assert resolve_device("auto", parts=parts) == "cuda:0"
    finally:
        slots.release_gpu()
    assert parts == pytest.approx({"driver": 0.3, "slot": 0.0, "torch": 0.15})  # each its own time, none cumulative
    cpu = {}
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert resolve_device("auto", parts=cpu) == "cpu" and set(cpu) == {"driver"}


def test_concurrent_processes_get_distinct_gpus_and_wait_for_a_free_one(tmp_path):
    first = claim_process(tmp_path)
    second = claim_process(tmp_path)
    got = {first.stdout.readline().strip(), second.stdout.readline().strip()}
    assert got == {"cuda:0", "cuda:1"}

    third = claim_process(tmp_path)  # both GPUs busy: it must wait
    # Synchronised on what the waiter says, not on time: it has found both GPUs taken and is waiting,
    # however slowly this machine started it (a sleep and a deadline failed on 2 shared cores).
    said = []
    while not said or "waiting for one" not in said[-1]:
        said.append(third.stderr.readline())
        assert said[-1], f"the third process ended without waiting: {''.join(said)}"
    assert third.poll() is None
    # a crashed holder frees its GPU too: the kernel drops the flock
    victim = first if "cuda:0" == got.pop() else second
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    freed = third.stdout.readline().strip()
    assert freed in {"cuda:0", "cuda:1"}
    errs = {}
    for p in (first, second, third):
        if p.poll() is None:
            errs[p] = p.communicate("\n")[1]
    # the job's log says it queued, and for how long (a number, whatever the machine's speed)
    waited = float(errs[third].split("after waiting ")[1].split(" s")[0])
    assert waited > 0
    survivor = second if victim is first else first
    assert "after waiting" not in errs[survivor]


def test_waiting_is_bounded_by_povstim_gpu_wait(tmp_path):
    holder = claim_process(tmp_path, visible="0")
    assert holder.stdout.readline().strip() == "cuda:0"
    waiter = claim_process(tmp_path, visible="0", POVSTIM_GPU_WAIT="0.5")
    out, err = waiter.communicate(timeout=60)
    assert waiter.returncode != 0
    assert "stayed busy" in err and "--resources gpu=N" in err
    holder.communicate("\n", timeout=30)


def test_slurm_jobs_do_not_contend(tmp_path):
    # Two SLURM jobs each see their GPU as CUDA_VISIBLE_DEVICES=0; they must
    # both get it at once (SLURM, not us, keeps them apart).
    a = claim_process(tmp_path, visible="0", SLURM_JOB_ID="1")
    b = claim_process(tmp_path, visible="0", SLURM_JOB_ID="2", POVSTIM_GPU_WAIT="5")
    assert a.stdout.readline().strip() == "cuda:0"
    assert b.stdout.readline().strip() == "cuda:0"
    for p in (a, b):
        p.communicate("\n", timeout=30)


@pytest.mark.slow
@pytest.mark.heavy
def test_snakemake_gpu_jobs_land_on_distinct_gpus(tmp_path):
    """`snakemake --resources gpu=2` runs 4 one-GPU jobs, two at a time on 2
    GPUs: every pair of jobs that overlap in time used different GPUs."""
    (tmp_path / "job.py").write_text(
        textwrap.dedent(
            """
            import json, sys, time, types
            torch = types.ModuleType("torch")  # a fake CUDA, as in CLAIM
            torch.cuda = types.SimpleNamespace(is_available=lambda: True, device_count=lambda: 2, set_device=lambda i: None)
            sys.modules["torch"] = torch
            from povstim.devices.slots import resolve_device
            device = resolve_device("auto")
            start = time.time()
            time.sleep(1.5)
            json.dump({"device": device, "start": start, "end": time.time()}, open(sys.argv[1], "w"))
            """
        )
    )
    (tmp_path / "Snakefile").write_text(
        textwrap.dedent(
            f"""
            rule all:
                input: expand("out/{{i}}.json", i=range(4))

            rule gpu_job:
                output: "out/{{i}}.json"
                resources: gpu=1
                shell: "{sys.executable} job.py {{output}}"
            """
        )
    )
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO / "workflow"),
        "CUDA_VISIBLE_DEVICES": "0,1",
        "POVSTIM_GPU_LOCK_DIR": str(tmp_path / "locks"),
    }
    env.pop("SLURM_JOB_ID", None)
    snakemake = Path(sys.executable).with_name("snakemake")
    proc = subprocess.run(
        [str(snakemake), "--cores", "4", "--resources", "gpu=2", "--quiet"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    runs = [json.loads((tmp_path / "out" / f"{i}.json").read_text()) for i in range(4)]
    assert {r["device"] for r in runs} <= {"cuda:0", "cuda:1"}
    overlaps = 0
    for i, a in enumerate(runs):
        for b in runs[i + 1 :]:
            if a["start"] < b["end"] and b["start"] < a["end"]:
                overlaps += 1
                assert a["device"] != b["device"], (a, b)
    assert overlaps >= 1, runs  # gpu=2 did let two jobs run at once


def test_a_runs_jobs_let_idle_threads_sleep_unless_the_user_said_otherwise():
    assert threads.job_environment({}) == {"OMP_WAIT_POLICY": "PASSIVE"}
    assert threads.job_environment({"OMP_WAIT_POLICY": "ACTIVE"}) == {}  # the user's choice stands


@pytest.mark.parametrize("requested, device, cap, expected", [
    ("auto", "cpu", None, "fp32"),
    ("auto", "cuda:0", (9, 0), "bf16"),  # H100, H200
    ("auto", "cuda:0", (8, 0), "bf16"),  # A100
    ("auto", "cuda:1", (8, 6), "bf16"),  # RTX 30xx, A40
    ("auto", "cuda:0", (7, 5), "fp32"),  # T4 (the free Colab GPU): bf16 would be emulated
    ("auto", "cuda:0", (7, 0), "fp32"),  # V100
    ("fp32", "cuda:0", (9, 0), "fp32"),
    ("fp32", "cpu", None, "fp32"),
    ("bf16", "cuda:0", (9, 0), "bf16"),
])
def test_training_precision_follows_the_gpus_tensor_cores(requested, device, cap, expected):
    from povstim.devices.precision import train_precision

    assert train_precision(requested, device, cap) == expected


def test_bf16_where_it_would_be_emulated_is_an_error_naming_the_key():
    from povstim.devices.precision import train_precision

    with pytest.raises(PovstimError, match=r"training\.precision bf16 .*compute capability 8\.0.*has 7\.5"):
        train_precision("bf16", "cuda:0", (7, 5))
    with pytest.raises(PovstimError, match=r"training\.precision bf16 needs a CUDA device"):
        train_precision("bf16", "cpu")
    with pytest.raises(PovstimError, match=r"training\.precision must be one of auto, fp32, bf16, fp16, not 'fp8'"):
        train_precision("fp8", "cuda:0", (9, 0))


def test_3xtf32_scoring_needs_the_same_tensor_cores(monkeypatch):
    """scoring.matmul: 3xtf32 asks the same question of the GPU as training's bf16 (one place: devices)."""
    from povstim.scoring import matmul

    assert matmul.tf32_capable("cpu") is False and precision.capability("cpu") is None
    for cap, fast in (((9, 0), True), ((8, 0), True), ((7, 5), False), ((7, 0), False)):
        monkeypatch.setattr(precision, "capability", lambda device, cap=cap: cap)  # no GPU here: its answer
        assert matmul.tf32_capable("cuda:0") is fast
        assert (matmul.mode_for("3xtf32", "cuda:0") is not None) is fast
