"""Scoring the BaBIEs task kinds: multiple-choice comprehension and sentence completion.

Multiple choice (BaBIEs §3, lexical / sentence / idiom comprehension). Each
option is scored as the string ``stimulus + " " + connective + " " + option``
("il cane non è seguito dal gatto cioè il gatto segue il cane"); the model
picks the option with the **lowest perplexity**, and a tie for the lowest is
wrong (like a tie in a minimal pair). Perplexity, ``scoring.multiple_choice.metric``:

``sentence`` (default; BaBIEs: "the perplexity obtained for each sentence")
    PPL = exp(-(1/N) sum_i log p(t_i | t_<i)) over **every** token of the
    whole string, scored exactly as minimal-pair sentences are (causal: BOS
    prepended so the first token is scored too, as Minerva's tokenizer adds
    ``<s>``; masked: pseudo-perplexity from PLL or holistic scores, Salazar
    et al. 2020). This is minicons' ``sequence_score`` with a per-token mean,
    exponentiated.
``option``
    the same mean over the **option's tokens only**, given the stimulus and
    the connective (a named improvement: the shared prefix no longer dilutes the
    difference between options of unequal length).

The options of *all* items go to the scorer in one call, so one forward pass
scores options of many items (length-sorted batches of ``scoring.batch_size``).

Completion (BaBIEs §3-4). The model continues ``prompt`` with beam search —
paper settings: 3 beams, sampling among the top-k 50 tokens with nucleus 0.95,
up to 3 new tokens (``scoring.completion``). Causal models use transformers'
``generate``; masked models generate left to right by filling a ``<mask>``
appended to the prompt (``prompt + generated + <mask> + </s>``, one token per
step) with the same beam search, re-implemented here from transformers'
algorithm and tested against it. Each item is generated under its own seed
(from ``scoring.completion.seed`` and the item's suite/paradigm/id), so a
generation does not depend on which other items are in the suite. The
generations are saved in the score file. An item is correct when the best
(or, with ``judge: any``, any) returned generation matches an accepted answer:

``exact``      the generation, stripped, equals an answer;
``normalised`` equal after Unicode NFC, case folding, typographic apostrophes -> ',
               punctuation dropped and spaces squashed;
``contains``   (default; BaBIEs: "the correct completion appears in the generated
               sequence") the normalised answer occurs in the normalised generation
               as whole words.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
import zlib
from dataclasses import dataclass

import numpy as np

from ..benchmarks.tasks import task_of
from ..io import PovstimError
from ..settings import section
from .items import COLUMNS, identity_columns, item_frame

METRICS = ("sentence", "option")
MATCHES = ("exact", "normalised", "contains")
# Columns the task kinds add to the item-score table (scoring/items.py COLUMNS come first).
TASK_COLUMNS = [
    "task", "n_options", "options", "answer", "choice", "option_ppl", "option_logp", "option_ntok",
    "prompt", "answers", "generation", "generations", "match_exact", "match_normalised", "match_contains",
]


@dataclass(frozen=True)
class MultipleChoiceSettings:
    metric: str


@dataclass(frozen=True)
class CompletionSettings:
    num_beams: int
    do_sample: bool
    top_k: int
    top_p: float
    max_new_tokens: int
    num_return_sequences: int
    match: str
    judge: str
    seed: int


def task_settings(params: dict | None) -> tuple[MultipleChoiceSettings, CompletionSettings]:
    """The ``scoring.multiple_choice`` / ``scoring.completion`` sections, defaults from the schema."""
    params = params or {}
    given = {k: params[k] for k in ("multiple_choice", "completion") if params.get(k) is not None}
    full = section("scoring", given)
    mc = MultipleChoiceSettings(**full["multiple_choice"])
    cs = CompletionSettings(**full["completion"])
    if cs.num_return_sequences > cs.num_beams:
        raise PovstimError(f"scoring.completion.num_return_sequences ({cs.num_return_sequences}) cannot exceed "
                           f"num_beams ({cs.num_beams})")
    return mc, cs


def join(*parts: str) -> str:
    """``stimulus + connective + option`` with single spaces (an empty connective is left out)."""
    return " ".join(p.strip() for p in parts if p.strip())


# --------------------------------------------------------------------------- multiple choice

@dataclass
class OptionScores:
    score: np.ndarray   # decision score per string: mean log-prob per scored token (= -log perplexity)
    logp: np.ndarray    # summed log-prob of the scored tokens
    ntok: np.ndarray    # number of scored tokens


def sentence_scores(strings: list[str], score_fn, reduction: str) -> OptionScores:
    """Mean token log-probability of each whole string, from any scorer (a model or a baseline)."""
    s = score_fn(strings)
    ntok = np.asarray(s.ntok, dtype=np.int64)
    if reduction == "mean":
        mean, total = np.asarray(s.logp, dtype=np.float64), np.asarray(s.logp, dtype=np.float64) * ntok
    else:
        total = np.asarray(s.logp, dtype=np.float64)
        mean = total / ntok
    return OptionScores(mean, total, ntok)


def option_scores(prefixes: list[str], strings: list[str], scorer) -> OptionScores:
    """Mean log-probability of each string's tokens after its prefix (``metric: option``).

    The option's tokens are those from the first position where the string's
    encoding departs from the prefix's own (for space-separated byte-level BPE
    or SentencePiece: exactly the option's tokens). Masked models: PLL /
    holistic scores of those positions only, with the whole string as context.
    """
    if not hasattr(scorer, "score_ids"):
        raise PovstimError("multiple_choice.metric 'option' needs a language model (baselines score whole strings)")
    special = set(scorer.tok.all_special_ids) if scorer.kind == "masked" else set()
    full = scorer._encode(strings)
    pre = scorer._encode(prefixes)
    targets = []
    for s, f, p, t in zip(strings, full, pre, scorer.targets(full)):
        while p and p[-1] in special:  # a masked encoding ends in </s>: not part of the prefix's words
            p = p[:-1]
        start = 0
        while start < min(len(f), len(p)) and f[start] == p[start]:
            start += 1
        mine = [j for j in t if j >= start]
        if not mine:
            raise PovstimError(f"nothing to score after the prefix in {s!r}")
        targets.append(mine)
    total = scorer.score_ids(full, targets)
    ntok = np.array([len(t) for t in targets], dtype=np.int64)
    return OptionScores(total / ntok, total, ntok)


def multiple_choice_rows(items: list[dict], score_fn, reduction: str, settings: MultipleChoiceSettings,
                         scorer=None) -> list[dict]:
    """Score every option of every item in one scorer call; one result dict per item."""
    strings, prefixes, owner = [], [], []
    for i, it in enumerate(items):
        prefix = join(it["stimulus"], it["connective"])
        for opt in it["options"]:
            strings.append(join(prefix, opt))
            prefixes.append(prefix)
            owner.append(i)
    if settings.metric == "sentence":
        sc = sentence_scores(strings, score_fn, reduction)
    elif settings.metric == "option":
        sc = option_scores(prefixes, strings, scorer)
    else:
        raise PovstimError(f"scoring.multiple_choice.metric must be one of {', '.join(METRICS)}, not {settings.metric!r}")
    out = []
    pos = 0
    for it in items:
        k = len(it["options"])
        score, logp, ntok = sc.score[pos:pos + k], sc.logp[pos:pos + k], sc.ntok[pos:pos + k]
        pos += k
        a = it["options"].index(it["answer"])
        others = [j for j in range(k) if j != a]
        best_other = max(others, key=lambda j: (score[j], -j))
        pick = int(np.argmax(score))  # first of the best on a tie
        out.append({
            "task": "multiple_choice",
            "n_options": k,
            "options": json.dumps(it["options"], ensure_ascii=False),
            "answer": it["answer"],
            "choice": it["options"][pick],
            "option_ppl": json.dumps([float(math.exp(-x)) for x in score]),
            "option_logp": json.dumps([float(x) for x in logp]),
            "option_ntok": json.dumps([int(x) for x in ntok]),
            # The answer against its strongest competitor, on the decision scale
            # (mean log-prob per token = -log perplexity): correct iff good > bad.
            "logp_good": float(score[a]),
            "logp_bad": float(score[best_other]),
            "ntok_good": int(ntok[a]),
            "ntok_bad": int(ntok[best_other]),
            "correct": bool(score[a] > score[best_other]),  # a tie for the lowest perplexity is wrong
        })
    return out


# --------------------------------------------------------------------------- completion: matching

_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'", "\u00b4": "'"})


def normalise(text: str) -> str:
    """NFC, case-folded, apostrophes unified, punctuation (but word-internal apostrophes) removed."""
    text = unicodedata.normalize("NFC", text).translate(_APOSTROPHES).casefold()
    chars = []
    for i, ch in enumerate(text):
        if ch == "'" and 0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum():
            chars.append(ch)  # l'acqua, c'è
        elif unicodedata.category(ch).startswith("P") or unicodedata.category(ch).startswith("S"):
            chars.append(" ")
        else:
            chars.append(ch)
    return re.sub(r"\s+", " ", "".join(chars)).strip()


def matches(generation: str, answers: list[str]) -> dict[str, bool]:
    gen_n = normalise(generation)
    return {
        "exact": any(generation.strip() == a.strip() for a in answers),
        "normalised": any(gen_n == normalise(a) for a in answers),
        "contains": any(normalise(a) and f" {normalise(a)} " in f" {gen_n} " for a in answers),
    }


def item_seed(seed: int, item: dict) -> int:
    """A generation seed per item, stable across runs and independent of the other items."""
    key = f"{seed}\x1f{item.get('suite', '')}\x1f{item['paradigm']}\x1f{item['item_id']}".encode("utf-8")
    return zlib.crc32(key)


# --------------------------------------------------------------------------- completion: beam search

def warpers(settings: CompletionSettings, n_eos: int = 1):
    """transformers' top-k / nucleus warpers as generate() builds them for (beam) sampling."""
    from transformers.generation.logits_process import TopKLogitsWarper, TopPLogitsWarper

    if not settings.do_sample:
        return []
    keep = n_eos + 1 if settings.num_beams > 1 else 1
    out = []
    if settings.top_k:
        out.append(TopKLogitsWarper(top_k=settings.top_k, min_tokens_to_keep=keep))
    if settings.top_p < 1.0:
        out.append(TopPLogitsWarper(top_p=settings.top_p, min_tokens_to_keep=keep))
    return out


def beam_search(step, settings: CompletionSettings, eos_ids: set[int], length_penalty: float = 1.0):
    """Beam search (with sampling when ``do_sample``) over a next-token function; transformers' algorithm.

    ``step(seqs)`` returns the next-token log-probabilities [len(seqs), vocab]
    (float32) after each generated-token list. Like ``generate`` (v5): K =
    2 x beams candidates per step, chosen by top-k of the accumulated scores or
    sampled without replacement from their softmax (global torch RNG, so a
    seed set by the caller fixes it); a candidate that ends (EOS, or the last
    step) and ranks among the top ``num_beams`` becomes a hypothesis scored by
    its sum / length^length_penalty; the best ``num_return_sequences``
    hypotheses are returned, best first, as (token list, score).
    """
    import torch

    nb, max_new = settings.num_beams, settings.max_new_tokens
    procs = warpers(settings, len(eos_ids))
    keep = max(2, 1 + len(eos_ids)) * nb
    running = [[] for _ in range(nb)]
    run_scores = torch.full((nb,), -1e9)
    run_scores[0] = 0.0  # only the first beam expands at the first step
    fin_seqs: list[list[int]] = [[] for _ in range(nb)]
    fin_scores = torch.full((nb,), -1e9)
    fin_done = torch.zeros(nb, dtype=torch.bool)
    improvable = True
    for step_i in range(max_new):
        logp = step(running).float()
        for proc in procs:
            logp = proc(None, logp)
        vocab = logp.shape[-1]
        acc = (logp + run_scores[:, None]).reshape(-1)
        if settings.do_sample:
            idx = torch.multinomial(torch.softmax(acc, dim=-1)[None], num_samples=keep)[0]
            vals = acc[idx]
            vals, order = vals.sort(descending=True)
            idx = idx[order]
        else:
            vals, idx = torch.topk(acc, k=keep)
        beams, toks = (idx // vocab).tolist(), (idx % vocab).tolist()
        cands = [running[b] + [t] for b, t in zip(beams, toks)]
        last = step_i + 1 == max_new
        hits = torch.tensor([last or t in eos_ids for t in toks])
        # e. the best non-finished candidates continue
        run_vals = vals + hits.float() * -1e9
        nxt = torch.topk(run_vals, k=nb)[1].tolist()
        running = [cands[j] for j in nxt]
        run_scores = run_vals[nxt]
        # f. finished candidates among the top num_beams join the hypotheses (if they beat one)
        top = torch.zeros(keep, dtype=torch.bool)
        top[:nb] = True
        cand_scores = vals / ((step_i + 1) ** length_penalty)
        if not improvable:
            cand_scores = cand_scores - 1e9
        cand_scores = cand_scores + (~(hits & top)).float() * -1e9
        merged_scores = torch.cat([fin_scores, cand_scores])
        merged_seqs = fin_seqs + cands
        merged_done = torch.cat([fin_done, hits & top])
        best = torch.topk(merged_scores, k=nb)[1].tolist()
        fin_seqs = [merged_seqs[j] for j in best]
        fin_scores = merged_scores[best]
        fin_done = merged_done[best]
        # g. stop when no running beam can beat the worst hypothesis (early_stopping=False heuristic)
        best_running = run_scores[0] / ((step_i + 1) ** length_penalty)
        worst = torch.where(fin_done, fin_scores.min(), torch.tensor(-1e9))
        improvable = improvable and bool((best_running > worst).any())
        if not improvable or bool(hits.all()):
            break
    n = settings.num_return_sequences
    return [(fin_seqs[j], float(fin_scores[j])) for j in range(n)]


def _causal_generate(lm, tok, prompt_ids: list[int], settings: CompletionSettings, device: str):
    import torch
    from transformers import GenerationConfig

    eos = tok.eos_token_id
    pad = tok.pad_token_id if tok.pad_token_id is not None else eos
    kwargs = dict(num_beams=settings.num_beams, do_sample=settings.do_sample,
                  max_new_tokens=settings.max_new_tokens, num_return_sequences=settings.num_return_sequences,
                  pad_token_id=pad, eos_token_id=eos, early_stopping=False, length_penalty=1.0)
    if settings.do_sample:
        kwargs.update(top_k=settings.top_k, top_p=settings.top_p)
    else:
        kwargs.update(top_k=None, top_p=None)
    gc = GenerationConfig(**kwargs)
    ids = torch.tensor([prompt_ids], device=device)
    out = lm.generate(input_ids=ids, attention_mask=torch.ones_like(ids), generation_config=gc)
    seqs = []
    for row in out.tolist():
        gen = row[len(prompt_ids):]
        seqs.append([t for t in gen])
    return seqs


def masked_step(lm, tok, prompt_ids: list[int], device: str):
    """Next-token log-probs of a masked LM: fill ``<mask>`` in ``prompt + generated + <mask> + </s>``."""
    import torch

    mask_id = tok.mask_token_id
    if mask_id is None:
        raise PovstimError("completion with a masked model needs a mask token, and the tokenizer has none")
    special_end = []
    head = list(prompt_ids)
    while head and head[-1] in set(tok.all_special_ids) and head[-1] != tok.cls_token_id:
        special_end.insert(0, head.pop())  # </s> (and anything after it) closes the sequence

    def step(running: list[list[int]]):
        rows = [head + r + [mask_id] + special_end for r in running]
        ids = torch.tensor(rows, device=device)
        pos = len(head) + len(running[0])
        with torch.inference_mode():
            logits = lm(input_ids=ids, attention_mask=torch.ones_like(ids)).logits[:, pos].float()
        return torch.log_softmax(logits, dim=-1).cpu()

    return step


def completion_rows(items: list[dict], lm, tok, kind: str, settings: CompletionSettings, device: str = "cpu",
                    bos_prefix: int | None = None) -> list[dict]:
    """Generate a completion for every item (one seeded generation per item) and judge it."""
    import torch

    if settings.match not in MATCHES:
        raise PovstimError(f"scoring.completion.match must be one of {', '.join(MATCHES)}, not {settings.match!r}")
    out = []
    cuda = [torch.device(device)] if str(device).startswith("cuda") else []
    for it in items:
        if kind == "masked":
            prompt_ids = tok(it["prompt"].strip())["input_ids"]
        else:
            prompt_ids = tok(it["prompt"].strip(), add_special_tokens=False)["input_ids"]
            if bos_prefix is not None:
                prompt_ids = [bos_prefix] + prompt_ids
        if not prompt_ids:
            raise PovstimError(f"completion item {it['item_id']}: the prompt encodes to no tokens")
        with torch.random.fork_rng(devices=cuda):
            torch.manual_seed(item_seed(settings.seed, it))
            if kind == "masked":
                eos = {tok.eos_token_id} if tok.eos_token_id is not None else set()
                hyps = beam_search(masked_step(lm, tok, prompt_ids, device), settings, eos)
                seqs = [s for s, _ in hyps]
            else:
                with torch.inference_mode():
                    seqs = _causal_generate(lm, tok, prompt_ids, settings, device)
        gens = [tok.decode(s, skip_special_tokens=True).strip() for s in seqs]
        per = [matches(g, it["answers"]) for g in gens]
        judged = per[:1] if settings.judge == "best" else per
        best = per[0]
        out.append({
            "task": "completion",
            "prompt": it["prompt"],
            "answers": json.dumps(it["answers"], ensure_ascii=False),
            "generation": gens[0],
            "generations": json.dumps(gens, ensure_ascii=False),
            "match_exact": best["exact"],
            "match_normalised": best["normalised"],
            "match_contains": best["contains"],
            "correct": any(m[settings.match] for m in judged),
        })
    return out


# --------------------------------------------------------------------------- the item-score frame

def has_tasks(items: list[dict]) -> bool:
    """True when a suite holds any item that is not a minimal pair (the score file then has TASK_COLUMNS)."""
    return any(task_of(it) != "minimal_pair" for it in items)


def task_frame(items: list[dict], meta: dict, step: int, final: bool, score_fn, reduction: str,
               mc: MultipleChoiceSettings, cs: CompletionSettings, scorer=None, model=None):
    """Item scores of a suite with any task kinds: items.COLUMNS + TASK_COLUMNS, rows in suite order.

    ``model`` = (lm, tokenizer, kind, device) for completion items; baselines (no model) cannot generate.
    """
    import pandas as pd

    groups: dict[str, list[int]] = {}
    for i, it in enumerate(items):
        groups.setdefault(task_of(it), []).append(i)
    rows: list[dict | None] = [None] * len(items)
    if "minimal_pair" in groups:
        idx = groups["minimal_pair"]
        df = item_frame([items[i] for i in idx], score_fn, meta, step, final)
        for i, rec in zip(idx, df.to_dict("records")):
            rows[i] = {"task": "minimal_pair", **{k: rec[k] for k in ("logp_good", "logp_bad", "ntok_good",
                                                                     "ntok_bad", "correct")}}
    if "multiple_choice" in groups:
        idx = groups["multiple_choice"]
        for i, rec in zip(idx, multiple_choice_rows([items[i] for i in idx], score_fn, reduction, mc, scorer)):
            rows[i] = rec
    if "completion" in groups:
        idx = groups["completion"]
        if model is None:
            raise PovstimError("completion items need a language model to generate; a corpus baseline cannot "
                               "(score this suite with --model, or leave its completion items out)")
        lm, tok, kind, device = model
        prefix = getattr(scorer, "prefix", None)
        for i, rec in zip(idx, completion_rows([items[i] for i in idx], lm, tok, kind, cs, device, prefix)):
            rows[i] = rec
    data = {
        **identity_columns(items, meta, step, final),
        "logp_good": np.array([r.get("logp_good", np.nan) for r in rows], dtype=np.float64),
        "logp_bad": np.array([r.get("logp_bad", np.nan) for r in rows], dtype=np.float64),
        "ntok_good": np.array([r.get("ntok_good", 0) for r in rows], dtype=np.int64),
        "ntok_bad": np.array([r.get("ntok_bad", 0) for r in rows], dtype=np.int64),
        "correct": np.array([bool(r["correct"]) for r in rows], dtype=bool),
    }
    for col in TASK_COLUMNS:
        vals = [r.get(col) for r in rows]
        if col == "n_options":
            data[col] = pd.array(vals, dtype="Int64")
        elif col.startswith("match_"):
            data[col] = pd.array(vals, dtype="boolean")
        else:
            data[col] = pd.array(vals, dtype="string")
    return pd.DataFrame(data, columns=COLUMNS + TASK_COLUMNS)
