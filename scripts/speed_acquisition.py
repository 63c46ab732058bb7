"""Time the acquisition analysis (analysis/acquisition.py; `povstim acquisition`) at the issue's scale.

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
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))

from povstim.analysis import acquisition as A

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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--checkpoints", type=int, default=10)
    ap.add_argument("--paradigms", type=int, default=10)
    ap.add_argument("--items", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--figures", action="store_true")
    args = ap.parse_args()
    curves = simulate(args.checkpoints, args.paradigms, args.items, args.seed)
    settings = A.AcquisitionSettings(min_checkpoints=4, min_gain=0.05, interval=0.95, childes=None,
                                     child_words=None, contexts=20, word_learning=False)
    out = {"models": len(CONDITIONS) * len(SIZES) * len(SEEDS), "checkpoints": args.checkpoints,
           "paradigms": args.paradigms}
    t, c = time.perf_counter(), time.process_time()
    points, _ = A.acquisition_points(curves, settings)
    summ = A.summary(points, settings)
    con = A.contrasts(summ, settings)
    out.update(analysis_wall_s=round(time.perf_counter() - t, 2), analysis_cpu_s=round(time.process_time() - c, 2),
               fits=len(points), contrasts=len(con))
    acquired = points[points["acquisition"] == "acquired"]
    truth = [planted(r.condition, int(r.paradigm[1:])) for r in acquired.itertuples()]
    out["recovery_mae_decades"] = round(float(np.mean(np.abs(acquired["x0"].to_numpy() - np.array(truth)))), 3)
    out["never_acquired_called_not_acquired"] = int((points[points["paradigm"] == f"p{args.paradigms - 1}"]
                                                     ["acquisition"] == "not_acquired").sum())
    if args.figures:
        from povstim.figures import acquisition as figs
        from povstim.figures import style

        style.apply()
        t = time.perf_counter()
        with tempfile.TemporaryDirectory() as tmp:
            style.save(figs.acquisition_curves(curves, points, summ, "posh"), tmp, "curves")
            style.save(figs.acquisition_points(summ, con, "posh"), tmp, "points")
        out["figures_wall_s"] = round(time.perf_counter() - t, 2)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
