"""Dose-response: how much evidence does a learner need? (docs/manipulations.md)

A dose series (``conditions.<name>.dose``) trains one condition per rate of a construction's targeted
evidence. This module fits accuracy on the construction's target paradigms against the log rate:

    n_correct ~ Binomial(n_items, logistic(a + b * x + u_seed + v_paradigm)),   x = log10(rate + floor)

with Bambi (binomial family, random intercepts for seed and paradigm). **Rate 0** has no logarithm: it is
placed at ``floor`` = the smallest positive rate / 10 (``FLOOR_FACTOR``), one decade below the smallest
dose, so a series 0, 1e-4, 1e-3, 1e-2 is evenly spaced in x (1e-5 stands for 0). The rate-0 condition is
the reference: the effect of a rate r is ``logistic(a + b x_r) - logistic(a + b x_0)`` (population level,
random effects at zero), and the **smallest effective rate** is the smallest positive rate whose effect's
central credible interval (``interval``, default 95%) excludes zero. x is centred before fitting (the
slope is per decade of rate).
"""

from __future__ import annotations

import logging
import time

import numpy as np
import pandas as pd

from povstim.io import PovstimError

log = logging.getLogger("povstim.dose")

FLOOR_FACTOR = 0.1  # rate 0 sits at (smallest positive rate) x FLOOR_FACTOR


def target_paradigms(items: pd.DataFrame, construction: str, paradigms: list[str] | None = None) -> list[str]:
    """The construction's target paradigms: the given list, or those whose category is the construction
    (``Question Formation`` <-> ``question_formation``)."""
    if paradigms:
        missing = sorted(set(paradigms) - set(items["paradigm"].astype(str)))
        if missing:
            raise PovstimError(f"dose: paradigms {', '.join(missing)} are not in the scores")
        return sorted(paradigms)
    cat = items["category"].astype(str).str.lower().str.replace(" ", "_")
    out = sorted(items.loc[cat == construction, "paradigm"].astype(str).unique())
    if not out:
        raise PovstimError(f"dose: no paradigm's category is {construction!r}: name them (dose.paradigms)")
    return out


def floor_of(rates) -> float:
    pos = [float(r) for r in rates if float(r) > 0]
    if not pos:
        raise PovstimError("dose: a series needs at least one positive rate")
    return min(pos) * FLOOR_FACTOR


def cells(items: pd.DataFrame, members: dict[str, float], paradigms: list[str]) -> pd.DataFrame:
    """n_correct / n_items per condition x seed x paradigm of the series (final models only)."""
    d = items[items["condition"].astype(str).isin(members) & items["paradigm"].astype(str).isin(paradigms)]
    if "final" in d.columns:
        d = d[d["final"].astype(bool)]
    if d.empty:
        raise PovstimError(f"dose: no scores of {', '.join(members)} on {', '.join(paradigms)}")
    g = (d.assign(condition=d["condition"].astype(str), paradigm=d["paradigm"].astype(str), seed=d["seed"].astype(str))
         .groupby(["condition", "seed", "paradigm"], sort=True)["correct"].agg(["sum", "count"]).reset_index())
    g = g.rename(columns={"sum": "n_correct", "count": "n_items"})
    g["n_correct"] = g["n_correct"].astype(int)
    g["rate"] = g["condition"].map(members).astype(float)
    fl = floor_of(members.values())
    g["log_rate"] = np.log10(g["rate"] + fl)
    return g


def fit(data: pd.DataFrame, *, draws: int = 500, tune: int = 500, chains: int = 2, seed: int = 1,
        interval: float = 0.95, target_accept: float = 0.9, cores: int = 1) -> dict:
    """Fit the dose-response model and summarise it (see the module docstring)."""
    import bambi as bmb

    rates = sorted(data["rate"].unique())
    fl = floor_of(rates)
    center = float(np.mean(np.log10(np.array(rates) + fl)))
    d = data.assign(x=data["log_rate"] - center)
    groups = [g for g in ("seed", "paradigm") if d[g].nunique() > 1]
    formula = "p(n_correct, n_items) ~ x" + "".join(f" + (1|{g})" for g in groups)
    t0 = time.perf_counter()
    model = bmb.Model(formula, d, family="binomial")
    idata = model.fit(draws=draws, tune=tune, chains=chains, cores=cores, random_seed=seed,
                      target_accept=target_accept, progressbar=False, idata_kwargs={"log_likelihood": False})
    post = idata.posterior
    a = post["Intercept"].values.reshape(-1)
    b = post["x"].values.reshape(-1)
    lo_q, hi_q = (1 - interval) / 2, 1 - (1 - interval) / 2

    def p(x):
        return 1 / (1 + np.exp(-(a[:, None] + b[:, None] * (np.asarray(x)[None, :] - center))))

    x0 = np.log10(0 + fl)
    p0 = p([x0])[:, 0]
    effects = []
    for r in rates:
        if r <= 0:
            continue
        e = p([np.log10(r + fl)])[:, 0] - p0
        lo, hi = np.quantile(e, [lo_q, hi_q])
        effects.append({"rate": float(r), "effect_mean": round(float(e.mean()), 6), "lower": round(float(lo), 6),
                        "upper": round(float(hi), 6), "excludes_zero": bool(lo > 0 or hi < 0)})
    smallest = next((e["rate"] for e in effects if e["excludes_zero"]), None)
    grid = np.linspace(x0, np.log10(max(rates) + fl), 60)
    pg = p(grid)
    curve = pd.DataFrame({"log_rate": grid, "rate_plus_floor": 10 ** grid, "mean": pg.mean(0),
                          "lower": np.quantile(pg, lo_q, axis=0), "upper": np.quantile(pg, hi_q, axis=0)})
    blo, bhi = np.quantile(b, [lo_q, hi_q])
    return {
        "formula": formula, "family": "binomial", "floor": fl, "floor_rule": f"smallest positive rate x {FLOOR_FACTOR}",
        "center_log_rate": round(center, 6), "interval": interval, "draws": draws, "tune": tune, "chains": chains,
        "seed": seed, "seconds": round(time.perf_counter() - t0, 1),
        "slope_per_decade": {"mean": round(float(b.mean()), 6), "lower": round(float(blo), 6),
                             "upper": round(float(bhi), 6)},
        "intercept_at_center": round(float(a.mean()), 6),
        "effects_vs_rate0": effects, "smallest_effective_rate": smallest,
        "curve": curve,
    }
