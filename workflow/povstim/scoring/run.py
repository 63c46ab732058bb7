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
    multiple_choice: dict  # BaBIEs task kinds (scoring/tasks.py): metric
    completion: dict  # generation settings of completion items
    group: str  # none | seeds | all: models scored by one job (speed only; rules/evaluate.smk)


def _frames(pairs: list[dict], settings: ScoringSettings, meta: dict):
    """A function building one model's item frame: the minimal-pair table, or (a suite with other task
    kinds) scoring/tasks.py's table with their extra columns."""
    from ..settings import as_dict
    from .items import item_frame
    from .tasks import has_tasks, task_frame, task_settings

    if not has_tasks(pairs):
        return lambda score_fn, step, final, scorer=None, model=None: item_frame(pairs, score_fn, meta, step=step,
                                                                                 final=final)
    mc, cs = task_settings(as_dict(settings))
    return lambda score_fn, step, final, scorer=None, model=None: task_frame(
        pairs, meta, step, final, score_fn, settings.reduction, mc, cs, scorer, model)


def score_model(pairs: list[dict], model: str, settings: ScoringSettings, meta: dict, threads: int | None = None):
    """Item scores of ``model`` (a save_pretrained folder or local hub name) and, when asked, of every
    ``checkpoints/step{N}/`` beside it: one DataFrame, rows final=True for the model itself."""
    import pandas as pd
    import torch

    from ..devices import resolve_device
    from .fast import FastScorer
    from .items import checkpoints, final_step
    from .scorer import load

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
    frame = _frames(pairs, settings, meta)
    frames = []
    for step, path, final in targets:
        lm, tok, kind = load(path, device)
        # FastScorer: Scorer's numbers bit for bit, with less Python per token (scoring/fast.py)
        scorer = FastScorer(lm, tok, kind, device=device, bos=settings.bos, method=settings.mlm,
                        batch_size=settings.batch_size, reduction=settings.reduction, eos=settings.eos)
        frames.append(frame(scorer.score, step, final, scorer, (lm, tok, kind, device)))
        log.info("%s (step %d): accuracy %.3f", path, step, frames[-1]["correct"].mean())
        del lm
    return pd.concat(frames, ignore_index=True)


def score_models(pairs: list[dict], jobs: list[tuple[str, dict]], settings: ScoringSettings,
                 threads: int | None = None):
    """Item scores of several models in one process: ``jobs`` is (model, meta) per model; yields
    (index, frame) as each model is done. Each frame is exactly :func:`score_model`'s for that model
    alone; the process pays torch/transformers imports, CUDA initialisation and the GPU claim once
    (``scoring.group``, ``povstim score-group``)."""
    for index, (model, meta) in enumerate(jobs):
        yield index, score_model(pairs, model, settings, meta, threads=threads)


def score_baseline(pairs: list[dict], baseline: str, corpora: list[str], meta: dict, settings: ScoringSettings,
                   order: int = 3):
    """Item scores of a corpus baseline (unigram word frequency or a Kneser-Ney n-gram) trained on ``corpora``."""
    from .baselines import train_baseline

    model = train_baseline(baseline, corpora, order=order)
    return _frames(pairs, settings, meta)(model.score, 0, True)
