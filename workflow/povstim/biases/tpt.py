"""Tree-Planted Transformer supervision (Yoshida et al. 2024; POSH §7).

TPT trains a unidirectional LM whose chosen attention heads are pulled, by an
extra loss, towards a distribution given by the dependency tree of the sentence.
Following the authors' implementation (``osekilab/TPT``):

* nodes are ``<s>``, the words ``w1 … wn`` and ``</s>``; ``<s>`` and ``</s>`` hang off
  the root word, and the distance of two nodes is the number of edges between them;
* the query that predicts word ``k`` (``k = 1 … n+1``, ``</s>`` included) should attend
  to the earlier nodes ``l < k`` with weights ``exp(-d(k, l))`` (the ``exponential``
  transform; ``reciprocal`` ``1/d`` is the other option), normalised over ``l < k``;
* a causal LM's query at token ``i`` predicts token ``i+1``, so the model's token-level
  attention is summed into words: rows by the word of the *predicted* token ``i+1``,
  columns by the word of the attended token; entries ``l < k`` are kept and each row
  is renormalised;
* the loss is ``KL(target || model)`` per row, averaged over rows and supervised heads
  (the reference's ``attn_loss_reduction: none``), added to the LM loss with a weight
  (paper and reference: one head of the last layer, weight 0.5).

Subwords are mapped to words through character offsets: each BPE token belongs to the
word that contains its first non-space character (a lone ``Ġ`` space token belongs to
the word it precedes). Words come from the CoNLL-U parse of the same line, found in
the line's text in order. A sentence whose parse is not one tree, or whose words cannot
be found in its text, is still trained on by the LM loss but gets no tree supervision
(the reference drops such sentences from training altogether; here every condition
sees the same text).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

import numpy as np

from ..io import PovstimError

log = logging.getLogger("povstim.train")
TRANSFORMS = ("exponential", "reciprocal")
PAD = 255  # distance padding in the uint8 store (real distances are capped below it)


class NotATree(ValueError):
    """The heads of a parse do not form a single tree."""


# --------------------------------------------------------------------------- the target

def tree_distances(heads: list[int]) -> np.ndarray:
    """Edge counts between the nodes ``[<s>, w1 … wn, </s>]`` of a dependency tree.

    ``heads`` are CoNLL-U heads of the n words (1-based, 0 = root). ``<s>`` and
    ``</s>`` are attached to the root word, one edge each.
    """
    n = len(heads)
    if n == 0:
        raise NotATree("no words")
    parent = [0] * (n + 2)  # node ids: 0 = <s>, 1..n words, n+1 = </s>; parent -1 = the root word's
    roots = [i + 1 for i, h in enumerate(heads) if h == 0]
    if len(roots) != 1:
        raise NotATree(f"{len(roots)} roots")
    root = roots[0]
    for i, h in enumerate(heads, 1):
        if not 0 <= h <= n or h == i:
            raise NotATree(f"bad head {h} of word {i}")
        parent[i] = h if h else -1
    parent[0] = parent[n + 1] = root
    # ancestors (self first) of every node; a cycle never reaches the root
    paths = []
    for node in range(n + 2):
        path, cur = [], node
        while cur != -1:
            path.append(cur)
            if len(path) > n + 2:
                raise NotATree("cycle")
            cur = parent[cur]
        paths.append(path)
    size = n + 2
    dist = np.zeros((size, size), dtype=np.int64)
    depth_of = [{node: d for d, node in enumerate(p)} for p in paths]
    for a in range(size):
        da = depth_of[a]
        for b in range(a + 1, size):
            # the lowest common ancestor is the first ancestor of b that is also an ancestor of a
            for db, node in enumerate(paths[b]):
                if node in da:
                    dist[a, b] = dist[b, a] = da[node] + db
                    break
    return dist


def transform(dist: np.ndarray, kind: str = "exponential") -> np.ndarray:
    if kind == "exponential":
        return np.exp(-dist.astype(np.float64))
    if kind == "reciprocal":
        return 1.0 / dist.astype(np.float64)
    raise PovstimError(f"unknown TPT distance transform {kind!r} (choose from {', '.join(TRANSFORMS)})")


def target_matrix(dist: np.ndarray, kind: str = "exponential") -> np.ndarray:
    """Row k (the query predicting node k) over earlier nodes l < k; row 0 (nothing predicts <s>) is 0.
    ``dist``: one sentence's [W,W] distances or a batch's [B,W,W]; PAD cells get no weight."""
    size = dist.shape[-1]
    lower = np.tril(np.ones((size, size), dtype=bool), -1) & (dist != PAD)
    with np.errstate(divide="ignore"):
        w = np.where(lower, transform(np.where(lower, dist, 1), kind), 0.0)
    sums = w.sum(axis=-1, keepdims=True)
    sums[sums == 0] = 1
    return w / sums


# --------------------------------------------------------------------------- subwords -> words

def word_spans(text: str, forms: list[str]) -> list[tuple[int, int]] | None:
    """Character spans of the parse's words in ``text`` (in order), or None when they do not match."""
    spans, pos = [], 0
    for form in forms:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if not form or not text.startswith(form, pos):
            return None
        spans.append((pos, pos + len(form)))
        pos += len(form)
    if text[pos:].strip():
        return None
    return spans


def token_words(text: str, offsets: list[tuple[int, int]], spans: list[tuple[int, int]]) -> np.ndarray:
    """Word number (1-based) of each token: the word holding its first non-space character.

    A token made only of whitespace (byte-level BPE's lone ``Ġ``) belongs to the next word.
    Tokens outside every word get -1.
    """
    char_word = np.full(len(text) + 1, -1, dtype=np.int64)
    for w, (a, b) in enumerate(spans, 1):
        char_word[a:b] = w
    nxt = np.full(len(text) + 1, -1, dtype=np.int64)  # word of the first word character at or after each position
    cur = -1
    for pos in range(len(text) - 1, -1, -1):
        if char_word[pos] >= 0:
            cur = char_word[pos]
        nxt[pos] = cur
    out = np.full(len(offsets), -1, dtype=np.int64)
    for t, (a, b) in enumerate(offsets):
        inside = char_word[a:b]
        hit = inside[inside >= 0]
        if len(hit):
            out[t] = hit[0]
        elif a < len(text):
            out[t] = nxt[a]
    return out


# --------------------------------------------------------------------------- the training data

@dataclass
class TPTData:
    """Per training sentence: the word of every (framed) token and the node distance matrix.

    ``token_word`` is aligned with the trainer's flat token array (``<s>`` = node 0,
    words 1..n, ``</s>`` = n+1); ``dist`` holds every sentence's ``(n+2)^2`` distances
    flat, from ``dist_start``; ``n_nodes`` is 0 for sentences without supervision.
    """

    token_word: np.ndarray
    dist: np.ndarray
    dist_start: np.ndarray
    n_nodes: np.ndarray
    kind: str

    @property
    def n_supervised(self) -> int:
        return int((self.n_nodes > 0).sum())

    def collate(self, starts: np.ndarray, lengths: np.ndarray, idx: np.ndarray, sentence_ids: np.ndarray | None = None):
        """(qword [B,T], kword [B,T], target [B,W,W]) numpy arrays for dataset items ``idx``.

        ``starts``/``lengths`` are the trainer's dataset arrays (absolute token offsets, lengths), so T
        matches its batch; ``sentence_ids`` maps a dataset item to its corpus line (the dataset leaves
        out sentences longer than the context), which indexes the parses.
        """
        idx = np.asarray(idx)
        lens = lengths[idx]
        line = (lambda i: int(sentence_ids[i])) if sentence_ids is not None else (lambda i: int(i))
        width = int(lens.max())
        qword = np.full((len(idx), width), -1, dtype=np.int64)
        kword = np.full((len(idx), width), -1, dtype=np.int64)
        n_words = np.zeros(len(idx), dtype=np.int64)
        for row, (i, n) in enumerate(zip(idx, lens)):
            if self.n_nodes[line(i)] == 0 or n < 2:
                continue
            tw = self.token_word[starts[i] : starts[i] + n]
            qword[row, : n - 1] = tw[1:n]  # the query at token i predicts token i+1
            kword[row, : n - 1] = tw[: n - 1]  # the last token is never attended by a query that predicts
            n_words[row] = int(tw.max()) + 1
        w = max(1, int(n_words.max()))
        dist = np.full((len(idx), w, w), PAD, dtype=np.int64)
        for row, i in enumerate(idx):
            k = n_words[row]
            if k:
                j = line(i)
                nn = int(self.n_nodes[j])
                full = self.dist[self.dist_start[j] : self.dist_start[j] + nn * nn].reshape(nn, nn)
                dist[row, :k, :k] = full[:k, :k]
        return qword, kword, target_matrix(dist, self.kind).astype(np.float32)


def build(tok, sentences: list[str], parses, token_lengths: np.ndarray, kind: str, source: str) -> TPTData:
    """Align the CoNLL-U parses (``# sent_id`` = line index) with the tokenised training sentences.

    ``token_lengths`` are the trainer's framed lengths (``<s> … </s>``), checked against
    this tokenisation so the two can never drift apart.
    """
    by_id = {}
    for s in parses:
        try:
            by_id[int(s.sent_id)] = s
        except (TypeError, ValueError):
            raise PovstimError(f"{source}: a sentence without an integer '# sent_id' (the corpus line index)") from None
    missing = [i for i in range(len(sentences)) if i not in by_id]
    if missing:
        raise PovstimError(
            f"{source}: no parse for line {missing[0] + 1} of the training corpus ({len(missing)} of "
            f"{len(sentences)} lines unparsed); TPT needs every training sentence parsed (parse with the "
            "prefilter off: povstim parse --no-prefilter)"
        )
    token_word, dists, dist_start, n_nodes = [], [], [], []
    pos = 0
    failed = {"not_a_tree": 0, "unaligned": 0}
    encodings = tok.encode_batch(sentences, add_special_tokens=False)
    for i, (text, enc) in enumerate(zip(sentences, encodings)):
        n_tok = len(enc.ids) + 2
        if n_tok != int(token_lengths[i]):
            raise PovstimError(f"{source}: line {i + 1}: tokenisation differs from the trainer's ({n_tok} vs "
                               f"{int(token_lengths[i])} tokens)")
        sent = by_id[i]
        tw = np.full(n_tok, -1, dtype=np.int16)
        spans = word_spans(text, [t.form for t in sent.tokens])
        nn = 0
        if spans is None:
            failed["unaligned"] += 1
        else:
            try:
                dist = tree_distances([t.head for t in sent.tokens])
            except NotATree:
                failed["not_a_tree"] += 1
            else:
                nw = len(spans)
                tw[0], tw[-1] = 0, nw + 1
                tw[1:-1] = token_words(text, enc.offsets, spans)
                nn = nw + 2
                dist_start.append(pos)
                dists.append(np.minimum(dist, PAD - 1).astype(np.uint8).ravel())
                pos += nn * nn
        if nn == 0:
            dist_start.append(pos)
        token_word.append(tw)
        n_nodes.append(nn)
    data = TPTData(
        token_word=np.concatenate(token_word) if token_word else np.empty(0, np.int16),
        dist=np.concatenate(dists) if dists else np.empty(0, np.uint8),
        dist_start=np.asarray(dist_start, dtype=np.int64),
        n_nodes=np.asarray(n_nodes, dtype=np.int64),
        kind=kind,
    )
    n_bad = sum(failed.values())
    if n_bad:
        log.warning("%s: %d of %d sentences get no tree supervision (%d not a single tree, %d words not found "
                    "in the text); the LM loss still trains on them", source, n_bad, len(sentences),
                    failed["not_a_tree"], failed["unaligned"])
    if data.n_supervised == 0:
        raise PovstimError(f"{source}: no sentence could be aligned with its parse; is this the parse of this corpus?")
    return data


# --------------------------------------------------------------------------- the loss

def supervised_attention(attentions, layers, heads):
    """Stack the supervised (layer, head) attention maps: [B, S, T, T] in float32."""
    import torch

    n = len(attentions)
    maps = [attentions[layer % n][:, list(heads)] for layer in layers]
    return torch.cat(maps, dim=1).float()


def tpt_loss(attn, qword, kword, target, eps: float = 1e-30):
    """(mean KL(target || word-level attention) over rows and supervised heads, number of rows × heads).

    attn [B, S, T, T] attention probabilities; qword/kword [B, T] word of the predicted /
    attended token (-1 = none); target [B, W, W] rows normalised over l < k.
    """
    import torch

    b, s, t, _ = attn.shape
    w = target.shape[-1]
    words = torch.arange(w, device=attn.device)
    q = (qword[:, None, :] == words[None, :, None]).to(attn.dtype)  # [B, W, T]
    k = (kword[:, None, :] == words[None, :, None]).to(attn.dtype)
    comp = torch.einsum("bkt,bstu,blu->bskl", q, attn, k)
    lower = torch.ones(w, w, dtype=torch.bool, device=attn.device).tril(-1)
    comp = comp * lower
    sums = comp.sum(-1, keepdim=True)
    comp = comp / torch.where(sums == 0, torch.ones_like(sums), sums)
    rows = q.bool().any(-1) & (target.sum(-1) > 0)  # [B, W]
    keep = (target > 0) & rows[..., None]  # [B, W, W]
    safe_t = torch.where(keep, target, torch.ones_like(target))
    kl = torch.where(keep[:, None], safe_t[:, None] * (safe_t.log()[:, None] - comp.clamp_min(eps).log()),
                     torch.zeros((), dtype=comp.dtype, device=comp.device))
    n = int(rows.sum()) * s
    return kl.sum() / max(n, 1), n


def check_spec(spec: dict, n_layer: int, n_head: int, where: str = "bias.tpt") -> dict:
    layers, heads = list(spec.get("layers") or []), list(spec.get("heads") or [])
    if not layers or not heads:
        raise PovstimError(f"{where}: give the supervised layers and heads")
    for layer in layers:
        if not -n_layer <= int(layer) < n_layer:
            raise PovstimError(f"{where}.layers: layer {layer} does not exist ({n_layer} layers)")
    for head in heads:
        if not 0 <= int(head) < n_head:
            raise PovstimError(f"{where}.heads: head {head} does not exist ({n_head} heads)")
    weight = float(spec.get("weight", 0))
    if not weight > 0 or math.isinf(weight):
        raise PovstimError(f"{where}.weight must be > 0, got {spec.get('weight')!r}")
    distance = spec.get("distance")  # the schema fills it (archs.<name>.bias.tpt.distance)
    if distance not in TRANSFORMS:
        raise PovstimError(f"{where}.distance must be one of {', '.join(TRANSFORMS)}, got {distance!r}")
    return {"layers": [int(x) for x in layers], "heads": [int(x) for x in heads], "weight": weight,
            "distance": distance}
