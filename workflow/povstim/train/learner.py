"""The model side of training: a Hugging Face transformer with its batches, loss, evaluation and weights.

The loop (:mod:`povstim.train.loop`) talks to a learner only through these members, so a family that is not
a Hugging Face transformer (an LSTM) brings a learner class of its own and leaves the loop as it is:

    raw_model                     the torch module (its parameters are what the optimiser updates)
    micro                         rows per micro-batch (None: the whole batch at once)
    eager_only                    True when a step may not be recorded as a CUDA graph
    train_batch(idx, step)        (inputs, labels, attention or None, real tokens, predicted tokens per row)
    train_loss(inputs, labels, attention, idx)   the loss of a (micro-)batch
    forward_loss(inputs, labels, attention)      the plain LM loss (what a recorded step runs)
    before_step(step) / after_resume(step)       hooks of the arch's biases
    evaluate() / log_fields(is_eval)              dev loss; extra log columns
    save(folder) / save_weights(folder) / load_weights(folder) / save_tokenizer(folder) / finish()

The constructor's arguments are the interface's too: ``(arch, training, seed, family, runtime, corpora,
schedule, *, hf_tok, bias_inputs, compile_mode, compile_backend)``. :func:`learner_for` picks the class for a
family (``LEARNERS``, by the family's ``learner`` name: :class:`HFLearner` for every transformers family,
:class:`LSTMLearner` for the LSTM).

Batches and masks are pure functions of (seed, step): the MLM mask of training step s is drawn from
``default_rng([seed, 1, s])``, dev batch b's from ``default_rng([seed, 2, b])``.
"""

from __future__ import annotations

import functools
import logging

import numpy as np
import torch
import transformers
from safetensors.torch import load_file

from ..attention import restore_attention, use_unmasked_causal
from ..biases.training import TrainingBiases
from ..io import PovstimError
from . import data as D
from . import gpu
from .models import build_config, build_model, count_params
from .runtime import threads_note

log = logging.getLogger("povstim.train")


class HFLearner:
    """A transformers model of ``family`` built from ``arch`` (seeded), trained on ``corpora``.

    ``hf_tok`` is what is saved beside the weights as the tokenizer; ``bias_inputs`` are the arch's bias
    block's extra inputs (``init_from``, ``parses``, the corpus paths ``texts``); ``compile_mode`` and
    ``compile_backend`` as in train/gpu.py.
    """

    def __init__(self, arch, training, seed, family, runtime, corpora, schedule, *, hf_tok, bias_inputs,
                 compile_mode=None, compile_backend=None):
        transformers.utils.logging.disable_progress_bar()  # no "Writing model shards" bar per checkpoint
        self.p, self.seed, self.runtime, self.hf_tok = training, int(seed), runtime, hf_tok
        self.causal = family.causal
        self.train_data, self.dev_data, self.ids, self.vocab_size = (corpora.train, corpora.dev, corpora.ids,
                                                                    corpora.vocab_size)
        self.special = corpora.special
        torch.manual_seed(self.seed)  # the initial weights
        self.model_config = build_config(arch, training, corpora.vocab_size, corpora.ids)
        self.raw_model = self.model = build_model(arch, self.model_config).to(runtime.device)
        # inductive biases (povstim.biases): Dyck initialisation, recency epoch, TPT supervision
        self.bias = self.make_biases(arch, corpora, schedule, bias_inputs)
        # causal batches are packed blocks (no padding) or right-padded sentences (padding only after a row's last
        # real token, and never a label): SDPA's own causal masking, no mask tensor (povstim/attention.py); not with
        # a bias that edits the attention mask (recency) or reads attention maps (TPT)
        self.attn_restore = use_unmasked_causal(self.raw_model) if self.causal and not self.bias.active else None
        log.info("model: %s, %.2fM parameters (%.2fM without position embeddings), device %s, %d CPU thread(s)%s",
                 arch["family"], count_params(self.raw_model, False) / 1e6, count_params(self.raw_model) / 1e6,
                 runtime.describe(), torch.get_num_threads(), threads_note())
        self.forward_loss = self._forward_loss
        if gpu.compiles(compile_mode):
            # compiling forward and loss together lets the logits' fp32 cast fuse into the cross-entropy
            self.forward_loss = gpu.compile_loss(self._forward_loss, compile_mode, compile_backend)
        # autocast's weight-cast cache must be off inside a recorded step (torch.cuda.graph's AMP note)
        self.autocast_cache = compile_mode != gpu.STEP_GRAPHS
        # gradient accumulation (micro-batches of at most micro_batch sequences) and, when compiled,
        # one-sentence-per-sequence batches padded to a few widths (static shapes)
        self.micro, self.pad_multiple = gpu.batching(training, runtime.cuda, compile_mode, self.train_data.packed,
                                                     bool(self.bias.tpt))
        # packed training data on the GPU: a batch is one gather there
        self.device_blocks = gpu.DeviceBlocks.maybe(self.train_data, runtime.device) if runtime.cuda else None
        # other batches: one pinned asynchronous copy per batch (None: CPU tensors straight from numpy)
        self.to_device = functools.partial(gpu.to_device, device=runtime.device) if runtime.cuda else None

    def make_biases(self, arch, corpora, schedule, bias_inputs) -> TrainingBiases:
        """The hooks of the arch's ``bias:`` block (povstim.biases.training)."""
        return TrainingBiases(
            arch.get("bias"), self.raw_model, n_layer=self.model_config.num_hidden_layers,
            n_head=self.model_config.num_attention_heads,
            batches_per_epoch=schedule.batches_per_epoch, device=self.runtime.device, tok=corpora.tok,
            datasets=(corpora.train, corpora.dev), lengths=(corpora.train_lengths, corpora.dev_lengths),
            **bias_inputs)

    @property
    def eager_only(self) -> bool:
        return self.bias.active

    # -------------------------------------------------------------- batches
    def train_batch(self, idx: np.ndarray, step: int):
        """The batch of training items ``idx`` at 0-based ``step`` (its MLM mask drawn for that step)."""
        mask_rng = None if self.causal else np.random.default_rng([self.seed, 1, step])
        # the whole batch is drawn (and masked) at once, so micro-batching changes no mask
        return self._batch(self.train_data, idx, mask_rng)

    def batch(self, data: D.Dataset, idx: np.ndarray, mask_rng: np.random.Generator | None):
        """(inputs, labels, attention mask or None, real tokens) of items ``idx`` as device tensors."""
        return self._batch(data, idx, mask_rng)[:4]

    def _batch(self, data: D.Dataset, idx: np.ndarray, mask_rng: np.random.Generator | None):
        """batch() plus the predicted tokens per row (numpy: weighting micro-batches needs no GPU sync)."""
        if self.device_blocks is not None and data is self.train_data and self.causal:
            # packed causal LM on a GPU: the labels are the inputs, every token is real
            ids = self.device_blocks.gather(idx, data.repeats)
            b, t = ids.shape
            return ids, ids, None, b * t, np.full(b, t - 1)
        ids, att = data.collate(idx)
        if self.causal:
            inputs, labels = ids, np.where(att == 1, ids, -100)
        else:
            inputs, labels = D.mask_tokens(
                ids, att, mask_rng, mask_id=self.ids["mask"], special=self.special, vocab_size=self.vocab_size,
                mask_prob=self.p.mask_prob, leave_unmasked_prob=self.p.leave_unmasked_prob,
                random_token_prob=self.p.random_token_prob,
            )
        if self.pad_multiple > 1 and not data.packed:
            inputs, labels, att = D.pad_to_multiple(inputs, labels, att, self.pad_multiple, data.context,
                                                    self.ids["pad"])
        ntok = int(att.sum())
        # predicted tokens per row; a packed causal row predicts all but its first token
        n_pred = np.full(len(ids), ids.shape[1] - 1) if (data.packed and self.causal) else D.n_pred(labels, self.causal)
        if self.to_device is not None:
            tensors = self.to_device([inputs, labels] + ([] if data.packed else [att]))
            return tensors[0], tensors[1], None if data.packed else tensors[2], ntok, n_pred
        return (torch.from_numpy(inputs), torch.from_numpy(labels), None if data.packed else torch.from_numpy(att),
                ntok, n_pred)

    def dev_batches(self) -> list[np.ndarray]:
        """Item indices of the dev batches an evaluation reads (the first ``eval_batches``, in order)."""
        bs, n = self.p.batch_size, self.dev_data.n_items
        n_batches = -(-n // bs)
        if self.p.eval_batches:
            n_batches = min(n_batches, int(self.p.eval_batches))
        return [np.arange(b * bs, min(n, (b + 1) * bs)) for b in range(n_batches)]

    # ---------------------------------------------------------------- loss
    def train_loss(self, inputs, labels, att, idx):
        """The loss of one (micro-)batch: the LM loss, plus the TPT bias's attention loss for a TPT arch."""
        if not self.bias.wants_attentions:
            return self.forward_loss(inputs, labels, att)
        out = self.forward(inputs, att, attentions=True)
        return self.lm_loss(out.logits, labels) + self.bias.attention_loss(out.attentions, idx)

    def forward(self, inputs, attention, attentions: bool = False):
        with self.runtime.autocast():
            return self.model(input_ids=inputs, attention_mask=attention, use_cache=False,
                              output_attentions=attentions)

    def _forward_loss(self, inputs, labels, attention, reduction: str = "mean"):
        with self.runtime.autocast(self.autocast_cache):
            mask = None if self.attn_restore else attention  # right padding: causal masking suffices (above)
            logits = self.model(input_ids=inputs, attention_mask=mask, use_cache=False).logits
        return self.lm_loss(logits, labels, reduction)

    def lm_loss(self, logits, labels, reduction: str = "mean"):
        """Next-token (causal) or masked-token cross-entropy of a forward's logits."""
        if self.causal:
            # position t predicts token t+1: the labels move left (the last position predicts nothing), not the
            # logits, whose slice would copy the [batch, context, vocabulary] matrix and zero-fill its gradient
            labels = torch.nn.functional.pad(labels[:, 1:], (0, 1), value=-100)
        return torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.size(-1)).float(), labels.reshape(-1), ignore_index=-100, reduction=reduction
        )

    def loss(self, inputs, labels, attention, reduction="mean"):
        """(loss, number of predicted tokens). On CUDA with compile, forward + loss form one compiled graph."""
        n = labels[:, 1:] if self.causal else labels
        return self.forward_loss(inputs, labels, attention, reduction), int((n != -100).sum())

    def evaluate(self) -> float:
        """Mean token loss on the dev set (MLM: fixed masks per dev batch, so evaluations compare)."""
        total, count = 0.0, 0
        self.model.eval()
        with torch.no_grad():
            for b, idx in enumerate(self.dev_batches()):
                rng = None if self.causal else np.random.default_rng([self.seed, 2, b])
                inputs, labels, att, _ = self.batch(self.dev_data, idx, rng)
                loss_sum, k = self.loss(inputs, labels, att, reduction="sum")
                total += float(loss_sum)
                count += k
        self.model.train()
        return total / max(1, count)

    def dev_attentions(self):
        """(attention maps, items) of each dev batch, without gradient (the TPT bias's dev divergence)."""
        self.model.eval()
        with torch.no_grad():
            for idx in self.dev_batches():
                inputs, _, att, _ = self.batch(self.dev_data, idx, None)
                yield self.forward(inputs, att, attentions=True).attentions, idx
        self.model.train()

    # ---------------------------------------------------------------- hooks
    def before_step(self, step: int) -> None:
        self.bias.set_epoch_for_step(step)

    def after_resume(self, step: int) -> None:
        self.bias.after_resume(step)

    def log_fields(self, is_eval: bool) -> dict:
        return self.bias.log_fields(is_eval, self.dev_attentions) if self.bias.active else {}

    # -------------------------------------------------------------- weights
    def save(self, folder) -> None:
        """A loadable model folder: config, weights and tokenizer (a checkpoint)."""
        self.raw_model.save_pretrained(folder)
        self.hf_tok.save_pretrained(folder)

    def save_weights(self, folder) -> None:
        """Config and weights only (best-so-far copies)."""
        self.raw_model.save_pretrained(folder)

    def save_tokenizer(self, folder) -> None:
        self.hf_tok.save_pretrained(folder)

    def load_weights(self, folder) -> None:
        weights = load_file(folder / "model.safetensors", device=str(self.runtime.device))
        missing, unexpected = self.raw_model.load_state_dict(weights, strict=False)
        # tied weights (lm_head = wte) are stored once; anything else missing is a real problem
        if unexpected or [m for m in missing if "lm_head" not in m and "decoder" not in m]:
            raise PovstimError(f"{folder}: checkpoint weights do not match the model ({missing or unexpected})")

    def finish(self) -> None:
        """After the loop: the trained model in memory takes padded batches again (a notebook's, a test's)."""
        restore_attention(self.raw_model, self.attn_restore)


class LSTMLearner(HFLearner):
    """An LSTM (povstim/lstm.py): a transformers model with no attention, so HFLearner's batches (packed like
    GPT-2's), causal loss, evaluation and weights serve as they are; it has no attention biases (the config
    check rejects a ``bias:`` block on an lstm arch) and never switches an attention implementation."""

    def make_biases(self, arch, corpora, schedule, bias_inputs) -> TrainingBiases:
        if arch.get("bias") or any(bias_inputs.get(k) for k in ("init_from", "parses")):
            raise PovstimError(f"family {arch['family']}: inductive biases need a transformer (GPT-2) family")
        return TrainingBiases(None, self.raw_model, n_layer=self.model_config.n_layer, n_head=1,
                              batches_per_epoch=schedule.batches_per_epoch, device=self.runtime.device)


# learner name (a family's ``Family.learner``) -> its class; a family that is not a transformers model names
# its own (the LSTM: recurrent); every other family trains as an HFLearner
LEARNERS: dict[str, type] = {"transformer": HFLearner, "recurrent": LSTMLearner}


def learner_for(family) -> type:
    """The learner class that trains models of ``family`` (a povstim.families.Family)."""
    if family.corpus_model:
        raise PovstimError(f"family {family.name} is a corpus model: its score job fits it, nothing trains it")
    return LEARNERS.get(family.learner, HFLearner)
