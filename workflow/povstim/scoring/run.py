"""Scoring a suite with one model (and its checkpoints) or a corpus baseline: the library behind ``povstim score``."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

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
    sensitivity: bool


def score_model(pairs: list[dict], model: str, settings: ScoringSettings, meta: dict, threads: int | None = None):
    """Item scores of ``model`` (a save_pretrained folder or local hub name) and, when asked, of every
    ``checkpoints/step{N}/`` beside it: one DataFrame, rows final=True for the model itself."""
    import pandas as pd
    import torch

    from ..devices import resolve_device
    from .items import checkpoints, final_step, item_frame, pair_sentences
    from .scorer import Scorer, load

    # Scorer.score runs under torch.inference_mode(); no process-wide grad
    # switch here, since this is also called in-process (tests, notebooks).
    if threads:
        # Several scoring jobs share the CPU under Snakemake: oversubscribed
        # torch threads are several times slower than one thread each.
        torch.set_num_threads(threads)
    device = resolve_device(settings.device)
    model_path = Path(model)
    targets = [(final_step(model_path) if model_path.is_dir() else -1, str(model), True)]
    if settings.checkpoints and model_path.is_dir():
        targets += [(step, str(d), False) for step, d in checkpoints(model_path)]
    frames = []
    sentences = pair_sentences(pairs)
    for step, path, final in targets:
        lm, tok, kind = load(path, device)
        opts = dict(device=device, method=settings.mlm, batch_size=settings.batch_size,
                    reduction=settings.reduction, eos=settings.eos)
        scorer = Scorer(lm, tok, kind, bos=settings.bos, **opts)
        scores = scorer.score(sentences)
        extra = None
        if settings.sensitivity:
            extra = _sensitivity(lm, tok, kind, settings.bos, opts, sentences, final)
        frames.append(item_frame(pairs, scores, meta, step=step, final=final, sensitivity=extra))
        log.info("%s (step %d): accuracy %.3f", path, step, frames[-1]["correct"].mean())
        del lm
    return pd.concat(frames, ignore_index=True)


def _sensitivity(lm, tok, kind, bos, opts, sentences, final):
    """What item_frame needs for the metric-sensitivity columns: the primary Scores under their own
    BOS setting and, for the final causal model, one more pass with the other BOS setting."""
    from .items import sensitivity_columns
    from .scorer import Scorer

    if kind != "causal":  # BOS does not apply: every token is scored (the *_bos columns)
        return lambda n, primary: sensitivity_columns(n, primary, None)
    other = None
    if final:  # checkpoints feed learning curves only: spare them the second pass
        other = Scorer(lm, tok, kind, bos=not bos, **opts).score(sentences)

    def columns(n, primary):
        return sensitivity_columns(n, primary, other) if bos else sensitivity_columns(n, other, primary)

    return columns


def score_baseline(pairs: list[dict], baseline: str, corpora: list[str], meta: dict, order: int = 3):
    """Item scores of a corpus baseline (unigram word frequency or a Kneser-Ney n-gram) trained on ``corpora``."""
    from .baselines import train_baseline
    from .items import item_frame

    model = train_baseline(baseline, corpora, order=order)
    return item_frame(pairs, model.score, meta, step=0, final=True)
