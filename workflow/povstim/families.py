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
    # the size keys an archs: entry of this family may set (besides family, sizes, conditions, training);
    # any other is an error naming it (check_arch)
    keys: tuple[str, ...] = ("n_layer", "n_embd", "n_head", "n_inner", "n_positions", "layer_norm_eps", "bias")
    # (arch with defaults, where) -> None: the family's cross-field checks (None: a transformer's, _check_transformer)
    check: Callable | None = None
    # a corpus model (an n-gram): no tokenizer, no training job, no model folder; the score job fits it on the
    # condition's train split and scores it (plan.corpus_models); one model per condition x size, not per seed
    corpus_model: bool = False
    # the training learner (train/learner.py's LEARNERS): transformer (HFLearner) or recurrent (LSTMLearner)
    learner: str = "transformer"
    # (arch with defaults) -> transformer sizes (n_layer, n_embd, n_head, n_inner) at least as large in GPU
    # memory, for the estimates of povstim.devices.sharing (None: the arch's own)
    memory_sizes: Callable | None = None

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


# keys every archs: entry may have, whatever its family
ARCH_KEYS = ("family", "sizes", "conditions", "training")


def check_arch(arch: dict, where: str = "arch") -> None:
    """Cross-field checks a JSON schema cannot express (run at config load, before any job): only the keys of
    the arch's family, and sizes that fit together."""
    fam = get(arch.get("family"), f"{where}.family")
    for key in arch:
        if key not in ARCH_KEYS and key not in fam.keys:
            raise PovstimError(f"{where}.{key}: not a key of family {fam.name} (its keys: {', '.join(fam.keys)})")
    (fam.check or _check_transformer)(arch, where)


def _positive_ints(arch: dict, keys, where: str) -> None:
    for key in keys:
        v = arch.get(key)
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise PovstimError(f"{where}.{key} must be a positive integer, got {v!r}")


def _check_transformer(arch: dict, where: str) -> None:
    _positive_ints(arch, ("n_layer", "n_embd", "n_head", "n_inner"), where)
    if arch["n_embd"] % arch["n_head"]:
        raise PovstimError(
            f"{where}.n_embd ({arch['n_embd']}) must be divisible by {where}.n_head ({arch['n_head']})"
        )


# --------------------------------------------------------------------------- transformers models

def _transformer_config(config_class: str, names: dict, dropouts: tuple, arch: dict, training, vocab_size: int,
                        ids: dict, position_offset: int = 0, **fixed):
    """A transformers config from what the transformer families share: the vocabulary, the positions
    (``n_positions``, else the context, + ``position_offset``), the sizes and layer-norm epsilon (``names``:
    povstim's arch key -> the config's argument), one dropout for every ``dropouts`` argument and the special
    ids; ``fixed``: the family's own arguments."""
    import transformers

    dropout = float(training.dropout)
    return getattr(transformers, config_class)(
        vocab_size=vocab_size,
        **{names["n_positions"]: int(arch.get("n_positions") or training.context) + position_offset},
        **{name: arch[key] for key, name in names.items() if key != "n_positions"},
        **dict.fromkeys(dropouts, dropout),
        bos_token_id=ids["bos"],
        eos_token_id=ids["eos"],
        pad_token_id=ids["pad"],
        **fixed,
    )


def _transformers_class(name: str) -> Callable:
    """The loader of transformers' model class ``name`` (imported when a model is built, not at DAG build)."""
    def load():
        import transformers

        return getattr(transformers, name)
    return load


# --------------------------------------------------------------------------- GPT-2 (POSH Table 5)

def _gpt2_config(arch: dict, training, vocab_size: int, ids: dict):
    return _transformer_config(
        "GPT2Config", {"n_positions": "n_positions", "n_embd": "n_embd", "n_layer": "n_layer", "n_head": "n_head",
                       "n_inner": "n_inner", "layer_norm_eps": "layer_norm_epsilon"},
        ("resid_pdrop", "embd_pdrop", "attn_pdrop"), arch, training, vocab_size, ids,
        # GPT-2's own activation (gelu_new: 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3)))) computed by one
        # PyTorch kernel instead of five elementwise ops: the same function (within 1e-6), and a CPU
        # training step of the demo's model 1.13-1.17x faster (docs/training.md)
        activation_function="gelu_pytorch_tanh",
    )


register(Family(
    name="gpt2",
    kind=CAUSAL,
    defaults={"n_layer": 4, "n_embd": 512, "n_head": 8, "n_inner": 2048, "layer_norm_eps": 1e-5},
    build_config=_gpt2_config,
    model_class=_transformers_class("GPT2LMHeadModel"),
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
    return _transformer_config(
        "RobertaConfig", {"n_positions": "max_position_embeddings", "n_embd": "hidden_size",
                          "n_layer": "num_hidden_layers", "n_head": "num_attention_heads",
                          "n_inner": "intermediate_size", "layer_norm_eps": "layer_norm_eps"},
        ("hidden_dropout_prob", "attention_probs_dropout_prob"), arch, training, vocab_size, ids,
        position_offset=2,  # RoBERTa positions start after padding_idx (see the family's position_offset)
        type_vocab_size=1,
    )


register(Family(
    name="roberta",
    kind=MASKED,
    defaults={"n_layer": 8, "n_embd": 256, "n_head": 8, "n_inner": 1024, "layer_norm_eps": 1e-5},
    build_config=_roberta_config,
    model_class=_transformers_class("RobertaForMaskedLM"),
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


# --------------------------------------------------------------------------- LSTM (POSH-BENCH's and FiCT's RNN baseline)
# The model class lives in lstm.py, which imports torch: imported inside the builders below. It trains through
# the same loop as GPT-2 (train/learner.py's LSTMLearner: HFLearner without attention biases).

def _lstm_config(arch: dict, training, vocab_size: int, ids: dict):
    from . import lstm

    return lstm.build_config(arch, float(training.dropout), vocab_size, ids)


def _lstm_class():
    from .lstm import LSTMForCausalLM

    return LSTMForCausalLM


def _lstm_auto():
    from .lstm import register_auto

    register_auto()


def _check_lstm(arch: dict, where: str) -> None:
    _positive_ints(arch, ("n_layer", "n_embd", "n_hidden"), where)
    if not isinstance(arch.get("tie_weights"), bool):
        raise PovstimError(f"{where}.tie_weights must be true or false, got {arch.get('tie_weights')!r}")
    if arch["tie_weights"] and arch["n_hidden"] < arch["n_embd"]:
        # tied: a projection n_hidden -> n_embd feeds the shared embedding matrix; it may only shrink
        raise PovstimError(f"{where}.n_hidden ({arch['n_hidden']}) must be at least {where}.n_embd "
                           f"({arch['n_embd']}) when {where}.tie_weights is true (the LSTM's states are projected "
                           "down to the tied embedding size), or set tie_weights: false")


def _lstm_memory_sizes(arch: dict) -> dict:
    # an LSTM layer's 4h(e + h) weights and its gates' activations stay below a transformer layer of width
    # max(e, h) with an FFN of twice that (8d^2 weights)
    d = max(arch["n_embd"], arch["n_hidden"])
    return {**arch, "n_embd": d, "n_head": 1, "n_inner": 2 * d}


register(Family(
    name="lstm",
    kind=CAUSAL,
    defaults={"n_layer": 2, "n_embd": 512, "n_hidden": 1024, "tie_weights": True},
    build_config=_lstm_config,
    model_class=_lstm_class,
    packing=True,
    tokenizer_frame="none",
    model_types=("povstim-lstm",),
    split_head=("model", "lm_head"),
    unmasked_padding=False,  # no attention: the scorer's right padding never reaches a real token anyway
    register_auto=_lstm_auto,
    learner="recurrent",
    memory_sizes=_lstm_memory_sizes,
    keys=("n_layer", "n_embd", "n_hidden", "tie_weights"),
    check=_check_lstm,
    description="LSTM causal LM: embedding, n_layer stacked LSTMs, tied or untied output (POSH-BENCH, FiCT)",
))


# --------------------------------------------------------------------------- Kneser-Ney n-gram
# A corpus model: scoring/baselines.py's KneserNey (the `ngram` corpus baseline) fitted on the condition's train
# split by its score job (rules/evaluate.smk, score_corpus_model); no model class, tokenizer or training run.
# Named for its smoothing, not `ngram`: that is the baseline's name (benchmarks.<suite>.baselines), which scores
# the same model outside the grid (seed 0, kept out of Tables 3/8).

def _no_model(*_args):
    raise PovstimError("family kneser-ney is fitted by its score job (povstim score --baseline ngram), not trained")


def _check_ngram(arch: dict, where: str) -> None:
    _positive_ints(arch, ("order",), where)


register(Family(
    name="kneser-ney",
    kind=CAUSAL,
    defaults={"order": 3},
    build_config=_no_model,
    model_class=_no_model,
    packing=False,
    tokenizer_frame="none",
    model_types=(),
    keys=("order",),
    check=_check_ngram,
    corpus_model=True,
    extras={"baseline": "ngram"},  # povstim score --baseline ...
    description="interpolated Kneser-Ney word n-gram model of the condition's train split (scoring/baselines.py)",
))
