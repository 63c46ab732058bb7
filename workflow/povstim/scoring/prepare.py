"""Sentences made ready for scoring: token ids, the positions scored and what a scorer derives from them.

None of it depends on a model's weights, only on its tokenizer and the scoring settings, so a score
job prepares each distinct (tokenizer, framing) once and shares it:

* between a model and its checkpoints (``scoring.checkpoints``: their tokenizer files are the same), between
  the models of a ``score-group`` job (the seeds of a condition and size share a tokenizer), and between a
  final causal model's two passes (``scoring.sensitivity``: one per BOS setting);
* with the device's start-up: the first model's preparations run in a thread while the job claims its GPU
  slot, initialises CUDA and loads the weights (:meth:`Preparations.ahead`). Encoding is the Rust
  tokenizer's, which runs without the GIL, and the prefix tree's packing (scoring/tree.py) is numpy, so on a
  GPU both leave the job's critical path.

The numbers are the same whichever way a preparation was made: the same encoder, the same arrays (a cache
entry is found by the tokenizer's full serialisation and the framing, so a checkpoint with other tokenizer
files gets its own). A preparation made ahead that fails (a damaged tokenizer, a sentence too long for the
model) is dropped and made again where it is needed, so its error is raised there, as without the thread.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from .. import families
from ..io import PovstimError

# distinct (tokenizer, framing) preparations a job keeps: a group job over many conditions and sizes would
# otherwise hold every suite encoding at once (tens of MB each for a 20k-pair suite)
KEEP = 8

# Model types of other people's models (hub models) that are causal or masked LMs (model_kind).
_HUB_CAUSAL = ("llama", "gpt_neox", "opt", "mistral", "qwen2")
_HUB_MASKED = ("bert", "distilbert", "deberta", "deberta-v2", "electra", "xlm-roberta", "camembert")


def model_kind(config) -> str:
    """causal or masked: from the family registry for povstim's own models, else from the HF config."""
    fam = families.for_model_type(config.model_type)
    if fam is not None:
        return fam.kind
    archs = " ".join(getattr(config, "architectures", None) or [])
    if "MaskedLM" in archs:
        return "masked"
    if "CausalLM" in archs or "LMHeadModel" in archs:
        return "causal"
    if getattr(config, "is_decoder", False) or config.model_type in _HUB_CAUSAL:
        return "causal"
    if config.model_type in _HUB_MASKED:
        return "masked"
    raise PovstimError(f"cannot tell whether model type {config.model_type!r} is causal or masked")


@dataclass(frozen=True)
class Framing:
    """How a scorer turns a sentence into token ids, and which of them it scores."""

    kind: str  # causal | masked
    prefix: int | None  # prepended to every sentence (causal with BOS: the BOS id, or EOS where there is none)
    suffix: int | None  # appended (causal with ``scoring.eos``: the EOS id, scored too)
    max_len: int | None  # the model's context in tokens: longer sentences are an error
    special: tuple[int, ...]  # masked: ids never scored (the tokenizer's special tokens); () for causal


def framing(tokenizer, config, kind: str, bos: bool, eos: bool) -> Framing:
    """The framing of a model with this tokenizer and config under the scoring settings ``bos`` and ``eos``."""
    suffix = None
    if kind == "causal" and eos:
        # a model trained on "<s> ... </s>" frames has learnt where sentences end: log p(EOS | sentence)
        if tokenizer.eos_token_id is None:
            raise PovstimError("scoring.eos is true but the tokenizer has no EOS token")
        suffix = tokenizer.eos_token_id
    prefix = None
    if kind == "causal" and bos:
        prefix = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
        if prefix is None:
            raise PovstimError(
                "the tokenizer has neither a BOS nor an EOS token, so the first word cannot be scored; "
                "set scoring.bos: false to score without one (the first token is then not scored)"
            )
    max_len = getattr(config, "n_positions", None) or getattr(config, "max_position_embeddings", None)
    fam = families.for_model_type(config.model_type)
    if fam is not None and max_len:
        max_len -= fam.position_offset  # e.g. RoBERTa positions start after the padding index
    special = tuple(sorted(set(tokenizer.all_special_ids))) if kind == "masked" else ()
    return Framing(kind, prefix, suffix, max_len, special)


def batch_ids(tok, sentences: list[str], special: bool) -> list[list[int]]:
    """``tok(sentences, add_special_tokens=special)["input_ids"]``: for a fast tokenizer with no truncation or
    padding configured (what that call switches off) its Rust batch encoder's ids directly -- the call itself
    runs the same encoder, then copies every field of every encoding into Python lists (1.09-1.37 s vs
    0.60-0.73 s for 36,368 sentences on a 2-core machine)."""
    backend = getattr(tok, "backend_tokenizer", None)
    if backend is not None and backend.truncation is None and backend.padding is None:
        return [e.ids for e in backend.encode_batch(sentences, add_special_tokens=special)]
    return tok(sentences, add_special_tokens=special)["input_ids"]


def encode(tok, fr: Framing, sentences: list[str]) -> list[list[int]]:
    """Token ids of ``sentences`` framed by ``fr``; a sentence longer than the model's context is an error."""
    ids = batch_ids(tok, list(sentences), fr.kind == "masked")
    if fr.prefix is not None:
        ids = [[fr.prefix] + x for x in ids]
    if fr.suffix is not None:
        ids = [x + [fr.suffix] for x in ids]
    for s, x in zip(sentences, ids):
        if fr.max_len and len(x) > fr.max_len:
            raise PovstimError(
                f"sentence of {len(x)} tokens is longer than the model's context ({fr.max_len}): {s[:80]!r}"
            )
    return ids


def scored_positions(fr: Framing, ids: list[list[int]]) -> list[list[int]]:
    """The positions of each encoded sentence that are scored (all but BOS / special tokens)."""
    if fr.kind == "masked":
        special = set(fr.special)
        return [[j for j, t in enumerate(x) if t not in special] for x in ids]
    return [list(range(1, len(x))) for x in ids]  # position j predicted from j-1


@dataclass
class Prepared:
    """A suite's distinct sentences, encoded and framed for one tokenizer."""

    framing: Framing
    sentences: list[str]  # distinct, sorted
    index: dict[str, int]  # sentence -> its row
    ids: list[list[int]]
    targets: list[list[int]]  # scored positions per sentence
    ntok: np.ndarray  # int64, scored tokens per sentence
    seconds: float  # what encoding took, wherever it ran
    derived: dict = field(default_factory=dict)  # what scorers build from it, by their own keys (tree.plan_for)


def prepare(tok, fr: Framing, sentences: list[str]) -> Prepared:
    """Encode the distinct ``sentences``; a sentence with nothing to score is an error."""
    started = time.perf_counter()
    uniq = sorted(set(sentences))
    ids = encode(tok, fr, uniq)
    targets = scored_positions(fr, ids)
    for s, t in zip(uniq, targets):
        if not t:
            raise PovstimError(f"nothing to score in sentence {s!r} (no tokens after BOS/special tokens)")
    ntok = np.fromiter((len(t) for t in targets), dtype=np.int64, count=len(targets))
    return Prepared(fr, uniq, {s: i for i, s in enumerate(uniq)}, ids, targets, ntok,
                    time.perf_counter() - started)


def tokenizer_key(tok) -> str | None:
    """What identifies a tokenizer's encoding: a hash of its whole serialisation (vocabulary, merges, normaliser,
    pre-tokeniser, added tokens; 10 ms for a 32k BPE); None for a tokenizer without one (a slow tokenizer),
    whose preparations are not shared."""
    backend = getattr(tok, "backend_tokenizer", None)
    if backend is None:
        return None
    return hashlib.sha256(backend.to_str().encode()).hexdigest()


class Preparations:
    """A job's preparations of one sentence list (a suite's), by (tokenizer, framing); see the module docstring."""

    def __init__(self, sentences: list[str]):
        self.sentences = sentences
        self._kept: OrderedDict = OrderedDict()
        self._pool: ThreadPoolExecutor | None = None
        # what the thread has said it will make and has not made yet; `_said` once it has said (or stopped)
        self._changed = threading.Condition()
        self._coming: set = set()
        self._said = True

    def ahead(self, folder, framings, derive=None) -> None:
        """Start preparing in a thread for the model in ``folder``: ``framings(tokenizer, config, kind)`` lists the
        framings its scorers will ask for, in the order they ask, ``derive(prepared, config)`` builds what they
        derive from each. Each is kept as soon as it is made, so the first scorer does not wait for the rest."""
        from transformers import AutoConfig, AutoTokenizer

        def work():
            try:
                config = AutoConfig.from_pretrained(str(folder))
                tok = AutoTokenizer.from_pretrained(str(folder))
                key = tokenizer_key(tok)
                todo = [(key, fr) for fr in framings(tok, config, model_kind(config))] if key is not None else []
                with self._changed:
                    self._coming, self._said = set(todo), True
                    self._changed.notify_all()
                for k in todo:
                    try:
                        made = prepare(tok, k[1], self.sentences)
                        if derive is not None:
                            derive(made, config)
                    except Exception:  # noqa: BLE001 -- made again where it is needed, where its error is the job's
                        made = None
                    with self._changed:
                        self._coming.discard(k)
                        if made is not None:
                            self._keep(k, made)
                        self._changed.notify_all()
            finally:
                with self._changed:
                    self._coming, self._said = set(), True
                    self._changed.notify_all()

        families.register_auto_classes()  # here, not in the thread: the model's loading registers them too
        self._said = False
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="povstim-prepare")
        self._pool.submit(work)

    def get(self, tok, fr: Framing) -> Prepared:
        """The preparation for this tokenizer and framing: made ahead (waiting for it if it is being made), kept from
        an earlier model, or made now."""
        key = (tokenizer_key(tok), fr)
        if key[0] is None:
            return prepare(tok, fr, self.sentences)
        with self._changed:
            self._changed.wait_for(lambda: self._said and key not in self._coming)
            if key in self._kept:
                self._kept.move_to_end(key)
                return self._kept[key]
        made = prepare(tok, fr, self.sentences)
        with self._changed:
            self._keep(key, made)
        return made

    def _keep(self, key, p: Prepared) -> None:
        self._kept[key] = p
        while len(self._kept) > KEEP:
            self._kept.popitem(last=False)

    def close(self) -> None:
        """Wait for a preparation still running (a job that failed before it needed it) and end the thread."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
