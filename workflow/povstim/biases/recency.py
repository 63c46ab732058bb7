"""Dynamic recency bias (Mita et al. 2025; POSH §7): GPT-2 whose attention logits get ``r^t · b_i``.

For the query at position ``i`` (1-based) the attention scores are
``softmax(q_i K^T / sqrt(d) + r^t · b_i)`` with ``b_i = [-(i-1), …, -1, 0]``:
a key ``d`` positions back is penalised by ``r^t · d``. ``t`` is the training
epoch (0-based) and ``0 < r < 1``, so the locality penalty is strongest in the
first epoch (``r^0 = 1``) and fades epoch by epoch (POSH: r = 0.6 over 10
epochs, so ``r^9 ≈ 0.01`` in the last one). As in the reference
implementation of the POSH authors (``xiulinyang/working-mem``), one slope is
shared by every head of every layer, and the term is added after the
``1/sqrt(d)`` scaling, together with the causal and padding masks. The model
keeps GPT-2's learned position embeddings.

``r`` and the current epoch ``t`` live in the model config
(``recency_r``, ``recency_epoch``), so a saved model carries the bias it was
trained with: ``save_pretrained`` → ``AutoModelForCausalLM.from_pretrained``
gives exactly the trained logits (the scorer calls
:func:`povstim.families.register_auto_classes` before loading, which registers
``model_type: gpt2-recency`` with the Auto classes). To load such a folder in
your own code::

    from povstim import families
    families.register_auto_classes()
    model = AutoModelForCausalLM.from_pretrained(folder)

The attention module is GPT-2's own with ``forward`` overridden; it has no
parameters of its own, so a recency model and a plain GPT-2 built with the same
seed start from identical weights, and the weights of one load into the other.
"""

from __future__ import annotations

import torch
from transformers import GPT2Config, GPT2LMHeadModel
from transformers.models.gpt2.modeling_gpt2 import GPT2Attention

MODEL_TYPE = "gpt2-recency"


def recency_bias(q_len: int, k_len: int, r: float, epoch: int, dtype=torch.float32, device=None) -> torch.Tensor:
    """The additive term ``r^t · (j - i)`` for query ``i`` and key ``j <= i`` as a ``[q_len, k_len]`` matrix.

    Queries are the last ``q_len`` of ``k_len`` positions (a cache may hold the
    earlier keys). Entries above the diagonal (future keys) are 0: the causal
    mask removes them.
    """
    q = torch.arange(k_len - q_len, k_len, device=device)[:, None]
    k = torch.arange(k_len, device=device)[None, :]
    rel = (k - q).clamp(max=0).to(torch.float64)  # -(distance back), 0 on and above the diagonal
    return (float(r) ** int(epoch) * rel).to(dtype)


def _compute_dtype(hidden_states: torch.Tensor) -> torch.dtype:
    device = hidden_states.device.type
    if torch.is_autocast_enabled(device):
        return torch.get_autocast_dtype(device)
    return hidden_states.dtype


class GPT2RecencyConfig(GPT2Config):
    model_type = MODEL_TYPE

    def __init__(self, recency_r: float = 0.6, recency_epoch: int = 0, **kwargs):
        super().__init__(**kwargs)
        self.recency_r = float(recency_r)
        self.recency_epoch = int(recency_epoch)


class GPT2RecencyAttention(GPT2Attention):
    """GPT-2 attention with the recency term folded into the additive attention mask.

    The mask that reaches every attention implementation (eager or SDPA) is
    ``causal/padding mask + r^t · b``, built here from whatever form the model
    passes down (``None`` = causal only, a boolean keep-mask, or an additive
    float mask).
    """

    def forward(self, hidden_states, cache=None, attention_mask=None, **kwargs):
        q_len = hidden_states.shape[1]
        past = cache.get_seq_length(self.layer_idx) if cache is not None else 0
        k_len = past + q_len
        dtype = _compute_dtype(hidden_states)
        device = hidden_states.device
        neg = torch.finfo(dtype).min
        if attention_mask is None:
            keep = torch.ones(q_len, k_len, dtype=torch.bool, device=device).tril(past)
            mask = torch.zeros(q_len, k_len, dtype=dtype, device=device).masked_fill(~keep, neg)[None, None]
        elif attention_mask.dtype == torch.bool:
            mask = torch.zeros(attention_mask.shape, dtype=dtype, device=device).masked_fill(~attention_mask, neg)
        elif attention_mask.is_floating_point():
            mask = attention_mask.to(dtype)
        else:
            raise TypeError(f"{MODEL_TYPE}: unsupported attention mask of dtype {attention_mask.dtype}")
        if mask.shape[-2:] != (q_len, k_len):
            raise ValueError(f"{MODEL_TYPE}: attention mask of shape {tuple(mask.shape)} for {q_len} queries "
                             f"and {k_len} keys")
        bias = recency_bias(q_len, k_len, self.config.recency_r, self.config.recency_epoch, dtype, device)
        # finfo.min + a finite penalty stays the most negative number: masked keys stay masked
        mask = (mask + bias).clamp(min=neg)
        return super().forward(hidden_states, cache=cache, attention_mask=mask, **kwargs)


class GPT2RecencyLMHeadModel(GPT2LMHeadModel):
    config_class = GPT2RecencyConfig

    def __init__(self, config: GPT2RecencyConfig):
        super().__init__(config)
        # Swap the class of each (already initialised) attention module: no new parameters, so the
        # initial weights are exactly those of a plain GPT-2 built with the same seed.
        for block in self.transformer.h:
            block.attn.__class__ = GPT2RecencyAttention

    @property
    def recency_epoch(self) -> int:
        return int(self.config.recency_epoch)

    def set_recency_epoch(self, epoch: int) -> None:
        """Set t; it is saved with the config, so a saved model keeps the bias of its last update."""
        self.config.recency_epoch = int(epoch)


def register_auto() -> None:
    """Register ``gpt2-recency`` with AutoConfig / AutoModelForCausalLM (idempotent)."""
    from transformers import AutoConfig, AutoModelForCausalLM

    AutoConfig.register(MODEL_TYPE, GPT2RecencyConfig, exist_ok=True)
    AutoModelForCausalLM.register(GPT2RecencyConfig, GPT2RecencyLMHeadModel, exist_ok=True)


def build_config(gpt2_config, r: float, epoch: int = 0) -> GPT2RecencyConfig:
    """A recency config with every GPT-2 setting of ``gpt2_config``."""
    d = gpt2_config.to_dict()
    for key in ("model_type", "architectures", "transformers_version"):
        d.pop(key, None)
    return GPT2RecencyConfig(recency_r=r, recency_epoch=epoch, **d)
