"""The scorer with less Python per token: the same numbers as :class:`Scorer`, faster on a GPU.

:class:`Scorer` builds every batch's (row, column, target) index lists token by
token in Python and copies each batch's log-probabilities back to the host (a
GPU synchronisation per batch, so the CPU never prepares batch k+1 while the
GPU computes batch k). :class:`FastScorer` runs the very same forward passes --
the same length-sorted batches of ``batch_size`` sentences, the same padded
tensors, the same fp32 log-softmax (``Scorer._token_logprobs``) -- but builds
the indices with numpy, sends each batch to the device in one copy, keeps the
log-probabilities on the device and copies them back once per model. The
float64 sums are then taken with one ``np.add.at`` over the concatenated
batches, which adds the same numbers in the same order as Scorer's per-batch
``np.add.at``: the scores are bit-identical (tests/test_gpu_scoring.py).

Pseudo-log-likelihood (PLL) scoring of masked LMs runs Scorer's rows the same way: the same
(length, sentence, position)-sorted masked rows in the same chunks of ``batch_size``, built with numpy,
log-probabilities kept on the device, float64 sums in the same order.
"""

from __future__ import annotations

import numpy as np

from .. import families
from ..io import PovstimError, progress
from .scorer import Scorer




class FastScorer(Scorer):
    def score_ids(self, ids: list[list[int]], targets: list[list[int]], prepared=None, words=None) -> np.ndarray:
        import torch

        total = np.zeros(len(ids), dtype=np.float64)
        if not ids:
            return total
        pll = self.kind == "masked" and self.method != "holistic"
        with torch.inference_mode():
            logprobs, owners = self._pll(ids, targets, self._until(targets, words)) if pll else \
                self._whole(ids, targets, prepared)
        if logprobs:
            # one device -> host copy per model; same float64 additions, same order, as Scorer
            lp = torch.cat(logprobs).double().cpu().numpy()
            np.add.at(total, np.concatenate(owners), lp)
        return total

    def _whole(self, ids, targets, prepared=None):
        cuda = str(self.device).startswith("cuda")
        lengths = np.fromiter((len(x) for x in ids), dtype=np.int64, count=len(ids))
        order = np.lexsort((np.arange(len(ids)), lengths))  # by (length, index), as Scorer sorts
        shift = 1 if self.kind == "causal" else 0
        pad = self.tok.pad_token_id if self.tok.pad_token_id is not None else 0
        logprobs, owners = [], []
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            width = int(lengths[batch].max())
            tid = np.full((len(batch), width), pad, dtype=np.int64)
            for r, i in enumerate(batch):
                tid[r, : lengths[i]] = ids[i]
            mask = (np.arange(width)[None, :] < lengths[batch][:, None]).astype(np.int64)
            cols = [np.asarray(targets[i], dtype=np.int64) for i in batch]
            counts = np.fromiter((len(c) for c in cols), dtype=np.int64, count=len(cols))
            rows = np.repeat(np.arange(len(batch)), counts)
            cols = np.concatenate(cols) if len(cols) else np.zeros(0, dtype=np.int64)
            logprobs.append(self._batch_logprobs(tid, mask, rows, cols - shift, tid[rows, cols], cuda))
            owners.append(np.repeat(batch, counts))
        return logprobs, owners

    def token_logprobs(self, ids: list[list[int]], targets: list[list[int]], words=None) -> list[np.ndarray]:
        """Each scored token's log-probability (float64, one array per sentence, in ``targets``' order): the
        forwards of :meth:`score_ids` without a prefix tree (word- and region-level scores, scoring/words.py).
        Summed in order they are FastScorer's sentence sums bit for bit."""
        import torch

        pll = self.kind == "masked" and self.method != "holistic"
        counts = [len(t) for t in targets]
        if not ids or not sum(counts):
            return [np.zeros(c, dtype=np.float64) for c in counts]
        with torch.inference_mode():
            logprobs, owners = self._pll(ids, targets, self._until(targets, words)) if pll else \
                FastScorer._whole(self, ids, targets)
        lp = torch.cat(logprobs).double().cpu().numpy()
        # within a sentence its tokens come in target order (batches keep each row's targets in order; PLL rows
        # are sorted by position): a stable sort by sentence puts them in place
        lp = lp[np.argsort(np.concatenate(owners), kind="stable")]
        return np.split(lp, np.cumsum(counts)[:-1])

    def _pll(self, ids, targets, until=None):
        """Scorer._score_pll's masked rows and chunks: one row per (sentence, position), sorted by
        (sentence length, sentence, position), ``batch_size`` rows per forward. ``until`` (within-word l2r PLL):
        per sentence and scored position, the end of the positions masked with it."""
        mask_id = self.tok.mask_token_id
        if mask_id is None:
            raise PovstimError("the tokenizer has no mask token, so pseudo-log-likelihood is undefined")
        cuda = str(self.device).startswith("cuda")
        lengths = np.fromiter((len(x) for x in ids), dtype=np.int64, count=len(ids))
        counts = np.fromiter((len(t) for t in targets), dtype=np.int64, count=len(targets))
        sentence = np.repeat(np.arange(len(ids)), counts)
        position = np.concatenate([np.asarray(t, dtype=np.int64) for t in targets]) if counts.sum() else \
            np.zeros(0, dtype=np.int64)
        order = np.lexsort((position, sentence, lengths[sentence]))  # as sorted((len, i, j)) in Scorer
        sentence, position = sentence[order], position[order]
        end = None if until is None else np.concatenate([np.asarray(u, dtype=np.int64) for u in until])[order]
        pad = self.tok.pad_token_id if self.tok.pad_token_id is not None else 0
        logprobs, owners = [], []
        # PLL is the slow one on a CPU (a forward per masked row): its progress bar, as Scorer's
        for start in progress(range(0, len(sentence), self.batch_size), desc="score (PLL)", unit="batch"):
            rows_of = sentence[start : start + self.batch_size]
            cols = position[start : start + self.batch_size]
            width = int(lengths[rows_of].max())
            tid = np.full((len(rows_of), width), pad, dtype=np.int64)
            for r, i in enumerate(rows_of):
                tid[r, : lengths[i]] = ids[i]
            rows = np.arange(len(rows_of))
            tgts = tid[rows, cols]  # the tokens before they are masked
            tid[rows, cols] = mask_id
            if end is not None:  # within-word l2r: the word's tokens right of the masked one too
                ends = end[start : start + self.batch_size]
                ar = np.arange(width)[None, :]
                tid[(ar > cols[:, None]) & (ar < ends[:, None])] = mask_id
            mask = (np.arange(width)[None, :] < lengths[rows_of][:, None]).astype(np.int64)
            logprobs.append(self._batch_logprobs(tid, mask, rows, cols, tgts, cuda))
            owners.append(rows_of)
        return logprobs, owners

    def _batch_logprobs(self, tid, mask, rows, cols, tgts, cuda: bool):
        """_token_logprobs of one batch, sent to the device in one copy (ids, mask and the index vectors
        side by side); the result stays on the device."""
        t_ids, t_mask, t_rows, t_cols, t_tgts = self._send([tid, mask, rows, cols, tgts], cuda)
        cfg = self.model.config
        fam = families.for_model_type(cfg.model_type)
        # a family whose forward passes a prepared 4D mask on as is (families.Family.host_padding_mask);
        # others get the 2D mask
        if fam is not None and fam.host_padding_mask and cfg._attn_implementation == "sdpa":
            # Given a padding mask, transformers (5.24) asks the device whether it has any padding (`.all()`,
            # a host sync per forward) to drop it when there is none. The host knows: no mask when no row is
            # padded, else the [B, 1, T, T] boolean mask transformers would build, which it passes on as is.
            t_mask = None if mask.all() else t_mask.bool()[:, None, None, :].expand(-1, 1, tid.shape[1], -1)
        return self._token_logprobs(t_ids, t_mask, t_rows, t_cols, t_tgts)

    def _send(self, arrays: list, cuda: bool) -> list:
        """int64 numpy arrays on the scorer's device in one copy (pinned, asynchronous on a GPU), as views of
        their own shapes."""
        import torch

        dev = torch.from_numpy(np.concatenate([a.ravel() for a in arrays]))
        if cuda:
            dev = dev.pin_memory().to(self.device, non_blocking=True)
        out, at = [], 0
        for a in arrays:
            out.append(dev[at : at + a.size].view(a.shape))
            at += a.size
        return out
