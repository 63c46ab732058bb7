"""What the trainer does differently for an arch with a ``bias:`` block.

The :class:`povstim.train.loop.Trainer` asks one :class:`TrainingBiases` object at
fixed points of its loop; for an arch without biases every hook is a no-op.

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

from ..io import PovstimError, sha256_file
from . import tpt as T

log = logging.getLogger("povstim.train")


def init_from_checkpoint(model, folder: str | Path, where: str = "--init-from") -> dict:
    """Copy a (Dyck) checkpoint's weights into ``model``; embedding rows beyond the model's vocab are dropped."""
    from safetensors.torch import load_file

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
    def __init__(self, trainer, init_from: str | None = None, parses: list[str] | None = None):
        bias = dict(trainer.arch.get("bias") or {})
        self.trainer = trainer
        self.recency = bias.get("recency")
        self.tpt = None
        self.dev_tpt = None
        self._tpt_sum = None
        self._tpt_steps = 0
        if "dyck" in bias:
            if not init_from:
                raise PovstimError("the arch has bias.dyck: give the pre-pretrained checkpoint with --init-from")
            info = init_from_checkpoint(trainer.raw_model, init_from)
            log.info("initialised from the Dyck checkpoint %s (%d tensors, its vocabulary %d -> %d)", init_from,
                     info["weights"], info["checkpoint_vocab"], trainer.vocab_size)
        elif init_from:
            raise PovstimError("--init-from is for archs with bias.dyck (this arch has none)")
        if "tpt" in bias:
            if not parses:
                raise PovstimError("the arch has bias.tpt: give the CoNLL-U parses of the training (and dev) "
                                   "corpus with --parses")
            cfg = trainer.model_config
            self.tpt = T.check_spec(bias["tpt"] or {}, cfg.n_layer, cfg.n_head, "bias.tpt")
            if trainer.train_data.packed:
                raise PovstimError("bias.tpt needs sentence-level input: set training.packing to false")
            self.tpt_data = self._build(parses[0], trainer.train_sentences, trainer.train_lengths, "train")
            if len(parses) > 1:
                self.dev_tpt = self._build(parses[1], trainer.dev_sentences, trainer.dev_lengths, "dev")
            # attention maps come only from the eager implementation
            trainer.raw_model.set_attn_implementation("eager")
            log.info("TPT: %d of %d training sentences supervised; heads %s of layers %s, weight %g, %s distance",
                     self.tpt_data.n_supervised, len(self.tpt_data.n_nodes), self.tpt["heads"], self.tpt["layers"],
                     self.tpt["weight"], self.tpt["distance"])
        elif parses:
            raise PovstimError("--parses is for archs with bias.tpt (this arch has none)")
        if not self.tpt:  # only the TPT alignment needs the sentence strings: free them
            trainer.train_sentences = trainer.dev_sentences = None

    def _build(self, path, sentences, lengths, what):
        from ..parse.conllu import read_file

        try:
            parses = read_file(path)
        except FileNotFoundError:
            raise PovstimError(f"--parses: {path} not found") from None
        return T.build(self.trainer.tok, sentences, parses, lengths, self.tpt["distance"], f"{path} ({what})")

    @property
    def active(self) -> bool:
        return bool(self.recency or self.tpt)

    # ------------------------------------------------------------------ recency
    def set_epoch_for_step(self, step: int) -> None:
        """Before update ``step`` (0-based): t = the epoch it belongs to."""
        if self.recency:
            self.trainer.raw_model.set_recency_epoch(step // self.trainer.schedule.batches_per_epoch)

    def after_resume(self, step: int) -> None:
        """A resumed model holds the t of its last update (step - 1)."""
        if self.recency:
            self.set_epoch_for_step(max(0, step - 1))

    # ------------------------------------------------------------------ TPT
    def _tpt_tensors(self, data, dataset, idx):
        torch = self.trainer.torch
        q, k, tgt = data.collate(dataset.starts, dataset.lengths, np.asarray(idx) // dataset.repeats,
                                 dataset.sentence_ids)
        dev = self.trainer.device
        return torch.from_numpy(q).to(dev), torch.from_numpy(k).to(dev), torch.from_numpy(tgt).to(dev)

    def _forward(self, inputs, attention):
        tr = self.trainer
        with tr.autocast():
            out = tr.model(input_ids=inputs, attention_mask=attention, use_cache=False, output_attentions=True)
        return out

    def train_loss(self, inputs, labels, attention, idx):
        """The loss of one training step (LM loss, + weight × TPT divergence for a TPT arch)."""
        tr = self.trainer
        if not self.tpt:
            return tr.forward_loss(inputs, labels, attention)
        out = self._forward(inputs, attention)
        lm = tr.lm_loss(out.logits, labels)
        attn = T.supervised_attention(out.attentions, self.tpt["layers"], self.tpt["heads"])
        q, k, tgt = self._tpt_tensors(self.tpt_data, tr.train_data, idx)
        kl, _ = T.tpt_loss(attn, q, k, tgt)
        self._tpt_sum = kl.detach() if self._tpt_sum is None else self._tpt_sum + kl.detach()
        self._tpt_steps += 1
        return lm + self.tpt["weight"] * kl

    def dev_divergence(self) -> float | None:
        """Mean TPT divergence of the supervised heads on the dev set (no gradient)."""
        if not self.tpt or self.dev_tpt is None:
            return None
        tr = self.trainer
        torch = tr.torch
        total, rows = 0.0, 0
        tr.model.eval()
        with torch.no_grad():
            for idx in tr.dev_batches():
                inputs, _, att, _ = tr.batch(tr.dev_data, idx, None)
                out = self._forward(inputs, att)
                attn = T.supervised_attention(out.attentions, self.tpt["layers"], self.tpt["heads"])
                q, k, tgt = self._tpt_tensors(self.dev_tpt, tr.dev_data, idx)
                kl, r = T.tpt_loss(attn, q, k, tgt)
                total += float(kl) * r
                rows += r
        tr.model.train()
        return total / rows if rows else None

    def log_fields(self, is_eval: bool) -> dict:
        out = {}
        if self.recency:
            out["recency_epoch"] = int(self.trainer.raw_model.config.recency_epoch)
        if self.tpt:
            if self._tpt_steps:
                out["tpt_kl"] = float(self._tpt_sum) / self._tpt_steps
            self._tpt_sum, self._tpt_steps = None, 0
            if is_eval and self.dev_tpt is not None:
                out["dev_tpt_kl"] = self.dev_divergence()
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
