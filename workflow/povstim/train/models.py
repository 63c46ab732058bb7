"""Model construction from an ``archs:`` entry (HF transformers classes, so every
saved model loads with AutoModelForCausalLM / AutoModelForMaskedLM)."""

from __future__ import annotations


def build_config(arch: dict, training: dict, vocab_size: int, ids: dict):
    from transformers import GPT2Config, RobertaConfig

    dropout = float(training["dropout"])
    n_positions = int(arch.get("n_positions") or training["context"])
    if arch["family"] == "gpt2":
        return GPT2Config(
            vocab_size=vocab_size,
            n_positions=n_positions,
            n_embd=arch["n_embd"],
            n_layer=arch["n_layer"],
            n_head=arch["n_head"],
            n_inner=arch["n_inner"],
            resid_pdrop=dropout,
            embd_pdrop=dropout,
            attn_pdrop=dropout,
            layer_norm_epsilon=arch["layer_norm_eps"],
            bos_token_id=ids["bos"],
            eos_token_id=ids["eos"],
            pad_token_id=ids["pad"],
        )
    return RobertaConfig(
        vocab_size=vocab_size,
        # RoBERTa positions start after padding_idx, hence the +2
        max_position_embeddings=n_positions + 2,
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


def build_model(config):
    from transformers import GPT2LMHeadModel, RobertaForMaskedLM

    cls = GPT2LMHeadModel if config.model_type == "gpt2" else RobertaForMaskedLM
    return cls(config)


def is_causal(config) -> bool:
    return config.model_type == "gpt2"


def count_params(model, non_embedding: bool = True) -> int:
    n = sum(p.numel() for p in model.parameters())
    if non_embedding:
        for name, p in model.named_parameters():
            if "wpe" in name or "position_embeddings" in name:
                n -= p.numel()
    return n
