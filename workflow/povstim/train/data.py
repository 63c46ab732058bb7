"""Turning a one-sentence-per-line corpus into training batches.

Every batch is a pure function of (seed, step): the shuffle of epoch ``e`` is
drawn from ``default_rng([seed, e])`` and the MLM mask of step ``s`` from
``default_rng([seed, 1, s])``. Resuming at a step therefore needs no data
state beyond the step itself, and a resumed run sees exactly the batches an
uninterrupted one would.

Two layouts:
* packed (causal LMs, POSH): ``<s> w1 w2 . </s> <s> …`` concatenated and cut
  into ``context``-token windows, so no compute is wasted on padding;
* one sentence per sequence (BabyBERTa): each ``<s> sentence </s>`` padded per
  batch. A sentence longer than ``context`` tokens (with its ``<s>``/``</s>``) is
  left out, never truncated, and counted (``Dataset.excluded``): BabyBERTa App. A
  "If the number of tokens ... is longer than the maximum, we do not truncate, and
  instead remove the sentence altogether" (its Table 6 counts sentences after
  that exclusion).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass

import numpy as np

from ..io import PovstimError, read_sentences
from ..tokenizer import bpe


def read_corpus(path: str | os.PathLike) -> list[str]:
    return read_sentences(path, "corpus")


@dataclass
class Encoded:
    """A corpus as one flat int32 token array plus per-sentence lengths.

    Flat arrays keep a 100M-word corpus at a few hundred MB instead of
    millions of small Python objects.
    """

    tokens: np.ndarray  # every sentence framed as <s> … </s>, concatenated
    lengths: np.ndarray  # tokens per framed sentence

    @property
    def starts(self) -> np.ndarray:
        return np.concatenate([[0], np.cumsum(self.lengths)[:-1]]).astype(np.int64)

    def sentence(self, i: int) -> np.ndarray:
        start = int(self.lengths[:i].sum())
        return self.tokens[start : start + int(self.lengths[i])]


def encode(tok, sentences: list[str], bos: int, eos: int, chunk: int = 65536) -> Encoded:
    """Token ids of each sentence framed as ``<s> … </s>``, encoded in chunks (Rust, multi-threaded)."""
    parts, lengths = [], []
    for k in range(0, len(sentences), chunk):
        chunk_parts = []
        for enc in tok.encode_batch(sentences[k : k + chunk], add_special_tokens=False):
            ids = np.empty(len(enc.ids) + 2, dtype=np.int32)
            ids[0] = bos
            ids[1:-1] = enc.ids
            ids[-1] = eos
            chunk_parts.append(ids)
            lengths.append(len(ids))
        parts.append(np.concatenate(chunk_parts))  # one array per chunk, not one per sentence
    tokens = np.concatenate(parts) if parts else np.empty(0, dtype=np.int32)
    return Encoded(tokens=tokens, lengths=np.asarray(lengths, dtype=np.int64))


@dataclass
class Dataset:
    """Fixed-length blocks (packed) or variable-length sentences (unpacked)."""

    packed: bool
    pad: int
    repeats: int
    blocks: np.ndarray | None = None  # packed: [n, context]
    tokens: np.ndarray | None = None  # unpacked: flat tokens ...
    starts: np.ndarray | None = None  # ... sentence starts
    lengths: np.ndarray | None = None  # ... and lengths
    excluded: int = 0  # unpacked: sentences longer than the context, left out
    sentence_ids: np.ndarray | None = None  # unpacked: the corpus line of each kept sentence
    context: int | None = None  # unpacked: the longest a sequence may be

    @classmethod
    def build(cls, enc: Encoded, context: int, packed: bool, pad: int, repeats: int, source: str,
              allow_short: bool = False):
        if packed:
            stream = enc.tokens
            n = len(stream) // context
            if n == 0 and allow_short:
                # a dev set shorter than one window is still a (short) dev set
                return cls(packed=True, pad=pad, repeats=repeats, blocks=stream[None, :])
            if n == 0:
                raise PovstimError(
                    f"{source}: only {len(stream)} tokens, fewer than one context window of {context}; "
                    "lower training.context or use a bigger corpus"
                )
            return cls(packed=True, pad=pad, repeats=repeats, blocks=stream[: n * context].reshape(n, context))
        # One sentence per sequence. A sentence that does not fit the context is
        # removed, not cut (BabyBERTa App. A): a truncated sentence is a different,
        # often ungrammatical, training example.
        fits = enc.lengths <= context
        excluded = int((~fits).sum())
        if not fits.any():
            raise PovstimError(
                f"{source}: all {len(enc.lengths)} sentences are longer than the context of {context} tokens "
                "(with <s> and </s>); raise training.context"
            )
        return cls(packed=False, pad=pad, repeats=repeats, tokens=enc.tokens, starts=enc.starts[fits],
                   lengths=enc.lengths[fits], excluded=excluded, sentence_ids=np.flatnonzero(fits),
                   context=context)

    @property
    def n_base(self) -> int:
        return len(self.blocks) if self.packed else len(self.lengths)

    @property
    def n_items(self) -> int:
        return self.n_base * self.repeats

    @property
    def n_tokens(self) -> int:
        return (int(self.blocks.size) if self.packed else int(self.lengths.sum())) * self.repeats

    def collate(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(input_ids int64 [B, T], attention_mask int64 [B, T]) for item indices."""
        # copies of a sequence are adjacent items, so ordered training sees them back to back
        # as in BabyBERTa §3.3 (footnote 8); shuffled training spreads them anyway
        idx = np.asarray(idx) // self.repeats
        if self.packed:
            ids = self.blocks[idx].astype(np.int64)
            return ids, np.ones_like(ids)
        lengths = self.lengths[idx]
        width = int(lengths.max())
        cols = np.arange(width)
        mask = cols[None, :] < lengths[:, None]
        # one gather for the whole batch (positions past a sentence's end are clipped, then padded)
        pos = np.minimum(self.starts[idx][:, None] + cols[None, :], len(self.tokens) - 1)
        ids = np.where(mask, self.tokens[pos], self.pad).astype(np.int64)
        return ids, mask.astype(np.int64)


def pad_to_multiple(inputs: np.ndarray, labels: np.ndarray, attention: np.ndarray, multiple: int, cap: int,
                    pad: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A batch widened with padding (attention 0, label -100) to a multiple of ``multiple`` tokens, at
    most ``cap``. Done after masking, so the masks (drawn for the batch's own width) do not change."""
    width = inputs.shape[1]
    target = min(-(-width // multiple) * multiple, max(cap, width))
    if target == width:
        return inputs, labels, attention
    out = []
    for a, fill in ((inputs, pad), (labels, -100), (attention, 0)):
        # a filled array and one slice copy: np.pad costs ~100 us per call, which a GPU step cannot hide
        wide = np.full((a.shape[0], target), fill, dtype=a.dtype)
        wide[:, :width] = a
        out.append(wide)
    return out[0], out[1], out[2]


def n_pred(labels: np.ndarray, causal: bool) -> np.ndarray:
    """Predicted tokens per row of ``labels`` (-100 = not predicted; causal LMs predict from position 1)."""
    return ((labels[:, 1:] if causal else labels) != -100).sum(axis=1)


@dataclass
class Corpora:
    """What a run trains and evaluates on: the two datasets and the vocabulary they were encoded with."""

    train: Dataset
    dev: Dataset
    ids: dict  # special token ids: bos, pad, eos, unk, mask
    vocab_size: int
    train_lengths: np.ndarray  # tokens per sentence, <s> and </s> included (the TPT bias aligns parses to them)
    dev_lengths: np.ndarray
    tok: object = None  # the BPE tokenizer (None where the symbols are not text: Dyck pre-pretraining)
    train_words: np.ndarray | None = None  # words per base training item (training.checkpoint_words only)

    @property
    def special(self) -> np.ndarray:
        return np.array(sorted(self.ids.values()), dtype=np.int64)


def load_corpora(train: str, dev: str, tokenizer: str, training) -> Corpora:
    """Tokenise the training and dev corpora (one sentence per line) into datasets for ``training``'s context
    and packing; sentences longer than the context are left out of one-sentence batches, and counted."""
    tok = bpe.load(tokenizer)
    ids = bpe.special_ids(tok)
    train_sents = encode(tok, read_corpus(train), ids["bos"], ids["eos"])
    dev_sents = encode(tok, read_corpus(dev), ids["bos"], ids["eos"])
    ctx, packed = training.context, bool(training.packing)
    corpora = Corpora(
        train=Dataset.build(train_sents, ctx, packed, ids["pad"], training.repeats, train),
        dev=Dataset.build(dev_sents, ctx, packed, ids["pad"], 1, dev, allow_short=True),
        ids=ids, vocab_size=tok.get_vocab_size(), train_lengths=train_sents.lengths,
        dev_lengths=dev_sents.lengths, tok=tok,
    )
    if training.checkpoint_words is not None:
        words = np.fromiter((len(line.split()) for line in read_corpus(train)), dtype=np.int64)
        corpora.train_words = item_words(corpora.train, words, train_sents.lengths)
    return corpora


def item_words(data: Dataset, sentence_words: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Words of the training text in each base item of ``data`` (a sentence's whitespace-separated words).

    One sentence per sequence: the item's sentence's words. Packed: a sentence's words count in the block that
    holds its last token (``</s>``), so a sentence cut by a block boundary counts once, when its end is read;
    sentences ending in the stream's tail that fills no block are never trained on and never count. Words seen
    after a step are thus exact up to the words of one sentence per block read."""
    sentence_words = np.asarray(sentence_words, dtype=np.int64)
    if not data.packed:
        return sentence_words[data.sentence_ids]
    n, width = data.blocks.shape
    block = (np.cumsum(lengths) - 1) // width
    keep = block < n
    return np.bincount(block[keep], weights=sentence_words[keep], minlength=n).astype(np.int64)


def words_by_step(schedule: Schedule, words: np.ndarray, repeats: int, steps: int) -> np.ndarray:
    """Words seen after each number of steps 0..``steps`` (``out[s]``: after the first ``s`` steps), a pure
    function of the schedule: ``words`` per base item, each copy of a repeated item counted."""
    fresh = Schedule(schedule.n_items, schedule.batch_size, schedule.seed, schedule.ordered)  # the loop's cache stays
    per_step = np.zeros(steps, dtype=np.int64)
    bpe = fresh.batches_per_epoch
    for epoch in range(-(-steps // bpe)):
        w = words[fresh.order(epoch) // repeats]
        sums = np.add.reduceat(w, np.arange(0, len(w), fresh.batch_size))
        lo = epoch * bpe
        take = min(bpe, steps - lo)
        per_step[lo:lo + take] = sums[:take]
    return np.concatenate([[0], np.cumsum(per_step)])


class Schedule:
    """Which items form the batch of a global step (epochs of shuffled or ordered items)."""

    def __init__(self, n_items: int, batch_size: int, seed: int, ordered: bool):
        self.n_items = n_items
        self.batch_size = batch_size
        self.seed = seed
        self.ordered = ordered
        self.batches_per_epoch = -(-n_items // batch_size)  # the last batch of an epoch may be short
        self._epoch = -1
        self._order: np.ndarray | None = None

    def order(self, epoch: int) -> np.ndarray:
        if epoch != self._epoch:
            if self.ordered:
                self._order = np.arange(self.n_items)
            else:
                self._order = np.random.default_rng([self.seed, epoch]).permutation(self.n_items)
            self._epoch = epoch
        return self._order

    def batch(self, step: int) -> np.ndarray:
        """Item indices of 0-based step ``step``."""
        epoch, b = divmod(step, self.batches_per_epoch)
        order = self.order(epoch)
        return order[b * self.batch_size : (b + 1) * self.batch_size]

    def epoch_of(self, step: int) -> float:
        return step / self.batches_per_epoch


@functools.lru_cache(maxsize=16)
def _vocab_tables(vocab_size: int, special: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(is_special lookup over token ids, the ordinary token ids in increasing order) of a vocabulary.

    Built once per vocabulary, not per batch: ``np.setdiff1d`` over an 8k vocabulary took ~1.6 ms a
    step on the 2-core machine, more than the rest of a BabyBERTa batch's preparation together.
    """
    is_special = np.zeros(max(vocab_size, max(special, default=-1) + 1), dtype=bool)
    is_special[list(special)] = True
    ordinary = np.flatnonzero(~is_special[:vocab_size])
    is_special.flags.writeable = False
    ordinary.flags.writeable = False
    return is_special, ordinary


def mask_tokens(
    ids: np.ndarray,
    attention: np.ndarray,
    rng: np.random.Generator,
    *,
    mask_id: int,
    special: np.ndarray,
    vocab_size: int,
    mask_prob: float,
    leave_unmasked_prob: float,
    random_token_prob: float,
) -> tuple[np.ndarray, np.ndarray]:
    """RoBERTa-style dynamic masking; returns (inputs, labels with -100 where not predicted).

    Special tokens and padding are never chosen. Every sequence gets at least
    one prediction target so a batch never has an undefined loss. The random
    draws, in order: one uniform per position (chosen?), one integer per row
    that drew no target, one uniform per position (keep / random / mask), one
    integer per randomly replaced token (an index into the ordinary ids).
    """
    is_special, ordinary = _vocab_tables(int(vocab_size), tuple(int(x) for x in np.asarray(special).ravel()))
    if ids.size and int(ids.max()) >= len(is_special):
        raise PovstimError(f"token id {int(ids.max())} is outside the vocabulary of {vocab_size} tokens")
    candidate = (attention == 1) & ~is_special[ids]
    chosen = (rng.random(ids.shape) < mask_prob) & candidate
    for row in np.flatnonzero(~chosen.any(axis=1) & candidate.any(axis=1)):
        cols = np.flatnonzero(candidate[row])
        chosen[row, cols[rng.integers(len(cols))]] = True
    labels = np.where(chosen, ids, -100)
    inputs = ids.copy()
    r = rng.random(ids.shape)
    keep = chosen & (r < leave_unmasked_prob)
    rand = chosen & (r >= leave_unmasked_prob) & (r < leave_unmasked_prob + random_token_prob)
    to_mask = chosen & ~keep & ~rand
    inputs[to_mask] = mask_id
    if rand.any():
        # random replacements come from ordinary tokens only, never special ones
        inputs[rand] = ordinary[rng.integers(len(ordinary), size=int(rand.sum()))]
    return inputs, labels
