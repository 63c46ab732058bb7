"""Word learning for models (after Chang & Bergen 2022): when does a model learn each word, and does
that follow when children first say it?

1. **Contexts** (:func:`contexts`): for each word of ``acquisition.child_words``, the first ``acquisition.contexts``
   sentences of the model's training text that hold it as a whitespace word (lower-cased, edge punctuation off),
   in corpus order.
2. **Surprisal curves** (:func:`povstim.analysis.timing.word_curves.word_curves`, ``povstim word-curves``, one job per
   model; a module of its own, since it loads the models and this one's fits must not import torch): the word's mean
   surprisal in bits over its contexts (its first occurrence in each; ``scoring/words.py``'s per-word
   log-probabilities, BOS framing) at every word checkpoint (``chck_*``) and the final model, with words seen.
   Beside it the word's unigram surprisal in the training text (the baseline: a model that knows only word
   frequencies) and its frequency per million words.
3. **Acquisition points** (:func:`word_points`): per model x word, surprisal over x = log10 words seen is fitted
   with a sigmoid falling from the unigram baseline b to a fitted floor m:
   s(x) = b - (b - m) logistic(k (x - x0)), least squares; the word's acquisition point is the halfway crossing
   between b and m, 10**x0 (Chang & Bergen 2022's rule). Categories as for paradigms: ``not_acquired`` when the
   floor is less than ``min_drop`` bits below the baseline or the crossing lies after the last checkpoint (its
   words: the budget), ``before_first``, ``acquired``, and ``not_identified``: a crossing inside the checkpoints
   that the data do not pin down -- x0's standard error over ``MAX_SE`` decades (the demo had words at 20
   decades), or a curve whose surprisals never pass its own halfway line (all above it, or all below: the
   crossing is the sigmoid's guess, not a measurement). Such a word has no point (NaN), never a number, in the
   tables, the figure and the regression.
4. **Regression** (:func:`regression`): per arch x condition x size, the models' log10 acquisition points (the
   seeds' mean, acquired words only) on the children's age of first production (months; ``children.py``) with
   log10 frequency per million as covariate, ordinary least squares with standard errors and R^2.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

from povstim.io import iter_sentences

MIN_DROP = 0.5  # bits: a floor less far below the unigram baseline is not acquired
# decades: a crossing whose standard error is wider is not identified (the checkpoints of a run span 1-3 decades,
# so an SE of more than one leaves the point anywhere in them and beyond)
MAX_SE = 1.0
PUNCT = ".,?!;:\"'()"


def norm(token: str) -> str:
    return token.lower().strip(PUNCT)


def contexts(train: str | Path, words, n: int) -> tuple[dict[str, list[str]], dict[str, dict]]:
    """({word: up to ``n`` sentences holding it}, {word: {count, per_million, unigram_bits}}) from ``train``."""
    wanted = {w.lower() for w in words}
    found: dict[str, list[str]] = {w: [] for w in sorted(wanted)}
    counts: Counter = Counter()
    total = 0
    for sentence in iter_sentences(train, "training text"):
        toks = [norm(t) for t in sentence.split()]
        total += len(toks)
        counts.update(toks)
        for w in set(toks) & wanted:
            if len(found[w]) < n:
                found[w].append(sentence)
    stats = {}
    for w in found:
        c = counts.get(w, 0)
        stats[w] = {"count": c, "per_million": 1e6 * c / max(total, 1),
                    "unigram_bits": -math.log2(c / total) if c else math.inf}
    return found, stats


# ------------------------------------------------------------------ fitting
def _curve(theta, x, b):
    m, lk, x0 = theta
    return b - (b - m) / (1 + np.exp(-math.exp(lk) * (x - x0)))


def fit_word(words, surprisal, baseline: float) -> dict:
    """Least-squares fit of one surprisal curve (grid start, scipy's least_squares); x0 = log10 halfway point."""
    from scipy.optimize import least_squares  # deferred: scipy with the analysis

    x = np.log10(np.asarray(words, float))
    y = np.asarray(surprisal, float)
    b = float(baseline)
    top = max(b, 1e-6)
    # the floor starts at the lowest surprisal seen, within [0, baseline] (a model worse than the unigram
    # baseline at every checkpoint starts, and likely stays, at the baseline: not acquired)
    floor0 = float(np.clip(y.min(), 0.0, top))
    best = None
    for x0 in np.linspace(x.min() - 1, x.max() + 1, 13):
        for lk in (math.log(1.0), math.log(4.0)):
            theta = np.array([floor0, lk, x0])
            r = float(((_curve(theta, x, b) - y) ** 2).sum())
            if best is None or r < best[0]:
                best = (r, theta)
    fit = least_squares(lambda t: _curve(t, x, b) - y, best[1],
                        bounds=([0.0, -5, x.min() - 6], [top, 4, x.max() + 6]))
    m, lk, x0 = fit.x
    dof = max(len(x) - 3, 1)
    sigma2 = float((fit.fun ** 2).sum()) / dof
    try:
        cov = np.linalg.inv(fit.jac.T @ fit.jac) * sigma2
        se = float(math.sqrt(cov[2, 2])) if cov[2, 2] > 0 else math.inf
    except np.linalg.LinAlgError:
        se = math.inf
    half = (b + float(m)) / 2  # the halfway line the acquisition point is defined by
    return {"floor": float(m), "baseline": b, "slope": math.exp(lk), "x0": float(x0), "x0_se": se,
            "first_words": float(10 ** x.min()), "budget_words": float(10 ** x.max()), "n_checkpoints": len(x),
            "crosses": bool(y.max() >= half >= y.min())}


def categorise_word(fit: dict, min_drop: float = MIN_DROP, max_se: float = MAX_SE) -> tuple[str, float]:
    """(category, words): the point's words, a bound (first checkpoint, budget), or NaN when not identified."""
    if fit["baseline"] - fit["floor"] < min_drop or fit["x0"] > math.log10(fit["budget_words"]):
        return "not_acquired", fit["budget_words"]
    if fit["x0"] < math.log10(fit["first_words"]):
        return "before_first", fit["first_words"]
    se = fit["x0_se"]
    if not fit.get("crosses", True) or not (se == se and se <= max_se):  # NaN and inf SEs are not identified
        return "not_identified", math.nan
    return "acquired", float(10 ** fit["x0"])


MODEL = ["arch", "condition", "size", "seed"]


def word_points(curves: pd.DataFrame, min_checkpoints: int) -> tuple[pd.DataFrame, list[str]]:
    """Per model x word: the fit, category and point; notes on words skipped (never in the text, too few points)."""
    rows, notes = [], []
    for key, g in curves.groupby(MODEL + ["word"], sort=False):
        meta = dict(zip(MODEL + ["word"], key))
        g = g[g["surprisal"].notna()].drop_duplicates("words_seen").sort_values("words_seen")
        base = float(g["unigram_bits"].iloc[0]) if len(g) else math.inf
        if not math.isfinite(base):
            notes.append(f"{meta['word']}: not in the training text of {meta['condition']}/{meta['size']}: skipped")
            continue
        if len(g) < min_checkpoints:
            notes.append(f"{'/'.join(str(meta[k]) for k in MODEL)} {meta['word']}: {len(g)} checkpoint(s) with a "
                         f"surprisal, fewer than {min_checkpoints} (acquisition.min_checkpoints): skipped")
            continue
        fit = fit_word(g["words_seen"], g["surprisal"], base)
        category, words = categorise_word(fit)
        rows.append({**meta, **fit, "acquisition": category, "point_words": words,
                     "log10_point": math.log10(words) if words == words else math.nan,
                     "per_million": float(g["per_million"].iloc[0])})
    points = pd.DataFrame(rows)
    if len(points) and (points["acquisition"] == "not_identified").any():
        unid = points[points["acquisition"] == "not_identified"]
        for key, g in unid.groupby(["arch", "condition", "size"], sort=False):
            notes.append(f"{'/'.join(map(str, key))}: {len(g)} word point(s) not identified (standard error over "
                         f"{MAX_SE:g} decade, or the surprisals never pass the halfway line): "
                         f"{', '.join(sorted(set(g['word']))[:10])} -- reported without a point")
    return points, list(dict.fromkeys(notes))


NOT_IDENTIFIED = "not identified"


def displayed(points: pd.DataFrame) -> pd.DataFrame:
    """The word points as the md/html/tex tables show them: a point that is not identified reads "not identified"
    (point and x0), never a number."""
    if points.empty:
        return points
    out = points.copy()
    unid = out["acquisition"] == "not_identified"
    for col in ("point_words", "log10_point", "x0"):
        out[col] = out[col].astype(object)
        out.loc[unid, col] = NOT_IDENTIFIED
    return out


def per_word(points: pd.DataFrame) -> pd.DataFrame:
    """One row per arch x size x condition x word over seeds: ``acquisition`` acquired when any seed's point is
    (``log10_point``: the acquired seeds' mean), else the seeds' most frequent category (no point)."""
    rows = []
    for key, g in points.groupby(["arch", "size", "condition", "word"], sort=True):
        acq = g[g["acquisition"] == "acquired"]
        if len(acq):
            cat, point = "acquired", float(acq["log10_point"].mean())
        else:
            cat, point = g["acquisition"].value_counts().sort_index().idxmax(), math.nan
        rows.append({**dict(zip(["arch", "size", "condition", "word"], key)), "acquisition": cat,
                     "log10_point": point, "n_seeds": len(g), "n_acquired": len(acq),
                     "first_words": float(g["first_words"].min()), "budget_words": float(g["budget_words"].max()),
                     "per_million": float(g["per_million"].iloc[0])})
    return pd.DataFrame(rows)


def regression(points: pd.DataFrame, kids: pd.DataFrame, age: str = "age_first_months") -> tuple[pd.DataFrame,
                                                                                                  list[str]]:
    """OLS of the models' log10 acquisition points on children's age (months) + log10 frequency per million, per
    arch x condition x size (acquired words, seeds averaged). One row per coefficient."""
    notes, rows = [], []
    if points.empty or kids.empty:
        return pd.DataFrame(), ["no word points or no children's ages: regression skipped"]
    acq = points[points["acquisition"] == "acquired"]
    for key, g in acq.groupby(["arch", "condition", "size"], sort=False):
        per_word = g.groupby("word").agg(log10_point=("log10_point", "mean"), per_million=("per_million", "first"))
        d = per_word.join(kids.set_index("word")[[age]], how="inner").dropna()
        label = "/".join(map(str, key))
        if len(d) < 4:
            notes.append(f"{label}: {len(d)} word(s) acquired by the models and produced by children, fewer than "
                         "the 4 a 3-coefficient regression needs: skipped")
            continue
        X = np.column_stack([np.ones(len(d)), d[age], np.log10(d["per_million"])])
        y = d["log10_point"].to_numpy()
        beta, *_ = np.linalg.lstsq(X, y, rcond=None)
        resid = y - X @ beta
        dof = len(y) - 3
        sigma2 = float(resid @ resid) / dof if dof > 0 else math.nan
        cov = np.linalg.pinv(X.T @ X) * sigma2
        r2 = 1 - float(resid @ resid) / float(((y - y.mean()) ** 2).sum()) if len(y) > 1 else math.nan
        for name, b, v in zip(("intercept", f"child {age}", "log10 frequency per million"), beta, np.diag(cov)):
            rows.append({"arch": key[0], "condition": key[1], "size": key[2], "term": name, "estimate": float(b),
                         "se": float(math.sqrt(v)) if v > 0 else math.nan, "n_words": len(d), "r2": r2})
    return pd.DataFrame(rows), notes
