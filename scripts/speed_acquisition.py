"""Time the acquisition analysis (analysis/timing/acquisition.py; `povstim acquisition`) at the issue's scale.

12 models (BABY-F/BABY/WIKI x 2 sizes x 2 seeds) x 10 word-budget checkpoints (10k..10M, log-spaced) x 10
paradigms of 500 items: numpy-simulated binomial accuracies with planted acquisition points (BABY-F one decade
later than BABY on half the paradigms, one paradigm never acquired). Times the fits (points), the seeds' pooled
summary and the contrasts, and separately the figures; checks the planted points are recovered.

    .venv/bin/python scripts/speed_acquisition.py            # target: the analysis in <= 1 minute on 2 cores
    .venv/bin/python scripts/speed_acquisition.py --figures  # also draw the figures into a temporary folder

Prints one JSON line: wall and CPU seconds of each part, fits, and the mean absolute recovery error (decades).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))

from povstim.analysis.timing import acquisition as A

CONDITIONS = ("baby-f", "baby", "wiki")
SIZES = ("10M", "30M")
SEEDS = (1, 2)


def planted(cond: str, paradigm: int) -> float | None:
    if paradigm == 9:
        return None  # never acquired
    x0 = 4.8 + 0.2 * paradigm
    if cond == "baby-f" and paradigm % 2 == 0:
        x0 += 1.0  # filtering delays half the paradigms by a decade
    if cond == "wiki":
        x0 += 0.3
    return x0


def simulate(checkpoints: int, paradigms: int, items: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    words = np.logspace(4, 7, checkpoints)
    rows = []
    for cond in CONDITIONS:
        for size in SIZES:
            for s in SEEDS:
                for p in range(paradigms):
                    x0 = planted(cond, p)
                    acc = np.full(checkpoints, 0.5) if x0 is None else \
                        0.5 + 0.4 / (1 + np.exp(-3 * (np.log10(words) - x0 - rng.normal(0, 0.05))))
                    k = rng.binomial(items, acc)
                    for i, (w, kk) in enumerate(zip(words, k)):
                        rows.append({"suite": "posh", "arch": "gpt2", "condition": cond, "size": size, "seed": s,
                                     "step": 100 * (i + 1), "final": i == checkpoints - 1,
                                     "category": f"c{p // 3}", "paradigm": f"p{p}", "n_correct": int(kk),
                                     "n_total": items, "accuracy": kk / items, "words_seen": int(w)})
    return pd.DataFrame(rows)


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _recovery(summ: pd.DataFrame, paradigms: int) -> dict:
    """Mean absolute error (decades) of the groups' points called acquired against the planted ones, and how
    many never-acquired groups (the last paradigm) are called not_acquired."""
    acq = summ[summ["acquisition"] == "acquired"]
    truth = np.array([planted(r.condition, int(r.paradigm[1:])) for r in acq.itertuples()], dtype=float)
    never = summ[summ["paradigm"] == f"p{paradigms - 1}"]
    return {"recovery_mae_decades": round(float(np.mean(np.abs(acq["log10_point"].to_numpy() - truth))), 3),
            "never_acquired_called_not_acquired": f"{int((never['acquisition'] == 'not_acquired').sum())}"
                                                  f"/{len(never)}"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--checkpoints", type=int, default=10)
    ap.add_argument("--paradigms", type=int, default=10)
    ap.add_argument("--items", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--figures", action="store_true")
    ap.add_argument("--methods", nargs="+", default=["hierarchical", "per_seed"],
                    choices=["hierarchical", "per_seed"], help="acquisition.method(s) to time, in this order")
    args = ap.parse_args()
    curves = simulate(args.checkpoints, args.paradigms, args.items, args.seed)
    out = {"models": len(CONDITIONS) * len(SIZES) * len(SEEDS), "checkpoints": args.checkpoints,
           "paradigms": args.paradigms}
    for method in args.methods:
        settings = A.AcquisitionSettings(method=method, min_checkpoints=4, min_gain=0.05, interval=0.95,
                                         childes=None, child_words=None, contexts=20, word_learning=False,
                                         draws=300, tune=300, chains=2, seed=1, sampler="pymc")
        t, c, kids = time.perf_counter(), time.process_time(), _children_cpu()
        points, summ, con, _notes, info = A.analyse(curves, settings)
        # CPU seconds of this process and of its finished children (PyMC runs each chain in a child process):
        # unlike wall time, they do not grow with the other jobs on a shared machine
        out[method] = {"analysis_wall_s": round(time.perf_counter() - t, 2),
                       "analysis_cpu_s": round(time.process_time() - c + _children_cpu() - kids, 2),
                       "load_1min": round(os.getloadavg()[0], 1), "groups": len(summ),
                       "contrasts": len(con), **_recovery(summ, args.paradigms),
                       **{k: info[k] for k in ("divergences", "max_r_hat", "min_ess_bulk", "not_converged")
                          if k in info}}
    if len(args.methods) == 2:
        a, b = (out[m]["analysis_wall_s"] for m in args.methods)
        out[f"wall_ratio_{args.methods[0]}_over_{args.methods[1]}"] = round(a / b, 1)
    if args.figures:
        from povstim.figures import acquisition as figs
        from povstim.figures import style

        style.apply()
        t = time.perf_counter()
        with tempfile.TemporaryDirectory() as tmp:
            style.save(figs.acquisition_curves(curves, points, summ, "posh"), tmp, "curves")  # the last method's
            style.save(figs.acquisition_points(summ, con, "posh"), tmp, "points")
        out["figures_wall_s"] = round(time.perf_counter() - t, 2)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
