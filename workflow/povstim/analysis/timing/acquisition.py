"""When is a paradigm acquired? Acquisition points from learning curves over words seen.

For each model (suite, arch, condition, size, seed) x paradigm, accuracy at the checkpoints of a run trained
with ``training.checkpoint_words`` is fitted against x = log10(words seen) with a sigmoid bounded below by
chance c (0.5 for a minimal pair; the row's ``chance`` for other task kinds) and above by a fitted asymptote A:

    p(x) = c + (A - c) * logistic(k * (x - x0)),      c < A <= 1, k > 0

The model's acquisition point is where the curve crosses halfway between chance and its asymptote (Chang &
Bergen 2022's rule), which for this curve is x0: 10**x0 words. The fit is a binomial likelihood over the items
of each checkpoint (n_correct of n_total), maximised with weak priors that only keep it finite (A's logit
~ N(0, 3), log k ~ N(log 3, 1.5), x0 ~ N(middle of the checkpoints, 3 decades)): a MAP fit, a grid start and
Newton steps on an analytic gradient; x0's standard error is the Laplace one (the inverse Hessian).

**Categories** (never a NaN without one; a curve whose sigmoid is no better than chance at every checkpoint --
likelihood ratio below chi-square(3)'s 95% point -- is not acquired):
  acquired             the crossing lies within the checkpoints' words: ``point_words`` = 10**x0
  before_first         the crossing lies before the first checkpoint: acquired by ``first_words`` (an upper bound)
  not_acquired         the asymptote is less than ``min_gain`` above chance, or the crossing lies after the last
                       checkpoint: not acquired within the budget ``budget_words`` (the last checkpoint's words)

**Over seeds** (``summary.csv``, one row per suite x arch x condition x size x paradigm), by
``acquisition.method``: ``hierarchical`` (the default) samples one hierarchical Bayesian model over every group at
once (analysis/timing/acquisition_bayes.py: seeds' midpoints as deviations from their group's, categories as posterior
probabilities, intervals and contrasts from the draws); ``per_seed`` (the fast option) pools the per-seed fits
below by a random-effects summary: mean mu of the seeds' log10 points with a between-seed SD tau
(DerSimonian-Laird, weights 1 / (se^2 + tau^2)) and a normal interval of mu. Its group category: acquired (all
seeds), not_acquired (none), partly (k of n seeds: the summary pools the acquired seeds; the others are counted),
before_first (every acquired seed before the first checkpoint). The per-seed fits (``points.csv``) are written
with either method.

**Contrasts** (``contrasts.csv``): for each pair of conditions (BABY-F vs BABY, BABY vs WIKI, BABY-F vs
WIKI, in the conditions' order) within suite x arch x size x paradigm (and category: the mean over its
paradigms), the difference of pooled log10 points (delta > 0: the first condition acquires later), its interval
and the factor 10**delta; where one side is not acquired the contrast is a bound (``status``), not a number.

A model with fewer checkpoints than ``min_checkpoints`` is skipped and named in ``notes``; a curve table
without ``words_seen`` (no word checkpoints) is an error saying so.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from povstim.conditions.order import condition_order
from povstim.io import PovstimError
from povstim.analysis.timing.acquisition_settings import AcquisitionSettings

MODEL = ["suite", "arch", "condition", "size", "seed"]
GROUP = ["suite", "arch", "condition", "size"]
# weak priors: they keep a 3-parameter fit finite on a few checkpoints, nothing more
PRIOR_A = (0.0, 3.0)            # logit of (A - c) / (1 - c)
PRIOR_LOGK = (math.log(3.0), 1.5)  # slope per decade of words
PRIOR_X0_SD = 3.0               # decades around the middle of the checkpoints


# ------------------------------------------------------------------ one curve
def _expit(z):
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def _nll(theta, x, k, n, c, x_mid):
    """Negative log posterior (binomial + weak priors) and its gradient over theta = (a, log k, x0)."""
    a, lk, x0 = theta
    s = _expit(a)
    gain = (1.0 - c) * s
    slope = math.exp(lk)
    u = slope * (x - x0)
    sig = _expit(u)
    p = np.clip(c + gain * sig, 1e-12, 1 - 1e-12)
    ll = k * np.log(p) + (n - k) * np.log1p(-p)
    dldp = k / p - (n - k) / (1.0 - p)
    dsig = sig * (1.0 - sig)
    g_a = np.sum(dldp * (1.0 - c) * s * (1.0 - s) * sig)
    g_lk = np.sum(dldp * gain * dsig * u)
    g_x0 = np.sum(dldp * gain * dsig * -slope)
    prior = ((a - PRIOR_A[0]) / PRIOR_A[1]) ** 2 / 2 + ((lk - PRIOR_LOGK[0]) / PRIOR_LOGK[1]) ** 2 / 2 \
        + ((x0 - x_mid) / PRIOR_X0_SD) ** 2 / 2
    grad = -np.array([g_a, g_lk, g_x0]) + np.array([(a - PRIOR_A[0]) / PRIOR_A[1] ** 2,
                                                    (lk - PRIOR_LOGK[0]) / PRIOR_LOGK[1] ** 2,
                                                    (x0 - x_mid) / PRIOR_X0_SD ** 2])
    return -float(ll.sum()) + prior, grad


def fit_curve(words, n_correct, n_total, chance: float = 0.5) -> dict:
    """The sigmoid fit of one learning curve: asymptote, slope (per decade), x0 = log10 of the halfway point, its
    Laplace standard error, and the curve's first and last words.

    A grid over (asymptote, slope, x0) finds the basin (the posterior can have a second, flat mode), and damped
    Newton steps on the analytic gradient refine it: numpy only, ~ms per curve (scipy's L-BFGS-B from several
    starts was 50x slower on a loaded 2-core machine)."""
    x = np.log10(np.asarray(words, dtype=float))
    k = np.asarray(n_correct, dtype=float)
    n = np.asarray(n_total, dtype=float)
    c = float(chance)
    x_mid = float((x.min() + x.max()) / 2)
    args = (x, k, n, c, x_mid)
    theta = _grid_start(x, k, n, c, x_mid)
    theta = _newton(theta, args)
    a, lk, x0 = theta
    # the curve against chance at every checkpoint: twice the log-likelihood gained by the sigmoid
    p = np.clip(c + (1 - c) * _expit(a) * _expit(math.exp(lk) * (x - x0)), 1e-12, 1 - 1e-12)
    gained = 2 * float((k * np.log(p / c) + (n - k) * np.log((1 - p) / (1 - c))).sum())
    return {"asymptote": c + (1 - c) * float(_expit(a)), "slope": math.exp(lk), "x0": float(x0),
            "x0_se": _x0_se(theta, args), "lr_chance": gained, "chance": c, "first_words": float(10 ** x.min()),
            "budget_words": float(10 ** x.max()), "n_checkpoints": len(x)}


_GRID_A = np.linspace(-4, 6, 11)
_GRID_LK = np.log(np.array([0.5, 1, 2, 4, 8, 16]))


def _grid_start(x, k, n, c, x_mid) -> np.ndarray:
    """The best (a, log k, x0) of a grid, x0 from 1.5 decades before the first checkpoint to 1.5 after the last."""
    x0s = np.linspace(x.min() - 1.5, x.max() + 1.5, 49)
    a, lk, x0 = np.meshgrid(_GRID_A, _GRID_LK, x0s, indexing="ij")
    a, lk, x0 = a.ravel()[:, None], lk.ravel()[:, None], x0.ravel()[:, None]
    p = c + (1 - c) * _expit(a) * _expit(np.exp(lk) * (x[None, :] - x0))
    p = np.clip(p, 1e-12, 1 - 1e-12)
    lp = (k * np.log(p) + (n - k) * np.log1p(-p)).sum(axis=1)
    lp -= (((a - PRIOR_A[0]) / PRIOR_A[1]) ** 2 / 2 + ((lk - PRIOR_LOGK[0]) / PRIOR_LOGK[1]) ** 2 / 2
           + ((x0 - x_mid) / PRIOR_X0_SD) ** 2 / 2).ravel()
    i = int(np.argmax(lp))
    return np.array([a[i, 0], lk[i, 0], x0[i, 0]])


def _hessian(theta, args) -> np.ndarray:
    h = np.zeros((3, 3))
    for i in range(3):
        e = np.zeros(3)
        e[i] = 1e-4
        h[i] = (_nll(theta + e, *args)[1] - _nll(theta - e, *args)[1]) / 2e-4
    return (h + h.T) / 2


def _newton(theta, args, iters: int = 50) -> np.ndarray:
    """Damped Newton (a Levenberg-style ridge where the Hessian is not positive) with backtracking."""
    f, g = _nll(theta, *args)
    for _ in range(iters):
        h = _hessian(theta, args)
        lam = 0.0
        for _ in range(8):
            try:
                step = np.linalg.solve(h + lam * np.eye(3), g)
            except np.linalg.LinAlgError:
                step = None
            if step is not None and np.all(np.isfinite(step)) and float(step @ g) > 0:
                break
            lam = max(1e-3, lam * 10)
        else:
            step = g
        step = np.clip(step, -2, 2)
        t = 1.0
        while t > 1e-4:
            new = theta - t * step
            fn, gn = _nll(new, *args)
            if fn <= f:
                break
            t /= 2
        else:
            break
        done = f - fn < 1e-9
        theta, f, g = new, fn, gn
        if done or np.max(np.abs(g)) < 1e-6:
            break
    return theta


def _x0_se(theta, args) -> float:
    """sqrt of the inverse Hessian's x0 entry (central differences of the analytic gradient)."""
    try:
        cov = np.linalg.inv(_hessian(theta, args))
    except np.linalg.LinAlgError:
        return math.inf
    var = cov[2, 2]
    return float(math.sqrt(var)) if var > 0 and math.isfinite(var) else math.inf


# chi-square(3 df) at 0.05: the sigmoid's three parameters against a curve at chance
LR_CRITICAL = 7.815


def categorise(fit: dict, min_gain: float) -> tuple[str, float]:
    """(category, words): the acquisition point, the first checkpoint's words (before_first) or the budget.
    Not acquired: a curve no better than chance at every checkpoint (likelihood ratio below chi-square(3)'s 95%
    point), an asymptote less than ``min_gain`` above chance, or a crossing after the last checkpoint."""
    x_first, x_last = math.log10(fit["first_words"]), math.log10(fit["budget_words"])
    if (fit["lr_chance"] < LR_CRITICAL or fit["asymptote"] - fit["chance"] < min_gain
            or fit["x0"] > x_last):
        return "not_acquired", fit["budget_words"]
    if fit["x0"] < x_first:
        return "before_first", fit["first_words"]
    return "acquired", float(10 ** fit["x0"])


# --------------------------------------------------------------- every curve
def fit_inputs(curves: pd.DataFrame, settings: AcquisitionSettings) -> tuple[list, list[str]]:
    """The curves to fit: (meta, rows by words seen, chance) per model x paradigm, and notes on what was
    skipped (no words seen; fewer checkpoints than ``min_checkpoints``)."""
    if "words_seen" not in curves.columns or curves["words_seen"].isna().all():
        raise PovstimError("the learning curves have no words seen (column words_seen): acquisition points need "
                           "models trained with training.checkpoint_words and scored with scoring.checkpoints")
    notes: list[str] = []
    d = curves[curves["words_seen"].notna()]
    missing = curves[curves["words_seen"].isna()][MODEL].drop_duplicates()
    for row in missing.itertuples(index=False):
        notes.append(f"{_name(row._asdict())}: no words seen (not trained with training.checkpoint_words): skipped")
    keys = MODEL + ["category", "paradigm"]
    out = []
    for key, g in d.groupby(keys, sort=False):
        # one point per words seen (the final model at its best step may repeat a checkpoint's)
        g = g.drop_duplicates("words_seen").sort_values("words_seen")
        g = g[g["words_seen"] > 0]
        meta = dict(zip(keys, key))
        if len(g) < settings.min_checkpoints:
            notes.append(f"{_name(meta)} {meta['paradigm']}: {len(g)} checkpoint(s) with words seen, fewer than the "
                         f"{settings.min_checkpoints} the sigmoid fit needs (acquisition.min_checkpoints): skipped")
            continue
        chance = 0.5
        if "chance" in g.columns and g["chance"].notna().any():
            chance = float(g["chance"].mean())
        out.append((meta, g, chance))
    return out, _dedupe(notes)


def acquisition_points(curves: pd.DataFrame, settings: AcquisitionSettings,
                       inputs: tuple[list, list[str]] | None = None) -> tuple[pd.DataFrame, list[str]]:
    """One row per model x paradigm (the per-seed fits, with category), and notes on what was skipped;
    ``inputs``: :func:`fit_inputs`'s answer when the caller has it."""
    fitted, notes = inputs or fit_inputs(curves, settings)
    rows = []
    for meta, g, chance in fitted:
        fit = fit_curve(g["words_seen"], g["n_correct"], g["n_total"], chance)
        category, words = categorise(fit, settings.min_gain)
        rows.append({**meta, **fit, "acquisition": category, "point_words": words,
                     "log10_point": math.log10(words), "last_accuracy": float(g["accuracy"].iloc[-1])})
    cols = MODEL + ["category", "paradigm", "acquisition", "point_words", "log10_point", "x0", "x0_se", "asymptote",
                    "slope", "lr_chance", "chance", "first_words", "budget_words", "n_checkpoints", "last_accuracy"]
    return pd.DataFrame(rows, columns=cols), notes


def analyse(curves: pd.DataFrame, settings: AcquisitionSettings) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame,
                                                                           list[str], dict]:
    """points (per-seed fits), summary, contrasts, notes and a description of the fit, with
    ``settings.method``: ``hierarchical`` (one sampled PyMC model, analysis/timing/acquisition_bayes.py) or
    ``per_seed`` (the seeds' MAP fits pooled by a random-effects summary)."""
    fitted, skipped = fit_inputs(curves, settings)
    points, notes = acquisition_points(curves, settings, (fitted, skipped))
    if settings.method == "per_seed" or points.empty:
        summ = summary(points, settings)
        info = {"method": "per_seed: MAP sigmoid fits per seed (binomial, weak priors), seeds pooled by a "
                          "DerSimonian-Laird random-effects summary"}
        return points, summ, contrasts(summ, settings), notes, info
    from povstim.analysis.timing import acquisition_bayes as H

    data = H.prepare(fitted)
    idata = H.sample(H.build_model(data), settings)
    summ, draws, more = H.summarise(data, idata, points, settings)
    con = _sort_contrasts(H.contrasts(summ, draws, settings))
    import pymc

    info = {"method": f"hierarchical: one PyMC model over {len(data.groups)} groups and {len(data.curve_group)} "
                      f"seeds' curves, NUTS ({settings.sampler}, {settings.chains} chains x {settings.tune} tune + "
                      f"{settings.draws} draws, seed {settings.seed}; pymc {pymc.__version__})",
            "divergences": int(idata.sample_stats["diverging"].sum()), "max_r_hat": float(summ["r_hat"].max()),
            "min_ess_bulk": float(summ["ess_bulk"].min()), "not_converged": int((~summ["converged"]).sum())}
    return points, _sort(summ), con, notes + more, info


def _name(meta: dict) -> str:
    return f"{meta['suite']} {meta['arch']}/{meta['condition']}/{meta['size']}/seed{meta['seed']}"


def _dedupe(notes):
    return list(dict.fromkeys(notes))


def pooled(x0: np.ndarray, se: np.ndarray) -> tuple[float, float, float]:
    """(mu, its standard error, tau): DerSimonian-Laird random-effects mean of per-seed x0 with standard errors
    ``se`` (an infinite se: that seed's spread alone informs tau)."""
    x0, se = np.asarray(x0, float), np.asarray(se, float)
    if len(x0) == 1:
        return float(x0[0]), float(se[0]), 0.0
    se = np.where(np.isfinite(se) & (se > 0), se, np.nan)
    if np.isnan(se).all():  # no usable within-seed error: the seeds' spread is all there is
        return float(x0.mean()), float(x0.std(ddof=1) / math.sqrt(len(x0))), float(x0.std(ddof=1))
    se = np.where(np.isnan(se), np.nanmax(se) * 10, se)
    w = 1 / se ** 2
    mu_fixed = float((w * x0).sum() / w.sum())
    q = float((w * (x0 - mu_fixed) ** 2).sum())
    tau2 = max(0.0, (q - (len(x0) - 1)) / (w.sum() - (w ** 2).sum() / w.sum()))
    w_star = 1 / (se ** 2 + tau2)
    mu = float((w_star * x0).sum() / w_star.sum())
    return mu, float(math.sqrt(1 / w_star.sum())), float(math.sqrt(tau2))


def _z(interval: float) -> float:
    from scipy.stats import norm  # deferred with the analysis

    return float(norm.ppf(0.5 + interval / 2))


def summary(points: pd.DataFrame, settings: AcquisitionSettings) -> pd.DataFrame:
    """One row per suite x arch x condition x size x paradigm: the seeds' categories and the pooled point."""
    z = _z(settings.interval)
    rows = []
    keys = GROUP + ["category", "paradigm"]
    for key, g in points.groupby(keys, sort=False):
        meta = dict(zip(keys, key))
        acq = g[g["acquisition"] != "not_acquired"]
        n, n_acq = len(g), len(acq)
        budget = float(g["budget_words"].max())
        row = {**meta, "n_seeds": n, "n_acquired": n_acq, "budget_words": budget,
               "first_words": float(g["first_words"].min())}
        if n_acq == 0:
            row.update(acquisition="not_acquired", log10_point=math.nan, log10_lo=math.nan, log10_hi=math.nan,
                       point_words=budget, tau=math.nan)
        else:
            # a seed acquired before its first checkpoint counts at that checkpoint (an upper bound)
            x = np.where(acq["acquisition"] == "acquired", acq["x0"], acq["log10_point"])
            mu, se, tau = pooled(x, acq["x0_se"].to_numpy())
            category = "acquired" if n_acq == n else "partly"
            if (acq["acquisition"] == "before_first").all():
                category = "before_first" if n_acq == n else "partly"
            row.update(acquisition=category, log10_point=mu, log10_lo=mu - z * se, log10_hi=mu + z * se,
                       point_words=float(10 ** mu), tau=tau)
        rows.append(row)
    cols = keys + ["acquisition", "n_seeds", "n_acquired", "point_words", "log10_point", "log10_lo", "log10_hi",
                   "tau", "first_words", "budget_words"]
    out = pd.DataFrame(rows, columns=cols)
    return _sort(out)


def _sort(df: pd.DataFrame) -> pd.DataFrame:
    from povstim.analysis.tables.tidy import size_words  # (tidy imports pandas only)

    if df.empty:
        return df
    order = {c: i for i, c in enumerate(condition_order(df["condition"].unique()))} if "condition" in df else {}
    keys = [k for k in ("suite", "arch", "size", "category", "paradigm", "condition") if k in df.columns]

    def key(s):
        if s.name == "size":
            return s.map(size_words)
        if s.name == "condition":
            return s.map(order)
        return s
    return df.sort_values(keys, kind="mergesort", key=key).reset_index(drop=True)


def contrasts(summ: pd.DataFrame, settings: AcquisitionSettings) -> pd.DataFrame:
    """Pairwise condition contrasts of the pooled log10 acquisition points, per paradigm and per category (the
    mean of its paradigms' points, their errors combined as independent)."""
    z = _z(settings.interval)
    if summ.empty:
        return pd.DataFrame()
    s = summ.copy()
    s["se"] = (s["log10_hi"] - s["log10_lo"]) / (2 * z)
    cat = (s.groupby(GROUP + ["category"], sort=False)
           .apply(_category_level, include_groups=False).reset_index())
    levels = pd.concat([s.assign(level="paradigm"), cat.assign(level="category", paradigm="(all)")],
                       ignore_index=True)
    rows = []
    for key, g in levels.groupby(["suite", "arch", "size", "level", "category", "paradigm"], sort=False):
        conds = condition_order(g["condition"].unique())
        by = {r["condition"]: r for r in g.to_dict("records")}
        for i, a in enumerate(conds):
            for b in conds[i + 1:]:
                rows.append({**dict(zip(["suite", "arch", "size", "level", "category", "paradigm"], key)),
                             "condition_a": a, "condition_b": b, **_contrast(by[a], by[b], z)})
    return _sort_contrasts(pd.DataFrame(rows))


def _sort_contrasts(out: pd.DataFrame) -> pd.DataFrame:
    if out.empty:
        return out
    order = {c: i for i, c in enumerate(condition_order(list(out["condition_a"]) + list(out["condition_b"])))}
    from povstim.analysis.tables.tidy import size_words

    out["_o"] = out["condition_a"].map(order) * 100 + out["condition_b"].map(order)
    out["_s"] = out["size"].map(size_words)
    out["_l"] = (out["level"] == "category").astype(int)
    out = out.sort_values(["suite", "arch", "_s", "_l", "category", "paradigm", "_o"], kind="mergesort")
    return out.drop(columns=["_o", "_s", "_l"]).reset_index(drop=True)


def _category_level(g: pd.DataFrame) -> pd.Series:
    """A category's acquisition: the mean of its paradigms' pooled points when all are acquired, else the
    category's worst case (not_acquired if any paradigm is not)."""
    states = set(g["acquisition"])
    budget = float(g["budget_words"].max())
    if "not_acquired" in states or g["log10_point"].isna().any():
        return pd.Series({"acquisition": "not_acquired", "log10_point": math.nan, "se": math.nan,
                          "budget_words": budget, "first_words": float(g["first_words"].min())})
    mu = float(g["log10_point"].mean())
    se = float(math.sqrt((g["se"] ** 2).sum()) / len(g))
    state = "acquired" if states <= {"acquired"} else ("before_first" if states == {"before_first"} else "partly")
    return pd.Series({"acquisition": state, "log10_point": mu, "se": se, "budget_words": budget,
                      "first_words": float(g["first_words"].min())})


def _contrast(a: dict, b: dict, z: float) -> dict:
    """delta = a's log10 point - b's (> 0: a acquires later), or a bound where a side is not acquired."""
    na, nb = a["acquisition"] == "not_acquired", b["acquisition"] == "not_acquired"
    out = {"acquisition_a": a["acquisition"], "acquisition_b": b["acquisition"]}
    if na and nb:
        return {**out, "status": "neither acquired", "delta": math.nan, "lo": math.nan, "hi": math.nan,
                "factor": math.nan}
    if na:  # a later than its budget: delta >= log10(budget_a) - b's upper end
        bound = math.log10(a["budget_words"]) - (b["log10_point"] + z * b["se"])
        return {**out, "status": "a not acquired: delta >= lo", "delta": math.nan, "lo": bound, "hi": math.inf,
                "factor": math.nan}
    if nb:  # b later than its budget: delta <= a's upper end - log10(budget_b)
        bound = (a["log10_point"] + z * a["se"]) - math.log10(b["budget_words"])
        return {**out, "status": "b not acquired: delta <= hi", "delta": math.nan, "lo": -math.inf, "hi": bound,
                "factor": math.nan}
    delta = a["log10_point"] - b["log10_point"]
    se = math.sqrt(a["se"] ** 2 + b["se"] ** 2)
    lo, hi = delta - z * se, delta + z * se
    status = "later" if lo > 0 else ("earlier" if hi < 0 else "no clear difference")
    return {**out, "status": status, "delta": delta, "lo": lo, "hi": hi, "factor": float(10 ** delta)}


def fitted_curve(points: pd.DataFrame, xs: np.ndarray) -> np.ndarray:
    """The mean over ``points``' rows (seeds) of their fitted sigmoids at log10 words ``xs`` (for the figures)."""
    ys = [r.chance + (r.asymptote - r.chance) * _expit(r.slope * (xs - r.x0)) for r in points.itertuples()]
    return np.mean(ys, axis=0)
