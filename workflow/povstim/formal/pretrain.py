"""Pre-pretraining on a formal language (Hu et al. 2025; POSH §7): the trainer on Dyck symbols.

The loop is :class:`povstim.train.loop.Trainer` (same optimizer, schedule, checkpoints,
resume and determinism); only the data differ. Dyck symbol ``s`` is token id
``s + N_SPECIAL`` of the natural-language vocabulary (ids 0-4 are the BPE special
tokens), as Hu et al. write formal-language symbols into the LM's own vocabulary;
the model has ``tokenizer.vocab_size`` embeddings, so every condition's tokenizer
(at most that many tokens) can continue from the same checkpoint. Sequences are
fed as they are, without ``<s>``/``</s>`` (Hu et al.), packed into context windows
(a sequence of exactly ``context`` symbols is one window). The run stops after
exactly ``steps`` updates and keeps the *last* weights (not the best by dev loss):
the continued training starts from where pre-pretraining ended.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .. import families
from ..biases import N_SPECIAL
from ..io import PovstimError, json_object_arg, write_json
from ..tokenizer.bpe import SPECIAL_TOKENS
from ..train import data as D
from ..train.loop import Trainer
from . import dyck

FIXED_SPECIAL_IDS = {name: i for i, name in enumerate(SPECIAL_TOKENS)}  # BpeTrainer adds them first, in order
assert len(FIXED_SPECIAL_IDS) == N_SPECIAL


class _DyckVocab:
    """Stands in for the HF tokenizer a model folder normally holds: records the symbol -> id map."""

    def __init__(self, k: int):
        self.k = k

    def save_pretrained(self, folder) -> None:
        write_json(f"{folder}/dyck_vocab.json", {
            "k": self.k, "offset": N_SPECIAL, "special_ids": FIXED_SPECIAL_IDS,
            "note": "Dyck symbol s (open type i = i, close = i + k) is token id s + offset",
        })


class DyckTrainer(Trainer):
    def __init__(self, *, k: int, vocab_size: int, steps: int, training, **kw):
        if 2 * k + N_SPECIAL > vocab_size:
            raise PovstimError(f"k = {k} needs {2 * k + N_SPECIAL} token ids, more than --vocab-size {vocab_size}")
        self.k, self._vocab_size = int(k), int(vocab_size)
        # exactly `steps` updates, one evaluation at the end, no early stopping: the last weights are the result
        training = dataclasses.replace(training, max_steps=int(steps), epochs=None, eval_every=int(steps),
                                       patience=int(steps) + 1, packing=True)
        super().__init__(tokenizer=None, training=training, **kw)

    def load_data(self, train, dev, tokenizer) -> D.Corpora:
        ids = dict(FIXED_SPECIAL_IDS)
        ctx = self.p.context
        data = {}
        for split, path in (("train", train), ("dev", dev)):
            seqs = dyck.read_sequences(path, self.k)
            lengths = np.array([len(s) for s in seqs], dtype=np.int64)
            tokens = np.concatenate([np.asarray(s, dtype=np.int32) for s in seqs]) + N_SPECIAL
            enc = D.Encoded(tokens=tokens.astype(np.int32), lengths=lengths)
            data[split] = (D.Dataset.build(enc, ctx, True, ids["pad"], 1, path, allow_short=split == "dev"), lengths)
        return D.Corpora(train=data["train"][0], dev=data["dev"][0], ids=ids, vocab_size=self._vocab_size,
                         train_lengths=data["train"][1], dev_lengths=data["dev"][1])

    def make_hf_tokenizer(self):
        return _DyckVocab(self.k)


def run_pretrain(args) -> dict:
    from ..train.params import resolve

    spec = json_object_arg(args.dyck, "--dyck")
    if "k" not in spec or "steps" not in spec:
        raise PovstimError("--dyck needs at least k and steps (an archs.<name>.bias.dyck block)")
    # the Dyck phase trains the plain body: no bias, the family without its recency variant
    body = {k: v for k, v in json_object_arg(args.arch, "--arch").items() if k != "bias"}
    family = families.get(body.get("family"), "--arch.family")
    body["family"] = family.base or family.name
    arch, training = resolve(body, args.params, device=args.device)
    trainer = DyckTrainer(
        k=int(spec["k"]), vocab_size=args.vocab_size, steps=int(spec["steps"]), train=args.train, dev=args.dev,
        arch=arch, training=training, seed=args.seed, out_dir=args.out_dir, threads=args.threads,
        progress=not args.no_progress,
    )
    return trainer.run()
