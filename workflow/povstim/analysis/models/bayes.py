"""The Bayesian mixed-effects logistic regression of POSH Table 12, fitted with Bambi.

Default model (POSH §6): ``val ~ (size + category) * filtered + source + (1|seed) + (1|phenomenon)``
with size z-scored, categorical predictors sum-to-zero coded (the last level — *Wanna* for
the POSH categories, ``False`` for ``filtered``, ``wiki`` for ``source`` — is the implicit
reference, so a positive two-level estimate favours the first level), priors
b ~ N(0, 0.5), Intercept ~ N(0, 1.5), group SD ~ Exp(2).

The likelihood is Bernoulli on items or, identically and much faster, binomial on cells
aggregated over every variable in the formula (``family: binomial``).

We build the fixed-effect design ourselves (see formula.py) and pass Bambi plain numeric
columns, so that a factor with one level, or a term that another term aliases (e.g.
``filtered`` and ``source`` when the only conditions are BABY-F and WIKI), is dropped with
a logged warning instead of producing an unidentifiable model.

The three-level model of POSH's released analysis (xiulinyang/posh-bench, stats/bayesian.R,
``val ~ (size_z + category) * source_filter + (1|random_seed) + (1|phenomenon)``) replaces
``filtered`` and ``source`` by one factor ``source_filter`` (BABY-F, BABY, WIKI; treatment-coded
against BABY as there) and is read through pairwise contrasts of its levels
(:func:`pairwise_contrasts`): with Table 12's formula a category-specific BABY-vs-WIKI
difference has no term of its own (``source`` enters only as a main effect) and loads on the
Category x Filtering terms, which then look like effects of filtering.
"""

from __future__ import annotations

import logging
import math
import os
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from povstim.io import PovstimError, parse_size
from povstim.analysis.models import formula as fml

log = logging.getLogger(__name__)

# The formula, the priors and the sampler settings come from the analysis
# settings (defaults: workflow/schemas/config/analysis.schema.yaml).
# Thresholds for a loud convergence warning (Vehtari et al. 2021).
RHAT_MAX = 1.01
ESS_PER_CHAIN_MIN = 100

PRETTY = {
    "size": "Training size (z)",
    "category": "Category",
    "filtered": "Filtering",
    "source": "Training source",
    "seed": "Random-seed",
    "run": "Trained model (run)",
    "phenomenon": "Phenomenon",
    "paradigm": "Paradigm",
    "source_filter": "Condition",
    "arch": "Architecture",  # analysis/archs.py: added when an experiment trains several archs
    "ordered": "Ordered training",
}
# The three-level factor's reference level (POSH's released model: baby_unfiltered).
THREE_LEVEL_REFERENCE = "BABY"
CONDITION_ORDER = ["BABY-F", "BABY", "WIKI"]


@dataclass
class Column:
    name: str  # safe column name passed to Bambi
    label: str  # e.g. "category[Binding]:filtered[True]"
    pretty: str  # e.g. "Binding × Filtering"
    values: np.ndarray
    parts: list = field(default_factory=list)  # (variable, index of its code) per factor of the term


@dataclass
class Design:
    formula: fml.Formula
    data: pd.DataFrame  # safe-named columns + response + group factors
    response: str  # Bambi LHS
    columns: list[Column]
    groups: list[fml.GroupTerm]
    family: str
    dropped: list[str] = field(default_factory=list)
    coding: dict = field(default_factory=dict)
    raw: pd.DataFrame | None = None  # the cells (or items) with readable columns
    codes: dict = field(default_factory=dict)  # categorical variable -> {level: its code per column}
    centers: dict = field(default_factory=dict)  # numeric variable -> the data mean on the design's scale

    def row(self, cell: dict, average: tuple = ()) -> np.ndarray:
        """The fixed-effect design row (without the intercept) of a hypothetical cell: categorical
        variables at the given level, numeric ones at ``cell[var]`` or else their data mean; a categorical
        variable named in ``average`` and not in ``cell`` at the mean of its levels' codes (the mean of the
        linear predictor over its levels)."""
        out = np.ones(len(self.columns))
        for i, c in enumerate(self.columns):
            for var, k in c.parts:
                if var in self.codes:
                    if var not in cell and var in average:
                        out[i] *= float(np.mean([code[k] for code in self.codes[var].values()]))
                        continue
                    if var not in cell:
                        raise PovstimError(f"cell {cell} does not give a level of {var}")
                    out[i] *= self.codes[var][str(cell[var])][k]
                else:
                    out[i] *= float(cell.get(var, self.centers[var]))
        return out

    def bambi_formula(self) -> str:
        rhs = ["1" if self.formula.intercept else "0"] + [c.name for c in self.columns]
        for g in self.groups:
            parts = (["1"] if g.intercept else ["0"]) + [self._slope_name(s) for s in g.slopes]
            rhs.append(f"({' + '.join(parts)}|{_group_col(g.group)})")
        return f"{self.response} ~ " + " + ".join(rhs)

    def _slope_name(self, var):
        for c in self.columns:
            if c.label == var:
                return c.name
        raise PovstimError(f"group-level slope {var!r} needs {var!r} as a numeric fixed effect too")

    def expanded(self) -> str:
        rhs = ["1" if self.formula.intercept else "0"] + [c.label for c in self.columns]
        return " + ".join(rhs + [g.label() for g in self.groups])


def _group_col(g: str) -> str:
    return f"g_{g}"


def derive(df: pd.DataFrame) -> pd.DataFrame:
    """Add the variables the POSH formula names but the score files spell differently."""
    df = df.copy()
    if "phenomenon" not in df.columns and "paradigm" in df.columns:
        df["phenomenon"] = df["paradigm"]
    if "val" not in df.columns and "correct" in df.columns:
        df["val"] = df["correct"].astype(int)
    if "source_filter" not in df.columns and {"source", "filtered"} <= set(df.columns):
        # POSH's three-level factor: BABY-F (filtered), BABY (baby, not filtered), WIKI
        df["source_filter"] = [f"{str(s).upper()}{'-F' if f else ''}" for s, f in
                               zip(df["source"], df["filtered"].astype(bool))]
        if "placebo" in df.columns:  # a placebo condition of BABY-F is its own level, BABY-F-PLACEBO1
            df["source_filter"] = [f"{sf}-{p}" if p else sf for sf, p in zip(df["source_filter"], df["placebo"])]
    if "run" not in df.columns and "seed" in df.columns:
        # one trained model: arch x condition x size x seed (the run-level effect's groups)
        keys = [k for k in ("arch", "condition", "source_filter", "size", "seed") if k in df.columns]
        run = df[keys[0]].astype(str)
        for k in keys[1:]:
            run = run + "|" + df[k].astype(str)
        df["run"] = run
    return df


def _numeric(series: pd.Series, var: str) -> pd.Series | None:
    """The numeric values of a variable, or None if it is categorical."""
    if var == "size":
        return series.map(lambda s: float(parse_size(s if isinstance(s, (int, np.integer)) else str(s))))
    if pd.api.types.is_bool_dtype(series) or not pd.api.types.is_numeric_dtype(series):
        return None
    if var == "seed":
        return None
    return series.astype(float)


def _levels(series: pd.Series) -> list:
    vals = series.unique().tolist()
    if pd.api.types.is_bool_dtype(series):
        return sorted(vals, reverse=True)  # True first: "filtered vs. unfiltered"
    return sorted(vals, key=lambda v: (str(type(v)), v))


def _level_str(v) -> str:
    return str(v)


def build_design(df: pd.DataFrame, formula_text: str, *, family: str, zscore: bool, contrasts: str,
                 coding_of: dict | None = None, min_groups: int = 2) -> Design:
    """Code the predictors, expand the formula, drop degenerate/aliased terms, aggregate.

    ``coding_of``: per-variable ``(contrasts, reference level)`` overriding ``contrasts`` and the
    last-level reference (the three-level model: ``{"source_filter": ("treatment", "BABY")}``).

    A group-level term needs at least ``min_groups`` groups (2 is the least that has a variance at all; the
    pipeline passes ``analysis.min_groups``, default 3): with two seeds, the SD of ``(1|seed)`` is
    whatever its prior says, and it made every sampler setting we tried diverge on the demo (docs/analysis.md).
    """
    coding_of = coding_of or {}
    f = fml.parse(formula_text)
    df = derive(df)
    needed = _check_variables(df, f, formula_text)
    # Aggregate first: every design column is a function of the formula's variables, so
    # the binomial on cells has exactly the Bernoulli likelihood.
    data = _aggregate(df, list(dict.fromkeys(needed)), family)
    dropped: list[str] = []
    coding: dict[str, dict] = {}
    codes: dict[str, dict[str, list[float]]] = {}
    centers: dict[str, float] = {}
    var_cols: dict[str, list[tuple[str, str, np.ndarray]]] = {}  # var -> [(label, pretty, values)]
    for var in f.variables():
        num = _numeric(data[var], var)
        if num is not None:
            coded = _numeric_column(data, var, num, zscore, dropped)
            if coded is not None:
                coding[var], centers[var], var_cols[var] = coded
            continue
        coded = _categorical_columns(data, var, coding_of.get(var, (contrasts, None)), dropped)
        if coded is not None:
            coding[var], codes[var], var_cols[var] = coded
    columns = _drop_aliased(_term_columns(f, var_cols, len(data), dropped), f.intercept, dropped)
    groups = _group_terms(f, data, min_groups, dropped)
    out = pd.DataFrame({c.name: c.values for c in columns})
    for g in groups:
        out[_group_col(g.group)] = data[g.group].astype(str).to_numpy()
    if "n_total" in data.columns:
        out["n_correct"] = data["n_correct"].to_numpy(int)
        out["n_total"] = data["n_total"].to_numpy(int)
        response = "p(n_correct, n_total)"
        fam = "binomial"
    else:
        out["val"] = data["val"].to_numpy(int)
        response = "val"
        fam = "bernoulli"
    return Design(f, out, response, columns, groups, fam, dropped, coding, raw=data, codes=codes, centers=centers)


def _check_variables(df: pd.DataFrame, f, formula_text: str) -> list[str]:
    """The formula's variables and grouping factors, each present in ``df`` without missing values."""
    if not ("n_correct" in df.columns and "n_total" in df.columns) and "val" not in df.columns:
        raise PovstimError("the data has neither a 'correct' column (items) nor n_correct/n_total (counts)")
    needed = f.variables() + [g.group for g in f.groups]
    missing = [v for v in needed if v not in df.columns]
    if missing:
        hint = ""
        if {"filtered", "source"} & set(missing):
            hint = " ('filtered' and 'source' come from --conditions, or give them as columns)"
        raise PovstimError(f"formula {formula_text!r} names variable(s) {', '.join(missing)} that the data "
                           f"lacks{hint}; available: {', '.join(sorted(map(str, df.columns)))}")
    for v in needed:
        if df[v].isna().any():
            raise PovstimError(f"variable {v!r} has missing values")
    return needed


def _aggregate(df: pd.DataFrame, keys: list[str], family: str) -> pd.DataFrame:
    """Cells of (n_correct, n_total) per combination of ``keys`` (counts are always binomial), or the items
    themselves for a Bernoulli model."""
    if "n_correct" in df.columns and "n_total" in df.columns:
        return df.groupby(keys, sort=True, dropna=False)[["n_correct", "n_total"]].sum().reset_index()
    if family == "binomial":
        return (df.groupby(keys, sort=True, dropna=False)["val"]
                .agg(n_correct="sum", n_total="size").reset_index())
    if family == "bernoulli":
        return df[keys + ["val"]].reset_index(drop=True)
    raise PovstimError(f"unknown family {family!r}: use bernoulli or binomial")


def _numeric_column(data: pd.DataFrame, var: str, num: pd.Series, zscore: bool, dropped: list[str]):
    """(coding, center, [(label, pretty, values)]) of a numeric predictor; None (and noted in ``dropped``) when
    it takes a single value."""
    pretty = PRETTY.get(var, var)
    sd = float(num.std(ddof=1)) if len(num) > 1 else 0.0
    if not (sd > 0):
        dropped.append(var)
        log.warning("dropping %s: it takes a single value (%s) in this design", var, num.iloc[0])
        return None
    if zscore:
        mean = float(num.mean())
        # z-score over the observations (items), not the aggregated cells, as POSH did.
        if "n_total" in data.columns:
            w = data["n_total"].to_numpy(float)
            mean = float(np.average(num, weights=w))
            sd = math.sqrt(float(np.average((num - mean) ** 2, weights=w)) * w.sum() / (w.sum() - 1))
        vals = ((num - mean) / sd).to_numpy(float)
        return {"type": "numeric", "zscored": True, "mean": mean, "sd": sd}, 0.0, [(var, pretty, vals)]
    vals = num.to_numpy(float)
    w = data["n_total"].to_numpy(float) if "n_total" in data.columns else None
    return ({"type": "numeric", "zscored": False}, float(np.average(vals, weights=w)),
            [(var, pretty.replace(" (z)", ""), vals)])


def _categorical_columns(data: pd.DataFrame, var: str, kind_ref: tuple, dropped: list[str]):
    """(coding, codes, [(label, pretty, values)]) of a categorical predictor under ``(contrasts, reference)``;
    None (and noted in ``dropped``) when it has a single level."""
    pretty = PRETTY.get(var, var)
    levels = _levels(data[var])
    if len(levels) < 2:
        dropped.append(var)
        log.warning("dropping %s: it has a single level (%s) in this design", var, levels[0] if levels else "")
        return None
    kind, want_ref = kind_ref
    if want_ref is not None and any(_level_str(x) == want_ref for x in levels):
        levels = [x for x in levels if _level_str(x) != want_ref] + [x for x in levels if _level_str(x) == want_ref]
    ref = levels[-1]
    cols = []
    two = len(levels) == 2
    for lv in levels[:-1]:
        is_lv = (data[var] == lv).to_numpy()
        if kind == "sum":
            vals = np.where(is_lv, 1.0, np.where((data[var] == ref).to_numpy(), -1.0, 0.0))
        elif kind == "treatment":
            vals = is_lv.astype(float)
        else:
            raise PovstimError(f"unknown contrasts {kind!r}: use sum or treatment")
        if two:
            lvname = "yes vs. no" if isinstance(lv, (bool, np.bool_)) else f"{_level_str(lv)} vs. {_level_str(ref)}"
            p = f"{pretty} ({lvname})"
        elif want_ref is not None:
            p = f"{pretty} ({_level_str(lv)} vs. {_level_str(ref)})"
        else:
            p = f"{pretty} ({_level_str(lv)})"
        cols.append((f"{var}[{_level_str(lv)}]", p, vals))
    coding = {"type": "categorical", "contrasts": kind, "levels": [_level_str(x) for x in levels],
              "reference": _level_str(ref)}
    codes = {_level_str(v): [(1.0 if v == lv else (-1.0 if (kind == "sum" and v == ref) else 0.0))
                             for lv in levels[:-1]] for v in levels}
    return coding, codes, cols


def _term_columns(f, var_cols: dict, n_rows: int, dropped: list[str]) -> list[Column]:
    """The design's columns: each term's products of its variables' coded columns (a term with a dropped
    variable is dropped, and an interaction's loss is noted)."""
    columns: list[Column] = []
    for term in f.terms:
        if any(v not in var_cols for v in term):
            gone = [v for v in term if v not in var_cols]
            label = ":".join(term)
            if len(term) > 1:  # main effects were already reported above
                dropped.append(label)
                log.warning("dropping term %s: %s cannot be estimated in this design", label, ", ".join(gone))
            continue
        combos = [("", "", np.ones(n_rows), [])]
        for v in term:
            combos = [(f"{a}:{lab}" if a else lab, f"{pa} × {_short(pv)}" if pa else pv, va * vv, parts + [(v, k)])
                      for a, pa, va, parts in combos for k, (lab, pv, vv) in enumerate(var_cols[v])]
        for lab, pv, vals, parts in combos:
            if len(term) > 1:
                pv = " × ".join(_short(p) for p in pv.split(" × "))
            columns.append(Column(f"x{len(columns)}", lab, pv, vals, parts))
    return columns


def _group_terms(f, data: pd.DataFrame, min_groups: int, dropped: list[str]) -> list:
    """The formula's group-level terms whose grouping factor has at least ``min_groups`` levels."""
    groups = []
    for g in f.groups:
        n = data[g.group].nunique()
        if n < max(2, int(min_groups)):
            dropped.append(g.label())
            log.warning("dropping group-level term %s: %s has %d level(s); a group SD needs at least %d "
                        "(analysis.min_groups)", g.label(), g.group, n, max(2, int(min_groups)))
            continue
        groups.append(g)
    return groups


def _short(pretty: str) -> str:
    """'Category (Binding)' -> 'Binding'; 'Filtering (yes vs. no)' -> 'Filtering' for interaction labels;
    'Condition (BABY-F vs. BABY)' -> 'BABY-F vs. BABY'."""
    if pretty.startswith(PRETTY["source_filter"] + " (") and pretty.endswith(")"):
        return pretty[len(PRETTY["source_filter"]) + 2:-1]
    if " vs. " in pretty or pretty.endswith("(z)"):
        return pretty.split(" (")[0]
    if pretty.startswith("Category (") and pretty.endswith(")"):
        return pretty[len("Category ("):-1]
    return pretty


def _drop_aliased(columns: list[Column], intercept: bool, dropped: list[str]) -> list[Column]:
    """Keep columns in order while each adds rank; warn about those another term aliases."""
    base = [np.ones(len(columns[0].values))] if (intercept and columns) else []
    kept: list[Column] = []
    rank = len(base)
    mat = np.column_stack(base) if base else None
    for c in columns:
        trial = c.values[:, None] if mat is None else np.column_stack([mat, c.values])
        r = np.linalg.matrix_rank(trial)
        if r > rank:
            kept.append(c)
            mat, rank = trial, r
        else:
            dropped.append(c.label)
            log.warning("dropping %s: it is aliased with earlier terms (confounded in this design)", c.label)
    return kept


# ---- priors and fitting -----------------------------------------------------------------

def _prior(spec: dict, what: str):
    import bambi as bmb

    spec = dict(spec)
    dist = spec.pop("dist", None)
    if not dist:
        raise PovstimError(f"prior {what!r} needs a 'dist' (e.g. Normal, Exponential, HalfNormal)")
    return bmb.Prior(dist, **{k: float(v) for k, v in spec.items()})


PRIOR_KEYS = ("intercept", "common", "group_sd")


def make_priors(design: Design, priors: dict) -> dict:
    """Bambi priors from the settings' ``priors`` (intercept, common, group_sd: each {dist, params})."""
    import bambi as bmb

    cfg = {}
    for k in PRIOR_KEYS:
        if k not in priors:
            raise PovstimError(f"priors: no {k!r} prior (give intercept, common and group_sd)")
        cfg[k] = dict(priors[k])
    unknown = sorted(set(priors) - set(PRIOR_KEYS))
    if unknown:
        raise PovstimError(f"priors: unknown key {unknown[0]!r}; use intercept, common, group_sd")
    out = {}
    if design.formula.intercept:
        out["Intercept"] = _prior(cfg["intercept"], "intercept")
    for c in design.columns:
        out[c.name] = _prior(cfg["common"], "common")
    for g in design.groups:
        sd = _prior(cfg["group_sd"], "group_sd")
        names = (["1"] if g.intercept else []) + [design._slope_name(s) for s in g.slopes]
        for n in names:
            out[f"{n}|{_group_col(g.group)}"] = bmb.Prior("Normal", mu=0.0, sigma=sd)
    return out


@dataclass
class FitResult:
    idata: object
    summary: pd.DataFrame
    diagnostics: dict


SAMPLERS = ("auto", "pymc", "nutpie")
# `auto` uses nutpie for runs of at least this many NUTS iterations in all (chains x (tune + draws)).
# nutpie compiles the model with numba first (~20-30 s on 2 cores), then samples far faster than PyMC's
# NUTS (whose per-leapfrog Python overhead dominates these small GLMMs). Measured on the 2-core machine
# (docs/analysis.md, "Samplers"): the demo's 4 x (1000 + 1000) fit took 40-67 s with nutpie vs 117-157 s
# with PyMC, a test-sized 2 x (200 + 150) fit 30 s vs 22 s; the two costs cross near 1,400 iterations.
NUTPIE_MIN_ITERATIONS = 2000


def resolve_sampler(sampler: str, iterations: int | None = None) -> str:
    """``auto``: nutpie when it is installed and the run is long enough (``iterations``, all chains' tune +
    draws, at least NUTPIE_MIN_ITERATIONS; None counts as long) to repay its compilation, else PyMC's NUTS."""
    if sampler != "auto":
        return sampler
    if iterations is not None and iterations < NUTPIE_MIN_ITERATIONS:
        return "pymc"
    import importlib.util

    return "nutpie" if importlib.util.find_spec("nutpie") is not None else "pymc"


def fit(design: Design, settings, cores: int | None = None) -> FitResult:
    """Sample the posterior with the analysis settings' sampler, chains, draws, tune, seed,
    target_accept, priors and parametrization."""
    import bambi as bmb

    draws, tune, chains, seed = int(settings.draws), int(settings.tune), int(settings.chains), int(settings.seed)
    target_accept, sampler = float(settings.target_accept), settings.sampler
    centered = settings.parametrization == "centered"
    priors = settings.priors

    if sampler not in SAMPLERS:
        raise PovstimError(f"unknown sampler {sampler!r}: use {' or '.join(SAMPLERS)}")
    sampler = resolve_sampler(sampler, chains * (tune + draws))
    if sampler == "nutpie":
        try:
            import nutpie  # noqa: F401
        except ImportError:
            raise PovstimError("analysis.sampler: nutpie is not installed (pip install nutpie==0.15.2, a "
                               "dependency of povstim); or use sampler: pymc") from None

    if not design.columns and not design.groups and not design.formula.intercept:
        raise PovstimError("nothing left to fit: every term was dropped")
    family = "binomial" if design.family == "binomial" else "bernoulli"
    model = bmb.Model(design.bambi_formula(), design.data, family=family,
                      priors=make_priors(design, priors), noncentered=not centered)
    # chains at once: what the job was given (--cores), no more than the chains or the CPUs this process may
    # use (the README's --cores 8 on a 2-core laptop would otherwise run 4 sampler threads on 2 cores)
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    cores = max(1, min(cores or chains, chains, usable))
    t0 = time.perf_counter()
    # PyMC hands `cores` to its own sampler only: nutpie would run as many chains at once as the machine has
    # CPUs, past the job's share (the analyze rule's threads); the draws do not depend on it (tests/test_samplers.py)
    kwargs = ({"idata_kwargs": {"log_likelihood": False}} if sampler == "pymc"
              else {"nuts_sampler_kwargs": {"cores": cores}})
    init = settings.init
    if sampler == "pymc" and init != "auto":
        kwargs["init"] = init
    log.info("sampling %d chain(s) x (%d tune + %d draws) with %s on %d core(s)%s", chains, tune, draws, sampler,
             cores, "" if _progress_wanted() else " (no progress bar: not a terminal)")
    with _interrupts() as interrupted:
        try:
            idata = model.fit(draws=draws, tune=tune, chains=chains, cores=cores, random_seed=seed,
                              target_accept=target_accept, progressbar=_progress_wanted(),
                              inference_method=sampler, **kwargs)
        except BaseException:
            if interrupted:  # whatever PyMC raised while stopping is a consequence of the Ctrl-C
                raise KeyboardInterrupt from None
            raise
    if interrupted:
        # PyMC catches KeyboardInterrupt and returns the draws so far: never summarise a truncated trace.
        raise KeyboardInterrupt
    check_complete(idata, chains, draws)
    seconds = time.perf_counter() - t0
    summary = summarise(idata, design)
    diag = diagnostics(idata, summary, design, chains=chains, draws=draws, tune=tune, seed=seed,
                       target_accept=target_accept, seconds=seconds, sampler=sampler, centered=centered,
                       init=init if sampler == "pymc" else None)
    return FitResult(idata, summary, diag)


# problems a second fit with more tuning, more draws and smaller steps can cure (a single chain it cannot)
REFIT_CURES = ("divergent transition", "max R-hat", "min ESS")


def stronger(settings) -> dict:
    """The settings of the one refit: tune and draws doubled, target_accept halfway to 1 (0.9 -> 0.95 -> 0.975)."""
    return {"tune": 2 * int(settings.tune), "draws": 2 * int(settings.draws),
            "target_accept": round(1 - (1 - float(settings.target_accept)) / 2, 6)}


def _attempt(diag: dict) -> dict:
    return {k: diag[k] for k in ("chains", "tune", "draws", "target_accept", "sampler", "divergences", "max_r_hat",
                                 "min_ess_bulk", "min_ess_tail", "converged", "problems")}


def fit_converged(design: Design, settings, cores: int | None = None) -> FitResult:
    """:func:`fit`, and when the fit fails a diagnostic that more sampling can cure and ``settings.refit`` is on,
    one refit with :func:`stronger` settings, reported instead of the first. ``diagnostics``: ``attempts`` (each
    fit's settings and diagnostics) and ``refitted``."""
    import dataclasses

    res = fit(design, settings, cores=cores)
    curable = [p for p in res.diagnostics["problems"] if any(c in p for c in REFIT_CURES)]
    attempts = [_attempt(res.diagnostics)]
    if curable and getattr(settings, "refit", False):
        more = stronger(settings)
        log.warning("the fit failed its diagnostics (%s): refitting once with tune %d, draws %d, target_accept %s",
                    "; ".join(curable), more["tune"], more["draws"], more["target_accept"])
        res = fit(design, dataclasses.replace(settings, **more), cores=cores)
        attempts.append(_attempt(res.diagnostics))
    res.diagnostics["attempts"] = attempts
    res.diagnostics["refitted"] = len(attempts) > 1
    return res


def refit_sentence(diag: dict) -> str:
    """What a caption says about a refit: the first fit's problems and the settings of the one reported."""
    first, last = diag["attempts"][0], diag["attempts"][-1]
    return (f"The first fit ({first['chains']} chains x {first['draws']} draws, {first['tune']} tuning, target_accept "
            f"{first['target_accept']}) failed its diagnostics ({'; '.join(first['problems'])}); these estimates are "
            f"from one refit with stronger settings ({last['draws']} draws, {last['tune']} tuning, target_accept "
            f"{last['target_accept']}){'' if last['converged'] else ', which did not converge either'}.")


def _progress_wanted() -> bool:
    """PyMC's progress bar on a terminal only: under Snakemake the log is a file."""
    import sys

    return sys.stderr.isatty() and not os.environ.get("POVSTIM_NO_PROGRESS")


class _interrupts:
    """Record a SIGINT (Ctrl-C) during sampling, then let it interrupt as usual.

    PyMC catches KeyboardInterrupt inside ``pm.sample`` and returns the draws it has; the flag tells us the
    trace is truncated. Outside the main thread signal handlers cannot be set, so nothing is recorded there.
    """

    def __enter__(self) -> list:
        import signal
        import threading

        self.flag: list = []
        self.previous = None
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.getsignal(signal.SIGINT)

            def handler(signum, frame, previous=self.previous, flag=self.flag):
                flag.append(signum)
                if callable(previous):
                    previous(signum, frame)
                else:
                    raise KeyboardInterrupt

            signal.signal(signal.SIGINT, handler)
        return self.flag

    def __exit__(self, *exc) -> None:
        import signal

        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)


def check_complete(idata, chains: int, draws: int) -> None:
    """Every chain has every draw; anything less (a sampler stopped early) is an error, never a result."""
    post = getattr(idata, "posterior", None)
    got_chains = int(post.sizes.get("chain", 0)) if post is not None else 0
    got_draws = int(post.sizes.get("draw", 0)) if post is not None else 0
    if got_chains != chains or got_draws != draws:
        raise PovstimError(f"sampling stopped early: the trace has {got_chains} chain(s) x {got_draws} draws, "
                           f"not {chains} x {draws} (interrupted?); nothing was written")


def summarise(idata, design: Design) -> pd.DataFrame:
    """Posterior median, 95% equal-tailed interval, R-hat and bulk/tail ESS per parameter."""
    import arviz as az

    post = idata.posterior
    rows = []
    params: list[tuple[str, str, str]] = []  # (var in posterior, term, pretty)
    if design.formula.intercept:
        params.append(("Intercept", "Intercept", "Intercept"))
    for c in design.columns:
        params.append((c.name, c.label, c.pretty))
    for g in design.groups:
        names = (["1"] if g.intercept else []) + g.slopes
        for n in names:
            bname = "1" if n == "1" else design._slope_name(n)
            what = "intercept" if n == "1" else n
            params.append((f"{bname}|{_group_col(g.group)}_sigma", f"sd({n}|{g.group})",
                           f"{PRETTY.get(g.group, g.group)} {what} SD"))
    rhat = az.rhat(post)
    ess_b = az.ess(post, method="bulk")
    ess_t = az.ess(post, method="tail")
    for var, term, pretty in params:
        x = post[var].values.reshape(-1)
        rows.append({
            "term": term,
            "median": float(np.median(x)),
            "lower": float(np.quantile(x, 0.025)),
            "upper": float(np.quantile(x, 0.975)),
            "r_hat": float(rhat[var].values),
            "ess_bulk": float(ess_b[var].values),
            "ess_tail": float(ess_t[var].values),
            "label": pretty,
        })
    return pd.DataFrame(rows)


def diagnostics(idata, summary: pd.DataFrame, design: Design, **run) -> dict:
    stats = idata.sample_stats
    div_var = "diverging" if "diverging" in stats else ("divergent" if "divergent" in stats else None)
    div = int(stats[div_var].values.sum()) if div_var else 0
    chains = int(run["chains"])
    max_rhat = float(summary["r_hat"].max()) if len(summary) else math.nan
    min_bulk = float(summary["ess_bulk"].min()) if len(summary) else math.nan
    min_tail = float(summary["ess_tail"].min()) if len(summary) else math.nan
    ess_min = ESS_PER_CHAIN_MIN * chains
    problems = []
    if div:
        problems.append(f"{div} divergent transition(s) after tuning (raise target_accept or tune)")
    if chains > 1 and not (max_rhat <= RHAT_MAX):
        worst = summary.loc[summary["r_hat"].idxmax(), "term"]
        problems.append(f"max R-hat {max_rhat:.3f} > {RHAT_MAX} ({worst}): chains have not mixed")
    if not (min_bulk >= ess_min and min_tail >= ess_min):
        worst = summary.loc[summary[["ess_bulk", "ess_tail"]].min(axis=1).idxmin(), "term"]
        problems.append(f"min ESS (bulk {min_bulk:.0f}, tail {min_tail:.0f}) < {ess_min} ({worst}): draw more")
    if chains == 1:
        problems.append("a single chain: R-hat cannot detect non-convergence")
    return {
        "converged": not problems,
        "problems": problems,
        "divergences": div,
        "max_r_hat": _r(max_rhat),
        "min_ess_bulk": _r(min_bulk, 0),
        "min_ess_tail": _r(min_tail, 0),
        "thresholds": {"r_hat_max": RHAT_MAX, "ess_min": ess_min},
        "formula": design.formula.text,
        "expanded_formula": design.expanded(),
        "dropped_terms": design.dropped,
        # Bambi's variable name in posterior.nc for each fixed-effect term
        "posterior_names": {c.label: c.name for c in design.columns},
        "coding": design.coding,
        "family": design.family,
        "n_rows": int(len(design.data)),
        "n_observations": int(design.data["n_total"].sum()) if "n_total" in design.data else int(len(design.data)),
        "chains": chains, "draws": int(run["draws"]), "tune": int(run["tune"]), "seed": int(run["seed"]),
        "target_accept": float(run["target_accept"]),
        "sampler": run["sampler"],
        "init": run["init"],  # None: the sampler adapts its own (nutpie)
        "group_parametrization": "centered" if run["centered"] else "noncentered",
        "sampling_seconds": round(float(run["seconds"]), 1),
    }


def _r(x: float, nd: int = 3):
    return None if x is None or math.isnan(x) else round(float(x), nd)


def warn_if_unconverged(diag: dict, where: str = "") -> None:
    for p in diag["problems"]:
        log.warning("CONVERGENCE PROBLEM%s: %s", f" ({where})" if where else "", p)


def summary_for_csv(summary: pd.DataFrame) -> pd.DataFrame:
    """Rounded so reruns with the same seed are byte-identical and diffs stay readable."""
    out = summary[["term", "median", "lower", "upper", "r_hat", "ess_bulk", "ess_tail", "label"]].copy()
    for c in ("median", "lower", "upper", "r_hat"):
        out[c] = out[c].round(4)
    for c in ("ess_bulk", "ess_tail"):
        out[c] = out[c].round(0)
    return out


def coding_sentence(design: Design) -> str:
    """What each sum-coded term measures, for a caption: a two-level factor coded +1/-1 estimates half the
    difference between its levels (POSH Table 12's "Training source (baby vs. wiki)" is half BABY - WIKI), a
    factor of more levels each level's deviation from the mean over its levels."""
    parts = []
    for var, c in design.coding.items():
        if c.get("type") != "categorical" or c.get("contrasts") != "sum":
            continue
        levels, pretty = c["levels"], PRETTY.get(var, var)
        if len(levels) == 2:
            a, b = ("yes", "no") if levels == ["True", "False"] else levels
            parts.append(f"{pretty} ({a} vs. {b}) is coded +1/-1, so its estimate is half the {a} - {b} difference "
                         f"in log-odds (twice it is the difference)")
        else:
            parts.append(f"each {pretty} term is that level's deviation from the mean over its {len(levels)} levels "
                         f"({levels[-1]}'s is minus the sum of the others)")
    if not parts:
        return ""
    return "Sum coding: " + "; ".join(parts) + "; an interaction with a +1/-1 term is likewise half a difference."


def table12(summary: pd.DataFrame) -> pd.DataFrame:
    """POSH Table 12 layout: predictor, estimate, 95% CrI; interactions and SDs at the end."""
    rows = []
    for _, r in summary.iterrows():
        rows.append({"Predictor": r["label"], "Estimate": f"{r['median']:.2f}",
                     "95% CrI": f"[{r['lower']:.2f}, {r['upper']:.2f}]",
                     "R-hat": f"{r['r_hat']:.2f}", "ESS (bulk)": f"{r['ess_bulk']:.0f}"})
    return pd.DataFrame(rows)


# ---- the three-level model's pairwise contrasts ----------------------------------------------

def condition_pairs(levels) -> list[tuple[str, str]]:
    """Pairs (a, b) of a factor's levels for a - b: BABY-F vs BABY, BABY vs WIKI, BABY-F vs WIKI
    (POSH's order first; other levels alphabetically after them)."""
    order = [x for x in CONDITION_ORDER if x in levels] + sorted(x for x in levels if x not in CONDITION_ORDER)
    pairs = [(i, j) for i in range(len(order)) for j in range(i + 1, len(order))]
    return [(order[i], order[j]) for i, j in sorted(pairs, key=lambda ij: (ij[1] - ij[0], ij[0]))]


def pairwise_contrasts(posterior, design: Design, var: str = "source_filter", by: str = "category") -> pd.DataFrame:
    """Posterior of every pairwise difference between ``var``'s levels on the log-odds scale, overall
    (the mean over ``by``'s levels, numeric predictors at their data mean) and per level of ``by``.

    ``posterior``: {Bambi column name: draws} (an ArviZ posterior works: it is indexed by name).
    Group-level effects cancel in a difference. Rows: contrast, a, b, scope, median, lower, upper,
    p_gt0 (the posterior probability that a > b)."""
    if var not in design.codes:
        raise PovstimError(f"{var} is not a categorical predictor of this model (dropped or absent)")
    levels = design.coding[var]["levels"]
    scopes = design.coding[by]["levels"] if by in design.codes else []
    beta = np.column_stack([np.asarray(posterior[c.name]).reshape(-1) for c in design.columns])
    cells = scopes or [None]
    # other factors (the arch terms of a several-arch experiment, analysis/archs.py): averaged over their levels
    others = tuple(v for v in design.codes if v not in (var, by))
    eta = {}  # (level, scope) -> draws of the linear predictor (intercept omitted: it cancels)
    for lv in levels:
        for sc in cells:
            cell = {var: lv, **({by: sc} if sc is not None else {})}
            eta[(lv, sc)] = beta @ design.row(cell, average=others)
    rows = []
    for a, b in condition_pairs(levels):
        overall = np.mean([eta[(a, sc)] - eta[(b, sc)] for sc in cells], axis=0)
        rows.append(_contrast_row(a, b, "overall", overall))
        for sc in scopes:
            rows.append(_contrast_row(a, b, sc, eta[(a, sc)] - eta[(b, sc)]))
    return pd.DataFrame(rows)


def _contrast_row(a, b, scope, x) -> dict:
    return {"contrast": f"{a} vs. {b}", "a": a, "b": b, "scope": scope, "median": float(np.median(x)),
            "lower": float(np.quantile(x, 0.025)), "upper": float(np.quantile(x, 0.975)),
            "p_gt0": float(np.mean(x > 0))}


def contrasts_table(contrasts: pd.DataFrame) -> pd.DataFrame:
    """Rows contrast x scope, POSH Table 12 number format."""
    rows = []
    for _, r in contrasts.iterrows():
        rows.append({"Contrast": r["contrast"], "Scope": "Overall" if r["scope"] == "overall" else r["scope"],
                     "Estimate": f"{r['median']:.2f}", "95% CrI": f"[{r['lower']:.2f}, {r['upper']:.2f}]",
                     "P(> 0)": f"{r['p_gt0']:.3f}"})
    return pd.DataFrame(rows)


def placebo_spread(contrasts: pd.DataFrame, placebos: dict) -> dict:
    """(a, b, scope) -> the placebos' estimates of the same contrast: for each placebo level p of ``placebos``
    (p -> (vs, of): p is vs's corpus changed by as many random sentences as of's), the contrast with of replaced
    by p, oriented as a - b (BABY-F vs. BABY: BABY-F - p). Pairs without placebos are absent."""
    est = {(r["a"], r["b"], r["scope"]): r["median"] for _, r in contrasts.iterrows()}
    out: dict = {}
    for p, (vs, of) in placebos.items():
        for (a, b, scope) in list(est):
            if {a, b} != {vs, of}:
                continue
            x, y = (vs, p) if a == vs else (p, vs)  # of -> p, same orientation
            v = est.get((x, y, scope), None if (y, x, scope) not in est else -est[(y, x, scope)])
            if v is not None:
                out.setdefault((a, b, scope), []).append(float(v))
    return out


def category_of(phenomenon: str, scopes) -> str | None:
    """The benchmark category a DPE phenomenon's evidence bears on (question_formation -> Question Formation,
    POSH's Table 10 names), when the suite has it."""
    by = {str(x).lower().replace("_", " "): x for x in scopes}
    return by.get(phenomenon.lower().replace("_", " "))


def coverage_text(cov: dict) -> str:
    """What a contrast's evidence covers and what is void for it (void.coverage), in words."""
    covered = list(cov["covered"])
    void_only = [p for p in cov["void"] if p not in cov["covered"]]
    out = []
    if covered:
        out.append("the evidence apart covers " + ", ".join(
            f"{p} ({', '.join(f'{d} sentence(s) apart at {z}' for z, d in cov['covered'][p].items())})"
            for p in covered))
    for p in void_only:
        out.append(f"void for {p}: " + ", ".join(
            f"{v['evidence']} apart at {z}, under its threshold {v['threshold']}"
            + (f" (of a configured dose of {v['dose']})" if v["dose"] else " (not manipulated)")
            for z, v in cov["void"][p].items()))
    return "; ".join(out)


def filtering_sentences(contrasts: pd.DataFrame, converged: bool = True, caveat: str = "", void=(),
                        seed_note: str = "", placebos: dict | None = None, coverage: dict | None = None) -> list[str]:
    """What the report says about filtering and training source, from the three-level contrasts only.
    ``caveat``: appended to the BABY-F vs. BABY sentence (BABY got less evidence back than configured:
    conditions_page.shortfall_caveat), or its own paragraph when that contrast is absent. ``void``: the
    sentences of void contrasts (analysis/guardrails/void.py: no estimate), first. ``seed_note``: appended to every
    conclusion (fewer seeds than analysis.min_groups: the intervals leave out run-to-run variance). ``placebos``:
    placebo level -> (vs, of) (docs/manipulations.md, "Placebo conditions"): the vs-vs.-of contrast is read
    against the placebos' estimates of it, and is credible only where it also lies outside their range; the
    placebos' own contrasts get no sentence. ``coverage``: (kept level, duplicate level) -> the phenomena a
    contrast between conditions of one base and removals covers and those void for it (void.coverage): it is read
    on its covered phenomena's categories only, never overall (which pools void and unmanipulated ones)."""
    spread = placebo_spread(contrasts, placebos or {})

    def verdict(r, better, worse):
        est = f"{r['median']:+.2f} [{r['lower']:.2f}, {r['upper']:.2f}] log-odds, P(> 0) = {r['p_gt0']:.2f}"
        got = spread.get((r["a"], r["b"], r["scope"]))
        pl = ""
        if got:
            pl = f"count-matched placebos ({len(got)} draws): {min(got):+.2f} to {max(got):+.2f}"
            if not min(got) <= r["median"] <= max(got) and (r["lower"] > 0 or r["upper"] < 0):
                return f"{better if r['lower'] > 0 else worse} ({est}; {pl}: beyond chance corpus changes)"
            if r["lower"] > 0 or r["upper"] < 0:
                return f"no difference beyond chance corpus changes ({est}; {pl}: not beyond chance corpus changes)"
            return f"no credible difference ({est}; {pl})"
        if r["lower"] > 0:
            return f"{better} ({est})"
        if r["upper"] < 0:
            return f"{worse} ({est})"
        return f"no credible difference ({est})"

    out = list(void)
    if not converged:
        out.append("CONVERGENCE PROBLEM: the three-level model did not converge; do not interpret the "
                   "sentences below (see three_level_diagnostics.json).")
    what = {("BABY-F", "BABY"): ("Filtering out direct positive evidence (BABY-F vs. BABY)",
                                 "models without it scored credibly higher", "models without it scored credibly lower"),
            ("BABY", "WIKI"): ("Training source (BABY vs. WIKI)", "BABY models scored credibly higher",
                               "BABY models scored credibly lower"),
            ("BABY-F", "WIKI"): ("BABY-F vs. WIKI", "BABY-F models scored credibly higher",
                                 "BABY-F models scored credibly lower")}
    for (a, b), sub in contrasts.groupby(["a", "b"], sort=False):
        if placebos and (a in placebos or b in placebos):  # read only as the spread of the matched contrast
            continue
        name, better, worse = what.get((a, b), (f"{a} vs. {b}", f"{a} scored credibly higher",
                                                f"{a} scored credibly lower"))
        cov = (coverage or {}).get((a, b)) or (coverage or {}).get((b, a))
        if cov:  # read only where its evidence differs: the covered phenomena's categories
            scopes = [x for x in sub["scope"] if x != "overall"]
            cats = {p: category_of(p, scopes) for p in cov["covered"]}
            text = f"{name}: {coverage_text(cov)}."
            read = [c for c in cats.values() if c]
            per = [f"{r['scope']}: {verdict(r, better, worse)}" for _, r in sub.iterrows() if r["scope"] in read]
            if per:
                text += " " + "; ".join(per) + "."
            if [p for p, c in cats.items() if not c]:
                text += f" ({', '.join(p for p, c in cats.items() if not c)}: no category of this suite.)"
            rest = [x for x in scopes if x not in read]
            text += (" Not read as effects of the evidence (no phenomenon it covers; a difference there comes from "
                     "the corpora and tokenizers, which placebos measure): overall" + (", " + ", ".join(rest) if rest
                                                                                       else "") + ".")
        else:
            ov = sub[sub["scope"] == "overall"].iloc[0]
            text = f"{name}: overall, {verdict(ov, better, worse)}."
            per = [f"{r['scope']}: {verdict(r, better, worse)}" for _, r in sub[sub["scope"] != "overall"].iterrows()]
            if per:
                text += " By category: " + "; ".join(per) + "."
        if caveat and (a, b) == ("BABY-F", "BABY"):
            text += " " + caveat
            caveat = ""
        if any(k[:2] == (a, b) for k in spread):
            k = max(len(v) for key, v in spread.items() if key[:2] == (a, b))
            vs = next(v for v, o in placebos.values() if {v, o} == {a, b})
            text += (f" (Each placebo is {vs}'s corpus with as many random sentences without "
                     f"evidence changed as {a} and {b} differ by, with its own tokenizer and the same seeds; with "
                     f"{k} draws, an estimate outside all of theirs happens by chance with probability "
                     f"{2 / (k + 1):.2f} even when the evidence does nothing.)")
        if seed_note:
            text += " " + seed_note
        out.append(text)
    return out + ([caveat] if caveat else [])
