"""Causal scoring that computes every shared prefix once (``scoring.share_prefixes``).

A causal LM's output at position j depends only on tokens 0..j. Minimal pairs share long prefixes
("<s> Who should Derek hug ..." twice), and so do a suite's items with each other: in the 20k
generated POSH pairs of ``scripts/gpu_bench.py`` the 36,368 distinct sentences are 863,529 tokens,
of which a prefix tree (trie) of the tokens that predict something holds 387,696. This scorer
feeds each trie node once:

* sentences are sorted by the token ids they feed, so sentences sharing a prefix are neighbours and
  the longest prefix a sentence shares with any earlier one is the one it shares with its predecessor;
* nodes are packed, in that order (a preorder of the trie), into rows of at most ``ROW_NODES``
  nodes; a sentence whose new nodes would overflow its row starts a new one with its whole path;
* a node attends to itself and its ancestors only (a [rows, 1, W, W] mask: in preorder, node k is
  an ancestor-or-self of node i exactly when k <= i < end[k], end[k] being one past the last node of
  k's subtree) and takes its depth as its position id;
* a sentence's last token predicts nothing, so it is never fed (with ``scoring.eos``, the appended
  EOS is that token; in general a sentence is fed up to the position before its last target).

The numbers are the same function of the same weights as :class:`FastScorer`'s; only the shapes of
the matrix products differ, so fp32 log-probabilities agree to rounding (the tests bound sentence
sums by 1e-5 against the whole-sentence Scorer and by 1e-4 against minicons). Same inputs give the same bytes
on the same machine: the packing depends on the suite alone. Sums are float64, each sentence's
tokens added in position order, as FastScorer adds them.

Only models whose forward takes explicit position ids and a custom 4D attention mask can run this
(``Family.tree_attention`` for povstim's families; ``TREE_HUB_MODELS`` for others); any other
model, masked models and ``share_prefixes: false`` take FastScorer's path.
"""

from __future__ import annotations

import itertools

import numpy as np

from .. import families
from .fast import FastScorer

# Other people's causal models whose forward honours position_ids and a custom 4D mask (rotary positions
# computed from the ids; tests/test_tree_scoring.py); povstim's families, GPT-2 among them, declare it themselves.
TREE_HUB_MODELS = frozenset({"llama", "mistral", "qwen2"})
# Nodes per packed row. Wider rows cut fewer shared prefixes at row ends (the bench suite: 49% of its
# tokens fed at 128, 47% at 256, 46% at 512) but attention grows with the square of the width.
ROW_NODES = 256


def supports_tree(model) -> bool:
    """Whether ``model``'s forward takes position ids and a custom 4D attention mask (see above)."""
    cfg = model.config
    # flash-attention kernels take no arbitrary mask; eager and SDPA add a float mask to the scores
    return may_use_tree(cfg) and getattr(cfg, "_attn_implementation", "eager") in ("sdpa", "eager")


class Packing:
    """The prefix-tree packing of encoded sentences (see the module docstring).

    ``node`` [n, L]: the packed node (global index) feeding position d of sentence i, for d < fed[i];
    nodes of row r are ``row_start[r]:row_start[r + 1]``, in preorder; ``token``, ``depth`` and
    ``end`` (one past the node's subtree) are per node.
    """

    def __init__(self, ids: list[list[int]], fed: np.ndarray, width: int):
        n = len(ids)
        longest = int(fed.max()) if n else 0
        self.width = max(width, longest)
        # the fed prefixes, one row each, padded with -1 (which sorts before every token id)
        mat = np.full((n, max(longest, 1)), -1, dtype=np.int64)
        mat[np.arange(mat.shape[1])[None, :] < fed[:, None]] = np.fromiter(
            itertools.chain.from_iterable(x[:k] for x, k in zip(ids, fed.tolist())), dtype=np.int64,
            count=int(fed.sum()))
        # sorted lexicographically (a stable sort: ties keep their input order), the longest prefix a sentence
        # shares with any earlier one is the one it shares with its predecessor
        self.order = np.lexsort(mat.T[::-1])
        mat = mat[self.order]
        f = fed[self.order]
        # shared fed prefix with the previous sentence (bounded by both fed lengths)
        same = np.zeros_like(mat, dtype=bool)
        same[1:] = mat[1:] == mat[:-1]
        lcp = np.where(same.all(axis=1), mat.shape[1], np.argmin(same, axis=1))
        lcp = np.minimum(lcp, np.minimum(f, np.concatenate([[0], f[:-1]])))
        # greedy rows: a sentence opens a new row when its new nodes do not fit
        # (plain Python ints: numpy scalar indexing would triple this loop's time)
        row_of, row, used = [], 0, 0
        for new, whole in zip((f - lcp).tolist(), f.tolist()):
            if row_of and used + new > self.width:
                row, used, new = row + 1, 0, whole  # a new row feeds the sentence's whole path
            row_of.append(row)
            used += new
        row_of = np.asarray(row_of, dtype=np.int64)
        first = np.ones(n, dtype=bool)
        first[1:] = row_of[1:] != row_of[:-1]
        lcp[first] = 0
        # node ids: sentence r creates depths lcp[r]..f[r]-1, numbered consecutively in sentence order
        new = f - lcp
        base = np.concatenate([[0], np.cumsum(new)[:-1]])
        depth = np.arange(mat.shape[1])[None, :]
        creates = (depth >= lcp[:, None]) & (depth < f[:, None])
        # who created the node sentence r uses at depth d: the last sentence up to r that created depth d
        # (sentences between inherit it: each shares more than d tokens with its predecessor)
        creator = np.maximum.accumulate(np.where(creates, np.arange(n)[:, None], -1), axis=0)
        node = np.where(depth < f[:, None], base[np.maximum(creator, 0)] + depth - lcp[np.maximum(creator, 0)], -1)
        total = int(new.sum())
        self.token = np.zeros(total, dtype=np.int64)
        self.depth = np.zeros(total, dtype=np.int64)
        made = creates.nonzero()
        self.token[node[made]] = mat[made]
        self.depth[node[made]] = made[1]
        # a node's subtree: every node on the paths through it; the deepest node of a path is its newest
        self.end = np.arange(total) + 1
        used_nodes = depth < f[:, None]
        deepest = node[np.arange(n), np.maximum(f - 1, 0)]
        np.maximum.at(self.end, node[used_nodes], np.broadcast_to(deepest[:, None] + 1, node.shape)[used_nodes])
        self.node = np.full((n, mat.shape[1]), -1, dtype=np.int64)
        self.node[self.order] = node
        self.row = np.zeros(n, dtype=np.int64)
        self.row[self.order] = row_of
        # row r's nodes: from the first node its first sentence created to the next row's
        self.row_start = np.append(base[first], total).astype(np.int64)


class TreePlan:
    """Everything the tree scorer feeds the model, built from encoded sentences alone (no weights): the packing,
    then per forward its ``[rows, width]`` token ids, position ids and subtree ends, the flat slot of each node
    whose log-softmax is needed, and per target that node (``which``), its token and its sentence (``owner``).
    A job builds it once per tokenizer, ahead of the model (scoring/prepare.py), and every checkpoint reuses it."""

    def __init__(self, ids: list[list[int]], targets: list[list[int]], batch_size: int):
        # every target position and token, flat (target j of a sentence is predicted from position j - 1)
        n_targets = np.fromiter((len(t) for t in targets), dtype=np.int64, count=len(targets))
        cols = np.fromiter(itertools.chain.from_iterable(targets), dtype=np.int64, count=int(n_targets.sum()))
        lengths = np.fromiter((len(x) for x in ids), dtype=np.int64, count=len(ids))
        flat_ids = np.fromiter(itertools.chain.from_iterable(ids), dtype=np.int64, count=int(lengths.sum()))
        self.batches: list[tuple] = []
        if not cols.size:
            return
        owner = np.repeat(np.arange(len(ids)), n_targets)
        tokens = flat_ids[np.repeat(np.cumsum(lengths) - lengths, n_targets) + cols]
        # a sentence is fed up to the position that predicts its last target (none: nothing fed)
        fed = np.zeros(len(ids), dtype=np.int64)
        some = n_targets > 0
        fed[some] = np.maximum.reduceat(cols, (np.cumsum(n_targets) - n_targets)[some])
        pack = Packing(ids, fed, ROW_NODES)
        nodes = pack.node[owner, cols - 1]
        # rows per forward: about the tokens FastScorer's batches of batch_size sentences hold
        per = max(1, int(batch_size * lengths.mean()) // pack.width)
        rows_total = len(pack.row_start) - 1
        # targets grouped by their sentence's row, in sentence-then-position order inside a group (the order
        # FastScorer adds a sentence's log-probabilities in)
        by_row = np.argsort(pack.row[owner], kind="stable")
        row_bounds = np.searchsorted(pack.row[owner][by_row], np.arange(rows_total + 1))
        for first in range(0, rows_total, per):
            last = min(first + per, rows_total)
            starts = pack.row_start[first : last + 1]
            lo, hi = starts[0], starts[-1]
            sizes = np.diff(starts)
            b, width = last - first, int(sizes.max())
            # the flat [b * width] slot of each node of these rows
            slot = np.repeat(np.arange(b) * width - (starts[:-1] - lo), sizes) + np.arange(hi - lo)
            tid = np.zeros(b * width, dtype=np.int64)
            pos = np.zeros(b * width, dtype=np.int64)
            end = np.arange(b * width, dtype=np.int64) % width + 1  # padding: a node of its own
            tid[slot] = pack.token[lo:hi]
            pos[slot] = pack.depth[lo:hi]
            end[slot] = pack.end[lo:hi] - np.repeat(starts[:-1], sizes)
            mine = by_row[row_bounds[first] : row_bounds[last]]
            # one log-softmax per node however many children (targets) it predicts
            uniq, which = np.unique(nodes[mine], return_inverse=True)
            # targets sorted by their node, which Scorer._token_logprobs's chunks need; a sentence's own targets
            # keep their position order (a path's nodes increase in preorder), so its sum adds them as before
            by_node = np.argsort(which, kind="stable")
            mine, which = mine[by_node], which[by_node]
            self.batches.append((tid.reshape(b, width), pos.reshape(b, width), end.reshape(b, width),
                                 slot[uniq - lo], which, tokens[mine], owner[mine]))


def plan_for(prepared, batch_size: int) -> TreePlan:
    """The tree plan of prepared sentences (scoring/prepare.py) for ``batch_size``, built once and kept with them."""
    key = ("tree", int(batch_size))
    if key not in prepared.derived:
        prepared.derived[key] = TreePlan(prepared.ids, prepared.targets, batch_size)
    return prepared.derived[key]


def may_use_tree(config) -> bool:
    """Whether a model of this config may be scored through the tree (its family or type allows it; whether its
    loaded attention does is only known with the model: supports_tree)."""
    fam = families.for_model_type(config.model_type)
    return bool(fam.tree_attention if fam is not None else config.model_type in TREE_HUB_MODELS)


class TreeScorer(FastScorer):
    """FastScorer, with causal sentences scored through a packed prefix tree where the model allows it."""

    def __init__(self, *args, share_prefixes: bool = True, **kwargs):
        super().__init__(*args, **kwargs)
        self.tree = share_prefixes and self.kind == "causal" and supports_tree(self.model)

    def _whole(self, ids, targets, prepared=None):
        if not self.tree:
            return super()._whole(ids, targets, prepared)
        cuda = str(self.device).startswith("cuda")
        plan = plan_for(prepared, self.batch_size) if prepared is not None else TreePlan(ids, targets, self.batch_size)
        logprobs, owners = [], []
        for tid, pos, end, slots, which, tgts, owner in plan.batches:
            logprobs.append(self._tree_logprobs(tid, pos, end, slots, which, tgts, cuda))
            owners.append(owner)
        return logprobs, owners

    def _tree_logprobs(self, tid, pos, end, slots, which, tgts, cuda):
        """log p(tgts[t]) from node ``slots[which[t]]`` (flat slots of the [rows, width] batch), one log-softmax
        per node (Scorer._token_logprobs)."""
        import torch

        width = tid.shape[1]
        t_ids, t_pos, t_end, t_rows, t_cols, t_which, t_tgts = self._send(
            [tid, pos, end, slots // width, slots % width, which, tgts], cuda)
        ar = torch.arange(width, device=t_ids.device)
        # node k is visible from node i when it is i's ancestor or i itself: k <= i < end[k] (preorder)
        visible = (ar[None, None, :] <= ar[None, :, None]) & (t_end[:, None, :] > ar[None, :, None])
        dtype = next(self.model.parameters()).dtype
        mask = torch.zeros(visible.shape, dtype=dtype, device=t_ids.device)
        mask.masked_fill_(~visible, torch.finfo(dtype).min)
        return self._token_logprobs(t_ids, mask[:, None], t_rows, t_cols, t_tgts, position_ids=t_pos, which=t_which)
