"""Training and saving a byte-level BPE tokenizer.

One tokenizer per condition x size (POSH §4.1: "for each dataset split, we
train a separate tokenizer"). Options follow BabyBERTa App. A: optional
lowercasing and ``add_prefix_space`` (so a sentence-initial word is split the
same way as the word elsewhere). The special tokens make sentence boundaries
explicit: causal LMs see ``<s> sentence </s>`` and masked LMs get ``<mask>``.
``tokenizer.shared`` (not POSH) trains one per size on the union of the conditions' corpora, or on one named
condition's, so that a few changed sentences cannot reshuffle one condition's vocabulary (:func:`train_files`).
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Iterable, Iterator

from dataclasses import dataclass

from ..io import PovstimError, atomic_path, iter_sentences
from ..settings import as_dict
from ..settings import build as build_settings

# RoBERTa's order, so ids 0..3 mean the same thing as in RoBERTa checkpoints.
SPECIAL_TOKENS = {"bos": "<s>", "pad": "<pad>", "eos": "</s>", "unk": "<unk>", "mask": "<mask>"}


@dataclass(frozen=True)
class TokenizerSettings:
    """The ``tokenizer:`` section (defaults and limits: workflow/schemas/config/tokenizer.schema.yaml)."""

    vocab_size: int
    lowercase: bool
    add_prefix_space: bool
    min_frequency: int
    shared: bool | str  # which corpora a size's tokenizer is trained on: the rule's inputs (plan.tokenizer_corpora)


def tokenizer_settings(given: "dict | TokenizerSettings | None" = None, where: str = "--params",
                       **overrides) -> TokenizerSettings:
    if isinstance(given, TokenizerSettings):
        given = as_dict(given)
    return build_settings(TokenizerSettings, "tokenizer", given, where=where, **overrides)


def build(params: TokenizerSettings):
    """An untrained tokenizers.Tokenizer and its trainer for these settings."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(unk_token=None))
    if params.lowercase:
        tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=params.add_prefix_space)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=params.vocab_size,
        min_frequency=params.min_frequency,
        special_tokens=list(SPECIAL_TOKENS.values()),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    return tok, trainer


def train(sentences: Iterable[str], params: "dict | TokenizerSettings | None" = None, source: str = "<corpus>"):
    """Train on an iterable of sentences; return a tokenizers.Tokenizer."""
    params = tokenizer_settings(params)
    tok, trainer = build(params)
    n = 0

    def counted():
        nonlocal n
        for s in sentences:
            n += 1
            yield s

    # The Rust trainer is deterministic for a fixed input order (merges tie-break
    # on the pair itself), so the same corpus gives a byte-identical tokenizer.json.
    tok.train_from_iterator(counted(), trainer=trainer)
    if n == 0:
        raise PovstimError(f"{source}: no sentences to train a tokenizer on (empty corpus)")
    return tok


def train_file(path: str | os.PathLike, params: "dict | TokenizerSettings | None" = None):
    params = tokenizer_settings(params)  # bad settings fail before the corpus is read
    return train(iter_sentences(path, "training corpus"), params, source=str(path))


def union_sentences(paths) -> Iterator[str]:
    """The multiset union of several corpora (``tokenizer.shared: true``): each sentence as many times as the
    corpus that holds it most often, in the order of first appearance (file by file): BABY-F and BABY, which
    share all but a few sentences, count a shared sentence once, not twice."""
    most: Counter = Counter()
    order: list[str] = []
    for path in paths:
        mine = Counter()
        for line in iter_sentences(path, "training corpus"):
            mine[line] += 1
            if mine[line] > most[line]:
                if not most[line]:
                    order.append(line)
                most[line] = mine[line]
    for line in order:
        for _ in range(most[line]):
            yield line


def train_files(paths, params: "dict | TokenizerSettings | None" = None):
    """One tokenizer on one corpus, or on the union of several (:func:`union_sentences`)."""
    paths = list(paths)
    if len(paths) == 1:
        return train_file(paths[0], params)
    params = tokenizer_settings(params)
    return train(union_sentences(paths), params, source=", ".join(map(str, paths)))


def save(tok, path: str | os.PathLike) -> None:
    with atomic_path(path) as tmp:
        tok.save(str(tmp), pretty=True)


def load(path: str | os.PathLike):
    from tokenizers import Tokenizer

    try:
        return Tokenizer.from_file(str(path))
    except FileNotFoundError:
        raise PovstimError(f"{path}: tokenizer file not found") from None
    except Exception as exc:  # tokenizers raises a bare Exception on bad JSON
        raise PovstimError(f"{path}: not a valid tokenizer.json ({exc})") from None


def hf_tokenizer(tok, frame: str = "none"):
    """Wrap a trained tokenizer for ``save_pretrained``/``AutoTokenizer``.

    ``frame`` is the model family's ``tokenizer_frame`` (povstim.families):
    ``bos_eos`` makes the post-processor add ``<s> … </s>`` like RoBERTa does
    (masked families); ``none`` adds nothing, so a scorer of a causal model
    prepends BOS itself (the GPT-2 convention) and counts every word's
    log-probability.
    """
    from tokenizers import Tokenizer, processors
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer.from_str(tok.to_str())  # don't mutate the caller's object
    if frame == "bos_eos":
        bos, eos = SPECIAL_TOKENS["bos"], SPECIAL_TOKENS["eos"]
        tok.post_processor = processors.TemplateProcessing(
            single=f"{bos} $A {eos}",
            pair=f"{bos} $A {eos} {eos} $B {eos}",
            special_tokens=[(bos, tok.token_to_id(bos)), (eos, tok.token_to_id(eos))],
        )
        # RoBERTa's declarations: the frame's <s> and </s> are also the CLS and SEP tokens. Tools that score
        # masked models read these two names, not bos/eos: minicons' MaskedLMScorer leaves out exactly the
        # pad, cls and sep ids, so without them it scored <s> and </s> as words (whole-sentence PLL 12-15
        # nats off povstim's); the BabyLM pipeline's MLM backend pads with cls_token_id.
        framed = {"cls_token": bos, "sep_token": eos}
    else:
        tok.post_processor = None
        framed = {}
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token=SPECIAL_TOKENS["bos"],
        eos_token=SPECIAL_TOKENS["eos"],
        pad_token=SPECIAL_TOKENS["pad"],
        unk_token=SPECIAL_TOKENS["unk"],
        mask_token=SPECIAL_TOKENS["mask"],
        padding_side="right",
        **framed,
    )


def special_ids(tok) -> dict[str, int]:
    ids = {}
    for name, text in SPECIAL_TOKENS.items():
        i = tok.token_to_id(text)
        if i is None:
            raise PovstimError(f"tokenizer lacks the special token {text} ({name}); retrain it with povstim tokenize")
        ids[name] = i
    return ids
