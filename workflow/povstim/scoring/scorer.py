"""Exact, batched sentence log-probabilities for Hugging Face language models.

Causal LMs: the sum (or mean) of every token's log-probability *with a BOS token
prepended*, so the first word is scored too. POSH-BENCH scored with minicons'
default, which conditions on the first token without scoring it — and its
question-formation and *wanna* pairs differ exactly in the first word.

Masked LMs: holistic scoring (BabyBERTa §2.5 — the whole sentence, no masks,
each token's log-probability at its own position) or pseudo-log-likelihood
(Salazar et al. 2020 — one copy per token with that token masked). PLL puts the
masked copies of many sentences into fixed-size chunks, so memory is bounded by
``batch_size`` rows however long the sentences are, and it computes vocabulary
logits only at the masked position of each row.

Sentences are deduplicated, sorted by token length and batched so padding is
minimal; scores are fp32 log-softmax, summed in float64.
"""

from __future__ import annotations

import contextlib
import logging
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import families
from ..attention import unmasked_causal
from ..io import PovstimError, progress
from .matmul import mode_for as matmul_mode_for
# batch_ids was defined here first; callers may still import it from this module
from .prepare import Prepared, batch_ids, encode, framing, model_kind, prepare, scored_positions  # noqa: F401

log = logging.getLogger(__name__)

# scoring.mlm: pseudo-log-likelihood, the same with a word's tokens to the right masked too (Kauf & Ivanova 2023,
# scoring/words.py), or holistic
MLM_METHODS = ("pll", "pll_word_l2r", "holistic")

# fp32 vocabulary logits per log-softmax chunk on a CPU (Scorer._softmax_rows): 16 MB
SOFTMAX_CHUNK = 1 << 22

# Model types of other people's models (hub models) whose LM head is exactly
# `head(body(x).last_hidden_state)`, so the head can be applied only where a
# score is needed. povstim's own families declare theirs in povstim.families;
# any other model runs whole.
_HUB_SPLIT_HEADS = {
    "llama": ("model", "lm_head"),
    "mistral": ("model", "lm_head"),
    "qwen2": ("model", "lm_head"),
    "bert": ("bert", "cls"),
}


@dataclass
class Scores:
    logp: np.ndarray  # float64, one per sentence (sum or mean per `reduction`)
    ntok: np.ndarray  # int64, number of scored tokens
    total: np.ndarray | None = None  # float64 sum of the token log-probs (whatever the reduction); None for baselines


def preload_and_freeze() -> None:
    """For a scoring process (the ``povstim score`` and ``score-group`` commands; never the library, whose
    caller's heap is its own): import what loading a model imports, then move every object alive into the
    garbage collector's permanent generation (``gc.freeze``), before any model exists.

    torch, transformers and pandas leave ~400k objects, and every full collection walks them all; a job
    allocates enough (a suite's pairs, its sentences' token lists) to trigger many: a fresh 20k-pair
    score job with a tiny model took 11.8 s without this and 10.6 s with it on a 2-core machine (medians of 8; the
    warm-start server freezes its own before each fork, povstim/warm.py). A collection first, so no garbage
    is frozen: what is frozen is alive, and is freed as before when its last reference goes (only a cycle
    alive now and dropped later stays); the commands run in-process in tests, which this keeps tidy."""
    import gc

    import pandas  # noqa: F401 -- item frames
    import torch  # noqa: F401
    import transformers  # noqa: F401

    families.register_auto_classes()  # the model families' modules, as load() imports them
    gc.collect()
    gc.freeze()


# The files one of transformers' tokenizers is built from (fast: tokenizer.json; slow: BPE vocab + merges, WordPiece
# vocab, sentencepiece model). Without any of them AutoTokenizer builds an empty GPT-2 tokenizer from the config,
# and every sentence has "nothing to score".
TOKENIZER_FILES = ("tokenizer.json", "vocab.json", "vocab.txt", "tokenizer.model", "spiece.model",
                   "sentencepiece.bpe.model")


def check_tokenizer_files(folder: Path) -> None:
    """A model folder without its tokenizer is an error naming the folder and the missing file."""
    if any((folder / f).is_file() for f in TOKENIZER_FILES):
        return
    fix = ("copy the tokenizer the model was trained with into it (results/<exp>/tokenizers/.../tokenizer.json, or "
           "tokenizer.save_pretrained(folder))")
    if (folder / "tokenizer_config.json").is_file():
        raise PovstimError(f"model folder {folder}: tokenizer.json is missing (tokenizer_config.json is there, "
                           f"but it only configures the tokenizer whose vocabulary is tokenizer.json); {fix}")
    raise PovstimError(f"model folder {folder}: the tokenizer is missing (none of {', '.join(TOKENIZER_FILES)}, "
                       f"no tokenizer_config.json); {fix}")


def load(model: str | Path, device: str = "cpu", kind: str | None = None, revision: str | None = None,
         download: bool = False):
    """Load (model, tokenizer, kind) from a save_pretrained folder or a local hub name.

    Never downloads unless ``download`` (external_models.<name>.download): a name that is not a folder must be in
    the local Hugging Face cache. ``revision``: a hub name's revision (branch, tag or commit; BabyLM's chck_1M ...),
    passed to every ``from_pretrained``. A missing folder, a folder without config.json and unreadable (e.g.
    truncated) weights are errors naming the path.
    """
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

    name = str(model)
    path = Path(name).expanduser()
    local = {}
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise PovstimError(f"{path} is not a model folder: it has no config.json (give the folder that "
                               "`povstim train` or save_pretrained wrote)")
        check_tokenizer_files(path)
    elif path.exists():
        raise PovstimError(f"--model {path} is a file; give the model's folder (config.json, model.safetensors, "
                           "tokenizer files)")
    elif name.startswith((".", "/", "~")) or name.count("/") > 1 or name.endswith("/"):
        raise PovstimError(f"model folder {path} does not exist")
    else:
        # a hub-style name: only what is already in the local cache, unless downloading is asked for
        local = {} if download else {"local_files_only": True}
        if revision is not None:
            local["revision"] = revision
    families.register_auto_classes()  # custom families (e.g. attention biases) load by Auto class too
    import transformers

    transformers.utils.logging.disable_progress_bar()  # no "Loading weights" bar per checkpoint in the logs
    try:
        config = AutoConfig.from_pretrained(name, **local)
        tokenizer = AutoTokenizer.from_pretrained(name, **local)
    except (OSError, ValueError) as exc:
        if local.get("local_files_only"):
            at = f" at revision {revision!r}" if revision is not None else ""
            raise PovstimError(f"no model folder {name!r} here, and no model of that name{at} in the local Hugging "
                               "Face cache (povstim downloads a model only for external_models.<name>.download: "
                               "true)") from None
        raise PovstimError(f"cannot load model {name}: {str(exc).splitlines()[0]}") from None
    kind = kind or model_kind(config)
    cls = AutoModelForMaskedLM if kind == "masked" else AutoModelForCausalLM
    try:
        lm = cls.from_pretrained(name, dtype=torch.float32, **local)
    except Exception as exc:  # noqa: BLE001 -- safetensors/torch raise many types for a damaged file
        weights = [p.name for p in sorted(path.glob("*.safetensors")) + sorted(path.glob("*.bin"))] if path.is_dir() else []
        what = f"{path / weights[0]}" if weights else name
        raise PovstimError(f"cannot read the weights {what}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
                           " (the file is damaged or truncated: train or copy the model again)") from None
    lm.to(device).eval()
    return lm, tokenizer, kind


class Scorer:
    """Score sentences with one loaded model.

    ``method`` for masked models: 'pll' or 'holistic'. ``eos`` (causal): append EOS
    and score it too (off by default, as in minicons). ``bos`` (causal): prepend
    the BOS token (EOS when the tokenizer has no BOS, as GPT-2's are one token)
    so the first word is scored; with ``bos=False`` the first token only
    conditions the rest (minicons' default, kept to demonstrate the difference).
    """

    def __init__(self, model, tokenizer, kind: str, device: str = "cpu", bos: bool = True,
                 method: str = "pll", batch_size: int = 64, reduction: str = "sum", eos: bool = False,
                 matmul: str = "fp32"):
        if reduction not in ("sum", "mean"):
            raise PovstimError(f"scoring.reduction must be sum or mean, not {reduction!r}")
        if method not in MLM_METHODS:
            raise PovstimError(f"scoring.mlm must be one of {', '.join(MLM_METHODS)}, not {method!r}")
        self.model, self.tok, self.kind, self.device = model, tokenizer, kind, device
        self.bos, self.method, self.batch_size, self.reduction = bos, method, int(batch_size), reduction
        # scoring.matmul: the linear layers' products as 3xTF32 on a GPU that has TF32 (scoring/matmul.py)
        self.matmul_mode = matmul_mode_for(matmul, device)
        self.timing = {}  # the last score() call's: sentences, encode_s, prepared_s, model_s
        # how sentences become ids (BOS/EOS, the context's length, masked models' special tokens): scoring/prepare.py
        self.framing = framing(tokenizer, model.config, kind, bos, eos)
        self.prefix, self.suffix, self.max_len = self.framing.prefix, self.framing.suffix, self.framing.max_len
        fam = families.for_model_type(model.config.model_type)
        body_head = fam.split_head if fam is not None else _HUB_SPLIT_HEADS.get(model.config.model_type)
        self.body = self.head = None
        if body_head and hasattr(model, body_head[0]) and hasattr(model, body_head[1]):
            self.body, self.head = getattr(model, body_head[0]), getattr(model, body_head[1])
        # right-padded causal rows whose family needs no mask tensor (families.Family.unmasked_padding)
        self.unmasked = kind == "causal" and fam is not None and fam.unmasked_padding

    # ------------------------------------------------------------------ helpers
    def _encode(self, sentences: list[str]) -> list[list[int]]:
        return encode(self.tok, self.framing, sentences)

    def _pad(self, rows: list[list[int]]):
        import torch

        width = max(len(r) for r in rows)
        pad = self.tok.pad_token_id if self.tok.pad_token_id is not None else 0
        ids = torch.full((len(rows), width), pad, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for i, r in enumerate(rows):
            ids[i, : len(r)] = torch.tensor(r, dtype=torch.long)
            mask[i, : len(r)] = 1
        return ids.to(self.device), mask.to(self.device)

    def _token_logprobs(self, ids, mask, rows, cols, targets, position_ids=None, which=None):
        """log p(targets) from the output at (rows, cols): fp32 log-softmax over the vocabulary.

        ``which`` (a packed prefix tree, scoring/tree.py): targets[t] is read from output which[t], so an
        output predicting several targets gets one log-softmax; ``position_ids`` come with the tree's own
        4D mask, which is passed as is (never switched to unmasked causal attention)."""
        import torch

        products = self.matmul_mode if self.matmul_mode is not None else contextlib.nullcontext()
        with products, unmasked_causal(self.model, on=self.unmasked and position_ids is None) as switched:
            mask = None if switched else mask
            extra = {} if position_ids is None else {"position_ids": position_ids}
            if self.body is not None:
                hidden = self.body(input_ids=ids, attention_mask=mask, **extra).last_hidden_state[rows, cols]
                outputs = lambda a, b: self.head(hidden[a:b]).float()  # noqa: E731
            else:
                logits = self.model(input_ids=ids, attention_mask=mask, **extra).logits[rows, cols]
                outputs = lambda a, b: logits[a:b].float()  # noqa: E731
            n = len(rows)
            step = self._softmax_rows(n)
            if step >= n:
                if which is None:
                    return torch.log_softmax(outputs(0, n), dim=-1).gather(1, targets[:, None])[:, 0]
                return torch.log_softmax(outputs(0, n), dim=-1)[which, targets]
            # CPU: the vocabulary logits and their log-softmax a chunk of outputs at a time, so neither is ever
            # the whole [outputs, vocabulary] matrix (805 MB for 6,144 outputs of a 32k vocabulary: fresh pages
            # from the OS at every forward, and out of cache). Each row's log-softmax is computed alike; the head's
            # product may round differently with fewer rows (tests/test_softmax_chunks.py: within 2e-5).
            starts = list(range(0, n, step)) + [n]
            got = torch.empty(len(targets), dtype=torch.float32, device=targets.device)
            if which is None:
                for a, b in zip(starts, starts[1:]):
                    got[a:b] = torch.log_softmax(outputs(a, b), dim=-1).gather(1, targets[a:b, None])[:, 0]
                return got
            # a tree's targets come sorted by their output (scoring/tree.py): each chunk's targets are one run
            if bool((which[1:] < which[:-1]).any()):
                raise ValueError("_token_logprobs: `which` must be sorted (scoring/tree.py sorts it)")
            bounds = torch.searchsorted(which, torch.tensor(starts, dtype=which.dtype)).tolist()
            for (a, b), (ta, tb) in zip(zip(starts, starts[1:]), zip(bounds, bounds[1:])):
                got[ta:tb] = torch.log_softmax(outputs(a, b), dim=-1)[which[ta:tb] - a, targets[ta:tb]]
            return got

    def _softmax_rows(self, n: int) -> int:
        """Outputs per log-softmax chunk: about 4M fp32 logits (16 MB, cache-sized; a score job keeps freed
        blocks for the next chunk, povstim/hostmem.py) on a CPU; all ``n`` at once on a GPU, where one big kernel
        is best."""
        if str(self.device).startswith("cuda") or n == 0:
            return max(n, 1)
        return max(1, SOFTMAX_CHUNK // max(int(self.model.config.vocab_size), 1))

    # ------------------------------------------------------------------ scoring
    def score(self, sentences: list[str], prepared: Prepared | None = None) -> Scores:
        """Scores for ``sentences`` (duplicates are computed once). ``prepared``: the sentences already encoded for
        this scorer's tokenizer and framing (scoring/prepare.py: a job prepares them once, ahead)."""
        t0 = time.perf_counter()
        if prepared is None:
            prepared = prepare(self.tok, self.framing, sentences)
        elif prepared.framing != self.framing:
            raise ValueError(f"Scorer.score: sentences prepared for {prepared.framing}, not {self.framing}")
        t1 = time.perf_counter()
        extra = {"words": self.l2r_words(prepared)} if self.l2r else {}
        total = self.score_ids(prepared.ids, prepared.targets, prepared=prepared, **extra)
        # where a job's time goes (the score log; gpu_bench's score row reads it): encode_s is what this call waited
        # for the encoding (nothing when it was prepared ahead), prepared_s what encoding took wherever it ran; the
        # model's part ends when the sums are on the host, so it holds the device's work too
        self.timing = {"sentences": len(prepared.sentences), "encode_s": t1 - t0, "prepared_s": prepared.seconds,
                       "model_s": time.perf_counter() - t1}
        # The mean is computed from the float64 sum exactly like analysis.sensitivity recomputes it
        # (sum / ntok), so a verdict recomputed from the stored sums is the scorer's verdict.
        ntok = prepared.ntok
        logp = total / ntok if self.reduction == "mean" else total
        order = [prepared.index[s] for s in sentences]
        return Scores(logp=logp[order], ntok=ntok[order], total=total[order])

    @property
    def l2r(self) -> bool:
        """Whether this scorer runs within-word l2r PLL (a masked model, ``scoring.mlm: pll_word_l2r``)."""
        return self.kind == "masked" and self.method == "pll_word_l2r"

    def l2r_words(self, prepared: Prepared) -> list:
        """The tokenizer's word of each position of the prepared sentences (within-word l2r PLL), kept with them."""
        from .words import tokenizer_word_ids

        if "word_ids" not in prepared.derived:
            prepared.derived["word_ids"] = tokenizer_word_ids(self.tok, prepared.framing, prepared.sentences,
                                                              prepared.ids)
        return prepared.derived["word_ids"]

    def targets(self, ids: list[list[int]]) -> list[list[int]]:
        """The positions of each encoded sentence that are scored (all but BOS / special tokens)."""
        return scored_positions(self.framing, ids)

    def score_ids(self, ids: list[list[int]], targets: list[list[int]], prepared: Prepared | None = None,
                  words: list | None = None) -> np.ndarray:
        """Summed log-probabilities (float64) of the ``targets`` positions of each encoded sentence (``prepared``:
        their preparation, where subclasses keep what they derive from it; ``words``: within-word l2r PLL's word
        of each position, words.tokenizer_word_ids).

        Sentences are length-sorted and batched (``batch_size`` sentences, or PLL
        rows, per forward pass) whatever their origin, so callers get batching
        across items for free (multiple-choice options: scoring/tasks.py).
        """
        import torch

        total = np.zeros(len(ids), dtype=np.float64)
        with torch.inference_mode():
            if self.kind == "causal" or self.method == "holistic":
                self._score_whole(ids, targets, total)
            else:
                self._score_pll(ids, targets, total, self._until(targets, words))
        return total

    def _until(self, targets, words):
        """Within-word l2r PLL: per sentence, the end of the positions masked with each scored one (words.l2r_until);
        None for plain PLL."""
        if not self.l2r:
            return None
        if words is None:
            raise PovstimError("scoring.mlm: pll_word_l2r needs the words of whole sentences (minimal pairs, "
                               "multiple_choice.metric: sentence); the option metric takes pll or holistic")
        from .words import l2r_until

        return [l2r_until(w, t) for w, t in zip(words, targets)]

    def _score_whole(self, ids, targets, total):
        """One forward per sentence: causal next-token or holistic (unmasked) scoring."""
        import torch

        order = sorted(range(len(ids)), key=lambda i: (len(ids[i]), i))
        shift = 1 if self.kind == "causal" else 0
        for start in progress(range(0, len(order), self.batch_size), desc="score", unit="batch"):
            batch = order[start : start + self.batch_size]
            tid, mask = self._pad([ids[i] for i in batch])
            rows, cols, tgts, owner = [], [], [], []
            for r, i in enumerate(batch):
                for j in targets[i]:
                    rows.append(r)
                    cols.append(j - shift)
                    tgts.append(ids[i][j])
                    owner.append(i)
            lp = self._token_logprobs(
                tid, mask, torch.tensor(rows, device=self.device), torch.tensor(cols, device=self.device),
                torch.tensor(tgts, device=self.device),
            )
            np.add.at(total, np.array(owner), lp.double().cpu().numpy())

    def _score_pll(self, ids, targets, total, until=None):
        """PLL: every (sentence, position) is one masked row; rows go in bounded chunks. ``until`` (within-word l2r
        PLL): per sentence and scored position, the end of the run masked with it."""
        import torch

        mask_id = self.tok.mask_token_id
        if mask_id is None:
            raise PovstimError("the tokenizer has no mask token, so pseudo-log-likelihood is undefined")
        # Rows sorted by sentence length keep padding small inside each chunk.
        jobs = sorted(((len(ids[i]), i, j) for i in range(len(ids)) for j in targets[i]))
        for start in progress(range(0, len(jobs), self.batch_size), desc="score (PLL)", unit="batch"):
            chunk = jobs[start : start + self.batch_size]
            rows = []
            for _, i, j in chunk:
                row = list(ids[i])
                row[j] = mask_id
                if until is not None:
                    end = until[i][targets[i].index(j)]
                    row[j:end] = [mask_id] * (end - j)
                rows.append(row)
            tid, mask = self._pad(rows)
            lp = self._token_logprobs(
                tid, mask, torch.arange(len(chunk), device=self.device),
                torch.tensor([j for _, _, j in chunk], device=self.device),
                torch.tensor([ids[i][j] for _, i, j in chunk], device=self.device),
            )
            np.add.at(total, np.array([i for _, i, _ in chunk]), lp.double().cpu().numpy())
