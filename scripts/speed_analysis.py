#!/usr/bin/env python
"""Time the POSH Table 12 model at paper scale (148.5k item-level observations).

POSH-BENCH's design: 11 models (BABY-F/BABY/WIKI at 10M, 30M, 50M; BABY/WIKI at 100M) x 3 seeds
x 9 paradigms x 500 items = 148,500 observations. We simulate that design from known coefficients
(tests/helpers/simulate.py), aggregate it to binomial cells (297 of them; the same likelihood) and
fit ``(size + category) * filtered + source + (1|seed) + (1|phenomenon)`` with Bambi.

    .venv/bin/python scripts/speed_analysis.py                       # POSH sampling: 4 chains x 1000+1000
    .venv/bin/python scripts/speed_analysis.py --sampler nutpie
    .venv/bin/python scripts/speed_analysis.py --family bernoulli --items 50   # item-level, smaller

Prints one JSON line per run: wall time of design + compile + sampling, the CPU seconds of this process and
its sampler processes (robust to other jobs sharing the machine), and the diagnostics.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # helpers: simulated scores, tiny models

from povstim.analysis.models import bayes  # noqa: E402

from povstim.analysis.tables import tidy  # noqa: E402
from povstim.analysis.pipeline import analysis_settings  # noqa: E402
from helpers.simulate import CONDITIONS, TRUE_COEFS, simulate_scores  # noqa: E402


def posh_design(items: int, rng_seed: int):
    df = simulate_scores(sizes=("10M", "30M", "50M", "100M"), seeds=(1, 2, 3), items=items, steps=(1,),
                         rng_seed=rng_seed)
    # POSH trained BABY-F only up to 50M.
    df = df[~((df["condition"] == "baby-f") & (df["size"] == "100M"))]
    return tidy.attach_conditions(df, CONDITIONS)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=500, help="items per paradigm (500 = POSH's 148.5k rows)")
    ap.add_argument("--family", choices=["binomial", "bernoulli"], default="binomial")
    ap.add_argument("--sampler", choices=["pymc", "nutpie"], default="pymc")
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--tune", type=int, default=1000)
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--target-accept", type=float, default=0.9)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--centered", action="store_true", help="centered group-level effects")
    ap.add_argument("--grad-evals", type=int, default=0,
                    help="only time this many log-density + gradient evaluations (what NUTS calls per leapfrog "
                    "step) of the compiled model, e.g. to compare PYTENSOR_FLAGS=blas__ldflags=-lopenblas")
    a = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)

    t0 = time.perf_counter()
    items = posh_design(a.items, a.seed)
    t_sim = time.perf_counter() - t0
    t1 = time.perf_counter()
    settings = analysis_settings({"family": a.family, "draws": a.draws, "tune": a.tune, "chains": a.chains,
                                  "seed": a.seed, "target_accept": a.target_accept, "sampler": a.sampler,
                                  "parametrization": "centered" if a.centered else "noncentered"})
    design = bayes.build_design(items, settings.formula, family=a.family, zscore=settings.zscore,
                                contrasts=settings.contrasts)
    t_design = time.perf_counter() - t1
    if a.grad_evals:
        return grad_bench(design, a, settings)
    t2 = time.perf_counter()
    res = bayes.fit(design, settings, cores=a.cores)
    t_fit = time.perf_counter() - t2
    ru_self, ru_kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_s = ru_self.ru_utime + ru_self.ru_stime + ru_kids.ru_utime + ru_kids.ru_stime
    s = res.summary.set_index("term")
    covered = sum(s.loc[t, "lower"] <= v <= s.loc[t, "upper"] for t, v in TRUE_COEFS.items())
    print(json.dumps({
        "observations": int(len(items)), "model_rows": int(len(design.data)), "family": design.family,
        "sampler": a.sampler, "centered": a.centered, "chains": a.chains, "draws": a.draws, "tune": a.tune, "cores": a.cores,
        "cpus": os.cpu_count(), "load_avg_1m": round(os.getloadavg()[0], 2),
        "simulate_s": round(t_sim, 1), "design_s": round(t_design, 2),
        "fit_s_incl_compile": round(t_fit, 1), "process_cpu_s_total": round(cpu_s, 1), "sampling_s": res.diagnostics["sampling_seconds"],
        "divergences": res.diagnostics["divergences"], "max_r_hat": res.diagnostics["max_r_hat"],
        "min_ess_bulk": res.diagnostics["min_ess_bulk"],
        "true_fixed_effects_covered": f"{covered}/{len(TRUE_COEFS)}",
    }))
    return 0


def grad_bench(design, a, settings) -> int:
    import bambi as bmb
    import pytensor

    model = bmb.Model(design.bambi_formula(), design.data, family=design.family,
                      priors=bayes.make_priors(design, settings.priors), noncentered=not a.centered)
    model.build()
    pm_model = model.backend.model
    t0 = time.perf_counter()
    fn = pm_model.logp_dlogp_function(ravel_inputs=True)
    fn.set_extra_values({})
    compile_s = time.perf_counter() - t0
    from pymc.blocking import DictToArrayBijection

    ip = pm_model.initial_point()
    x = DictToArrayBijection.map({v.name: ip[v.name] for v in pm_model.continuous_value_vars}).data
    fn(x)
    t1 = time.perf_counter()
    for _ in range(a.grad_evals):
        fn(x)
    per = (time.perf_counter() - t1) / a.grad_evals
    print(json.dumps({"model_rows": int(len(design.data)), "family": design.family,
                      "blas_ldflags": pytensor.config.blas__ldflags, "compile_s": round(compile_s, 2),
                      "us_per_logp_dlogp": round(per * 1e6, 1), "evals": a.grad_evals,
                      "load_avg_1m": round(os.getloadavg()[0], 2)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
