"""Fine-tuning a pretrained model as a binary sentence classifier.

The model folder (HF ``save_pretrained`` with its tokenizer) is loaded once with
``AutoModelForSequenceClassification``: the pretrained body plus a new
classification head (RoBERTa: ``classifier`` on ``<s>``; GPT-2: ``score`` on the
last non-padding token, which is why GPT-2 needs ``pad_token_id``). Every run
starts from a copy of that model with the head re-initialised from the run's
seed, so runs are independent and reproducible.

Inputs are framed the way the model was pretrained: masked models get the
tokenizer's ``<s> … </s>``; causal models get ``<s> … </s>`` (the training
frame of povstim's GPT-2s), without the ``</s>`` when it is also the padding
token (GPT-2's own tokenizer), so the last real token is never taken for padding.

Training: AdamW with linear warmup and linear decay to 0 (RoBERTa's GLUE
recipe, which MSGS follows), cross-entropy, a fixed number of epochs and no
early stopping (MSGS §4.2). Batches are built by length: each epoch's shuffled
examples are sorted by length within windows of 50 batches, so padding is
small, and the batches are shuffled again. Everything random comes from the
run's seed; on CPU a run is bit-for-bit reproducible for a fixed thread count.
"""

from __future__ import annotations

import copy
import logging
import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import families
from ..io import PovstimError
from ..scoring.scorer import model_kind

log = logging.getLogger(__name__)

SORT_WINDOW = 50  # batches per length-sorting window


@dataclass(frozen=True)
class HyperParams:
    lr: float
    batch_size: int
    epochs: int
    warmup_ratio: float
    weight_decay: float
    adam_beta1: float
    adam_beta2: float
    adam_eps: float
    grad_clip: float


@dataclass
class Classifier:
    """A loaded model folder: the base classifier (head to be re-initialised per run) and its input framing."""

    model: object
    tokenizer: object
    kind: str  # causal | masked
    head: tuple[str, ...]  # names of the freshly initialised head modules
    pad_id: int
    max_len: int | None
    device: str

    def encode(self, sentences: list[str]) -> list[list[int]]:
        tok = self.tokenizer
        if self.kind == "masked":
            ids = tok(list(sentences), add_special_tokens=True)["input_ids"]
        else:
            prefix = [tok.bos_token_id] if tok.bos_token_id is not None else []
            suffix = [tok.eos_token_id] if tok.eos_token_id is not None and tok.eos_token_id != self.pad_id else []
            ids = [prefix + x + suffix for x in tok(list(sentences), add_special_tokens=False)["input_ids"]]
        for s, x in zip(sentences, ids):
            if self.max_len and len(x) > self.max_len:
                raise PovstimError(
                    f"probe sentence of {len(x)} tokens is longer than the model's context ({self.max_len}): {s!r}"
                )
        return ids


def load(model_dir: str | Path, device: str = "cpu") -> Classifier:
    """Load a model folder as a 2-label sequence classifier (pretrained body + new head)."""
    import torch
    import transformers
    from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

    name = str(model_dir)
    try:
        config = AutoConfig.from_pretrained(name)
        tokenizer = AutoTokenizer.from_pretrained(name)
    except (OSError, ValueError) as exc:
        raise PovstimError(f"cannot load model {name}: {str(exc).splitlines()[0]}") from None
    kind = model_kind(config)
    pad = tokenizer.pad_token_id
    if pad is None:
        pad = tokenizer.eos_token_id if tokenizer.eos_token_id is not None else 0
    config.num_labels = 2
    config.pad_token_id = pad  # GPT-2 pools the last token that is not padding
    transformers.utils.logging.disable_progress_bar()  # no "Loading weights" bar per model
    verbosity = transformers.logging.get_verbosity()
    transformers.logging.set_verbosity_error()  # "newly initialized: score.weight" is the point here
    try:
        model, info = AutoModelForSequenceClassification.from_pretrained(
            name, config=config, dtype=torch.float32, output_loading_info=True
        )
    finally:
        transformers.logging.set_verbosity(verbosity)
    missing = [k for k in info.get("missing_keys", []) if k]
    if not missing:
        raise PovstimError(f"{name}: already has a classification head; povstim probe fine-tunes a pretrained LM")
    head = tuple(sorted({k.rsplit(".", 1)[0] for k in missing}))
    max_len = getattr(config, "n_positions", None) or getattr(config, "max_position_embeddings", None)
    if max_len:
        max_len -= families.position_offset(config.model_type)  # e.g. RoBERTa's start after the padding index
    model.to(device)
    return Classifier(model, tokenizer, kind, head, int(pad), max_len, device)


def _init_head(model, head: tuple[str, ...], std: float) -> None:
    """Re-initialise the head as HF does for new Linear layers: N(0, initializer_range), zero bias."""
    import torch

    modules = dict(model.named_modules())
    with torch.no_grad():
        for name in head:
            mod = modules[name]
            for sub in mod.modules():
                if isinstance(sub, torch.nn.Linear):
                    sub.weight.normal_(0.0, std)
                    if sub.bias is not None:
                        sub.bias.zero_()


def length_batches(lengths: np.ndarray, batch_size: int, rng: np.random.Generator) -> list[np.ndarray]:
    """One epoch's batches: a shuffle, sorted by length within windows, batches shuffled."""
    order = rng.permutation(len(lengths))
    batches = []
    window = batch_size * SORT_WINDOW
    for start in range(0, len(order), window):
        chunk = order[start : start + window]
        chunk = chunk[np.argsort(lengths[chunk], kind="stable")]
        batches.extend(chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size))
    return [batches[i] for i in rng.permutation(len(batches))]


def _pad(rows: list[list[int]], pad_id: int, device: str):
    import torch

    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, r in enumerate(rows):
        ids[i, : len(r)] = torch.tensor(r, dtype=torch.long)
        mask[i, : len(r)] = 1
    return ids.to(device), mask.to(device)


@dataclass
class RunStats:
    steps: int
    examples: int  # training examples seen (n × epochs)
    seconds: float
    final_loss: float

    @property
    def examples_per_s(self) -> float:
        return self.examples / self.seconds if self.seconds > 0 else float("nan")


def finetune(clf: Classifier, ids: list[list[int]], labels: np.ndarray, hp: HyperParams, seed: int):
    """Fine-tune a fresh copy of ``clf.model`` on (ids, labels); return (model, RunStats)."""
    import torch

    torch.manual_seed(seed)
    model = copy.deepcopy(clf.model)
    _init_head(model, clf.head, float(getattr(model.config, "initializer_range", 0.02)))
    model.train()
    decay = [p for n, p in model.named_parameters() if p.ndim >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.ndim < 2]  # biases and LayerNorm weights
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": hp.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=hp.lr, betas=(hp.adam_beta1, hp.adam_beta2), eps=hp.adam_eps,
    )
    lengths = np.array([len(x) for x in ids])
    steps_per_epoch = math.ceil(len(ids) / hp.batch_size)
    total = steps_per_epoch * hp.epochs
    warmup = int(round(hp.warmup_ratio * total))

    def lr_at(step: int) -> float:  # step counts from 1
        if warmup and step <= warmup:
            return hp.lr * step / warmup
        return hp.lr * max(0.0, (total - step) / max(1, total - warmup))

    y = torch.as_tensor(labels, dtype=torch.long)
    step, loss_value = 0, float("nan")
    t0 = time.perf_counter()
    for epoch in range(hp.epochs):
        rng = np.random.default_rng([seed, epoch])
        for batch in length_batches(lengths, hp.batch_size, rng):
            step += 1
            for group in opt.param_groups:
                group["lr"] = lr_at(step)
            x, mask = _pad([ids[i] for i in batch], clf.pad_id, clf.device)
            out = model(input_ids=x, attention_mask=mask, labels=y[batch].to(clf.device))
            opt.zero_grad(set_to_none=True)
            out.loss.backward()
            if hp.grad_clip > 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), hp.grad_clip)
            opt.step()
            loss_value = float(out.loss.detach())
    seconds = time.perf_counter() - t0
    model.eval()
    return model, RunStats(step, len(ids) * hp.epochs, seconds, loss_value)


def predict(model, ids: list[list[int]], pad_id: int, device: str, batch_size: int = 128) -> np.ndarray:
    """Predicted labels (argmax), in the order of ``ids``; batches sorted by length."""
    import torch

    order = sorted(range(len(ids)), key=lambda i: (len(ids[i]), i))
    preds = np.zeros(len(ids), dtype=np.int64)
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            batch = order[start : start + batch_size]
            x, mask = _pad([ids[i] for i in batch], pad_id, device)
            logits = model(input_ids=x, attention_mask=mask).logits
            preds[batch] = logits.argmax(-1).cpu().numpy()
    return preds
