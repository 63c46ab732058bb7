"""Acquisition points from one sampled hierarchical Bayesian model (``acquisition.method: hierarchical``).

One vectorized PyMC model holds every group g (suite x arch x condition x size x paradigm) and every seed s's
curve in it, so a whole experiment compiles and samples once (a PyMC model per group took 12.7 s each; the
benchmark has 60 groups). Accuracy at checkpoint j of seed s in group g:

    n_correct ~ Binomial(n_total, c + (A_g - c) * logistic(k_g * (x_j - x0_gs)))    x = log10 words seen
    x0_gs = x0_g + tau * z_gs,  z_gs ~ N(0, 1)          seeds deviate on the midpoint only (non-centred)
    x0_g ~ N(middle of g's checkpoints, half their range in decades (at least 0.5))
    log k_g ~ N(log 3, 0.5)                             slope per decade of words
    logit((A_g - c) / (1 - c)) ~ N(0, 1.5)              the asymptote's gain over chance, in (0, 1 - c)
    tau ~ HalfNormal(0.3)                               one between-seed SD (decades) for the experiment

The acquisition point of g is 10**x0_g words: where the curve crosses halfway between chance and its asymptote
(Chang & Bergen 2022's rule). Each posterior draw is classified -- not acquired (x0_g after the last
checkpoint, or A_g less than ``min_gain`` above chance), before the first checkpoint, or acquired -- and the
group's category is the most probable of the three, with the three probabilities in the table: "not acquired
within the budget" is a posterior probability, never a NaN. Contrasts between conditions are differences of
draws. The slope's prior (sd 0.5 on the log scale: 95% within 1.1-8 per decade) is what keeps NUTS fast: with
sd 1, curves whose midpoint is not identified (flat, or still rising at the budget) doubled the leapfrog steps
per draw (125 vs 63 on the benchmark) and left divergences. The midpoint's prior is bounded by the budget's range
for the same reason: a flat curve leaves x0 free beyond the last checkpoint, and with an SD of the whole range
NUTS diverged at the edge of that plateau (3-7 divergences in the recovery test; none with half the range).

Convergence is checked per group (R-hat and bulk ESS of its x0, slope and asymptote): a group over
``R_HAT_MAX`` or under ``ESS_MIN`` is flagged ``converged = False`` and named in the notes, not hidden.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

GROUP = ["suite", "arch", "condition", "size", "category", "paradigm"]
PRIOR_LOGK = (math.log(3.0), 0.5)
PRIOR_GAIN_SD = 1.5
PRIOR_TAU = 0.3
# short runs (2 x 300 draws by default): looser than the 1.01 / 400 of long ones, and said so in the docs
R_HAT_MAX = 1.05
ESS_MIN = 100
CATS = ("acquired", "before_first", "not_acquired")


@dataclass
class Data:
    """The observations and their indices: obs -> curve (group x seed) -> group."""
    groups: pd.DataFrame      # one row per group: GROUP + first_words, budget_words, chance, n_seeds
    curve_group: np.ndarray   # curve -> group
    obs_curve: np.ndarray     # observation -> curve
    x: np.ndarray             # log10 words seen
    k: np.ndarray
    n: np.ndarray
    chance: np.ndarray        # per observation


def prepare(fitted: list[tuple[dict, pd.DataFrame, float]]) -> Data:
    """``fitted``: (meta with MODEL + category + paradigm, the curve's rows, chance) for each curve to fit."""
    gindex: dict[tuple, int] = {}
    groups, curve_group, obs_curve, xs, ks, ns, cs = [], [], [], [], [], [], []
    for c, (meta, g, chance) in enumerate(fitted):
        key = tuple(meta[k] for k in GROUP)
        if key not in gindex:
            gindex[key] = len(groups)
            groups.append({**dict(zip(GROUP, key)), "first": [], "last": [], "chance": [], "n_seeds": 0})
        gi = gindex[key]
        x = np.log10(g["words_seen"].to_numpy(float))
        groups[gi]["first"].append(x.min())
        groups[gi]["last"].append(x.max())
        groups[gi]["chance"].append(chance)
        groups[gi]["n_seeds"] += 1
        curve_group.append(gi)
        obs_curve.append(np.full(len(x), c))
        xs.append(x)
        ks.append(g["n_correct"].to_numpy(float))
        ns.append(g["n_total"].to_numpy(float))
        cs.append(np.full(len(x), chance))
    table = pd.DataFrame([{**{k: r[k] for k in GROUP}, "n_seeds": r["n_seeds"],
                           "first_words": float(10 ** min(r["first"])), "budget_words": float(10 ** max(r["last"])),
                           "chance": float(np.mean(r["chance"]))} for r in groups])
    return Data(table, np.array(curve_group), np.concatenate(obs_curve), np.concatenate(xs), np.concatenate(ks),
                np.concatenate(ns), np.concatenate(cs))


def build_model(data: Data):
    import pymc as pm
    import pytensor.tensor as pt

    lo, hi = np.log10(data.groups["first_words"].to_numpy()), np.log10(data.groups["budget_words"].to_numpy())
    ng, nc = len(data.groups), len(data.curve_group)
    gobs = data.curve_group[data.obs_curve]
    with pm.Model() as model:
        x0 = pm.Normal("x0", (lo + hi) / 2, np.maximum((hi - lo) / 2, 0.5), shape=ng)
        log_slope = pm.Normal("log_slope", PRIOR_LOGK[0], PRIOR_LOGK[1], shape=ng)
        gain_logit = pm.Normal("gain_logit", 0.0, PRIOR_GAIN_SD, shape=ng)
        tau = pm.HalfNormal("tau", PRIOR_TAU)
        z = pm.Normal("z", 0.0, 1.0, shape=nc)
        x0_seed = x0[data.curve_group] + tau * z
        gain = pm.math.sigmoid(gain_logit)[gobs]
        p = data.chance + (1 - data.chance) * gain * pm.math.sigmoid(
            pt.exp(log_slope)[gobs] * (data.x - x0_seed[data.obs_curve]))
        pm.Binomial("n_correct", n=data.n, p=p, observed=data.k)
    return model


def sample(model, settings, cores: int | None = None):
    """NUTS with the settings' sampler, chains, tune, draws and seed; chains at once: no more than the CPUs."""
    import os

    import pymc as pm

    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    chains = int(settings.chains)
    cores = max(1, min(cores or chains, chains, usable))
    kwargs = {"cores": cores} if settings.sampler == "pymc" else {"nuts_sampler_kwargs": {"cores": cores}}
    with model:
        return pm.sample(draws=int(settings.draws), tune=int(settings.tune), chains=chains,
                         random_seed=int(settings.seed), nuts_sampler=settings.sampler, progressbar=False,
                         compute_convergence_checks=False, **kwargs)


def _flat(idata, name: str) -> np.ndarray:
    """(chains * draws, ...) draws of a variable."""
    v = idata.posterior[name].values
    return v.reshape(-1, *v.shape[2:])


def draws_table(data: Data, idata) -> dict[str, np.ndarray]:
    """Per-draw x0 and asymptote gain over chance (draws x groups)."""
    chance = data.groups["chance"].to_numpy()
    gain = 1 / (1 + np.exp(-_flat(idata, "gain_logit")))
    return {"x0": _flat(idata, "x0"), "gain": (1 - chance) * gain}


def classify(draws: dict, groups: pd.DataFrame, min_gain: float) -> np.ndarray:
    """Per draw and group: 0 acquired, 1 before the first checkpoint, 2 not acquired within the budget."""
    first = np.log10(groups["first_words"].to_numpy())
    last = np.log10(groups["budget_words"].to_numpy())
    x0 = draws["x0"]
    out = np.zeros(x0.shape, dtype=int)
    out[x0 < first] = 1
    out[(x0 > last) | (draws["gain"] < min_gain)] = 2
    return out


def diagnostics(idata) -> pd.DataFrame:
    """Per group: the worst R-hat and bulk ESS over its x0, slope and asymptote."""
    import arviz as az

    per = []
    for name in ("x0", "log_slope", "gain_logit"):
        per.append((np.asarray(az.rhat(idata, var_names=[name])[name]),
                    np.asarray(az.ess(idata, var_names=[name], method="bulk")[name])))
    rhat = np.max([r for r, _ in per], axis=0)
    ess = np.min([e for _, e in per], axis=0)
    return pd.DataFrame({"r_hat": rhat, "ess_bulk": ess, "converged": (rhat <= R_HAT_MAX) & (ess >= ESS_MIN)})


def summarise(data: Data, idata, points: pd.DataFrame, settings) -> tuple[pd.DataFrame, dict, list[str]]:
    """One row per group (the per-seed table's columns plus the posterior's), the draws, and notes on groups
    that did not converge."""
    draws = draws_table(data, idata)
    state = classify(draws, data.groups, settings.min_gain)
    q = [(1 - settings.interval) / 2, 0.5, (1 + settings.interval) / 2]
    lo, med, hi = np.quantile(draws["x0"], q, axis=0)
    diag = diagnostics(idata)
    g = data.groups
    summ = g[GROUP + ["n_seeds"]].copy()
    probs = np.stack([(state == i).mean(axis=0) for i in range(3)], axis=1)
    summ["acquisition"] = [CATS[i] for i in probs.argmax(axis=1)]
    acquired_seeds = points.assign(acq=points["acquisition"] != "not_acquired").groupby(GROUP)["acq"].sum()
    summ["n_acquired"] = [int(acquired_seeds.get(tuple(r), 0)) for r in g[GROUP].itertuples(index=False)]
    budget = g["budget_words"].to_numpy()
    summ["point_words"] = np.where(summ["acquisition"] == "not_acquired", budget,
                                   np.where(summ["acquisition"] == "before_first", g["first_words"], 10.0 ** med))
    summ["log10_point"], summ["log10_lo"], summ["log10_hi"] = med, lo, hi
    summ["tau"] = float(np.median(_flat(idata, "tau")))
    summ["first_words"], summ["budget_words"] = g["first_words"], budget
    summ["p_acquired"], summ["p_before_first"], summ["p_not_acquired"] = probs[:, 0], probs[:, 1], probs[:, 2]
    summ["asymptote"] = g["chance"] + np.median(draws["gain"], axis=0)
    summ = pd.concat([summ, diag], axis=1)
    notes = [f"{' '.join(str(r[k]) for k in GROUP)}: not converged (R-hat {r['r_hat']:.3f}, bulk ESS "
             f"{r['ess_bulk']:.0f}; thresholds {R_HAT_MAX}, {ESS_MIN}): more acquisition.draws/tune"
             for r in summ[~summ["converged"]].to_dict("records")]
    div = int(idata.sample_stats["diverging"].sum())
    if div:
        notes.append(f"{div} divergent transition(s) in the hierarchical fit: its intervals may be off")
    return summ, {"x0": draws["x0"], "state": state}, notes


def contrasts(summ: pd.DataFrame, draws: dict, settings) -> pd.DataFrame:
    """Pairwise condition contrasts as differences of posterior draws of x0, per paradigm and per category (the
    mean of its paradigms' x0 per draw); where a side is not acquired, a bound as in the per-seed table."""
    from povstim.conditions.order import condition_order

    if summ.empty:
        return pd.DataFrame()
    s = summ.reset_index(drop=True)
    q = [(1 - settings.interval) / 2, (1 + settings.interval) / 2]
    rows = []
    scope = ["suite", "arch", "size"]
    for key, g in s.groupby(scope, sort=False):
        units = [("paradigm", c, p, g[(g["category"] == c) & (g["paradigm"] == p)])
                 for c, p in dict.fromkeys(zip(g["category"], g["paradigm"]))]
        units += [("category", c, "(all)", g[g["category"] == c]) for c in dict.fromkeys(g["category"])]
        for level, cat, par, u in units:
            by = {cond: sub for cond, sub in u.groupby("condition", sort=False)}
            conds = condition_order(list(by))
            for i, a in enumerate(conds):
                for b in conds[i + 1:]:
                    rows.append({**dict(zip(scope, key)), "level": level, "category": cat, "paradigm": par,
                                 "condition_a": a, "condition_b": b,
                                 **_contrast(by[a], by[b], draws["x0"], q)})
    return pd.DataFrame(rows)


def _side(sub: pd.DataFrame, x0: np.ndarray) -> tuple[str, np.ndarray, float]:
    """A condition's state over its paradigms (not acquired if any is), its mean x0 per draw, its budget."""
    states = set(sub["acquisition"])
    state = "not_acquired" if "not_acquired" in states else (
        "acquired" if states == {"acquired"} else ("before_first" if states == {"before_first"} else "partly"))
    return state, x0[:, sub.index.to_numpy()].mean(axis=1), float(sub["budget_words"].max())


def _contrast(a: pd.DataFrame, b: pd.DataFrame, x0: np.ndarray, q) -> dict:
    (sa, xa, ba), (sb, xb, bb) = _side(a, x0), _side(b, x0)
    out = {"acquisition_a": sa, "acquisition_b": sb}
    nan = math.nan
    if sa == "not_acquired" and sb == "not_acquired":
        return {**out, "status": "neither acquired", "delta": nan, "lo": nan, "hi": nan, "factor": nan,
                "p_later": nan}
    if sa == "not_acquired":  # a later than its budget: delta >= log10(budget_a) - b's upper end
        return {**out, "status": "a not acquired: delta >= lo", "delta": nan,
                "lo": math.log10(ba) - float(np.quantile(xb, q[1])), "hi": math.inf, "factor": nan, "p_later": nan}
    if sb == "not_acquired":
        return {**out, "status": "b not acquired: delta <= hi", "delta": nan, "lo": -math.inf,
                "hi": float(np.quantile(xa, q[1])) - math.log10(bb), "factor": nan, "p_later": nan}
    diff = xa - xb
    delta = float(np.median(diff))
    lo, hi = (float(v) for v in np.quantile(diff, q))
    status = "later" if lo > 0 else ("earlier" if hi < 0 else "no clear difference")
    return {**out, "status": status, "delta": delta, "lo": lo, "hi": hi, "factor": float(10 ** delta),
            "p_later": float((diff > 0).mean())}
