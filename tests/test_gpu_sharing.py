"""Small jobs share a GPU, big ones keep it to themselves.

No GPU here: the only thing faked is torch's CUDA query (as in test_devices.py) and
the device list (CUDA_VISIBLE_DEVICES / a /dev folder with nvidiaN nodes). The
flocks, the processes contending for them, the per-job memory estimates and
Snakemake's scheduling under ``--resources gpu=1`` are all real.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import yaml

from povstim import config as povstim_config
from povstim import plan
from povstim.devices import sharing, slots
from povstim.devices.sharing import GpuSettings, share_slots
from povstim.devices.slots import acquire_gpu
from povstim.io import PovstimError

REPO = Path(__file__).resolve().parents[1]

# A job that claims a GPU as training/scoring do, holds it for a while and reports when.
JOB = textwrap.dedent(
    """
    import json, sys, time, types
    torch = types.ModuleType("torch")
    torch.cuda = types.SimpleNamespace(is_available=lambda: True, device_count=lambda: 8, set_device=lambda i: None)
    sys.modules["torch"] = torch
    from povstim.devices import sharing, slots
    device = slots.resolve_device("auto")
    start = time.time()
    print(device, flush=True)
    if sys.argv[2] == "stdin":
        sys.stdin.readline()
    else:
        time.sleep(float(sys.argv[2]))
    slot = slots._held
    json.dump({"device": device, "share": slot.share, "slot": slot.slot, "start": start, "end": time.time()},
              open(sys.argv[1], "w"))
    """
)


def job(tmp_path, name, share=1, hold="stdin", visible="0", **env):
    full = {**os.environ, "PYTHONPATH": str(REPO / "workflow"), "CUDA_VISIBLE_DEVICES": visible,
            "POVSTIM_GPU_LOCK_DIR": str(tmp_path / "locks"), "POVSTIM_GPU_SHARE": str(share), **env}
    full.pop("SLURM_JOB_ID", None)
    return subprocess.Popen([sys.executable, "-c", JOB, str(tmp_path / f"{name}.json"), str(hold)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full)


def finish(*procs):
    for p in procs:
        if p.poll() is None:
            p.communicate("\n", timeout=30)


def test_small_jobs_fill_one_gpu_then_the_next(tmp_path):
    held = [acquire_gpu(["4", "7"], tmp_path, share=3) for _ in range(4)]
    # first fit: three slots of GPU 4, then GPU 7 (which stays free for big jobs as long as possible)
    assert [(h.device_id, h.slot, h.share) for h in held] == [("4", 0, 3), ("4", 1, 3), ("4", 2, 3), ("7", 0, 3)]
    assert slots.shared_holders(tmp_path, "4") == 3 and slots.shared_holders(tmp_path, "7") == 1
    # a big job finds no GPU without small jobs on it
    with pytest.raises(PovstimError, match="all 2 GPU"):
        acquire_gpu(["4", "7"], tmp_path, wait=0.2, poll=0.05)
    held[3].release()
    big = acquire_gpu(["4", "7"], tmp_path, wait=0.5, poll=0.05)
    assert (big.device_id, big.shared) == ("7", False)
    # ... and then small jobs cannot join GPU 7; GPU 4 is full
    with pytest.raises(PovstimError, match="shared slots"):
        acquire_gpu(["4", "7"], tmp_path, share=3, wait=0.2, poll=0.05)
    held[0].release()
    again = acquire_gpu(["4", "7"], tmp_path, share=3, wait=0.5, poll=0.05)
    assert (again.device_id, again.slot) == ("4", 0)
    for h in (big, again, held[1], held[2]):
        h.release()
    assert slots.shared_holders(tmp_path, "4") == 0


def test_share_comes_from_the_environment(monkeypatch):
    assert slots.share_from_env({}) == 1
    assert slots.share_from_env({"POVSTIM_GPU_SHARE": "8"}) == 8
    for bad in ("0", "-2", "many"):
        with pytest.raises(PovstimError, match="POVSTIM_GPU_SHARE"):
            slots.share_from_env({"POVSTIM_GPU_SHARE": bad})


def test_a_waiting_big_job_stops_small_ones_joining(tmp_path):
    """Starvation guard: once a big job waits for a GPU, small jobs stop joining it; it gets the GPU as soon
    as the small jobs already there finish, and later small jobs wait for it."""
    small = job(tmp_path, "small", share=4)
    assert small.stdout.readline().strip() == "cuda:0"
    big = job(tmp_path, "big", share=1)
    time.sleep(1.5)
    assert big.poll() is None  # waits for the small job
    late = job(tmp_path, "late", share=4)
    time.sleep(1.5)
    assert late.poll() is None  # a free slot, but the big job is waiting for this GPU: do not join
    finish(small)
    assert big.stdout.readline().strip() == "cuda:0"
    time.sleep(0.5)
    assert late.poll() is None
    finish(big)
    assert late.stdout.readline().strip() == "cuda:0"
    finish(late)
    runs = {n: json.loads((tmp_path / f"{n}.json").read_text()) for n in ("small", "big", "late")}
    assert runs["small"]["end"] <= runs["big"]["start"] and runs["big"]["end"] <= runs["late"]["start"]
    assert runs["big"]["share"] == 1 and runs["late"]["share"] == 4


def test_many_processes_contend(tmp_path):
    """14 jobs on 2 fake GPUs: 12 small ones (3 slots per GPU) and 2 big ones. At every moment a GPU has
    at most 3 small jobs on distinct slots, and a big job is never on a GPU with any other job."""
    procs = [job(tmp_path, f"s{i}", share=3, hold=0.6, visible="0,1") for i in range(12)]
    procs.insert(3, job(tmp_path, "b0", share=1, hold=0.6, visible="0,1"))
    procs.insert(9, job(tmp_path, "b1", share=1, hold=0.6, visible="0,1"))
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    runs = [json.loads(f.read_text()) for f in sorted(tmp_path.glob("*.json"))]
    assert len(runs) == 14 and sum(r["share"] == 1 for r in runs) == 2
    events = sorted({r["start"] for r in runs})
    peak = 0
    for t in events:
        for device in ("cuda:0", "cuda:1"):
            on = [r for r in runs if r["device"] == device and r["start"] <= t < r["end"]]
            big = [r for r in on if r["share"] == 1]
            assert not big or len(on) == 1, on
            assert len(on) - len(big) <= 3
            assert len({r["slot"] for r in on if r["share"] > 1}) == len(on) - len(big)
            peak = max(peak, len(on))
    assert peak >= 2  # small jobs did run side by side


# --- which jobs are small --------------------------------------------------------------------------

def test_parameter_count_matches_transformers():
    """sharing.model_params (no torch) against the models transformers builds."""
    from transformers import GPT2Config, GPT2LMHeadModel, RobertaConfig, RobertaForMaskedLM

    arch = {"n_layer": 3, "n_embd": 48, "n_head": 4, "n_inner": 100}
    gpt2 = GPT2LMHeadModel(GPT2Config(vocab_size=300, n_positions=40, n_embd=48, n_layer=3, n_head=4, n_inner=100))
    assert sharing.model_params(arch, 300, 40) == sum(p.numel() for p in gpt2.parameters())
    roberta = RobertaForMaskedLM(RobertaConfig(vocab_size=300, max_position_embeddings=42, hidden_size=48,
                                               num_hidden_layers=3, num_attention_heads=4, intermediate_size=100,
                                               type_vocab_size=1))
    n = sum(p.numel() for p in roberta.parameters())
    # RoBERTa adds a token-type row, an LM-head transform (d x d + bias + LayerNorm) and an output bias
    assert sharing.model_params(arch, 300, 42) == n - (48 + 48 * 48 + 48 + 2 * 48 + 300)


def _config(path, **changes):
    cfg = yaml.safe_load((REPO / path).read_text())
    for key, value in changes.items():
        cfg[key] = value
    povstim_config.validate(cfg)
    return cfg


@pytest.fixture
def gpu_dev(tmp_path):
    (tmp_path / "nvidia0").touch()
    return {"env": {sharing.NVIDIA_SMI_ENV: ""}, "dev_dir": str(tmp_path)}  # GPUs unknown (none asked)


def test_recipes_small_share_big_keep_their_gpu(gpu_dev):
    demo = _config("config.yaml")
    posh = _config("configs/posh.yaml")
    baby = _config("configs/babyberta.yaml")
    # the embedded default, BabyBERTa and Exp. 3's GPT-2 mini share; GPT-2 small (Table 5) does not
    assert plan.train_gpu_share(demo, "gpt2-tiny", **gpu_dev) == 8 and plan.train_gpus(demo, "gpt2-tiny", **gpu_dev) == 0
    assert plan.train_gpu_share(baby, "babyberta", **gpu_dev) == 8
    assert plan.train_gpu_share(posh, "gpt2-mini", **gpu_dev) == 8
    assert plan.train_gpu_share(posh, "gpt2-small", **gpu_dev) == 1 and plan.train_gpus(posh, "gpt2-small", **gpu_dev) == 1
    # scoring needs little memory: every model's scoring job shares
    assert plan.score_gpu_share(posh, ["gpt2-mini", "gpt2-small"], **gpu_dev) == 8
    assert plan.score_gpus(posh, arch="gpt2-small", **gpu_dev) == 0
    # slots: 1 turns sharing off; a small GPU makes GPT-2 mini exclusive; no GPU: nothing to share
    solo = _config("config.yaml", gpus={"slots": 1})
    assert plan.train_gpu_share(solo, "gpt2-tiny", **gpu_dev) == 1 and plan.train_gpus(solo, "gpt2-tiny", **gpu_dev) == 1
    small_gpu = _config("configs/posh.yaml", gpus={"memory_gb": 24})
    assert plan.train_gpu_share(small_gpu, "gpt2-mini", **gpu_dev) == 1
    assert plan.train_gpu_share(demo, "gpt2-tiny", env={"CUDA_VISIBLE_DEVICES": ""}, dev_dir=gpu_dev["dev_dir"]) == 1
    # micro-batches shrink the activations of a step
    micro = _config("configs/posh.yaml")
    micro["training"]["micro_batch"] = 4
    assert plan.train_memory_gb(micro, "gpt2-small") < plan.train_memory_gb(posh, "gpt2-small") / 2
    assert plan.train_gpu_share(micro, "gpt2-small", **gpu_dev) == 8


def test_memory_estimate_grows_with_the_job():
    arch = {"n_layer": 12, "n_embd": 768, "n_head": 12, "n_inner": 3072}
    small = sharing.train_memory_gb(arch, 32768, 512, 4)
    big = sharing.train_memory_gb(arch, 32768, 512, 32)
    assert sharing.CONTEXT_GB < small < big
    # GPT-2 small at the paper's batch: weights + AdamW alone are ~2 GiB; the estimate is well above
    assert 12 < big < 40
    assert share_slots(GpuSettings(slots=8, memory_gb=80), 9.9) == 8
    assert share_slots(GpuSettings(slots=8, memory_gb=80), 10.1) == 1
    assert share_slots(GpuSettings(slots=1, memory_gb=80), 0.1) == 1


def test_fp32_training_is_estimated_wider(gpu_dev):
    """precision: fp32 (a GPU before Ampere, or asked for) keeps fp32 activations: twice bf16's bytes, so a
    model that shares an 80-GB GPU in bf16 gets one of its own in fp32."""
    arch = {"n_layer": 4, "n_embd": 256, "n_head": 4, "n_inner": 1024}
    bf16 = sharing.train_memory_gb(arch, 8192, 128, 16, precision="bf16")
    fp32 = sharing.train_memory_gb(arch, 8192, 128, 16, precision="fp32")
    assert sharing.train_memory_gb(arch, 8192, 128, 16) == bf16  # auto: estimated as bf16 (no GPU asked)
    # hand-computed (Korthikanti et al. 2022): per token and layer 34·d + 5·a·T bytes in bf16 vs 66·d + 9·a·T in fp32
    tokens, n = 16 * 128, sharing.model_params(arch, 8192, 128)
    extra = tokens * 4 * ((66 - 34) * 256 + (9 - 5) * 4 * 128) + tokens * 8192 * 2 - 2 * n
    assert fp32 - bf16 == pytest.approx(extra / sharing.GIB)
    posh = _config("configs/posh.yaml")
    assert plan.train_gpu_share(posh, "gpt2-mini", **gpu_dev) == 8
    posh["archs"]["gpt2-mini"]["training"] = {**(posh["archs"]["gpt2-mini"].get("training") or {}), "precision": "fp32"}
    assert plan.train_memory_gb(posh, "gpt2-mini", gpu_dev["env"]) > 10  # above 80 GB / 8 slots
    assert plan.train_gpu_share(posh, "gpt2-mini", **gpu_dev) == 1


def test_gpus_section_schema():
    cfg = _config("config.yaml")
    assert cfg["gpus"] == {"slots": 8, "memory_gb": 80}
    with pytest.raises(PovstimError, match="gpus.slots"):
        _config("config.yaml", gpus={"slots": 0})
    with pytest.raises(PovstimError, match="did you mean 'slots'"):
        _config("config.yaml", gpus={"slot": 2})


@pytest.mark.slow
@pytest.mark.heavy
def test_snakemake_gpu1_runs_small_jobs_side_by_side(tmp_path):
    """`snakemake --resources gpu=1` on one fake GPU: 4 small jobs (gpu=0, POVSTIM_GPU_SHARE=4) run at once,
    the big job (gpu=1) runs alone -- with the resources the train rule declares for them."""
    (tmp_path / "nvidia0").touch()
    cfg = _config("configs/posh.yaml")
    dev = {"env": {}, "dev_dir": str(tmp_path)}
    small = (plan.train_gpus(cfg, "gpt2-mini", **dev), plan.train_gpu_share(cfg, "gpt2-mini", **dev))
    big = (plan.train_gpus(cfg, "gpt2-small", **dev), plan.train_gpu_share(cfg, "gpt2-small", **dev))
    assert small == (0, 8) and big == (1, 1)
    (tmp_path / "job.py").write_text(JOB)
    (tmp_path / "Snakefile").write_text(textwrap.dedent(f"""
        rule all:
            input: expand("out/small{{i}}.json", i=range(4)), "out/big.json"

        rule small:
            output: "out/small{{i}}.json"
            resources: gpu={small[0]}, gpu_share={small[1]}
            shell: "POVSTIM_GPU_SHARE={{resources.gpu_share}} {sys.executable} job.py {{output}} 2"

        rule big:
            output: "out/big.json"
            resources: gpu={big[0]}, gpu_share={big[1]}
            shell: "POVSTIM_GPU_SHARE={{resources.gpu_share}} {sys.executable} job.py {{output}} 1"
    """))
    env = {**os.environ, "PYTHONPATH": str(REPO / "workflow"), "CUDA_VISIBLE_DEVICES": "0",
           "POVSTIM_GPU_LOCK_DIR": str(tmp_path / "locks")}
    env.pop("SLURM_JOB_ID", None)
    snakemake = Path(sys.executable).with_name("snakemake")
    proc = subprocess.run([str(snakemake), "--cores", "5", "--resources", "gpu=1", "--quiet"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    runs = {f.stem: json.loads(f.read_text()) for f in (tmp_path / "out").glob("*.json")}
    smalls = [r for n, r in runs.items() if n.startswith("small")]
    assert all(r["share"] == 8 for r in smalls) and runs["big"]["share"] == 1
    overlap = max(sum(o["start"] <= r["start"] < o["end"] for o in smalls) for r in smalls)
    # not serialised by gpu=1. How many of the 4 overlap depends on the lock race with the big job (a small
    # job that asks after the big one queues behind it), so >= 2 is what a serialising run can never give.
    assert overlap >= 2, smalls
    b = runs["big"]
    assert not [r for r in smalls if r["start"] < b["end"] and b["start"] < r["end"]]


# nvidia-smi --query-gpu=index,uuid,name,memory.total,compute_cap --format=csv,noheader,nounits, as printed on an
# H100 (81559 MiB: "80 GB") and a T4 (15360 MiB); the UUIDs are made up
H100 = "0, GPU-1d2c3b4a-0000-0000-0000-000000000001, NVIDIA H100 80GB HBM3, 81559, 9.0"
T4 = "1, GPU-1d2c3b4a-0000-0000-0000-000000000002, Tesla T4, 15360, 7.5"


def fake_nvidia_smi(tmp_path, *lines, rc=0) -> str:
    """A real executable standing in for nvidia-smi (there is no GPU here): it checks the query and prints
    ``lines``."""
    exe = tmp_path / "nvidia-smi"
    body = "\n".join(lines)
    exe.write_text("#!/bin/sh\n"
                   'case "$*" in *"--query-gpu=index,uuid,name,memory.total,compute_cap"*"--format=csv,noheader,nounits"*) ;;'
                   ' *) echo "unexpected arguments: $*" >&2; exit 2;; esac\n'
                   f"cat <<'EOF'\n{body}\nEOF\nexit {rc}\n")
    exe.chmod(0o755)
    return str(exe)


def test_gpu_inventory_reads_nvidia_smi(tmp_path):
    smi = fake_nvidia_smi(tmp_path, H100, T4)
    gpus = sharing.gpu_inventory({sharing.NVIDIA_SMI_ENV: smi})
    assert [(g.index, g.name, g.capability) for g in gpus] == [(0, "NVIDIA H100 80GB HBM3", (9, 0)), (1, "Tesla T4", (7, 5))]
    assert gpus[0].memory_gb == pytest.approx(79.65, abs=0.01) and gpus[1].memory_gb == 15.0
    # CUDA_VISIBLE_DEVICES by index or by UUID; a MIG instance (memory unknown here), or none: nothing known
    assert [g.index for g in sharing.gpu_inventory({sharing.NVIDIA_SMI_ENV: smi, "CUDA_VISIBLE_DEVICES": "1"})] == [1]
    uuid = "GPU-1d2c3b4a-0000-0000-0000-000000000001"
    assert [g.index for g in sharing.gpu_inventory({sharing.NVIDIA_SMI_ENV: smi, "CUDA_VISIBLE_DEVICES": uuid})] == [0]
    assert sharing.gpu_inventory({sharing.NVIDIA_SMI_ENV: smi, "CUDA_VISIBLE_DEVICES": "MIG-0a1b"}) == ()
    assert sharing.gpu_inventory({sharing.NVIDIA_SMI_ENV: smi, "CUDA_VISIBLE_DEVICES": ""}) == ()
    # no nvidia-smi, one that fails, or a driver too old for compute_cap: the GPUs are unknown
    assert sharing.gpu_inventory({sharing.NVIDIA_SMI_ENV: ""}) == ()
    assert sharing.gpu_inventory({sharing.NVIDIA_SMI_ENV: str(tmp_path / "missing")}) == ()
    failing = tmp_path / "failing"
    failing.mkdir()
    assert sharing.gpu_inventory({sharing.NVIDIA_SMI_ENV: fake_nvidia_smi(failing, "NVIDIA-SMI has failed", rc=9)}) == ()
    assert sharing.parse_inventory('Field "compute_cap" is not a valid field to query.') == ()


def test_a_smaller_or_older_gpu_changes_what_shares(tmp_path, gpu_dev):
    """The `gpus:` defaults describe an 80-GB Ampere-or-later GPU. On a T4 (15 GiB, compute capability 7.5) small
    jobs share by its memory, and precision auto (fp32 there) is estimated fp32-wide; an H100 changes nothing."""
    h100 = {**gpu_dev["env"], sharing.NVIDIA_SMI_ENV: fake_nvidia_smi(tmp_path, H100)}
    t4_dir = tmp_path / "t4"
    t4_dir.mkdir()
    t4 = {**gpu_dev["env"], sharing.NVIDIA_SMI_ENV: fake_nvidia_smi(t4_dir, T4.replace("1, ", "0, ", 1))}
    posh = _config("configs/posh.yaml")
    demo = _config("config.yaml")
    dev = gpu_dev["dev_dir"]
    assert plan.gpu_settings(posh, h100) == GpuSettings(slots=8, memory_gb=80)  # 79.6 GiB: an "80-GB" GPU
    assert plan.gpu_settings(posh, t4) == GpuSettings(slots=8, memory_gb=15.0)
    assert plan.train_memory_gb(posh, "gpt2-mini", h100) == plan.train_memory_gb(posh, "gpt2-mini", gpu_dev["env"])
    said_fp32 = {**posh, "training": {**posh["training"], "precision": "fp32"}}
    said_fp32["archs"] = {a: {k: v for k, v in spec.items() if k != "training"} for a, spec in posh["archs"].items()}
    assert plan.train_memory_gb(posh, "gpt2-mini", t4) == plan.train_memory_gb(said_fp32, "gpt2-mini", gpu_dev["env"])
    assert plan.train_memory_gb(posh, "gpt2-mini", t4) > 10 > plan.train_memory_gb(posh, "gpt2-mini", h100)
    assert plan.train_gpu_share(posh, "gpt2-mini", env=h100, dev_dir=dev) == 8
    assert plan.train_gpu_share(posh, "gpt2-mini", env=t4, dev_dir=dev) == 1  # ~18 GiB fp32: more than a T4 slot
    assert plan.train_gpu_share(demo, "gpt2-tiny", env=t4, dev_dir=dev) == 8  # the demo's tiny models still share
    assert plan.gpu_notes(posh, h100) == [] and plan.gpu_notes(posh, gpu_dev["env"]) == []
    notes = plan.gpu_notes(posh, t4)
    assert len(notes) == 2
    assert "gpus.memory_gb is 80 GiB, but GPU 0 (Tesla T4) has 15.0 GiB" in notes[0]
    assert "Tesla T4, compute capability 7.5" in notes[1] and "trains in fp32" in notes[1]
    assert len(plan.gpu_notes(said_fp32, t4)) == 1  # said fp32: nothing to warn about precision


def test_bf16_or_fp16_without_a_gpu_is_said_at_dag_build(tmp_path, gpu_dev):
    """A training job that would stop on bf16/fp16 for want of a GPU is named before the DAG runs; with a GPU
    visible (or device: cuda, e.g. a cluster's jobs) nothing is said, nor for auto/fp32."""
    no_gpu = {"env": gpu_dev["env"], "dev_dir": str(tmp_path / "no-dev")}
    demo = _config("config.yaml")
    assert plan.precision_notes(demo, **no_gpu) == []  # auto
    half = _config("config.yaml", training={**demo["training"], "precision": "fp16"})
    notes = plan.precision_notes(half, **no_gpu)
    assert len(notes) == 1 and "training.precision fp16 needs a CUDA GPU" in notes[0] and "gpt2-tiny" in notes[0]
    assert plan.precision_notes(half, **gpu_dev) == []
    on_cluster = _config("config.yaml", training={**demo["training"], "precision": "bf16", "device": "cuda"})
    assert plan.precision_notes(on_cluster, **no_gpu) == []
    per_arch = _config("config.yaml")
    per_arch["archs"]["gpt2-tiny"]["training"] = {"precision": "bf16"}
    assert "archs.gpt2-tiny.training.precision bf16" in plan.precision_notes(per_arch, **no_gpu)[0]
