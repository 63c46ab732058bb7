"""What a training job asks Snakemake for, decided at DAG-build time (no torch import)."""

from __future__ import annotations

import glob
import os
from typing import Mapping


def gpu_visible(env: Mapping[str, str] | None = None, dev_dir: str = "/dev") -> bool:
    """Whether an NVIDIA GPU is visible to jobs: a /dev/nvidiaN node and CUDA_VISIBLE_DEVICES not hiding it.

    Importing torch just to ask would add seconds to every Snakemake start.
    """
    env = os.environ if env is None else env
    cvd = env.get("CUDA_VISIBLE_DEVICES")
    if cvd is not None and cvd.strip() in ("", "-1"):
        return False
    return bool(glob.glob(os.path.join(dev_dir, "nvidia[0-9]*")))


def effective_training(config: dict, arch: str) -> dict:
    """The training section with the arch's own ``training:`` overrides applied."""
    return {**config.get("training", {}), **(config["archs"][arch].get("training") or {})}


def gpus_for(config: dict, arch: str, env: Mapping[str, str] | None = None, dev_dir: str = "/dev") -> int:
    """Units of the ``gpu`` resource one training job of this arch holds: 1 only when it will use a GPU,
    so ``--resources gpu=1`` does not serialise CPU-only jobs."""
    device = str(effective_training(config, arch).get("device", "auto"))
    if device.startswith("cuda"):
        return 1
    return 1 if device == "auto" and gpu_visible(env, dev_dir) else 0


def threads_for(config: dict, arch: str) -> int:
    return int(effective_training(config, arch).get("threads", 1))
