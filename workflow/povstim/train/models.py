"""Model construction from an ``archs:`` entry through the family registry (povstim.families),
so every saved model loads with transformers' Auto classes."""

from __future__ import annotations

from .. import families


def build_config(arch: dict, training, vocab_size: int, ids: dict):
    fam = families.get(arch["family"])
    if fam.register_auto:
        fam.register_auto()
    return fam.build_config(arch, training, vocab_size, ids)


def build_model(arch: dict, config):
    return families.get(arch["family"]).model_class()(config)


def count_params(model, non_embedding: bool = True) -> int:
    n = sum(p.numel() for p in model.parameters())
    if non_embedding:
        for name, p in model.named_parameters():
            if "wpe" in name or "position_embeddings" in name:
                n -= p.numel()
    return n
