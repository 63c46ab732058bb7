"""Item scores simulated from known coefficients, in the exact item-score schema.

Used by the tests (every analysis path, parameter recovery), the notebook test and
scripts/speed_analysis.py. The data-generating model is the Table 12 model with the same
coding as bayes.py: size z-scored over items, categories sum-coded with the last level
(Wanna) as the implicit reference, filtered +1/-1, source baby +1 / wiki -1.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from povstim.benchmarks.suite import POSH_CATEGORIES
from povstim.io import atomic_path, parse_size

# The POSH-BENCH paradigms and their categories, as the benchmark generator writes them.
POSH_PARADIGMS = POSH_CATEGORIES
CATEGORIES = sorted(set(POSH_PARADIGMS.values()))  # last one (Wanna) is the reference
CONDITIONS = {
    "baby-f": {"source": "baby", "filtered": True},
    "baby": {"source": "baby", "filtered": False},
    "wiki": {"source": "wiki", "filtered": False},
}
# Roughly POSH Table 12.
TRUE_COEFS = {
    "Intercept": 0.5,
    "size": 0.15,
    "category[Binding]": -0.1,
    "category[Island]": 0.3,
    "category[Question Formation]": -0.25,
    "filtered[True]": 0.1,
    "source[baby]": 0.1,
    "size:filtered[True]": 0.0,
    "category[Binding]:filtered[True]": -0.1,
    "category[Island]:filtered[True]": -0.15,
    "category[Question Formation]:filtered[True]": -0.15,
}


def simulate_scores(conditions: dict | None = None, sizes=("50k", "150k"), seeds=(1, 2),
                    paradigms: dict | None = None, items: int = 100, steps=(120, 240),
                    coefs: dict | None = None, seed_sd: float = 0.05, phenomenon_sd: float = 0.3,
                    arch: str = "gpt2-tiny", suite: str = "posh", rng_seed: int = 0) -> pd.DataFrame:
    """One row per model x step x item; the last step is the final model.

    Checkpoint accuracy grows with the step (the log-odds are scaled by step/last_step) so
    learning curves have a shape.
    """
    rng = np.random.default_rng(rng_seed)
    conditions = conditions or CONDITIONS
    paradigms = paradigms or POSH_PARADIGMS
    coefs = dict(TRUE_COEFS, **(coefs or {}))
    cats = sorted(set(paradigms.values()))
    ref = cats[-1]
    size_vals = np.array([parse_size(s) for s in sizes], float)
    # z over items: the design is balanced, so the mean/SD over sizes (ddof=1 on items ~ ddof=0 here).
    n_per_size = len(conditions) * len(seeds) * len(paradigms) * items
    allv = np.repeat(size_vals, n_per_size)
    mean, sd = allv.mean(), allv.std(ddof=1) if len(size_vals) > 1 else 1.0
    seed_eff = {s: rng.normal(0, seed_sd) for s in seeds}
    phen_eff = {p: rng.normal(0, phenomenon_sd) for p in sorted(paradigms)}
    frames = []
    for cond, meta in conditions.items():
        filt = 1.0 if meta["filtered"] else -1.0
        src = 1.0 if meta["source"] == "baby" else -1.0
        for size, sv in zip(sizes, size_vals):
            z = (sv - mean) / sd if len(size_vals) > 1 else 0.0
            for s in seeds:
                for par in sorted(paradigms):
                    cat = paradigms[par]
                    eta = coefs["Intercept"] + coefs["size"] * z + coefs["filtered[True]"] * filt
                    eta += coefs["source[baby]"] * src + coefs["size:filtered[True]"] * z * filt
                    for c in cats[:-1]:
                        code = 1.0 if cat == c else (-1.0 if cat == ref else 0.0)
                        eta += code * (coefs.get(f"category[{c}]", 0.0)
                                       + filt * coefs.get(f"category[{c}]:filtered[True]", 0.0))
                    eta += seed_eff[s] + phen_eff[par]
                    for step in steps:
                        frac = step / steps[-1]
                        p = 1 / (1 + np.exp(-eta * frac))
                        correct = rng.random(items) < p
                        lg = -rng.gamma(20.0, 2.0, items)
                        margin = rng.gamma(2.0, 1.0, items) + 0.01
                        lb = np.where(correct, lg - margin, lg + margin)
                        frames.append(pd.DataFrame({
                            "arch": arch, "condition": cond, "size": size, "seed": int(s),
                            "step": int(step), "final": step == steps[-1], "suite": suite,
                            "paradigm": par, "category": cat,
                            "item_id": [f"{par}_{i:04d}" for i in range(items)],
                            "logp_good": lg, "logp_bad": lb,
                            "ntok_good": rng.integers(5, 15, items), "ntok_bad": rng.integers(5, 15, items),
                            "correct": correct,
                        }))
    return pd.concat(frames, ignore_index=True)


def write_score_files(df: pd.DataFrame, root: str | Path) -> list[Path]:
    """Write results/scores/{arch}/{condition}/{size}/seed{seed}/{suite}.parquet files."""
    root = Path(root)
    paths = []
    for (arch, cond, size, seed, suite), sub in df.groupby(["arch", "condition", "size", "seed", "suite"],
                                                           sort=True):
        path = root / "scores" / arch / cond / str(size) / f"seed{seed}" / f"{suite}.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(path) as tmp:
            sub.reset_index(drop=True).to_parquet(tmp, index=False)
        paths.append(path)
    return paths


def main(argv=None) -> int:
    """python tests/helpers/simulate.py OUT_ROOT [--items N]: write simulated score files."""
    import argparse

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("root")
    ap.add_argument("--items", type=int, default=100)
    ap.add_argument("--sizes", nargs="+", default=["50k", "150k"])
    ap.add_argument("--seeds", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--rng-seed", type=int, default=0)
    a = ap.parse_args(argv)
    for p in write_score_files(simulate_scores(sizes=a.sizes, seeds=a.seeds, items=a.items,
                                               rng_seed=a.rng_seed), a.root):
        print(p)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
