"""Surprisal curves of a word list for one model (``povstim word-curves``; see
:mod:`povstim.analysis.timing.word_learning`). Kept apart from the fits so the acquisition stage, which only fits the curves,
does not import the scorer and torch."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from povstim.io import PovstimError
from povstim.scoring.items import checkpoints, final_step, words_seen
from povstim.scoring.scorer import load
from povstim.scoring.tree import TreeScorer
from povstim.scoring.words import word_scores
from povstim.analysis.timing.word_learning import contexts, norm


def word_curves(model_dir: str | Path, train: str | Path, words, n_contexts: int, meta: dict,
                device: str = "cpu") -> pd.DataFrame:
    """One row per target (word checkpoints and the final model) x word: mean surprisal (bits) in its contexts."""
    model_dir = Path(model_dir)
    seen = words_seen(model_dir)
    if seen is None:
        raise PovstimError(f"{model_dir}: no words seen in train_summary.json: word curves need a model trained "
                           "with training.checkpoint_words")
    found, stats = contexts(train, words, n_contexts)
    sentences = sorted({s for ss in found.values() for s in ss})
    targets = [(step, path) for step, path in checkpoints(model_dir)] + [(final_step(model_dir), model_dir)]
    rows = []
    for step, path in targets:
        lm, tok, kind = load(str(path), device)
        scorer = TreeScorer(lm, tok, kind, bos=True, device=device)
        scored = dict(zip(sentences, word_scores(scorer, sentences))) if sentences else {}
        for w, ss in found.items():
            vals = []
            for s in ss:
                lp = next((v for t, v in scored[s] if norm(t) == w), math.nan)
                if math.isfinite(lp):
                    vals.append(-lp / math.log(2))
            rows.append({**meta, "step": int(step), "words_seen": int(seen[int(step)]), "word": w,
                         "surprisal": float(np.mean(vals)) if vals else math.nan, "n_contexts": len(vals),
                         **stats[w]})
        del lm
    return pd.DataFrame(rows)
