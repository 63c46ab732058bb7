"""Word- and region-level scores: which word each scored token belongs to, critical regions, SLOR.

A **word** is a whitespace-delimited span of the sentence (``\\S+``). A token belongs to the word its
characters fall in, read from the fast tokenizer's character offsets (``Encoding.offsets``): byte-level BPE with
``add_prefix_space`` writes a word's leading space into its first token (``Ġdad``: offsets (6, 10) cover the
space at 6), and a token that is only whitespace (a lone ``Ġ`` before an unmerged word, or the second space of
two) belongs to the word that follows it, as its space does. Special tokens (BOS, EOS, a masked model's
``<s>``/``</s>``) belong to no word (-1). A word's log-probability is the sum of its tokens'; a word one of whose
tokens is not scored (the first word of a causal sentence without BOS: its first token is never predicted) has
none (NaN), since a part of it would read as the whole.

A **region** (``region`` in a suite item) is a critical span of each sentence of a pair: character offsets
``[start, end)`` (``unit: chars``, the default) or word indices ``[first, last + 1)`` (``unit: words``); its
tokens are those of the words it covers (words) or whose non-space characters overlap it (chars). Its score is
the sum (or, with ``scoring.reduction: mean``, the mean) of those tokens' log-probabilities.

**SLOR** (Lau et al. 2017): ``(log p_model(s) - log p_unigram(s)) / |s|``, the model's summed log-probability
of the sentence minus its unigram log-probability, per word (``baselines.UnigramFrequency.logprob``).

**Within-word l2r PLL** (Kauf & Ivanova 2023): :func:`l2r_until` gives, for each masked position, where the
run of its word's tokens to its right ends; those are masked too. Its words are the tokenizer's own
(``Encoding.word_ids``: pre-tokenizer words, so ``happy?`` is two), as in Kauf & Ivanova's implementation
(minicons' ``PLL_metric="within_word_l2r"``).
"""

from __future__ import annotations

import json

import numpy as np

from ..benchmarks.tasks import REGION_UNITS, check_region, word_spans  # noqa: F401 (check_region: run.py)
from ..io import PovstimError

METRICS = ("sentence", "region", "slor")


def _encodings(tok, fr, sentences: list[str]):
    """The fast tokenizer's encodings of ``sentences`` as ``prepare.encode`` frames them (offsets, word ids)."""
    backend = getattr(tok, "backend_tokenizer", None)
    if backend is None:
        raise PovstimError("word- and region-level scores need a fast tokenizer (tokenizer.json): it maps tokens "
                           "back to characters")
    return backend.encode_batch(list(sentences), add_special_tokens=fr.kind == "masked")


def _framed(fr, values: list, fill) -> list:
    """Per-position values of an unframed encoding, framed like ``prepare.encode`` (BOS / EOS: ``fill``)."""
    return ([fill] if fr.prefix is not None else []) + list(values) + ([fill] if fr.suffix is not None else [])


def _check_ids(e, fr, ids: list[int], sentence: str) -> None:
    core = ids[(fr.prefix is not None):len(ids) - (fr.suffix is not None)]
    if list(e.ids) != list(core):
        raise PovstimError(f"the tokenizer's offsets do not match the scored ids of {sentence[:80]!r} (a tokenizer "
                           "configured to truncate or pad?)")


def token_words(tok, fr, sentences: list[str], ids: list[list[int]]) -> list[np.ndarray]:
    """For each framed sentence (``ids``, as ``prepare.encode`` made them), the whitespace word of each position
    (index into :func:`word_spans`), -1 for special tokens."""
    out = []
    special = set(fr.special)
    for s, e, x in zip(sentences, _encodings(tok, fr, sentences), ids):
        _check_ids(e, fr, x, s)
        spans = word_spans(s)
        char_word = np.full(len(s) + 1, -1, dtype=np.int64)
        next_word = np.full(len(s) + 1, len(spans) - 1, dtype=np.int64)  # the word at or after a character
        for w, (a, b) in enumerate(spans):
            char_word[a:b] = w
        nxt = len(spans) - 1
        for c in range(len(s) - 1, -1, -1):
            if char_word[c] >= 0:
                nxt = int(char_word[c])
            next_word[c] = nxt
        words = []
        for t, (a, b) in zip(e.ids, e.offsets):
            if t in special and b <= a:
                words.append(-1)
                continue
            inside = [int(char_word[c]) for c in range(a, min(b, len(s))) if char_word[c] >= 0]
            # a token of whitespace only (or trimmed to nothing) belongs to the word after it, like its space
            words.append(inside[0] if inside else int(next_word[min(a, len(s))]))
        out.append(np.asarray(_framed(fr, words, -1), dtype=np.int64))
    return out


def tokenizer_word_ids(tok, fr, sentences: list[str], ids: list[list[int]]) -> list[np.ndarray]:
    """The tokenizer's own word of each framed position (``Encoding.word_ids``; -1 for special tokens): the words
    of within-word l2r PLL."""
    out = []
    for s, e, x in zip(sentences, _encodings(tok, fr, sentences), ids):
        _check_ids(e, fr, x, s)
        out.append(np.asarray(_framed(fr, [-1 if w is None else w for w in e.word_ids], -1), dtype=np.int64))
    return out


def l2r_until(word_ids: np.ndarray, targets: list[int]) -> list[int]:
    """For each scored position j: the end of the run of positions after j in j's word (up to the last scored
    position), which within-word l2r PLL masks with j; ``j + 1`` when there is none."""
    last = targets[-1] if targets else -1
    out = []
    for j in targets:
        k = j + 1
        if word_ids[j] >= 0:
            while k <= last and word_ids[k] == word_ids[j]:
                k += 1
        out.append(k)
    return out


# --------------------------------------------------------------------------- words of a sentence

def word_logprobs(n_words: int, targets: list[int], token_logp: np.ndarray, words: np.ndarray,
                  n_positions: int) -> np.ndarray:
    """Summed log-probability of each whitespace word (float64); NaN for a word with an unscored token."""
    out = np.zeros(n_words, dtype=np.float64)
    scored = np.zeros(n_positions, dtype=bool)
    scored[np.asarray(targets, dtype=np.int64)] = True
    for j, lp in zip(targets, token_logp):
        if words[j] >= 0:
            out[words[j]] += lp
    for j in range(n_positions):
        if words[j] >= 0 and not scored[j]:
            out[words[j]] = np.nan
    return out


def word_columns(sentences: list[str], n: int, per_word: list[np.ndarray]) -> dict:
    """The ``words_*`` and ``word_surprisal_*`` columns (JSON lists; surprisal = -log p in nats, null where a word
    has no log-probability) of ``n`` pairs whose sentences are pair_sentences()' order."""
    words = [json.dumps([s[a:b] for a, b in word_spans(s)], ensure_ascii=False) for s in sentences]
    surprisal = [json.dumps([None if np.isnan(v) else float(-v) for v in lp]) for lp in per_word]
    return {"words_good": words[:n], "words_bad": words[n:],
            "word_surprisal_good": surprisal[:n], "word_surprisal_bad": surprisal[n:]}


# --------------------------------------------------------------------------- regions

def where(item: dict) -> str:
    """An item as an error names it: its suite, its file in the suite folder and its id."""
    return (f"suite {item.get('suite', '?')}, file {item.get('paradigm', '?')}.jsonl, item "
            f"{item.get('item_id', '?')!r}")


def region_positions(item: dict, side: str, targets: list[int], words: np.ndarray, offsets) -> list[int]:
    """The scored positions of ``item``'s region in its ``side`` sentence (indices into ``targets``)."""
    region = item["region"]
    a, b = region[side]
    if region.get("unit", "chars") == "words":
        return [k for k, j in enumerate(targets) if a <= words[j] < b]
    sentence = item[side]
    keep = []
    for k, j in enumerate(targets):
        s, e = offsets[j]
        if e > s and any(not sentence[c].isspace() for c in range(max(s, a), min(e, b))):
            keep.append(k)
    return keep


def token_offsets(tok, fr, sentences: list[str], ids: list[list[int]]) -> list[list[tuple[int, int]]]:
    """Character offsets of each framed position ((0, 0) for BOS / EOS)."""
    out = []
    for s, e, x in zip(sentences, _encodings(tok, fr, sentences), ids):
        _check_ids(e, fr, x, s)
        out.append(_framed(fr, [tuple(o) for o in e.offsets], (0, 0)))
    return out


def word_scores(scorer, sentences: list[str]) -> list[list[tuple[str, float]]]:
    """(word, log-probability) of each whitespace word of each sentence under a loaded scorer (FastScorer or
    TreeScorer; NaN where a word has an unscored token): the library form of ``scoring.words``, for notebooks."""
    from .prepare import prepare

    p = prepare(scorer.tok, scorer.framing, sentences)
    extra = {"words": scorer.l2r_words(p)} if scorer.l2r else {}
    token_lp = scorer.token_logprobs(p.ids, p.targets, **extra)
    where_words = token_words(scorer.tok, p.framing, p.sentences, p.ids)
    out = {}
    for s, t, lp, w, x in zip(p.sentences, p.targets, token_lp, where_words, p.ids):
        spans = word_spans(s)
        out[s] = list(zip((s[a:b] for a, b in spans), word_logprobs(len(spans), t, lp, w, len(x)).tolist()))
    return [out[s] for s in sentences]
