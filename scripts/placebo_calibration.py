"""Placebo calibration: how often the three-level model calls a contrast "credible" when nothing but a few random
sentences tells the two conditions apart (a benchmark, not a test: it trains dozens of tiny models).

Design (small enough for a shared 2-core machine): the embedded default (config.yaml) at its smallest size,
BABY-F and ``--placebos`` placebo conditions, each BABY-F with a count-matched random removal of as many
evidence-free sentences as the base corpus has binding evidence (the existing ``random_remove`` operation, its
draw seeded by the condition's name), each with its own tokenizer, ``--seeds`` seeds of the default's gpt2-tiny,
scored on the default's POSH suite. No placebo removes anything a benchmark phenomenon needs, so every contrast
between two of these conditions has a true effect of zero on every category.

For every pair the script fits, on the final checkpoints' item scores (binomial cells per run x phenomenon):

* ``seed``  today's three-level model ``category * source_filter + (1|seed) + (1|phenomenon)``;
* ``run``   the run-level model ``category * source_filter + (1|seed) + (1|run) + (1|phenomenon)`` (run = arch x
  condition x size x seed, the trained model);

and counts a pair as a false positive when the overall contrast's 95% interval excludes 0 (also: any category's).
Pairs: BABY-F vs. each placebo (``--placebos`` pairs, which share BABY-F's models and so are not independent), and
placebo vs. placebo in disjoint pairs (P01 vs. P02, P03 vs. P04, ...: independent). The share is given with a 95%
Wilson interval (scipy's binomtest), for each model and pair kind.

    nice -n 5 flock /tmp/povstim-heavy.lock python scripts/placebo_calibration.py --stage train
    nice -n 5 flock /tmp/povstim-heavy.lock python scripts/placebo_calibration.py --stage fit
    python scripts/placebo_calibration.py --stage report          # the table from the JSON written by fit

Outputs: ``--out`` (default docs/calibration/placebo_calibration.json: every pair's contrasts and the shares) and
the same table on stdout. A run interrupted during fitting keeps the pairs already fitted (``--out`` is rewritten
atomically after each pair) and resumes from them.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow"))

from povstim.io import write_json  # noqa: E402

EXPERIMENT = "placebo-calibration"
SHARED = "placebo-calibration-shared"  # --shared-tokenizer: every condition on BABY-F's tokenizer (tokenizer.shared)
FORMULAS = {
    "seed": "category * source_filter + (1|seed) + (1|phenomenon)",
    "run": "category * source_filter + (1|seed) + (1|run) + (1|phenomenon)",
}


def placebo_names(n: int) -> list[str]:
    return [f"p{i:02d}" for i in range(1, n + 1)]


def calibration_config(base: dict, placebos: int, seeds: int, shared: bool = False) -> dict:
    """The embedded default cut to its smallest size, BABY-F and the placebos, posh only, no checkpoint scoring;
    ``shared``: one tokenizer for every condition, BABY-F's (``tokenizer.shared``, a key of povstim since the
    shared-tokenizer option)."""
    cfg = copy.deepcopy(base)
    cfg["experiment"] = SHARED if shared else EXPERIMENT
    if shared:
        cfg["tokenizer"] = {**cfg["tokenizer"], "shared": "baby-f"}
    cfg["seeds"] = list(range(1, seeds + 1))
    cfg["sizes"] = [sorted(base["sizes"], key=lambda s: float(str(s).rstrip("kKmM")) *
                           (1e3 if str(s)[-1] in "kK" else 1e6))[0]]
    conditions = {"baby-f": {"from": "baby", "filter": True},
                  # never trained: it only names what random_remove counts (the base corpus' binding evidence)
                  "binding-removed": {"from": "baby", "operations": [{"op": "remove", "constructions": ["binding"]}]}}
    for name in placebo_names(placebos):
        conditions[name] = {"from": "baby", "operations": [{"op": "remove", "constructions": True},
                                                           {"op": "random_remove", "of": "binding-removed"}]}
    cfg["conditions"] = conditions
    cfg["benchmarks"] = {"posh": base["benchmarks"]["posh"]}
    cfg["scoring"] = {**base.get("scoring", {}), "checkpoints": False}
    cfg["prewarm_analysis"] = False
    cfg.pop("vocab_study", None)
    return cfg


def score_paths(cfg: dict, condition: str) -> list[tuple[int, Path]]:
    arch = next(iter(cfg["archs"]))
    size = cfg["sizes"][0]
    return [(s, REPO / "results" / cfg["experiment"] / "scores" / arch / condition / str(size) / f"seed{s}" / "posh.parquet")
            for s in cfg["seeds"]]


def train(cfg_path: Path, cfg: dict, cores: int) -> None:
    targets = [str(p.relative_to(REPO)) for c in ["baby-f"] + placebo_names(len(cfg["conditions"]) - 2)
               for _, p in score_paths(cfg, c)]
    env = {**os.environ, "POVSTIM_YES": "1", "PYTHONPATH": str(REPO / "workflow")}
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "snakemake", "--cores", str(cores), "--configfile", str(cfg_path),
                    "--rerun-incomplete", "--", *targets], cwd=REPO, env=env, check=True)
    print(f"trained and scored {len(targets)} models in {time.perf_counter() - t0:.0f} s wall")


def items_of(cfg: dict, condition: str, level: str):
    import pandas as pd

    from povstim.analysis.tables import tidy

    frames = []
    for _, path in score_paths(cfg, condition):
        frames.append(tidy.final_items(tidy.read_scores([path])))
    df = pd.concat(frames, ignore_index=True)
    df["source_filter"] = level
    df["run"] = df["arch"].astype(str) + "|" + condition + "|" + df["size"].astype(str) + "|" + df["seed"].astype(str)
    return df


def fit_pair(cfg: dict, a: str, b: str, args) -> dict:
    import pandas as pd

    from povstim.analysis import pipeline
    from povstim.analysis.models import bayes

    df = pd.concat([items_of(cfg, a, "A"), items_of(cfg, b, "B")], ignore_index=True)
    settings = pipeline.analysis_settings({"draws": args.draws, "tune": args.tune, "chains": args.chains,
                                           "sampler": args.sampler, "target_accept": args.target_accept})
    out = {"a": a, "b": b, "accuracy": {a: float(df[df.source_filter == "A"]["correct"].mean()),
                                        b: float(df[df.source_filter == "B"]["correct"].mean())}}
    for name, formula in FORMULAS.items():
        design = bayes.build_design(df, formula, family="binomial", zscore=True, contrasts="sum",
                                    coding_of={"source_filter": ("treatment", "B")}, min_groups=2)
        res = bayes.fit_converged(design, settings, cores=args.chains)
        con = bayes.pairwise_contrasts(res.idata.posterior, design, by="category")
        ov = con[con["scope"] == "overall"].iloc[0]
        cats = con[con["scope"] != "overall"]
        out[name] = {"overall": [round(float(ov[k]), 4) for k in ("median", "lower", "upper")],
                     "credible_overall": bool(ov["lower"] > 0 or ov["upper"] < 0),
                     "credible_categories": [str(r["scope"]) for _, r in cats.iterrows()
                                             if r["lower"] > 0 or r["upper"] < 0],
                     "divergences": res.diagnostics["divergences"], "max_r_hat": res.diagnostics["max_r_hat"],
                     "converged": res.diagnostics["converged"], "sampler": res.diagnostics["sampler"],
                     "refitted": res.diagnostics["refitted"]}
        run_sd = res.summary[res.summary["term"] == "sd(1|run)"]
        if len(run_sd):
            out[name]["run_sd"] = round(float(run_sd["median"].iloc[0]), 4)
    return out


def wilson(k: int, n: int) -> list[float]:
    from scipy import stats

    ci = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    return [round(ci.low, 3), round(ci.high, 3)]


def shares(pairs: list[dict]) -> dict:
    out = {}
    for kind, keep in (("baby-f_vs_placebo", lambda p: p["a"] == "baby-f"),
                       ("placebo_vs_placebo", lambda p: p["a"] != "baby-f")):
        sub = [p for p in pairs if keep(p)]
        if not sub:
            continue
        for model in FORMULAS:
            fitted = [p for p in sub if model in p]
            k = sum(p[model]["credible_overall"] for p in fitted)
            kc = sum(bool(p[model]["credible_categories"]) for p in fitted)
            n = len(fitted)
            out[f"{kind}/{model}"] = {"pairs": n, "credible_overall": k, "share": round(k / n, 3) if n else None,
                                      "wilson95": wilson(k, n) if n else None,
                                      "any_category_credible": kc, "share_any_category": round(kc / n, 3) if n else None,
                                      "unconverged_fits": sum(not p[model]["converged"] for p in fitted)}
    return out


def report(doc: dict) -> str:
    lines = [f"Placebo calibration ({doc['design']}):"]
    for key, r in doc["shares"].items():
        lines.append(f"  {key:<32} credible overall {r['credible_overall']}/{r['pairs']} = {r['share']:.2f} "
                     f"(95% Wilson [{r['wilson95'][0]:.2f}, {r['wilson95'][1]:.2f}]); any category credible "
                     f"{r['any_category_credible']}/{r['pairs']}; unconverged fits {r['unconverged_fits']}")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stage", choices=["all", "train", "fit", "report"], default="all")
    ap.add_argument("--config", type=Path, default=REPO / "config.yaml")
    ap.add_argument("--placebos", type=int, default=20)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--draws", type=int, default=500)
    ap.add_argument("--tune", type=int, default=500)
    ap.add_argument("--chains", type=int, default=2)
    ap.add_argument("--target-accept", type=float, default=0.95)
    ap.add_argument("--sampler", default="pymc")
    ap.add_argument("--shared-tokenizer", action="store_true",
                    help="every condition on BABY-F's tokenizer (tokenizer.shared: baby-f); its own experiment folder")
    ap.add_argument("--out", type=Path, default=None,
                    help="default docs/calibration/placebo_calibration[_shared_tokenizer].json")
    args = ap.parse_args()
    args.out = args.out or REPO / "docs" / "calibration" / (
        f"placebo_calibration{'_shared_tokenizer' if args.shared_tokenizer else ''}.json")
    base = yaml.safe_load(args.config.read_text())
    cfg = calibration_config(base, args.placebos, args.seeds, args.shared_tokenizer)
    cfg_path = REPO / "results" / f"{cfg['experiment']}.yaml"
    if args.stage in ("all", "train"):
        cfg_path.parent.mkdir(parents=True, exist_ok=True)
        cfg_path.write_text(yaml.safe_dump(cfg, sort_keys=False))
        train(cfg_path, cfg, args.cores)
    if args.stage in ("all", "fit"):
        done = json.loads(args.out.read_text())["pairs"] if args.out.exists() else []
        have = {(p["a"], p["b"]) for p in done}
        names = placebo_names(args.placebos)
        todo = [("baby-f", n) for n in names] + [(names[i], names[i + 1]) for i in range(0, len(names) - 1, 2)]
        design = (f"{config_name(args.config)} at {cfg['sizes'][0]}, BABY-F and {args.placebos} placebos (BABY-F minus "
                  f"as many random evidence-free sentences as the base has binding evidence), "
                  f"{'one shared tokenizer (BABY-F' + chr(39) + 's)' if args.shared_tokenizer else 'each its own tokenizer'}, {args.seeds} seeds, "
                  f"posh; {args.chains} x ({args.tune} + {args.draws}) {args.sampler}, target_accept {args.target_accept}")
        for a, b in todo:
            if (a, b) in have:
                continue
            t0 = time.perf_counter()
            done.append(fit_pair(cfg, a, b, args))
            print(f"{a} vs. {b}: " + "; ".join(f"{m} {done[-1][m]['overall']} credible={done[-1][m]['credible_overall']}"
                                                for m in FORMULAS) + f" ({time.perf_counter() - t0:.0f} s)", flush=True)
            write_json(args.out, {"design": design, "formulas": FORMULAS, "pairs": done, "shares": shares(done)})
    if args.stage in ("all", "fit", "report"):
        print(report(json.loads(args.out.read_text())))


def config_name(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(REPO))
    except ValueError:
        return str(path)


if __name__ == "__main__":
    main()
