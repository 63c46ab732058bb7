"""The model-family registry: everything povstim needs to know about a model family, in one entry.

A config's ``archs.<name>.family`` names an entry here. The entry says how to
build the Hugging Face config and model, whether the model is causal or
masked, whether training packs sentences into context windows by default, how
the tokenizer frames a sentence, where the position embeddings start, and the
architecture's default sizes. Training (``povstim.train``), tokenizer wrapping
(``povstim.tokenizer.bpe``) and scoring (``povstim.scoring``) all ask this
registry instead of switching on family names, so adding a family is one
:func:`register` call (plus its tests).

Saved models must load with transformers' Auto classes (the scorer loads any
model folder that way); a family whose model class is not a stock transformers
class registers its config and model with ``AutoConfig``/``AutoModelFor…`` in
``register_auto`` (called lazily, before building or loading).

This module imports nothing heavy: transformers is imported inside the builder
functions, so the Snakefile can use the registry at DAG-build time.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Callable

from .io import PovstimError

CAUSAL, MASKED = "causal", "masked"


@dataclass(frozen=True)
class Family:
    name: str
    kind: str  # CAUSAL or MASKED
    # Default architecture sizes; an arch entry overrides any of them.
    defaults: dict
    # (arch, training, vocab_size, special ids) -> transformers PretrainedConfig
    build_config: Callable
    # () -> the transformers model class trained from scratch (imported lazily)
    model_class: Callable
    # training.packing "auto": pack sentences into context windows (causal) or one sentence per input
    packing: bool
    # how the saved tokenizer frames one sentence: "none" (causal: the scorer adds BOS itself)
    # or "bos_eos" (<s> … </s>, as RoBERTa's post-processor does)
    tokenizer_frame: str
    # HF config.model_type values this family saves as
    model_types: tuple[str, ...]
    # position ids start after this many reserved positions (RoBERTa: padding_idx + 1 = 2)
    position_offset: int = 0
    # causal: right-padded rows need no attention-mask tensor (padding only follows each row's last real
    # token, which causal attention never shows it), so SDPA's own causal masking is used (povstim/attention.py)
    unmasked_padding: bool = False
    # masked: the forward passes a prepared 4D boolean mask on as is (transformers' create_bidirectional_mask),
    # so the scorer builds it on the host and spares a device sync per forward (scoring/fast.py)
    host_padding_mask: bool = False
    # the module paths of (body, LM head) when the head can be applied to the body's hidden
    # states alone (the scorer then computes vocabulary logits only where a score is needed)
    split_head: tuple[str, str] | None = None
    # causal: the forward takes explicit position ids and a custom 4D attention mask (a position's
    # input is its learned or rotary embedding, looked up by id), so scoring can feed each prefix the
    # suite's sentences share once, as a packed prefix tree (scoring/tree.py, scoring.share_prefixes)
    tree_attention: bool = False
    # called before a model of this family is built or loaded (custom Auto-class registration)
    register_auto: Callable[[], None] | None = None
    # bias name -> the family an arch of this family trains with that bias block (gpt2 + bias.recency:
    # gpt2-recency); povstim.train.params.effective_arch reads it
    variants: dict = field(default_factory=dict)
    # a variant's plain family, whose weights it shares (the Dyck phase trains it); an arch names a
    # variant only with the bias block that makes it one
    base: str | None = None
    description: str = ""
    extras: dict = field(default_factory=dict)

    @property
    def causal(self) -> bool:
        return self.kind == CAUSAL


FAMILIES: dict[str, Family] = {}


def register(family: Family) -> Family:
    if family.kind not in (CAUSAL, MASKED):
        raise ValueError(f"family {family.name}: kind must be {CAUSAL} or {MASKED}")
    if family.tokenizer_frame not in ("none", "bos_eos"):
        raise ValueError(f"family {family.name}: tokenizer_frame must be none or bos_eos")
    FAMILIES[family.name] = family
    return family


def get(name: str, where: str = "family") -> Family:
    try:
        return FAMILIES[name]
    except KeyError:
        hint = difflib.get_close_matches(str(name), FAMILIES, n=1)
        tip = f" (did you mean '{hint[0]}'?)" if hint else ""
        raise PovstimError(f"{where}: unknown model family {name!r}{tip}; known: {', '.join(sorted(FAMILIES))}") from None


def for_model_type(model_type: str) -> Family | None:
    """The registered family that saves models of this HF ``model_type``, if any."""
    for fam in FAMILIES.values():
        if model_type in fam.model_types:
            return fam
    return None


# Position offsets of hub model types no povstim family saves as (RoBERTa-like: positions after padding_idx)
_HUB_POSITION_OFFSETS = {"xlm-roberta": 2, "camembert": 2}


def position_offset(model_type: str) -> int:
    """Reserved positions before a model's first position id: its family's, else a known hub type's, else 0."""
    fam = for_model_type(model_type)
    return fam.position_offset if fam is not None else _HUB_POSITION_OFFSETS.get(model_type, 0)


def register_auto_classes() -> None:
    """Make every custom family loadable through transformers' Auto classes (idempotent)."""
    for fam in FAMILIES.values():
        if fam.register_auto is not None:
            fam.register_auto()


def resolve_arch(arch: dict, where: str = "arch") -> dict:
    """An ``archs:`` entry with its family's default sizes filled in, checked for consistency."""
    if not isinstance(arch, dict):
        raise PovstimError(f"{where}: expected a mapping, got {type(arch).__name__}")
    fam = get(arch.get("family"), f"{where}.family")
    out = {**fam.defaults, **{k: v for k, v in arch.items() if v is not None}}
    check_arch(out, where)
    return out


def check_arch(arch: dict, where: str = "arch") -> None:
    """Cross-field checks a JSON schema cannot express (run at config load, before any job)."""
    for key in ("n_layer", "n_embd", "n_head", "n_inner"):
        v = arch.get(key)
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise PovstimError(f"{where}.{key} must be a positive integer, got {v!r}")
    if arch["n_embd"] % arch["n_head"]:
        raise PovstimError(
            f"{where}.n_embd ({arch['n_embd']}) must be divisible by {where}.n_head ({arch['n_head']})"
        )


# --------------------------------------------------------------------------- GPT-2 (POSH Table 5)

def _gpt2_config(arch: dict, training, vocab_size: int, ids: dict):
    from transformers import GPT2Config

    dropout = float(training.dropout)
    return GPT2Config(
        vocab_size=vocab_size,
        n_positions=int(arch.get("n_positions") or training.context),
        n_embd=arch["n_embd"],
        n_layer=arch["n_layer"],
        n_head=arch["n_head"],
        n_inner=arch["n_inner"],
        resid_pdrop=dropout,
        embd_pdrop=dropout,
        attn_pdrop=dropout,
        layer_norm_epsilon=arch["layer_norm_eps"],
        # GPT-2's own activation (gelu_new: 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3)))) computed by one
        # PyTorch kernel instead of five elementwise ops: the same function (within 1e-6), and a CPU
        # training step of the demo's model 1.13-1.17x faster (docs/training.md)
        activation_function="gelu_pytorch_tanh",
        bos_token_id=ids["bos"],
        eos_token_id=ids["eos"],
        pad_token_id=ids["pad"],
    )


def _gpt2_class():
    from transformers import GPT2LMHeadModel

    return GPT2LMHeadModel


register(Family(
    name="gpt2",
    kind=CAUSAL,
    defaults={"n_layer": 4, "n_embd": 512, "n_head": 8, "n_inner": 2048, "layer_norm_eps": 1e-5},
    build_config=_gpt2_config,
    model_class=_gpt2_class,
    packing=True,
    tokenizer_frame="none",
    model_types=("gpt2",),
    split_head=("transformer", "lm_head"),
    unmasked_padding=True,
    tree_attention=True,
    variants={"recency": "gpt2-recency"},
    description="GPT-2 causal LM (POSH-BENCH Table 5; defaults: gpt2-mini)",
))


# --------------------------------------------------------------------------- RoBERTa / BabyBERTa

def _roberta_config(arch: dict, training, vocab_size: int, ids: dict):
    from transformers import RobertaConfig

    dropout = float(training.dropout)
    return RobertaConfig(
        vocab_size=vocab_size,
        # RoBERTa positions start after padding_idx (see position_offset)
        max_position_embeddings=int(arch.get("n_positions") or training.context) + 2,
        hidden_size=arch["n_embd"],
        num_hidden_layers=arch["n_layer"],
        num_attention_heads=arch["n_head"],
        intermediate_size=arch["n_inner"],
        hidden_dropout_prob=dropout,
        attention_probs_dropout_prob=dropout,
        layer_norm_eps=arch["layer_norm_eps"],
        type_vocab_size=1,
        bos_token_id=ids["bos"],
        eos_token_id=ids["eos"],
        pad_token_id=ids["pad"],
    )


def _roberta_class():
    from transformers import RobertaForMaskedLM

    return RobertaForMaskedLM


register(Family(
    name="roberta",
    kind=MASKED,
    defaults={"n_layer": 8, "n_embd": 256, "n_head": 8, "n_inner": 1024, "layer_norm_eps": 1e-5},
    build_config=_roberta_config,
    model_class=_roberta_class,
    packing=False,
    tokenizer_frame="bos_eos",
    model_types=("roberta",),
    position_offset=2,
    split_head=("roberta", "lm_head"),
    host_padding_mask=True,  # tested: RoBERTa, BabyBERTa's family
    description="RoBERTa masked LM (BabyBERTa: 8 layers x 256, FFN 1024)",
))


# --------------------------------------------------------------------------- GPT-2 + dynamic recency bias
# The model class lives in biases/recency.py, which imports torch: imported inside the builders below.

def _gpt2_recency_config(arch: dict, training, vocab_size: int, ids: dict):
    from .biases import recency

    spec = (arch.get("bias") or {}).get("recency")
    if not spec or spec.get("r") is None:
        raise PovstimError("family gpt2-recency needs bias.recency.r (the decay rate, POSH §7: 0.6)")
    return recency.build_config(_gpt2_config(arch, training, vocab_size, ids), spec["r"])


def _gpt2_recency_class():
    from .biases.recency import GPT2RecencyLMHeadModel

    return GPT2RecencyLMHeadModel


def _gpt2_recency_auto():
    from .biases.recency import register_auto

    register_auto()


# An arch with `family: gpt2` and a `bias.recency` block trains this family (povstim.train.params.effective_arch).
register(Family(
    name="gpt2-recency",
    kind=CAUSAL,
    defaults=FAMILIES["gpt2"].defaults,  # the same GPT-2 sizes
    build_config=_gpt2_recency_config,
    model_class=_gpt2_recency_class,
    packing=True,
    tokenizer_frame="none",
    model_types=("gpt2-recency",),
    split_head=("transformer", "lm_head"),
    register_auto=_gpt2_recency_auto,
    variants={"recency": "gpt2-recency"},
    base="gpt2",
    description="GPT-2 with the dynamic recency bias r^t * b_i in every attention head (Mita et al. 2025; POSH §7)",
))
