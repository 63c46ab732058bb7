"""Training and architecture parameters: defaults, per-arch overrides, validation.

Defaults are POSH-BENCH Table 6 (lr 1e-4, batch 32, context 512, 4k warmup,
linear decay, weight decay 0.1, dropout 0.1, 100k steps, patience 6k). An
arch entry may carry its own ``training:`` block that overrides these for that
arch only, which is how BabyBERTa (BabyBERTa Table 3: batch 16, one sentence
per sequence of at most 128 tokens, 10 masked copies, no unmasking) lives in
the same config as the GPT-2 family.
"""

from __future__ import annotations

import json

from ..io import PovstimError
from ..io import json_object_arg as _json_obj

TRAINING_DEFAULTS: dict = {
    "lr": 1.0e-4,
    "batch_size": 32,
    "context": 512,
    "warmup": 4000,
    "max_steps": 100_000,
    "patience": 6000,
    "eval_every": 500,
    "save_every": 5000,
    "log_every": 50,
    "eval_batches": None,  # None: the whole dev set
    "weight_decay": 0.1,
    "dropout": 0.1,
    "grad_clip": 1.0,
    "adam_beta1": 0.9,
    "adam_beta2": 0.999,
    "adam_eps": 1.0e-8,
    "packing": "auto",  # auto: packed context windows for gpt2, one sentence per sequence for roberta
    "ordered": False,  # BabyBERTa §3.3: corpus order instead of shuffled
    "repeats": 1,  # copies of each sequence per epoch (BabyBERTa dynamic masking: 10)
    "mask_prob": 0.15,
    "leave_unmasked_prob": 0.0,  # BabyBERTa: never predict unmasked tokens
    "random_token_prob": 0.1,
    "device": "auto",
    "precision": "auto",  # auto: bf16 autocast on CUDA, fp32 on CPU
    "tf32": True,
    "compile": False,
    "threads": 1,  # CPU threads; the CLI's --threads (Snakemake's {threads}) wins
}

ARCH_KEYS = {
    "family", "n_layer", "n_embd", "n_head", "n_inner", "n_positions", "layer_norm_eps", "sizes", "training",
}
ARCH_DEFAULTS = {
    "gpt2": {"n_layer": 4, "n_embd": 512, "n_head": 8, "n_inner": 2048, "layer_norm_eps": 1e-5},
    "roberta": {"n_layer": 8, "n_embd": 256, "n_head": 8, "n_inner": 1024, "layer_norm_eps": 1e-5},
}
FAMILIES = tuple(ARCH_DEFAULTS)



def resolve_arch(arch: str | dict) -> dict:
    arch = _json_obj(arch, "--arch")
    unknown = sorted(set(arch) - ARCH_KEYS)
    if unknown:
        raise PovstimError(f"arch: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(ARCH_KEYS))}")
    family = arch.get("family")
    if family not in FAMILIES:
        raise PovstimError(f"arch.family is {family!r}: use one of {', '.join(FAMILIES)}")
    out = {**ARCH_DEFAULTS[family], **arch}
    for key in ("n_layer", "n_embd", "n_head", "n_inner"):
        if not isinstance(out[key], int) or out[key] < 1:
            raise PovstimError(f"arch.{key} must be a positive integer, got {out[key]!r}")
    if out["n_embd"] % out["n_head"]:
        raise PovstimError(f"arch.n_embd ({out['n_embd']}) must be divisible by arch.n_head ({out['n_head']})")
    return out


def resolve_training(training: str | dict, arch: dict) -> dict:
    training = _json_obj(training, "--params")
    overrides = arch.get("training") or {}
    merged = {**training, **overrides}
    unknown = sorted(set(merged) - set(TRAINING_DEFAULTS))
    if unknown:
        raise PovstimError(
            f"training: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(TRAINING_DEFAULTS))}"
        )
    out = {**TRAINING_DEFAULTS, **merged}
    if out["packing"] == "auto":
        out["packing"] = arch["family"] == "gpt2"
    for key in ("batch_size", "context", "max_steps", "patience", "eval_every", "save_every", "log_every", "repeats"):
        if not isinstance(out[key], int) or out[key] < 1:
            raise PovstimError(f"training.{key} must be a positive integer, got {out[key]!r}")
    if out["context"] < 4:
        raise PovstimError("training.context must be at least 4 tokens")
    if not 0 < out["mask_prob"] < 1:
        raise PovstimError(f"training.mask_prob must be in (0, 1), got {out['mask_prob']}")
    if out["leave_unmasked_prob"] + out["random_token_prob"] > 1:
        raise PovstimError("training.leave_unmasked_prob + training.random_token_prob must be <= 1")
    if out["precision"] not in ("auto", "fp32", "bf16"):
        raise PovstimError(f"training.precision is {out['precision']!r}: use auto, fp32 or bf16")
    return out
