"""Parameter recovery for `povstim power`: is a planted condition effect of the size POSH reports detected by the
three-level model with its run-level effect at the rate `povstim power` states? (A benchmark, not a test: each
replicate is a Bambi fit.)

The design is a config's (default: the embedded default, config.yaml, with ``--seeds`` seeds, 3 by default so that
``analysis.run_effect: auto`` fits ``(1|run)``): its conditions, sizes, seeds and POSH paradigms x pairs. Each
replicate simulates binomial scores per run x paradigm from

    logit P(correct) = logit(power.accuracy) + condition shift + size slope x z(size) + phenomenon intercept
                       + seed intercept + run deviation

with the condition shifts planted so that BABY-F - BABY = ``power.effects['BABY-F vs. BABY']`` (POSH Table 12's
0.18 by default) and BABY - WIKI = its effect, the same in every category; a run deviation ~ N(0, power.run_sd) per
trained model (run = condition x size x seed), shared by its paradigms -- the run-level variance the power's closed
form assumes; phenomenon intercepts ~ N(0, 0.3) and seed intercepts ~ N(0, 0.06) shared by the conditions (they
cancel in a contrast, in both). The three-level model, with ``(1|run)``, is fitted to each replicate by povstim's own
functions (pipeline.model_spec, model_design, bayes.fit_converged), and a replicate detects the effect when the
overall contrast's 95% interval excludes 0. The detection rate (95% Wilson interval) is printed beside the power
`povstim power` states for the same config.

    nice -n 5 flock /tmp/povstim-heavy.lock python scripts/power_recovery.py --reps 40
    python scripts/power_recovery.py --run-sd 0.3 --reps 40      # run variance that dominates the items'

Writes ``--out`` (default docs/calibration/power_recovery.json), rewritten after every replicate (resumable).
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit, logit

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow"))

from povstim import config as cfg_mod  # noqa: E402
from povstim import plan as dag_plan  # noqa: E402
from povstim.io import parse_size, write_json  # noqa: E402

CONTRAST = "BABY-F vs. BABY"
PHENOMENON_SD = 0.3
SEED_SD = 0.06
SIZE_SLOPE = 0.1


def level_shifts(effects: dict) -> dict[str, float]:
    """Log-odds shift of each level, BABY at 0: BABY-F = +effect(BABY-F vs. BABY), WIKI = -effect(BABY vs. WIKI)."""
    return {"BABY": 0.0, "BABY-F": float(effects.get("BABY-F vs. BABY", 0.0)),
            "WIKI": -float(effects.get("BABY vs. WIKI", 0.0))}


def simulate(runs: list[dict], paradigms: dict[str, str], items: int, accuracy: float, shifts: dict[str, float],
             run_sd: float, rng: np.random.Generator, phenomenon_sd: float = PHENOMENON_SD, seed_sd: float = SEED_SD,
             size_slope: float = SIZE_SLOPE) -> pd.DataFrame:
    """Binomial counts (n_correct of ``items``) per run x paradigm. ``runs``: {arch, condition, level, size, seed};
    ``paradigms``: paradigm -> category. Sizes enter z-scored over the runs, as the analysis codes them."""
    words = np.array([parse_size(str(r["size"])) for r in runs], float)
    z = (words - words.mean()) / words.std(ddof=1) if len(set(words)) > 1 else np.zeros(len(runs))
    phen = {p: rng.normal(0.0, phenomenon_sd) for p in sorted(paradigms)}
    seeds = {s: rng.normal(0.0, seed_sd) for s in sorted({r["seed"] for r in runs})}
    rows = []
    for r, zr in zip(runs, z):
        dev = rng.normal(0.0, run_sd)
        for p in sorted(paradigms):
            eta = logit(accuracy) + shifts[r["level"]] + size_slope * zr + phen[p] + seeds[r["seed"]] + dev
            rows.append({**{k: r[k] for k in ("arch", "condition", "size", "seed")}, "source_filter": r["level"],
                         "phenomenon": p, "category": paradigms[p], "n_total": items,
                         "n_correct": int(rng.binomial(items, expit(eta)))})
    return pd.DataFrame(rows)


def design_of(config: dict) -> tuple[list[dict], dict[str, str], int]:
    """The config's runs, POSH paradigms (-> category) and pairs per paradigm."""
    from povstim.analysis.models import power
    from povstim.benchmarks.suite import POSH_CATEGORIES

    meta = dag_plan.condition_meta(config)
    runs = [{"arch": m.arch, "condition": m.condition, "level": power.level_of(meta[m.condition]), "size": m.size,
             "seed": m.seed} for m in dag_plan.models(config)]
    spec = config["benchmarks"]["posh"]
    paradigms = {p: POSH_CATEGORIES[p] for p in (spec.get("paradigms") or sorted(POSH_CATEGORIES))}
    return runs, paradigms, int(spec["pairs_per_paradigm"])


def fit_once(df: pd.DataFrame, settings) -> dict:
    from povstim.analysis import pipeline
    from povstim.analysis.models import bayes

    spec = pipeline.model_spec("three_level", settings, df)
    design = pipeline.model_design(df, settings, "binomial", **spec)
    res = bayes.fit_converged(design, settings, cores=settings.chains)
    con = bayes.pairwise_contrasts(res.idata.posterior, design, by="category")
    row = con[(con["contrast"] == CONTRAST) & (con["scope"] == "overall")].iloc[0]
    return {"formula": design.expanded(), "median": round(float(row["median"]), 4),
            "lower": round(float(row["lower"]), 4), "upper": round(float(row["upper"]), 4),
            "detected": bool(row["lower"] > 0 or row["upper"] < 0), "converged": res.diagnostics["converged"],
            "refitted": res.diagnostics["refitted"], "divergences": res.diagnostics["divergences"]}


def main() -> None:
    from scipy import stats

    from povstim.analysis import pipeline
    from povstim.analysis.models import power

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", type=Path, default=REPO / "config.yaml")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--run-sd", type=float, default=None, help="power.run_sd (default: the config's or the schema's)")
    ap.add_argument("--reps", type=int, default=40)
    ap.add_argument("--draws", type=int, default=500)
    ap.add_argument("--tune", type=int, default=500)
    ap.add_argument("--chains", type=int, default=2)
    ap.add_argument("--sampler", default="pymc")
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "calibration" / "power_recovery.json")
    args = ap.parse_args()
    config = cfg_mod.load(args.config)
    config = copy.deepcopy(config)
    config["seeds"] = list(range(1, args.seeds + 1))
    if args.run_sd is not None:
        config["power"] = {**(config.get("power") or {}), "run_sd": args.run_sd}
    ps = power.power_settings(config.get("power"))
    rep = power.analyse(config, None, ps, void=frozenset())
    stated = next(r for r in rep["rows"] if r["contrast"] == CONTRAST and r["scope"] == "overall"
                  and r["arch"] == next(iter(config["archs"])))
    runs, paradigms, items = design_of(config)
    settings = pipeline.analysis_settings({**(config.get("analysis") or {}), "draws": args.draws, "tune": args.tune,
                                           "chains": args.chains, "sampler": args.sampler, "run_effect": "always",
                                           "models": ["three_level"]})
    doc = json.loads(args.out.read_text()) if args.out.exists() else {}
    done = doc.get("replicates", []) if doc.get("run_sd") == ps.run_sd else []
    shifts = level_shifts(ps.effects)
    for i in range(len(done), args.reps):
        t0 = time.perf_counter()
        df = simulate(runs, paradigms, items, ps.accuracy, shifts, ps.run_sd, np.random.default_rng(1000 + i))
        done.append({"rep": i, **fit_once(df, settings)})
        k = sum(r["detected"] for r in done)
        ci = stats.binomtest(k, len(done)).proportion_ci(method="wilson")
        doc = {"config": str(args.config.relative_to(REPO)) if args.config.is_relative_to(REPO) else str(args.config),
               "seeds": args.seeds, "contrast": CONTRAST, "effect": stated["effect"], "run_sd": ps.run_sd,
               "accuracy": ps.accuracy, "stated_power": round(stated["power"], 4), "stated_se": round(stated["se"], 4),
               "models": stated["models"], "sampler": f"{args.chains} x ({args.tune} + {args.draws}) {args.sampler}",
               "detected": k, "replicates_done": len(done), "rate": round(k / len(done), 4),
               "wilson95": [round(ci.low, 4), round(ci.high, 4)],
               "fitted_sd_of_estimate": round(float(np.std([r["median"] for r in done], ddof=1)), 4) if len(done) > 1 else None,
               "replicates": done}
        write_json(args.out, doc)
        print(f"rep {i}: {done[-1]['median']:+.3f} [{done[-1]['lower']:.3f}, {done[-1]['upper']:.3f}] "
              f"detected={done[-1]['detected']} ({time.perf_counter() - t0:.0f} s); rate {k}/{len(done)}", flush=True)
    print(f"{CONTRAST} at {doc['effect']:+.2f}, run_sd {doc['run_sd']}: povstim power states {doc['stated_power']:.2f} "
          f"(SE {doc['stated_se']:.3f}); the three-level model with (1|run) detected it in {doc['detected']}/"
          f"{doc['replicates_done']} = {doc['rate']:.2f} (95% Wilson [{doc['wilson95'][0]:.2f}, {doc['wilson95'][1]:.2f}]); "
          f"SD of its estimates {doc['fitted_sd_of_estimate']}")


if __name__ == "__main__":
    main()
