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
"""

from __future__ import annotations

import logging
import math
import os
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..io import PovstimError, parse_size
from . import formula as fml

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
    "phenomenon": "Phenomenon",
    "paradigm": "Paradigm",
}


@dataclass
class Column:
    name: str  # safe column name passed to Bambi
    label: str  # e.g. "category[Binding]:filtered[True]"
    pretty: str  # e.g. "Binding × Filtering"
    values: np.ndarray


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


def build_design(df: pd.DataFrame, formula_text: str, *, family: str, zscore: bool, contrasts: str) -> Design:
    """Code the predictors, expand the formula, drop degenerate/aliased terms, aggregate."""
    f = fml.parse(formula_text)
    df = derive(df)
    counts = "n_correct" in df.columns and "n_total" in df.columns
    if not counts and "val" not in df.columns:
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

    # Aggregate first: every design column is a function of the formula's variables, so
    # the binomial on cells has exactly the Bernoulli likelihood.
    keys = list(dict.fromkeys(needed))
    if counts:
        data = df.groupby(keys, sort=True, dropna=False)[["n_correct", "n_total"]].sum().reset_index()
        family = "binomial"
    elif family == "binomial":
        data = (df.groupby(keys, sort=True, dropna=False)["val"]
                .agg(n_correct="sum", n_total="size").reset_index())
    elif family == "bernoulli":
        data = df[keys + ["val"]].reset_index(drop=True)
    else:
        raise PovstimError(f"unknown family {family!r}: use bernoulli or binomial")

    dropped: list[str] = []
    coding: dict[str, dict] = {}
    var_cols: dict[str, list[tuple[str, str, np.ndarray]]] = {}  # var -> [(label, pretty, values)]
    for var in f.variables():
        num = _numeric(data[var], var)
        pretty = PRETTY.get(var, var)
        if num is not None:
            sd = float(num.std(ddof=1)) if len(num) > 1 else 0.0
            if not (sd > 0):
                dropped.append(var)
                log.warning("dropping %s: it takes a single value (%s) in this design", var, num.iloc[0])
                continue
            if zscore:
                mean = float(num.mean())
                # z-score over the observations (items), not the aggregated cells, as POSH did.
                if "n_total" in data.columns:
                    w = data["n_total"].to_numpy(float)
                    mean = float(np.average(num, weights=w))
                    sd = math.sqrt(float(np.average((num - mean) ** 2, weights=w)) * w.sum() / (w.sum() - 1))
                vals = ((num - mean) / sd).to_numpy(float)
                coding[var] = {"type": "numeric", "zscored": True, "mean": mean, "sd": sd}
            else:
                vals = num.to_numpy(float)
                coding[var] = {"type": "numeric", "zscored": False}
                pretty = pretty.replace(" (z)", "")
            var_cols[var] = [(var, pretty, vals)]
            continue
        levels = _levels(data[var])
        if len(levels) < 2:
            dropped.append(var)
            log.warning("dropping %s: it has a single level (%s) in this design", var, levels[0] if levels else "")
            continue
        ref = levels[-1]
        cols = []
        two = len(levels) == 2
        for lv in levels[:-1]:
            is_lv = (data[var] == lv).to_numpy()
            if contrasts == "sum":
                vals = np.where(is_lv, 1.0, np.where((data[var] == ref).to_numpy(), -1.0, 0.0))
            elif contrasts == "treatment":
                vals = is_lv.astype(float)
            else:
                raise PovstimError(f"unknown contrasts {contrasts!r}: use sum or treatment")
            if two:
                lvname = "yes vs. no" if isinstance(lv, (bool, np.bool_)) else f"{_level_str(lv)} vs. {_level_str(ref)}"
                p = f"{pretty} ({lvname})"
            else:
                p = f"{pretty} ({_level_str(lv)})"
            cols.append((f"{var}[{_level_str(lv)}]", p, vals))
        coding[var] = {"type": "categorical", "contrasts": contrasts, "levels": [_level_str(x) for x in levels],
                       "reference": _level_str(ref)}
        var_cols[var] = cols

    columns: list[Column] = []
    for term in f.terms:
        if any(v not in var_cols for v in term):
            gone = [v for v in term if v not in var_cols]
            label = ":".join(term)
            if len(term) > 1:  # main effects were already reported above
                dropped.append(label)
                log.warning("dropping term %s: %s cannot be estimated in this design", label, ", ".join(gone))
            continue
        combos = [("", "", np.ones(len(data)))]
        for v in term:
            combos = [(f"{a}:{lab}" if a else lab, f"{pa} × {_short(pv)}" if pa else pv, va * vv)
                      for a, pa, va in combos for lab, pv, vv in var_cols[v]]
        for lab, pv, vals in combos:
            if len(term) > 1:
                pv = " × ".join(_short(p) for p in pv.split(" × "))
            columns.append(Column(f"x{len(columns)}", lab, pv, vals))

    columns = _drop_aliased(columns, f.intercept, dropped)
    groups = []
    for g in f.groups:
        n = data[g.group].nunique()
        if n < 2:
            dropped.append(g.label())
            log.warning("dropping group-level term %s: %s has %d level(s)", g.label(), g.group, n)
            continue
        groups.append(g)

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
    return Design(f, out, response, columns, groups, fam, dropped, coding, raw=data)


def _short(pretty: str) -> str:
    """'Category (Binding)' -> 'Binding'; 'Filtering (yes vs. no)' -> 'Filtering' for interaction labels."""
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


SAMPLERS = ("pymc", "nutpie")


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
    if sampler == "nutpie":
        try:
            import nutpie  # noqa: F401
        except ImportError:
            raise PovstimError("sampler nutpie is not installed: pip install 'bambi[nutpie]' "
                               "(nutpie 0.15.x), or use sampler: pymc") from None

    if not design.columns and not design.groups and not design.formula.intercept:
        raise PovstimError("nothing left to fit: every term was dropped")
    family = "binomial" if design.family == "binomial" else "bernoulli"
    model = bmb.Model(design.bambi_formula(), design.data, family=family,
                      priors=make_priors(design, priors), noncentered=not centered)
    cores = cores or min(chains, os.cpu_count() or 1)
    t0 = time.perf_counter()
    kwargs = {"idata_kwargs": {"log_likelihood": False}} if sampler == "pymc" else {}
    idata = model.fit(draws=draws, tune=tune, chains=chains, cores=cores, random_seed=seed,
                      target_accept=target_accept, progressbar=False, inference_method=sampler, **kwargs)
    seconds = time.perf_counter() - t0
    summary = summarise(idata, design)
    diag = diagnostics(idata, summary, design, chains=chains, draws=draws, tune=tune, seed=seed,
                       target_accept=target_accept, seconds=seconds, sampler=sampler, centered=centered)
    return FitResult(idata, summary, diag)


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


def table12(summary: pd.DataFrame) -> pd.DataFrame:
    """POSH Table 12 layout: predictor, estimate, 95% CrI; interactions and SDs at the end."""
    rows = []
    for _, r in summary.iterrows():
        rows.append({"Predictor": r["label"], "Estimate": f"{r['median']:.2f}",
                     "95% CrI": f"[{r['lower']:.2f}, {r['upper']:.2f}]",
                     "R-hat": f"{r['r_hat']:.2f}", "ESS (bulk)": f"{r['ess_bulk']:.0f}"})
    return pd.DataFrame(rows)
