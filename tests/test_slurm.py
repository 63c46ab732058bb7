"""The DAG through a real SLURM (`--executor slurm`) equals a local run.

Needs the single-node cluster of scripts/slurm/start.sh (the CI's .ci/run
starts it as root and stops it afterwards); skips with the reason otherwise.
The run uses profiles/slurm itself, with only what this 2-CPU test node cannot
grant clamped (memory, threads) and the local cluster's settings added
(squeue polling, no account, short first status check).
"""

from __future__ import annotations

import filecmp
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

pytestmark = [pytest.mark.slurm, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "tests" / "configs" / "tiny.yaml"
SLURM_PROFILE = REPO / "profiles" / "slurm" / "config.yaml"
SNAKEMAKE = [sys.executable, "-m", "snakemake"]

# synth x2 -> assemble x2 -> condition -> tokenizer -> train (a `gpu` rule).
# The wiki condition needs no parse/filter, which keeps the run short.
TARGETS = [
    "results/tiny/corpus/baby/8k/base.txt",
    "results/tiny/models/gpt2-nano/wiki/8k/seed1/model.safetensors",
]
NODE_MEM_MB = 2000
NODE_CPUS = 2


def _run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=kw.pop("timeout", 30), **kw)


@pytest.fixture(scope="module")
def slurm_cluster():
    missing = [exe for exe in ("sbatch", "squeue", "scontrol", "sinfo") if shutil.which(exe) is None]
    if missing:
        pytest.skip(f"SLURM client tools missing ({', '.join(missing)}): run scripts/slurm/start.sh as root "
                    "(.ci/run does) to install slurm-wlm and start the test cluster")
    try:
        ping = _run(["scontrol", "ping"])
        nodes = _run(["sinfo", "-h", "-o", "%T"])
    except subprocess.TimeoutExpired:
        pytest.skip("SLURM daemons do not answer (scontrol ping timed out): run scripts/slurm/start.sh")
    if "UP" not in ping.stdout:
        pytest.skip(f"slurmctld is not up ({(ping.stdout + ping.stderr).strip()}): run scripts/slurm/start.sh")
    states = nodes.stdout.split()
    if not any(s.startswith(("idle", "mix", "alloc")) for s in states):
        pytest.skip(f"no usable SLURM node (states: {states or 'none'}): run scripts/slurm/start.sh")
    try:
        import snakemake_executor_plugin_slurm  # noqa: F401
    except ImportError:
        pytest.fail("SLURM is up but snakemake-executor-plugin-slurm is not installed: pip install -e '.[test]'")


def make_test_profile(tmp_path: Path) -> Path:
    """profiles/slurm, clamped to the test node, plus the local cluster's settings."""
    profile = yaml.safe_load(SLURM_PROFILE.read_text())
    clamp = lambda res: {k: (min(v, NODE_MEM_MB) if k == "mem_mb" else v) for k, v in res.items()}  # noqa: E731
    profile["default-resources"] = clamp(profile.get("default-resources", {}))
    profile["set-resources"] = {rule: clamp(res) for rule, res in profile.get("set-resources", {}).items()}
    profile["set-threads"] = {rule: min(n, NODE_CPUS) for rule, n in profile.get("set-threads", {}).items()}
    profile.update({
        "jobs": 4,
        "latency-wait": 5,
        "slurm-status-command": "squeue",  # no accounting database here
        "slurm-init-seconds-before-status-checks": 2,
        "slurm-no-account": True,
        "keep-going": False,
        # one SLURM job for the model chain: exercises group jobs (as the
        # profile's scoring batches) and keeps the test to 3 job waves
        "groups": {**profile.get("groups", {}), "condition": "model", "tokenizer": "model", "train": "model"},
    })
    out = tmp_path / "slurm-test-profile"
    out.mkdir()
    (out / "config.yaml").write_text(yaml.safe_dump(profile, sort_keys=False))
    return out


def job_table() -> dict[str, tuple[str, str, str]]:
    """{job id: (comment, state, tres per job)} of every job slurmctld remembers."""
    out = _run(["squeue", "--states=all", "-h", "-O", "JobID:|,Comment:|,State:|,tres-per-job:|,Name:"]).stdout
    table = {}
    for line in out.splitlines():
        parts = line.split("|")
        if len(parts) >= 4:
            table[parts[0].strip()] = (parts[1].strip(), parts[2].strip(), parts[3].strip())
    return table


def results(workdir: Path) -> dict[str, Path]:
    root = workdir / "results"
    return {str(p.relative_to(root)): p for p in sorted(root.rglob("*")) if p.is_file()}


# Wall-clock measurements that training logs on purpose (throughput, time
# used); they are the only fields two runs may differ in.
TIMING_KEYS = {"elapsed", "tokens_per_s"}


def without_timing(obj):
    import torch

    if isinstance(obj, dict):
        return {k: without_timing(v) for k, v in obj.items() if k not in TIMING_KEYS}
    if isinstance(obj, (list, tuple)):
        return [without_timing(v) for v in obj]
    if isinstance(obj, torch.Tensor):
        return ("tensor", obj.dtype, tuple(obj.shape), obj.flatten().tolist())
    return obj


# Files that log timings; a checkpoint's manifest.json holds their sha256s, which then differ too (each file
# itself is compared without its timings).
TIMED_FILES = {"train_log.jsonl", "trainer_state.pt", "train_summary.json"}


def same_content(a: Path, b: Path) -> bool:
    """Byte-identical, or (for the training logs/state and the checkpoints' manifests) identical but for timings."""
    if filecmp.cmp(a, b, shallow=False):
        return True
    # a checkpoint's manifest and the void-twin index's record (train/reuse.py) hold the timed files' sha256s
    if a.name in ("manifest.json", "trained.json"):
        untimed = lambda p: {k: (v if k != "files" else {f: h for f, h in v.items() if f not in TIMED_FILES})  # noqa: E731
                             for k, v in json.loads(p.read_text()).items()}
        return untimed(a) == untimed(b)
    if a.suffix == ".json":
        return without_timing(json.loads(a.read_text())) == without_timing(json.loads(b.read_text()))
    if a.suffix == ".jsonl":
        load = lambda p: [json.loads(line) for line in p.read_text().splitlines()]  # noqa: E731
        return without_timing(load(a)) == without_timing(load(b))
    if a.suffix == ".pt":
        import torch

        load = lambda p: torch.load(p, map_location="cpu", weights_only=False)  # noqa: E731
        return without_timing(load(a)) == without_timing(load(b))
    return False


def snapshot(dst: Path) -> Path:
    """A copy of the workflow, so both runs see the same code even while the
    checkout is being edited."""
    for part in ("Snakefile", "rules", "workflow", "envs", "profiles"):
        src = REPO / part
        if src.is_dir():
            shutil.copytree(src, dst / part, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(src, dst / part)
    return dst / "Snakefile"


def test_slurm_run_equals_local_run(slurm_cluster, tmp_path):
    local, remote = tmp_path / "local", tmp_path / "slurm"
    for d in (local, remote, tmp_path / "project"):
        d.mkdir()
    common = ["-s", str(snapshot(tmp_path / "project")), "--configfile", str(TINY)]

    # The local reference run overlaps the SLURM run, which mostly waits on
    # job polling.
    t0 = time.monotonic()
    local_run = subprocess.Popen(
        [*SNAKEMAKE, *common, "-d", str(local), "--cores", "1", *TARGETS],
        cwd=local, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    before = set(job_table())
    proc = _run(
        [*SNAKEMAKE, *common, "-d", str(remote), "--profile", str(make_test_profile(tmp_path)), *TARGETS],
        cwd=remote, timeout=900,
    )
    slurm_s = time.monotonic() - t0
    local_out, local_err = local_run.communicate(timeout=900)
    assert local_run.returncode == 0, (local_out + local_err)[-4000:]
    slurm_logs = "\n".join(p.read_text()[-1500:] for p in (remote / "logs" / "slurm").rglob("*.log")) \
        if (remote / "logs" / "slurm").exists() else ""
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-6000:] + slurm_logs
    print(f"SLURM run {slurm_s:.0f} s")

    # The jobs really went through SLURM: slurmctld lists them, completed,
    # one per rule job, and the `gpu` rule asked SLURM for a GPU.
    jobs = {jid: row for jid, row in job_table().items() if jid not in before}
    comments = " ".join(comment for comment, _, _ in jobs.values())
    assert all(f"rule_{rule}" in comments for rule in ("synth", "assemble")), jobs
    # condition -> tokenizer -> train ran as one group job, which asked for a GPU
    groups = [(c, tres) for c, _, tres in jobs.values() if c.startswith("rule_model")]
    assert len(groups) == 1 and "gpu:1" in groups[0][1], jobs
    assert len(jobs) == 5, jobs  # 2 synth + 2 assemble + 1 group
    assert all(state == "COMPLETED" for _, state, _ in jobs.values()), jobs
    submitted = set(re.findall(r"submitted with SLURM jobid (\d+)", proc.stdout + proc.stderr))
    assert submitted == set(jobs), (submitted, jobs)

    # ...and made exactly what a local run makes, byte for byte.
    mine, theirs = results(local), results(remote)
    assert set(mine) == set(theirs), set(mine) ^ set(theirs)
    assert any(k.endswith("model.safetensors") for k in mine)
    different = [k for k in mine if not same_content(mine[k], theirs[k])]
    assert not different, f"SLURM outputs differ from the local run: {different}"
