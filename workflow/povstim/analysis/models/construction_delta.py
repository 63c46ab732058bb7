"""Δ accuracy of filtered training as a Bayesian estimate: FiCT's question per construction.

For every condition that names the constructions it removes (``conditions.<c>.filter: [..]``) and the
unfiltered condition of the same corpus ("full", ``constructions.delta.reference_condition``), per arch x size
x suite, the items of the two conditions' final models are fitted with a binomial GLMM (Bambi, through
``analysis.bayes``: the same design builder, priors, sampler and diagnostics as Table 12)::

    correct ~ filtered * target + (1|seed) + (1|paradigm)

``filtered``: the item was scored by the filtered condition's model; ``target``: its paradigm is one of the
constructions' target paradigms (their ``targets:``), the others are the control. A group-level term with fewer
than ``analysis.min_groups`` levels is dropped, as in ``bayes.build_design`` (one seed: no ``(1|seed)``).

Read on the probability scale: for each kind (target, control), the draws of

    Δ_kind = mean over the kind's paradigms p of [expit(η(filtered, kind) + u_p) - expit(η(full, kind) + u_p)]

(u_p: the paradigm's group-level intercept; the seed's at 0, a typical seed), and their difference
Δ_target - Δ_control: how much more the construction's removal costs on its own paradigms than on the rest.
Medians and 95% equal-tailed intervals (``INTERVAL``, the project's usual, as ``bayes.summarise``), with the
raw Δ (mean over paradigms of the seed-averaged accuracy, filtered - full: what ``constructions.delta`` reports)
beside them, and each fit's R-hat, ESS and divergences.

A condition whose constructions name no target paradigm, or none that was scored, or whose models scored no
control paradigm, has no Δ to estimate: it is a ``NO TARGET`` / ``NO CONTROL`` note (logged, in notes.json and
the report), never an error.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import expit

from povstim.constructions.delta import reference_condition, targets_of
from povstim.io import PovstimError
from povstim.analysis.models import bayes

log = logging.getLogger(__name__)

FORMULA = "filtered * target + (1|seed) + (1|paradigm)"
INTERVAL = 0.95
KEYS = ["arch", "size", "suite"]


@dataclass(frozen=True)
class Comparison:
    condition: str  # the filtered condition
    constructions: tuple[str, ...]
    full: str  # its unfiltered reference
    targets: frozenset


def comparisons(conditions: dict) -> list[Comparison]:
    """One comparison per condition whose ``filter`` is a list of constructions (the registry must hold them:
    ``constructions.library.use`` registers a config's own)."""
    out = []
    for cond, spec in conditions.items():
        names = spec.get("filter")
        if not isinstance(names, list):
            continue
        out.append(Comparison(cond, tuple(names), reference_condition({"conditions": conditions}, cond),
                              frozenset(targets_of(names))))
    return out


def raw_deltas(df: pd.DataFrame) -> dict:
    """Raw accuracies per kind: each paradigm's accuracy averaged over seeds, then over the kind's paradigms
    (``df``: items with ``correct``, or counts with ``n_correct``/``n_total``, e.g. published accuracies)."""
    keys = ["filtered", "target", "paradigm", "seed"]
    if "correct" in df.columns:
        per_seed = df.groupby(keys)["correct"].mean()
    else:
        sums = df.groupby(keys)[["n_correct", "n_total"]].sum()
        per_seed = sums["n_correct"] / sums["n_total"]
    per_paradigm = per_seed.groupby(["filtered", "target", "paradigm"]).mean()
    out = {}
    for kind, is_target in (("target", True), ("control", False)):
        filt = per_paradigm.loc[(True, is_target)].mean()
        full = per_paradigm.loc[(False, is_target)].mean()
        out[kind] = (float(filt), float(full))
    return out


def comparison_items(items: pd.DataFrame, comp: Comparison) -> pd.DataFrame:
    """The final items of the two conditions, with ``filtered`` and ``target``, on the paradigms both scored."""
    df = items[items["condition"].isin([comp.condition, comp.full])]
    df = df.assign(filtered=df["condition"] == comp.condition, target=df["paradigm"].isin(comp.targets))
    both = df.groupby("paradigm")["filtered"].nunique()
    return df[df["paradigm"].isin(both[both == 2].index)].reset_index(drop=True)


def delta_draws(posterior, design: bayes.Design, df: pd.DataFrame) -> dict[str, np.ndarray]:
    """Draws of Δ_target, Δ_control (probability scale) and their difference (see the module docstring)."""
    beta = np.column_stack([np.asarray(posterior[c.name]).reshape(-1) for c in design.columns]) \
        if design.columns else None
    b0 = np.asarray(posterior["Intercept"]).reshape(-1)
    u = _paradigm_effects(posterior, design)
    out = {}
    for kind, is_target in (("target", True), ("control", False)):
        paradigms = sorted(df.loc[df["target"] == is_target, "paradigm"].unique())
        eta = {}
        for filtered in (True, False):
            row = design.row({"filtered": filtered, "target": is_target})
            eta[filtered] = b0 + (beta @ row if beta is not None else 0.0)
        per = [expit(eta[True] + u.get(p, 0.0)) - expit(eta[False] + u.get(p, 0.0)) for p in paradigms]
        out[kind] = np.mean(per, axis=0)
    out["difference"] = out["target"] - out["control"]
    return out


def _paradigm_effects(posterior, design: bayes.Design) -> dict:
    """paradigm -> draws of its group-level intercept; empty when (1|paradigm) was dropped."""
    if not any(g.group == "paradigm" for g in design.groups):
        return {}
    var = posterior["1|g_paradigm"]
    dim = next(d for d in var.dims if d not in ("chain", "draw"))
    return {str(p): var.sel({dim: p}).values.reshape(-1) for p in var[dim].values}


def _max_rhat(draws: dict, chains: int):
    """The largest R-hat of the Δ draws (None for a single chain: R-hat needs two)."""
    if chains < 2:
        return None
    import arviz as az  # deferred with Bambi's stack (the module's callers already loaded it to fit)

    return round(max(float(az.rhat(np.asarray(x).reshape(chains, -1))) for x in draws.values()), 3)


def _interval(x: np.ndarray) -> tuple[float, float, float]:
    lo = (1 - INTERVAL) / 2
    return float(np.median(x)), float(np.quantile(x, lo)), float(np.quantile(x, 1 - lo))


def fit_comparison(df: pd.DataFrame, settings, cores: int | None = None) -> tuple[dict, dict]:
    """Fit one comparison's items (or binomial counts); (the row's estimates and diagnostics, the fit's
    diagnostics)."""
    response = ["correct"] if "correct" in df.columns else ["n_correct", "n_total"]
    design = bayes.build_design(df[["filtered", "target", "seed", "paradigm", *response]], FORMULA,
                                family="binomial", zscore=False, contrasts="sum", min_groups=settings.min_groups)
    if "filtered" not in design.codes:
        raise PovstimError("the filtered/full contrast was dropped from the design (aliased or one level)")
    res = bayes.fit_converged(design, settings, cores=cores)
    draws = delta_draws(res.idata.posterior, design, df)
    row: dict = {}
    for kind in ("target", "control", "difference"):
        med, lo, hi = _interval(draws[kind])
        stem = "diff" if kind == "difference" else f"delta_{kind}"
        row.update({stem: med, f"{stem}_lower": lo, f"{stem}_upper": hi})
    row["p_diff_below_0"] = float(np.mean(draws["difference"] < 0))
    diag = res.diagnostics
    # the R-hat of the reported quantities themselves: the intercept and the paradigms' effects trade off
    # (only their sums enter a Δ), so a parameter's R-hat can flag what the Δs do not inherit
    diag["max_r_hat_delta"] = _max_rhat(draws, int(settings.chains))
    row.update({"converged": bool(diag["converged"]), "max_r_hat": diag["max_r_hat"],
                "max_r_hat_delta": diag["max_r_hat_delta"],
                "min_ess_bulk": diag["min_ess_bulk"], "divergences": diag["divergences"],
                "dropped_terms": "; ".join(diag["dropped_terms"]), "problems": "; ".join(diag["problems"])})
    return row, diag


def delta_table(items: pd.DataFrame, conditions: dict, settings, cores: int | None = None):
    """(the Δ table: one row per comparison x arch x size x suite; notes; {row key: diagnostics})."""
    notes: list[str] = []
    rows: list[dict] = []
    diags: dict = {}
    for comp in comparisons(conditions):
        label = f"condition {comp.condition} ({'+'.join(comp.constructions)})"
        if not comp.targets:
            notes.append(_note("NO TARGET", f"{label}: its constructions name no target paradigm, so there is no "
                               "Δ on targets to estimate (add targets: to the construction)"))
            continue
        df_all = comparison_items(items, comp)
        if df_all.empty:
            notes.append(_note("NO SCORES", f"{label}: no paradigm scored by both it and {comp.full}"))
            continue
        for key, df in df_all.groupby(KEYS, sort=True):
            where = f"{label}, {', '.join(f'{k} {v}' for k, v in zip(KEYS, key))}"
            kinds = set(df["target"])
            if True not in kinds:
                notes.append(_note("NO TARGET", f"{where}: none of its target paradigms was scored "
                                   f"({', '.join(sorted(comp.targets))})"))
                continue
            if False not in kinds:
                notes.append(_note("NO CONTROL", f"{where}: every scored paradigm is a target; no control"))
                continue
            log.info("fitting %s: %d items", where, len(df))
            row, diag = comparison_row(comp, key, df, settings, cores)
            for p in diag["problems"]:
                notes.append(_note("CONVERGENCE PROBLEM", f"{where}: {p}"))
            rows.append(row)
            # the sampling time goes to the log, not the outputs: a rerun's files are byte-identical
            log.info("%s: sampled in %.1f s", where, diag["sampling_seconds"])
            diags["/".join([comp.condition, *map(str, key)])] = {k: v for k, v in diag.items()
                                                                  if k != "sampling_seconds"}
    return pd.DataFrame(rows), notes, diags


def comparison_row(comp: Comparison, key: tuple, df: pd.DataFrame, settings, cores) -> tuple[dict, dict]:
    """One row of the Δ table (raw and estimated Δ; ``key``: its arch, size, suite) and the fit's diagnostics."""
    raw = raw_deltas(df)
    row = {"condition": comp.condition, "constructions": "+".join(comp.constructions), "full": comp.full,
           **dict(zip(KEYS, map(str, key))),
           "n_target": int(df.loc[df["target"], "paradigm"].nunique()),
           "n_control": int(df.loc[~df["target"], "paradigm"].nunique()),
           "n_seeds": int(df["seed"].nunique())}
    for kind in ("target", "control"):
        filt, full = raw[kind]
        row.update({f"acc_filtered_{kind}": filt, f"acc_full_{kind}": full, f"raw_delta_{kind}": filt - full})
    row["raw_diff"] = row["raw_delta_target"] - row["raw_delta_control"]
    est, diag = fit_comparison(df, settings, cores)
    row.update(est)
    return _rounded(row), diag


def _rounded(row: dict) -> dict:
    """Four decimals, so reruns with the same seed are byte-identical and diffs stay readable."""
    return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()}


def _note(tag: str, text: str) -> str:
    log.warning("%s: %s", tag, text)
    return f"{tag}: {text}"
