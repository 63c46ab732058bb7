"""Power before training (``povstim power CONFIG``, one line in ``povstim plan``): the chance that each of the
three-level model's condition contrasts gets a 95% interval that excludes 0, for the configured seeds, sizes
and benchmark pairs, at stated effect sizes (``power:``; defaults from POSH-BENCH's Table 12).

The model is a normal approximation of the binomial GLMM ``(size + category) * source_filter + (1|seed) +
(1|phenomenon)``, fast enough to search seeds and pairs in milliseconds:

* a model's log-odds on a paradigm of n items at accuracy p has binomial variance 1 / (n p (1 - p));
  its category mean over the category's P paradigms therefore 1 / (P n p (1 - p)), and its overall mean (the
  mean over C categories, as the report's "overall" contrast is) sum_c 1 / (C^2 P_c n p (1 - p));
* each trained model adds a run-to-run deviation with SD ``run_sd`` shared by all its categories (a model
  that is better is better everywhere), so it does not shrink with more pairs or categories;
* a condition level's estimate is the mean over its M models (sizes x seeds of the arch; the size slope is
  common to the conditions, so sizes average like seeds), and a contrast a - b has
  SE^2 = (v_binomial + run_sd^2) (1 / M_a + 1 / M_b);
* power = P(|estimate| > 1.96 SE) for estimate ~ N(effect, SE^2) = Phi(effect/SE - 1.96) + Phi(-effect/SE - 1.96);
  the minimal detectable effect (MDE) is the effect with power ``target``.

The phenomenon intercepts and the seed intercepts are shared by the conditions and cancel in a contrast; the
interval it assumes is one that covers run-to-run variance, as the three-level model's run-level effect ``(1|run)``
does (``analysis.run_effect``; with fewer than ``analysis.min_groups`` seeds the fitted model drops ``(1|seed)``, has
no ``(1|run)`` and its intervals leave that variance out: plan warns). Corpus models (the n-gram) are
deterministic: one model per condition x size, no run variance.

What it leaves out: the variance of the corpus draw itself -- two conditions that differ by a few random sentences
get their own tokenizers and can differ by more than their seeds do (docs/analysis.md, "The trained model as the
unit of replication"): ``run_sd`` is seed-to-seed variance within one corpus, and the power assumes no
condition-level (placebo) variance beyond it; item effects (every run scores the same items, so an item's
difficulty cancels in a contrast like a phenomenon's); a size slope that differs by condition. Void cells
(``analysis.void_evidence``) are left out of the models counted when they are known (``void``: plan's forecast, or
the built conditions' ``condition.json``), and a contrast void at every size has no power.

tests/test_power.py checks the closed form against brute-force simulations of exactly this normal model's
ingredients -- binomial counts per model x category and one run deviation per model shared by its categories,
with no seed, phenomenon or item effects -- each replicate estimated by the saturated binomial GLM's per-cell MLE
and Wald interval (not by the Bayesian model); ``scripts/power_recovery.py`` fits the three-level model with
``(1|run)`` itself to simulated scores with run-level variance and compares its detection rate with this power.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from scipy import optimize, stats

from povstim import plan as dag_plan
from povstim.benchmarks.suite import POSH_CATEGORIES
from povstim.benchmarks.tasks import iter_jsonl
from povstim.io import PovstimError
from povstim.settings import build, section

Z = float(stats.norm.ppf(0.975))  # the 95% interval's half-width in SEs


@dataclass(frozen=True)
class PowerSettings:
    """The ``power:`` section (defaults: workflow/schemas/config/power.schema.yaml)."""

    effects: dict
    category_effects: dict
    run_sd: float
    accuracy: float
    target: float
    max_seeds: int
    max_pairs_per_paradigm: int
    suite: str | None


def power_settings(given: dict | None = None, where: str = "power") -> PowerSettings:
    return build(PowerSettings, "power", given, where=where)


# ---- the closed form ---------------------------------------------------------------------------------------

def binomial_variance(paradigm_items: dict[str, list[int]], p: float, category: str | None = None) -> float:
    """Binomial variance of one model's log-odds: on ``category`` (the mean over its paradigms) or overall (the
    mean over categories of the category means). ``paradigm_items``: category -> items of each paradigm."""
    def cat_var(items: list[int]) -> float:
        return sum(1.0 / (n * p * (1 - p)) for n in items) / len(items) ** 2

    if category is not None:
        return cat_var(paradigm_items[category])
    c = len(paradigm_items)
    return sum(cat_var(v) for v in paradigm_items.values()) / c ** 2


def contrast_se(v_binomial: float, run_sd: float, models_a: int, models_b: int) -> float:
    return math.sqrt((v_binomial + run_sd ** 2) * (1.0 / models_a + 1.0 / models_b))


def power(effect: float, se: float) -> float:
    """The chance that a 95% interval around an N(effect, se^2) estimate excludes 0 (both tails)."""
    if not (se > 0) or not math.isfinite(se):
        raise PovstimError(f"power is undefined for a standard error of {se}")
    return float(stats.norm.cdf(effect / se - Z) + stats.norm.cdf(-effect / se - Z))


def mde(se: float, target: float) -> float:
    """The smallest |effect| detected with probability ``target`` (power rises monotonically in |effect|)."""
    return float(optimize.brentq(lambda d: power(d, se) - target, 0.0, 20 * se + 1.0, xtol=1e-10))


# ---- the design a config asks for --------------------------------------------------------------------------

def level_of(meta: dict) -> str:
    """The three-level factor's level of a condition (as bayes.derive names it: BABY-F, BABY, WIKI)."""
    return f"{str(meta['source']).upper()}{'-F' if meta['filtered'] else ''}"


def suite_items(config: dict, suite: str, results: Path | None) -> dict[str, list[int]]:
    """category -> items per paradigm of ``suite``: from the generator's paradigms for a generated suite, else
    from its built files under ``results/benchmarks/<suite>/`` (an imported suite is counted once built)."""
    spec = config["benchmarks"][suite]
    if spec["kind"] == "generated":
        if "pairs_per_paradigm" not in spec:
            raise PovstimError(f"benchmarks.{suite}.pairs_per_paradigm is not set: power needs the pairs per paradigm")
        paradigms = spec.get("paradigms") or sorted(POSH_CATEGORIES)
        out: dict[str, list[int]] = {}
        for para in paradigms:
            out.setdefault(POSH_CATEGORIES.get(para, para), []).append(int(spec["pairs_per_paradigm"]))
        return out
    folder = (results / "benchmarks" / suite) if results else None
    files = sorted(folder.glob("*.jsonl")) if folder and folder.is_dir() else []
    if not files:
        raise PovstimError(f"benchmarks.{suite}: an imported suite's items are counted once it is built "
                           f"({folder or 'results/<experiment>/benchmarks/' + suite}/ has none yet); "
                           f"build it first or set power.suite")
    out = {}
    for f in files:
        cats = [rec.get("category") or f.stem for _, rec in iter_jsonl(f)]
        if cats:
            out.setdefault(cats[0], []).append(len(cats))
    return out


def power_suite(config: dict, settings: PowerSettings) -> str:
    suites = list(config.get("benchmarks") or {})
    if not suites:
        raise PovstimError("benchmarks: no suite to compute the power for")
    analysis_suite = section("analysis", config.get("analysis") or {}, "analysis")["suite"]
    suite = settings.suite or analysis_suite or ("posh" if "posh" in suites else suites[0])
    if suite not in suites:
        key = "power.suite" if settings.suite else "analysis.suite"
        raise PovstimError(f"{key}: suite {suite!r} is not in benchmarks ({', '.join(suites)})")
    return suite


def models_per_level(config: dict, void: frozenset = frozenset()) -> dict[str, dict[str, int]]:
    """arch -> three-level factor level -> models the Bayesian model will be fitted on (condition x size x seed; a
    corpus model one per size), less the cells of ``void`` ((condition, size) pairs the analysis leaves out); a
    level whose every cell is void keeps a count of 0."""
    meta = dag_plan.condition_meta(config)
    out: dict[str, dict[str, int]] = {}
    for m in dag_plan.models(config) + dag_plan.corpus_models(config):
        lv = level_of(meta[m.condition])
        out.setdefault(m.arch, {}).setdefault(lv, 0)
        out[m.arch][lv] += (m.condition, str(m.size)) not in void
    return out


def built_void_cells(config: dict, results: Path | None) -> frozenset | None:
    """(condition, size) cells the analysis will leave out as void, from the built conditions' condition.json
    (the analysis' own rule, analysis/guardrails/void.py); None when not every condition is built yet."""
    from povstim.analysis.guardrails import void as void_rule
    from povstim.analysis.tables.conditions_page import read_condition

    if results is None:
        return None
    paths = [results / "corpus" / c / str(z) / "condition.json"
             for c in config["conditions"] for z in dag_plan.condition_sizes(config, c)]
    if not paths or not all(p.exists() for p in paths):
        return None
    analysis = section("analysis", config.get("analysis") or {}, "analysis")  # the analysis' own rule and settings
    pairs = void_rule.void_pairs([read_condition(p) for p in paths], analysis["void_evidence"],
                                 list(config["conditions"]), analysis["void_dose_share"])
    return frozenset((r["duplicate"], str(r["size"])) for r in pairs)


def _pairs(levels) -> list[tuple[str, str]]:
    # deferred: bayes imports pandas; the order of the report's contrasts is its fact
    from povstim.analysis.models.bayes import condition_pairs

    return condition_pairs(levels)


def analyse(config: dict, results: Path | None = None, settings: PowerSettings | None = None,
            void: frozenset | None = None) -> dict:
    """Per arch and contrast: SE, power at the stated effect, MDE, overall and per category; and the seeds (and,
    for a generated suite, pairs per paradigm) that reach ``target`` power. ``void``: the (condition, size) cells the
    analysis will leave out (plan's forecast; None: from the built conditions, when there are). Errors name the
    config key."""
    settings = settings or power_settings(config.get("power"))
    void_known = void is not None
    if void is None:
        void = built_void_cells(config, results)
        void_known = void is not None
    void = frozenset(void or ())
    seeds = [int(s) for s in config["seeds"]]
    suite = power_suite(config, settings)
    items = suite_items(config, suite, results)
    corpus_archs = {m.arch for m in dag_plan.corpus_models(config)}
    if len(seeds) < 2 and settings.run_sd > 0 and set(models_per_level(config)) - corpus_archs:
        raise PovstimError(f"seeds: a single seed ({seeds[0]}) gives one model per condition and size, so no "
                           f"interval can cover run-to-run variance (power.run_sd {settings.run_sd}): the power is "
                           "undefined; use at least 2 seeds (3 to keep the (1|seed) term) or set power.run_sd: 0")
    by_arch = models_per_level(config, void)
    all_levels = sorted({lv for lv_m in by_arch.values() for lv in lv_m})
    pairs = _pairs(all_levels)
    names = {f"{a} vs. {b}" for a, b in pairs}
    given = config.get("power") or {}  # the schema's default contrasts need not all exist; a stated one must
    for key in ("effects", "category_effects"):
        unknown = sorted(set(given.get(key) or {}) - names)
        if unknown:
            raise PovstimError(f"power.{key}: contrast(s) {', '.join(unknown)} are not among this config's "
                               f"conditions (its contrasts: {', '.join(sorted(names)) or 'none: fewer than two levels'})")
    p = settings.accuracy
    v_all = binomial_variance(items, p)
    rows = []
    for arch, per_level in by_arch.items():
        sd = 0.0 if arch in corpus_archs else settings.run_sd
        for a, b in _pairs(sorted(per_level)):
            name = f"{a} vs. {b}"
            ma, mb = per_level[a], per_level[b]
            scopes = [("overall", v_all, settings.effects.get(name))]
            for cat, eff in sorted((settings.category_effects.get(name) or {}).items()):
                if cat in items:
                    scopes.append((cat, binomial_variance(items, p, cat), eff))
            for scope, v, eff in scopes:
                if not (ma and mb):  # void at every size: the analysis reports it with no estimate
                    rows.append({"arch": arch, "contrast": name, "scope": scope, "models": [ma, mb], "se": None,
                                 "effect": eff, "power": None, "mde": None, "void": True})
                    continue
                se = contrast_se(v, sd, ma, mb)
                rows.append({"arch": arch, "contrast": name, "scope": scope, "models": [ma, mb], "se": se,
                             "effect": eff, "power": None if eff is None else power(eff, se),
                             "mde": mde(se, settings.target)})
    return {"suite": suite, "seeds": len(seeds), "sizes": len(dag_plan.sizes(config)), "items": items,
            "accuracy": p, "run_sd": settings.run_sd, "target": settings.target, "rows": rows,
            "void_cells": sorted(void), "void_known": void_known,
            "recommend": recommend(config, settings, items, by_arch, corpus_archs)}


def recommend(config: dict, settings: PowerSettings, items: dict, by_arch: dict, corpus_archs: set) -> dict:
    """The fewest seeds (same sizes and pairs), and for a generated suite the fewest pairs per paradigm (same
    seeds), at which every overall contrast with a stated effect reaches ``settings.target``; None when the
    search range (``power.max_seeds``, ``power.max_pairs_per_paradigm``) does not reach it. A contrast with a zero
    effect (its power is the false-positive rate) or void everywhere is not powered: the summary names it apart."""
    k0 = len(config["seeds"])
    stated = {n: e for n, e in settings.effects.items() if e != 0}
    p = settings.accuracy
    # only a contrast this config has can be powered: none (one condition, or conditions the stated effects do
    # not name) is nothing to recommend, not a search over a constant power (scipy's brentq raised on it)
    if not any(f"{a} vs. {b}" in stated and per_level[a] and per_level[b]
               for per_level in by_arch.values() for a, b in _pairs(sorted(per_level))):
        return {"seeds": None, "pairs_per_paradigm": None, "now": None}

    def worst(v_bin: float, scale: float) -> float:
        out = 1.0
        for arch, per_level in by_arch.items():
            sd, s = (0.0, 1.0) if arch in corpus_archs else (settings.run_sd, scale)
            for a, b in _pairs(sorted(per_level)):
                eff = stated.get(f"{a} vs. {b}")
                if eff is not None and per_level[a] and per_level[b]:
                    out = min(out, power(eff, contrast_se(v_bin, sd, per_level[a] * s, per_level[b] * s)))
        return out

    v = binomial_variance(items, p)
    seeds = next((k for k in range(1, settings.max_seeds + 1) if worst(v, k / k0) >= settings.target), None)
    pairs = None
    suite = power_suite(config, settings)
    spec = config["benchmarks"][suite]
    if spec["kind"] == "generated":
        n0 = int(spec["pairs_per_paradigm"])
        hi = settings.max_pairs_per_paradigm
        if worst(v * n0, 1.0) >= settings.target:  # one pair per paradigm already reaches it (no sign change)
            pairs = 1
        elif worst(v * n0 / hi, 1.0) >= settings.target:  # v scales as 1 / n
            pairs = int(math.ceil(optimize.brentq(lambda n: worst(v * n0 / n, 1.0) - settings.target, 1.0, hi)))
            while worst(v * n0 / pairs, 1.0) < settings.target:  # brentq's tolerance: the integer that reaches it
                pairs += 1
    return {"seeds": seeds, "pairs_per_paradigm": pairs, "now": worst(v, 1.0)}


def seed_warning(config: dict) -> str:
    """Fewer seeds than analysis.min_groups: the three-level model drops (1|seed) (plan's warning)."""
    k = len(config["seeds"])
    min_groups = int(section("analysis", config.get("analysis") or {}, "analysis")["min_groups"])
    if k >= min_groups:
        return ""
    return (f"WARNING: {k} seed(s) (seeds), fewer than analysis.min_groups {min_groups}: the Bayesian models drop "
            "(1|seed), so their intervals leave out run-to-run variance and overstate certainty; the report says so "
            f"beside each conclusion. Use at least {min_groups} seeds.")


# ---- text ---------------------------------------------------------------------------------------------------

def render(rep: dict) -> list[str]:
    cats = ", ".join(f"{c} {len(v)}x{v[0] if len(set(v)) == 1 else '~' + str(round(sum(v) / len(v)))}"
                     for c, v in rep["items"].items())
    lines = [f"Power of the three-level contrasts on {rep['suite']} (normal approximation; {rep['seeds']} seeds x "
             f"{rep['sizes']} sizes; paradigms x items per category: {cats}; accuracy {rep['accuracy']:g}, "
             f"run_sd {rep['run_sd']:g}; power: = P(95% interval excludes 0), MDE at {rep['target']:.0%} power):"]
    for r in rep["rows"]:
        head = f"  {r['arch']:<12} {r['contrast']:<18} {r['scope']:<20} models {r['models'][0]}/{r['models'][1]}"
        if r.get("void"):
            lines.append(head + "  VOID at every size: no estimate (analysis.void_evidence)")
            continue
        pw = "      -" if r["power"] is None else f"{r['power']:7.2f}"
        eff = "     -" if r["effect"] is None else f"{r['effect']:+6.2f}"
        lines.append(head + f"  SE {r['se']:.3f}  effect {eff}  power {pw}  MDE {r['mde']:.3f}")
    if rep.get("void_cells"):
        lines.append("  models counted without the void cells the analysis leaves out: "
                     + ", ".join(f"{c} {z}" for c, z in rep["void_cells"]))
    elif not rep.get("void_known", True):
        lines.append("  models counted as configured: void contrasts are not known before the conditions are built "
                     "(povstim plan forecasts them, and its power line leaves their cells out)")
    rec = rep["recommend"]
    lines.append("  -> " + overall_summary(rep))
    if rec["now"] is not None:
        s = (f"{rec['seeds']} seed(s)" if rec["seeds"] else f"more than power.max_seeds seeds")
        p = (f"; or {rec['pairs_per_paradigm']:,} pairs per paradigm at {rep['seeds']} seeds"
             if rec["pairs_per_paradigm"] else
             ("; no number of pairs up to power.max_pairs_per_paradigm reaches it at these seeds (run-to-run variance "
              "does not shrink with pairs)" if rep["items"] else ""))
        lines.append(f"  -> the weakest overall contrast with a non-zero effect has power {rec['now']:.2f}; "
                     f"{rep['target']:.0%} needs {s} at these sizes and pairs{p}")
    return lines


def overall_summary(rep: dict) -> str:
    """Every overall contrast by name: its power at its effect, a zero effect as the false-positive rate it is,
    no stated effect, or void; none is left out."""
    over = [r for r in rep["rows"] if r["scope"] == "overall"]
    several = len({r["arch"] for r in over}) > 1
    parts = []
    for r in over:
        name = r["contrast"] + (f" ({r['arch']})" if several else "")
        if r.get("void"):
            parts.append(f"{name}: VOID, no estimate")
        elif r["effect"] is None:
            parts.append(f"{name}: no effect stated (MDE {r['mde']:.2f})")
        elif r["effect"] == 0:
            parts.append(f"{name}: effect 0, so {r['power']:.2f} is its false-positive rate, not a power")
        else:
            parts.append(f"{name}: power {r['power']:.2f} at {r['effect']:+.2f} (models {r['models'][0]}/"
                         f"{r['models'][1]})")
    return "overall: " + ("; ".join(parts) if parts else "no contrast")


def plan_line(rep: dict) -> str:
    """The summary line of ``povstim plan``."""
    over = [r for r in rep["rows"] if r["scope"] == "overall"]
    rec = rep["recommend"]
    several = len({x["arch"] for x in over}) > 1

    def said(r):
        if r.get("void"):
            return "VOID"
        if r["effect"] is None:
            return "no effect stated"
        if r["effect"] == 0:
            return f"effect 0 (false-positive rate {r['power']:.2f})"
        return f"{r['power']:.2f}"
    parts = ", ".join(f"{r['contrast']} {said(r)}" + (f" ({r['arch']})" if several else "") for r in over)
    need = ""
    if rec["now"] is not None and rec["now"] < rep["target"]:
        need = (f"; {rep['target']:.0%} needs {rec['seeds']} seeds" if rec["seeds"] else
                f"; {rep['target']:.0%} is out of reach within power.max_seeds seeds")
        if rec["pairs_per_paradigm"]:
            need += f" or {rec['pairs_per_paradigm']:,} pairs per paradigm"
    return (f"Power (povstim power; POSH Table 12's effects unless power.effects): {parts or 'no contrast'} at "
            f"{rep['seeds']} seeds{need}")
