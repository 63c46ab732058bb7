"""Causal attention without a mask tensor, for batches where no padding precedes a real token.

A packed GPT-2 training batch has no padding at all; a right-padded scoring batch has padding only after
each row's last real token, which causal attention never lets a real token see. Either way SDPA's own
causal masking (``is_causal=True``) computes the real tokens' outputs, and no mask is needed. But given
no mask, transformers' mask builder (5.24) looks for packed sequences in the position ids: eagerly with
``.all()``, a host sync in every forward (on a GPU the host then waits for the queued work); under
torch.compile, where it cannot look, it builds a full [B, 1, T, T] causal mask, and SDPA given a mask
cannot take its flash kernel. Given a padding mask, it checks it with ``.all()`` and, with any padding,
builds the same [B, 1, T, T] mask. Registering SDPA's own function under a name transformers has no mask
builder for makes the builder return no mask at once, so every SDPA call gets ``is_causal=True``.

Given no mask, GPT-2's forward also checks whether the first or last token of any row is padding, to warn
that padding may need a mask (``warn_if_padding_and_no_attention_mask``): ``pad_id in ids[:, [-1, 0]]``,
one more host sync in every eager forward, and a warning in every scoring log that says the scores may be
wrong. Here they are not (padding only follows a row's last real token), so the switched model skips it.
"""

from __future__ import annotations

import contextlib
import functools

# transformers' attention-implementation name for SDPA with causal masking only
UNMASKED_CAUSAL = "povstim_unmasked_causal"
# the padding check of transformers' models, skipped while a model is switched
PADDING_CHECK = "warn_if_padding_and_no_attention_mask"


def _no_padding_check(input_ids, attention_mask) -> None:
    """Stands in for PADDING_CHECK on a switched model's (sub)models: their padding never needs a mask."""


@functools.cache  # once per process: the scorer switches around every batch
def _register() -> None:
    from transformers import AttentionInterface
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    AttentionInterface.register(UNMASKED_CAUSAL, sdpa_attention_forward)


def use_unmasked_causal(model) -> str | None:
    """Switch a causal model on plain SDPA to causal masking without a mask tensor, until switched back;
    returns the implementation to restore (None: nothing changed). A model's saved config does not
    record it. Only for models whose every batch has no padding before a real token."""
    if model.config._attn_implementation != "sdpa":
        return None
    _register()
    model.config._attn_implementation = UNMASKED_CAUSAL
    for module in model.modules():  # an instance attribute comes before the class's method
        if hasattr(type(module), PADDING_CHECK):
            module.__dict__[PADDING_CHECK] = _no_padding_check
    return "sdpa"


def restore_attention(model, restore: str | None) -> None:
    """Undo ``use_unmasked_causal`` (``restore``: what it returned; None: it changed nothing)."""
    if restore is None:
        return
    model.config._attn_implementation = restore
    for module in model.modules():
        module.__dict__.pop(PADDING_CHECK, None)


@contextlib.contextmanager
def unmasked_causal(model, on: bool = True):
    """``use_unmasked_causal`` for the duration of a block (a caller's model is left as it was)."""
    restore = use_unmasked_causal(model) if on else None
    try:
        yield restore is not None
    finally:
        restore_attention(model, restore)
