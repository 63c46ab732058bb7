"""Scoring a suite with one model (and its checkpoints) or a corpus baseline: the library behind ``povstim score``."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path

from ..io import PovstimError
from ..settings import as_dict

# items, prepare, tree, scorer, tasks, baselines (numpy) and devices (the schema) are imported where used: the
# command lines import this module for ScoringSettings, and `povstim score --help` needs none of them.

log = logging.getLogger("povstim.score")


@dataclass(frozen=True)
class ScoringSettings:
    """The config's ``scoring:`` section (defaults: workflow/schemas/config/scoring.schema.yaml)."""

    reduction: str
    bos: bool
    eos: bool
    batch_size: int
    checkpoints: bool
    mlm: str
    device: str
    multiple_choice: dict  # BaBIEs task kinds (scoring/tasks.py): metric
    completion: dict  # generation settings of completion items
    share_prefixes: bool  # causal: feed shared prefixes once (scoring/tree.py)
    matmul: str  # fp32 | 3xtf32: the linear layers' products on a GPU (scoring/matmul.py)
    sensitivity: bool  # keep the raw sums/token counts of every metric (the metric sensitivity table)
    group: str  # none | seeds | all: models scored by one job (speed only; rules/evaluate.smk)
    metric: str  # sentence | region | slor: what a pair compares (scoring/words.py)
    words: bool  # also write every sentence's word surprisals (scoring/words.py)


def _task_frames(pairs: list[dict], settings: ScoringSettings, meta: dict):
    """For a suite with task kinds other than minimal pairs (docs/evaluation.md, "Task kinds"): a
    function building one model's item frame with scoring/tasks.py's columns; None for a suite of
    minimal pairs only (those take the item_frame path, with the sensitivity columns)."""
    from .tasks import has_tasks, task_frame, task_settings

    if not has_tasks(pairs):
        return None
    mc, cs = task_settings(as_dict(settings))
    return lambda score_fn, step, final, scorer=None, model=None: task_frame(
        pairs, meta, step, final, score_fn, settings.reduction, mc, cs, scorer, model)


def score_model(pairs: list[dict], model: str, settings: ScoringSettings, meta: dict, threads: int | None = None,
                prepared=None, unigram=None):
    """Item scores of ``model`` (a save_pretrained folder or local hub name) and, when asked, of every
    ``checkpoints/step{N}/`` beside it: one DataFrame, rows final=True for the model itself.

    The suite's sentences are encoded once per tokenizer and framing (scoring/prepare.py), the first model's
    while the device starts and the weights load; ``prepared``: a :class:`~.prepare.Preparations` of the suite's
    sentences shared with other models (score_models), else the job's own. ``unigram``: the condition's unigram
    model (baselines.UnigramFrequency), which ``scoring.metric: slor`` needs."""
    import torch

    from .items import checkpoints, final_step, pair_sentences, with_words_seen
    from .prepare import Preparations

    # Scorer.score runs under torch.inference_mode(); no process-wide grad
    # switch here, since this is also called in-process (tests, notebooks).
    if threads:
        # Several scoring jobs share the CPU under Snakemake: oversubscribed
        # torch threads are several times slower than one thread each.
        torch.set_num_threads(threads)
    model_path = Path(model)
    targets = [(final_step(model_path) if model_path.is_dir() else -1, str(model), True)]
    if settings.checkpoints and model_path.is_dir():
        targets += [(step, str(d), False) for step, d in checkpoints(model_path)]
    tasks = _task_frames(pairs, settings, meta)
    check_metric(pairs, settings, tasks is not None, unigram)
    sentences = pair_sentences(pairs) if tasks is None else None
    own = prepared is None and sentences is not None
    if own:
        prepared = Preparations(sentences)
        if model_path.is_dir():  # (a hub name loads from the local cache only: load() says why it cannot)
            prepared.ahead(model_path, _framings(settings), _derive(settings))
    try:
        frame = _score_targets(pairs, targets, model_path, tasks, sentences, prepared, settings, meta, unigram)
        return with_words_seen(frame, model_path)  # training.checkpoint_words: the curves' x-axis
    finally:
        if own:
            prepared.close()


def _framings(settings: ScoringSettings):
    """The framings score_model's scorers ask for, given the final model's tokenizer, config and kind: one per BOS
    setting a final causal model is scored with (the second for the metric sensitivity table)."""
    from .prepare import framing

    def framings(tok, config, kind):
        both = settings.sensitivity and kind == "causal"
        return [framing(tok, config, kind, bos, settings.eos) for bos in ([settings.bos, not settings.bos] if both
                                                                          else [settings.bos])]

    return framings


def _derive(settings: ScoringSettings):
    """What TreeScorer derives from prepared sentences, built ahead where the model may use it (scoring/tree.py)."""
    from .tree import may_use_tree, plan_for

    def derive(prepared, config):
        if settings.share_prefixes and prepared.framing.kind == "causal" and may_use_tree(config):
            plan_for(prepared, settings.batch_size)

    return derive


def check_metric(pairs: list[dict], settings: ScoringSettings, tasks: bool, unigram=None) -> None:
    """The word- and region-level options apply to minimal pairs; ``region`` needs every item's region (inside its
    sentences), ``slor`` a unigram model. Errors name the key, the suite file and the item."""
    from .words import METRICS, check_region, where

    if settings.metric not in METRICS:
        raise PovstimError(f"scoring.metric must be one of {', '.join(METRICS)}, not {settings.metric!r}")
    if tasks and (settings.metric != "sentence" or settings.words):
        what = f"scoring.metric: {settings.metric}" if settings.metric != "sentence" else "scoring.words: true"
        raise PovstimError(f"{what} applies to minimal pairs; this suite has other task kinds (multiple_choice, "
                           "completion): use scoring.multiple_choice.metric for those")
    if settings.metric == "slor" and unigram is None:
        raise PovstimError("scoring.metric: slor needs the condition's unigram model: pass --corpus with the "
                           "condition's train.txt (the corpus the model was trained on)")
    if settings.metric != "region":
        return
    for p in pairs:
        if p.get("region") is None:
            raise PovstimError(f"{where(p)}: scoring.metric: region needs a 'region' field in every item "
                               "({good: [start, end], bad: [start, end], unit: chars|words})")
        check_region(p, where(p))


def _metric(pairs, scorer, tok, sentences, result, prepared, settings, unigram):
    """(metric, word columns) of one model: the ``scoring.metric`` scores that replace logp/ntok (None for
    ``sentence``) and the ``scoring.words`` columns (None when off), from one pass of per-token log-probabilities
    (scoring/words.py) where either needs it."""
    import numpy as np

    from .words import region_positions, token_offsets, token_words, where, word_columns, word_logprobs, word_spans

    n = len(pairs)
    metric = words = None
    if settings.metric == "slor":
        uni = unigram.logprob(sentences)
        if (uni.ntok == 0).any():
            bad = pairs[int(np.flatnonzero(uni.ntok == 0)[0]) % n]
            raise PovstimError(f"{where(bad)}: scoring.metric: slor: a sentence without words")
        metric = ((result.total - uni.logp) / uni.ntok, result.ntok)
    if settings.metric != "region" and not settings.words:
        return metric, words
    ready = prepared
    if ready is None or ready.framing != scorer.framing:
        from .prepare import prepare

        ready = prepare(tok, scorer.framing, sentences)
    rows = [ready.index[s] for s in sentences]
    ids = [ready.ids[r] for r in rows]
    targets = [ready.targets[r] for r in rows]
    extra = {"words": [scorer.l2r_words(ready)[r] for r in rows]} if scorer.l2r else {}
    token_lp = scorer.token_logprobs(ids, targets, **extra)
    where_words = token_words(tok, scorer.framing, sentences, ids)
    if settings.words:
        per_word = [word_logprobs(len(word_spans(s)), t, lp, w, len(x))
                    for s, t, lp, w, x in zip(sentences, targets, token_lp, where_words, ids)]
        words = word_columns(sentences, n, per_word)
    if settings.metric == "region":
        offsets = token_offsets(tok, scorer.framing, sentences, ids)
        logp, ntok = np.zeros(2 * n), np.zeros(2 * n, dtype=np.int64)
        for k, s in enumerate(sentences):
            item, side = pairs[k % n], ("good", "bad")[k // n]
            keep = region_positions(item, side, targets[k], where_words[k], offsets[k])
            if not keep:
                raise PovstimError(f"{where(item)}: the region of the {side} sentence holds no scored token "
                                   f"({item['region'][side]} of {s!r}; without BOS the first token is not scored)")
            total = 0.0
            for v in token_lp[k][keep]:  # in order, as the scorers add
                total += v
            logp[k], ntok[k] = (total / len(keep) if settings.reduction == "mean" else total), len(keep)
        metric = (logp, ntok)
    return metric, words


def _score_targets(pairs, targets, model_path, tasks, sentences, prepared, settings, meta, unigram=None):
    import pandas as pd

    from ..devices.slots import resolve_device
    from .items import holds_final_model, item_frame
    from .scorer import load
    from .tree import TreeScorer

    started, parts = time.perf_counter(), {}
    device = resolve_device(settings.device, parts=parts)
    if device != "cpu":  # a GPU's slot claim and CUDA start-up: part of every GPU job's time
        log.info("device %s ready in %.2fs (%s)", device, time.perf_counter() - started,
                 ", ".join(f"{k} {v:.2f}s" for k, v in parts.items()))
    frames = []
    final_result = None  # the final model's (Scores or task frame, kind), for a checkpoint holding the same model
    for step, path, final, *hub in targets:  # hub: (revision, download) of a hub model's target (external.py)
        if final_result is not None and holds_final_model(model_path, step, Path(path)):
            # the checkpoint saved at the final model's step: the same files, so the same scores (a demo
            # score job scores 2 of its 3 targets; docs/evaluation.md)
            result, kind, metric, words = final_result
            if tasks is not None:
                frames.append(as_checkpoint_rows(result, step))
            else:
                extra = _sensitivity(None, None, kind, settings.bos, {}, sentences, False) \
                    if settings.sensitivity else None
                frames.append(item_frame(pairs, result, meta, step=step, final=False, sensitivity=extra,
                                         metric=metric, words=words))
            log.info("%s (step %d): accuracy %.3f (the final model's files: its scores, not scored again)", path,
                     step, frames[-1]["correct"].mean())
            continue
        started = time.perf_counter()
        lm, tok, kind = load(path, device, revision=hub[0] if hub else None, download=bool(hub) and hub[1])
        timing = f"loaded in {time.perf_counter() - started:.2f}s"
        opts = dict(device=device, method=settings.mlm, batch_size=settings.batch_size,
                    reduction=settings.reduction, eos=settings.eos, share_prefixes=settings.share_prefixes,
                    matmul=settings.matmul)
        # TreeScorer: causal models feed each shared prefix once (scoring/tree.py); otherwise, and with
        # share_prefixes: false, FastScorer: Scorer's numbers bit for bit, with less Python per token
        scorer = TreeScorer(lm, tok, kind, bos=settings.bos, **opts)
        metric = words = None
        if tasks is not None:
            frames.append(tasks(scorer.score, step, final, scorer, (lm, tok, kind, device)))
            result = frames[-1]
        else:
            waited = time.perf_counter()
            ready = prepared.get(tok, scorer.framing)
            waited = time.perf_counter() - waited
            result = scorer.score(sentences, ready)
            t = scorer.timing
            # "encoded in": what the job waited for the encoding (next to nothing when it was made while the model
            # loaded, or for an earlier checkpoint); what encoding took wherever it ran follows
            timing += (f", {t['sentences']} sentences encoded in {waited + t['encode_s']:.2f}s, scored in "
                       f"{t['model_s']:.2f}s; encoding them took {t['prepared_s']:.2f}s, once per tokenizer")
            extra = None
            if settings.sensitivity:
                extra = _sensitivity(lm, tok, kind, settings.bos, opts, sentences, final, path, prepared)
            metric, words = _metric(pairs, scorer, tok, sentences, result, ready, settings, unigram)
            frames.append(item_frame(pairs, result, meta, step=step, final=final, sensitivity=extra,
                                     metric=metric, words=words))
        if final and model_path.is_dir():
            final_result = (result, kind, metric, words)
        log.info("%s (step %d): accuracy %.3f (%s)", path, step, frames[-1]["correct"].mean(), timing)
        del lm
    return pd.concat(frames, ignore_index=True)


def as_checkpoint_rows(frame, step: int):
    """A task frame of the final model as the rows of a checkpoint at ``step`` (identity columns as
    items.identity_columns writes them)."""
    import numpy as np

    return frame.assign(step=np.full(len(frame), int(step), dtype=np.int64), final=np.full(len(frame), False))


def _sensitivity(lm, tok, kind, bos, opts, sentences, final, name="", prepared=None):
    """What item_frame needs for the metric-sensitivity columns: the primary Scores under their own
    BOS setting and, for the final causal model, one more pass with the other BOS setting."""
    from .items import sensitivity_columns
    from .tree import TreeScorer

    if kind != "causal":  # BOS does not apply: every token is scored (the *_bos columns)
        return lambda n, primary: sensitivity_columns(n, primary, None)
    other = None
    if final:  # checkpoints feed learning curves only: spare them the second pass
        # said in the log: it doubles the final model's scoring time, which a user comparing with a one-pass
        # scorer (minicons) should know is optional
        log.info("%s: scoring again %s BOS for the metric sensitivity table (scoring.sensitivity: false skips "
                 "this pass)", name, "without" if bos else "with")
        scorer = TreeScorer(lm, tok, kind, bos=not bos, **opts)
        other = scorer.score(sentences, prepared.get(tok, scorer.framing) if prepared is not None else None)

    def columns(n, primary):
        return sensitivity_columns(n, primary, other) if bos else sensitivity_columns(n, other, primary)

    return columns


def score_models(pairs: list[dict], jobs: list[tuple[str, dict]], settings: ScoringSettings,
                 threads: int | None = None, unigram=None):
    """Item scores of several models in one process: ``jobs`` is (model, meta) per model; yields
    (index, frame) as each model is done. ``unigram``: one model for every job, or a list of each job's.
    Each frame is exactly :func:`score_model`'s for that model alone; the process pays torch/transformers imports, CUDA initialisation and the GPU claim once
    (``scoring.group``, ``povstim score-group``)."""
    from .items import pair_sentences
    from .prepare import Preparations

    # models with the same tokenizer (the seeds of a condition and size) share the suite's encoding
    prepared = Preparations(pair_sentences(pairs)) if _task_frames(pairs, settings, {}) is None else None
    if prepared is not None and jobs and Path(jobs[0][0]).is_dir():
        prepared.ahead(Path(jobs[0][0]), _framings(settings), _derive(settings))  # the first model's, as score_model
    try:
        for index, (model, meta) in enumerate(jobs):
            # one unigram for every job, or (a list) each job's own: its condition's (povstim score-group)
            own = unigram[index] if isinstance(unigram, list) else unigram
            yield index, score_model(pairs, model, settings, meta, threads=threads, prepared=prepared, unigram=own)
    finally:
        if prepared is not None:
            prepared.close()


def unigram_for(opts: ScoringSettings, corpora: list[str]):
    """The unigram model ``scoring.metric: slor`` needs, trained on ``corpora`` (None for other metrics)."""
    if opts.metric != "slor":
        return None
    if not corpora:
        raise PovstimError("scoring.metric: slor needs the condition's unigram model: pass --corpus with the "
                           "condition's train.txt (the corpus the model was trained on)")
    from .baselines import train_baseline

    return train_baseline("unigram", corpora)


def score_baseline(pairs: list[dict], baseline: str, corpora: list[str], meta: dict, settings: ScoringSettings,
                   order: int = 3):
    """Item scores of a corpus baseline (unigram word frequency or a Kneser-Ney n-gram) trained on ``corpora``."""
    from .baselines import train_baseline
    from .items import item_frame

    model = train_baseline(baseline, corpora, order=order)
    tasks = _task_frames(pairs, settings, meta)
    if tasks is not None:
        return tasks(model.score, 0, True)
    return item_frame(pairs, model.score, meta, step=0, final=True)
