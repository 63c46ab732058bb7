"""What the trainer does differently for an arch with a ``bias:`` block.

The training loop (:mod:`povstim.train.loop`) and the model's learner
(:mod:`povstim.train.learner`) ask one :class:`TrainingBiases` object at fixed points;
for an arch without biases every hook is a no-op. The hooks get what they need as
arguments -- the model, its sizes, the datasets, the batches per epoch, the attention
maps of a forward -- never the trainer, and change nothing but the model and their own
running sums.

* ``dyck``: the model starts from the pre-pretrained Dyck checkpoint (``--init-from``):
  every weight is copied; the token embeddings (shared with the tied LM head) keep their
  first V rows, V being this condition's vocabulary (Dyck symbols are ids 5 … 2k+4 of the
  same vocabulary, as Hu et al. write Dyck symbols into the LM's own vocabulary). The
  optimizer and learning-rate schedule start afresh, as in Hu et al.
* ``recency``: before each update the model's epoch ``t`` is set to ``step // batches per
  epoch`` (a pure function of the step, so a resumed run sets the same ``t``); a saved
  model holds the ``t`` of its last update.
* ``tpt``: the supervised heads' attention is computed with the eager implementation
  (SDPA returns no attention maps) and ``weight × KL`` is added to the LM loss of every
  training step; dev evaluations also log the dev divergence (``dev_tpt_kl``). The dev
  loss that picks the best model stays the LM loss, so all biases are compared alike.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file

from ..io import PovstimError, read_sentences, sha256_file
from ..parse.conllu import read_file
from . import tpt as T

log = logging.getLogger("povstim.train")


def init_from_checkpoint(model, folder: str | Path, where: str = "--init-from") -> dict:
    """Copy a (Dyck) checkpoint's weights into ``model``; embedding rows beyond the model's vocab are dropped."""
    folder = Path(folder)
    path = folder / "model.safetensors"
    if not path.exists():
        raise PovstimError(f"{where}: {path} not found (the pre-pretrained checkpoint)")
    weights = load_file(str(path))
    own = model.state_dict()
    new = {}
    for name, tensor in weights.items():
        if name not in own:
            raise PovstimError(f"{where}: checkpoint weight {name} has no counterpart in the model "
                               "(a different architecture?)")
        target = own[name]
        if name.endswith("wte.weight") or name.endswith("lm_head.weight"):
            if tensor.shape[0] < target.shape[0] or tensor.shape[1:] != target.shape[1:]:
                raise PovstimError(f"{where}: embeddings {tuple(tensor.shape)} cannot hold the model's "
                                   f"{tuple(target.shape)}")
            tensor = tensor[: target.shape[0]]
        if tensor.shape != target.shape:
            raise PovstimError(f"{where}: weight {name} is {tuple(tensor.shape)} in the checkpoint but "
                               f"{tuple(target.shape)} in the model (a different architecture?)")
        new[name] = tensor.to(target.dtype)
    missing = [m for m in own if m not in new and "lm_head" not in m]  # lm_head is tied to wte
    if missing:
        raise PovstimError(f"{where}: checkpoint lacks weight(s) {', '.join(missing[:3])}")
    model.load_state_dict(new, strict=False)
    if hasattr(model, "tie_weights"):
        model.tie_weights()
    return {"weights": len(new), "checkpoint_vocab": int(weights[[n for n in weights if n.endswith("wte.weight")][0]]
                                                           .shape[0])}


class TrainingBiases:
    """The hooks of an arch's ``bias:`` block.

    ``model`` is the freshly built model (a Dyck checkpoint is copied into it, TPT switches its attention to the
    eager implementation, recency sets its epoch); ``n_layer``/``n_head`` its sizes; ``batches_per_epoch`` the
    recency epoch's length; ``tok``, ``texts`` (train, dev corpus paths), ``datasets`` (train, dev
    ``train.data.Dataset``) and ``lengths`` (tokens per sentence) what the TPT supervision aligns its parses to.
    """

    def __init__(self, bias: dict | None, model, *, n_layer: int, n_head: int, batches_per_epoch: int, device: str,
                 tok=None, texts=(None, None), datasets=(None, None), lengths=(None, None),
                 init_from: str | None = None, parses: list[str] | None = None):
        bias = dict(bias or {})
        self.model, self.device, self.batches_per_epoch = model, device, batches_per_epoch
        self.recency = bias.get("recency")
        self.tpt = None
        self.dev_tpt = None
        self._tpt_sum = None
        self._tpt_steps = 0
        if "dyck" in bias:
            if not init_from:
                raise PovstimError("the arch has bias.dyck: give the pre-pretrained checkpoint with --init-from")
            info = init_from_checkpoint(model, init_from)
            log.info("initialised from the Dyck checkpoint %s (%d tensors, its vocabulary %d -> %d)", init_from,
                     info["weights"], info["checkpoint_vocab"], model.get_input_embeddings().weight.shape[0])
        elif init_from:
            raise PovstimError("--init-from is for archs with bias.dyck (this arch has none)")
        if "tpt" in bias:
            if not parses:
                raise PovstimError("the arch has bias.tpt: give the CoNLL-U parses of the training (and dev) "
                                   "corpus with --parses")
            self.tpt = T.check_spec(bias["tpt"] or {}, n_layer, n_head, "bias.tpt")
            self.train_data, self.dev_data = datasets
            if self.train_data.packed:
                raise PovstimError("bias.tpt needs sentence-level input: set training.packing to false")
            self.tpt_data = self._build(tok, parses[0], texts[0], lengths[0], "train")
            if len(parses) > 1:
                self.dev_tpt = self._build(tok, parses[1], texts[1], lengths[1], "dev")
            # attention maps come only from the eager implementation
            model.set_attn_implementation("eager")
            log.info("TPT: %d of %d training sentences supervised; heads %s of layers %s, weight %g, %s distance",
                     self.tpt_data.n_supervised, len(self.tpt_data.n_nodes), self.tpt["heads"], self.tpt["layers"],
                     self.tpt["weight"], self.tpt["distance"])
        elif parses:
            raise PovstimError("--parses is for archs with bias.tpt (this arch has none)")

    def _build(self, tok, path, text, lengths, what):
        try:
            parses = read_file(path)
        except FileNotFoundError:
            raise PovstimError(f"--parses: {path} not found") from None
        sentences = read_sentences(text, "corpus")  # the lines the parses' '# sent_id' count
        return T.build(tok, sentences, parses, lengths, self.tpt["distance"], f"{path} ({what})")

    @property
    def active(self) -> bool:
        """Whether a training step must run eagerly (it changes the attention or reads its maps)."""
        return bool(self.recency or self.tpt)

    @property
    def wants_attentions(self) -> bool:
        """Whether a training forward must return its attention maps (for :meth:`attention_loss`)."""
        return bool(self.tpt)

    # ------------------------------------------------------------------ recency
    def set_epoch_for_step(self, step: int) -> None:
        """Before update ``step`` (0-based): t = the epoch it belongs to."""
        if self.recency:
            self.model.set_recency_epoch(step // self.batches_per_epoch)

    def after_resume(self, step: int) -> None:
        """A resumed model holds the t of its last update (step - 1)."""
        if self.recency:
            self.set_epoch_for_step(max(0, step - 1))

    # ------------------------------------------------------------------ TPT
    def _tpt_tensors(self, data, dataset, idx):
        q, k, tgt = data.collate(dataset.starts, dataset.lengths, np.asarray(idx) // dataset.repeats,
                                 dataset.sentence_ids)
        dev = self.device
        return torch.from_numpy(q).to(dev), torch.from_numpy(k).to(dev), torch.from_numpy(tgt).to(dev)

    def attention_loss(self, attentions, idx):
        """weight × the TPT divergence of a training (micro-)batch's supervised heads, added to its LM loss;
        ``attentions`` are the forward's attention maps, ``idx`` the batch's training items."""
        attn = T.supervised_attention(attentions, self.tpt["layers"], self.tpt["heads"])
        q, k, tgt = self._tpt_tensors(self.tpt_data, self.train_data, idx)
        kl, _ = T.tpt_loss(attn, q, k, tgt)
        self._tpt_sum = kl.detach() if self._tpt_sum is None else self._tpt_sum + kl.detach()
        self._tpt_steps += 1
        return self.tpt["weight"] * kl

    def dev_divergence(self, dev_attentions) -> float | None:
        """Mean TPT divergence of the supervised heads on the dev set; ``dev_attentions()`` yields each dev
        batch's (attention maps, items), computed without gradient."""
        if not self.tpt or self.dev_tpt is None:
            return None
        total, rows = 0.0, 0
        for attentions, idx in dev_attentions():
            attn = T.supervised_attention(attentions, self.tpt["layers"], self.tpt["heads"])
            q, k, tgt = self._tpt_tensors(self.dev_tpt, self.dev_data, idx)
            kl, r = T.tpt_loss(attn, q, k, tgt)
            total += float(kl) * r
            rows += r
        return total / rows if rows else None

    def log_fields(self, is_eval: bool, dev_attentions) -> dict:
        """The bias's columns of a train_log.jsonl line (``dev_attentions`` as for :meth:`dev_divergence`)."""
        out = {}
        if self.recency:
            out["recency_epoch"] = int(self.model.config.recency_epoch)
        if self.tpt:
            if self._tpt_steps:
                out["tpt_kl"] = float(self._tpt_sum) / self._tpt_steps
            self._tpt_sum, self._tpt_steps = None, 0
            if is_eval and self.dev_tpt is not None:
                out["dev_tpt_kl"] = self.dev_divergence(dev_attentions)
        return out


def key_material(init_from: str | None, parses: list[str] | None) -> dict:
    """Hashes of the extra inputs, for the trainer's resume key (new inputs discard old checkpoints)."""
    out = {}
    if init_from:
        path = Path(init_from) / "model.safetensors"
        out["init_from"] = sha256_file(path) if path.exists() else str(path)
    if parses:
        out["parses"] = [sha256_file(p) if Path(p).exists() else str(p) for p in parses]
    return out
