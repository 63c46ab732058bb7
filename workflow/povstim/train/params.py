"""Training settings: the config's ``training:`` section with an arch's own overrides.

Defaults are POSH-BENCH Table 6 and live in the schema
(``workflow/schemas/config/training.schema.yaml``) only. An arch entry may carry
its own ``training:`` block that overrides keys of the section for that arch
only, which is how BabyBERTa (BabyBERTa Table 3: batch 16, one sentence per
sequence of at most 128 tokens, 10 masked copies, no unmasking) lives in the
same config as the GPT-2 family.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from .. import biases, families
from ..io import PovstimError, json_object_arg
from ..settings import build, section
from .budgets import budgets


@dataclass(frozen=True)
class TrainingSettings:
    lr: float
    batch_size: int
    context: int
    warmup: int
    max_steps: int
    schedule: str  # linear (POSH Table 6) | wsd (warmup-stable-decay to a plateau: train/optim.py)
    decay_fraction: float  # wsd: the decay phase's length as a share of the steps before it
    epochs: float | None  # train for this many passes (max_steps = ceil(epochs x batches per epoch), capped)
    patience: int
    eval_every: int
    save_every: int
    log_every: int
    checkpoint_words: list | dict | None  # word budgets of checkpoints/chck_{budget} (train/budgets.py); None: none
    eval_batches: int | None
    weight_decay: float
    dropout: float
    grad_clip: float
    adam_beta1: float
    adam_beta2: float
    adam_eps: float
    packing: bool | str  # "auto" until resolve() decides by family
    ordered: bool
    repeats: int
    mask_prob: float
    leave_unmasked_prob: float
    random_token_prob: float
    device: str
    precision: str
    tf32: bool
    compile: bool | str  # false, true (= default), or a torch.compile mode (train/gpu.py)
    micro_batch: int | None  # sequences per forward/backward; gradients accumulate to batch_size
    pad_to_multiple_of: int | None  # one-sentence-per-sequence batch widths (null: exact, or 32 when compiled on CUDA)
    threads: int


def check_training(training: dict, where: str = "training") -> None:
    """Cross-key checks the schema cannot express (config load runs them before any job)."""
    if training.get("leave_unmasked_prob", 0) + training.get("random_token_prob", 0) > 1:
        raise PovstimError(f"{where}.leave_unmasked_prob + {where}.random_token_prob must be <= 1")
    budgets(training.get("checkpoint_words"), f"{where}.checkpoint_words")  # increasing, readable, distinct names
    if training.get("precision") == "fp16" and str(training.get("compile")) == "step-graphs":
        # a recorded step runs on the GPU alone; fp16's loss scaling decides on the host whether to take each step
        raise PovstimError(f"{where}.precision fp16 cannot run with {where}.compile step-graphs (its loss scaling "
                           "decides on the host whether to take each step): use compile reduce-overhead or false "
                           "with fp16, or precision auto/bf16")


def merged_training(training: dict | None, arch: dict) -> dict:
    """The training section with the arch's own ``training:`` overrides applied (no defaults)."""
    return {**(training or {}), **(arch.get("training") or {})}


def word_checkpoints_wanted(config: dict) -> bool:
    """Whether any arch of a validated config trains with ``training.checkpoint_words`` (its own block or the
    section's): the acquisition stage (rules/analysis.smk) then runs."""
    return any(merged_training(config.get("training"), arch or {}).get("checkpoint_words") is not None
               for arch in (config.get("archs") or {}).values())


def effective_arch(arch: dict, where: str = "arch") -> dict:
    """The arch with the family it trains: a bias block may select a variant of its family (the registry's
    ``Family.variants``: ``gpt2`` + ``bias.recency`` trains ``gpt2-recency``); a variant named without the block
    that makes it one is an error."""
    bias = biases.of(arch)
    name = arch.get("family")
    fam = families.FAMILIES.get(name)
    for b in biases.BIASES:
        having = sorted(f.name for f in families.FAMILIES.values() if b in f.variants)
        if b not in bias or not having:
            continue
        if fam is None or b not in fam.variants:
            raise PovstimError(f"{where}.bias.{b}: family {name!r} has no {b} variant (the {b} bias is "
                               f"implemented for {', '.join(having)})")
        return {**arch, "family": fam.variants[b]}
    if fam is not None and fam.base:
        made_by = [b for b, variant in fam.variants.items() if variant == name]
        raise PovstimError(f"{where}: family {name} needs a bias.{made_by[0]} block (the family is its variant)")
    return dict(arch)


def resolve(arch: str | dict, training: str | dict | None, **overrides) -> tuple[dict, TrainingSettings]:
    """(arch with family defaults, TrainingSettings) from the rule's ``--arch`` and ``--params`` JSON."""
    arch = json_object_arg(arch, "--arch")
    # unknown keys and types named; a bias block gets its schema defaults
    arch = section("archs", {"arch": arch}, where="--arch")["arch"]
    arch = families.resolve_arch(effective_arch(arch, "--arch"), "--arch")
    merged = merged_training(json_object_arg(training, "--params"), arch)
    check_training(merged, "--params")
    settings = build(TrainingSettings, "training", merged, where="--params", **overrides)
    if settings.packing == "auto":
        settings = dataclasses.replace(settings, packing=families.get(arch["family"]).packing)
    return arch, settings
