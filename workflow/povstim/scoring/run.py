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


def score_model(pairs: list[dict], model: str, settings: ScoringSettings, meta: dict, threads: int | None = None):
    """Item scores of ``model`` (a save_pretrained folder or local hub name) and, when asked, of every
    ``checkpoints/step{N}/`` beside it: one DataFrame, rows final=True for the model itself."""
    import pandas as pd
    import torch

    from ..devices import resolve_device
    from .items import checkpoints, final_step, item_frame
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
    for step, path, final in targets:
        lm, tok, kind = load(path, device)
        scorer = Scorer(lm, tok, kind, device=device, bos=settings.bos, method=settings.mlm,
                        batch_size=settings.batch_size, reduction=settings.reduction, eos=settings.eos)
        frames.append(item_frame(pairs, scorer.score, meta, step=step, final=final))
        log.info("%s (step %d): accuracy %.3f", path, step, frames[-1]["correct"].mean())
        del lm
    return pd.concat(frames, ignore_index=True)


def score_baseline(pairs: list[dict], baseline: str, corpora: list[str], meta: dict, order: int = 3):
    """Item scores of a corpus baseline (unigram word frequency or a Kneser-Ney n-gram) trained on ``corpora``."""
    from .baselines import train_baseline
    from .items import item_frame

    model = train_baseline(baseline, corpora, order=order)
    return item_frame(pairs, model.score, meta, step=0, final=True)
