"""Released-style result files (one CSV per model, POSH-BENCH's posh_results/ layout) with
SYNTHETIC accuracies: the fixture in tests/fixtures/released/ and the paper-scale folder the
timing measurement uses. Nothing here is a published number.

    python tests/helpers/released.py OUT_DIR [--sizes 10M 30M] [--seeds 42 53 76] [--items 500]
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

# POSH's paradigm names as its files spell them (hyphens), and their categories.
PARADIGMS = {
    "island-adjunct": "Island", "island-complex-np": "Island", "island-wh": "Island",
    "question-formation_or": "Question Formation", "question-formation_rr": "Question Formation",
    "question-formation_sr": "Question Formation", "principle_a_command": "Binding",
    "principle_a_locality": "Binding", "wanna": "Wanna",
}
# Synthetic log-odds of a correct answer per category and condition (not POSH's estimates).
BASE = {"Island": 1.0, "Question Formation": 0.2, "Binding": 0.3, "Wanna": 1.0}
SHIFT = {"baby-f": 0.0, "baby": -0.05, "wiki": 0.05}


def file_name(arch: str, source: str, size: str, filtered: bool, seed: int, vocab: int = 32768) -> str:
    return f"results_gpt2_{arch}_{source}_{size}{'f' if filtered else ''}_{vocab}_{seed}_best.csv"


def write_release(out: str | Path, sizes=("10M", "30M"), seeds=(42, 53, 76), items: int = 500,
                  extra_paradigm: bool = True, rng_seed: int = 0) -> list[Path]:
    """One file per condition x size x seed (+ POSH's baseline file results_gpt2_best.csv), accuracies
    k / items with k drawn from a binomial around the synthetic log-odds above."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(rng_seed)
    paths = []
    for size in sizes:
        arch = "mini" if size == "10M" else "small"  # POSH §4.1
        grow = 0.15 * np.log10(int(size[:-1]) / 10)
        # POSH trains BABY-F only up to 50M; at 100M "BABY" is the unfiltered base corpus (§3.1)
        for cond in (("baby-f", "baby", "wiki") if size != "100M" else ("baby", "wiki")):
            source, filtered = cond.split("-")[0], cond.endswith("-f")
            for seed in seeds:
                lines = [",best"]
                for par, cat in PARADIGMS.items():
                    logit = BASE[cat] + SHIFT[cond] + grow
                    if cond == "wiki" and cat == "Wanna":
                        logit -= 1.8
                    k = int(rng.binomial(items, 1 / (1 + np.exp(-logit))))
                    lines.append(f"{par},{k / items!r}")
                if extra_paradigm:  # POSH's files also hold paradigms the tables leave out
                    lines.append(f"island-subject,{int(rng.binomial(items, 0.6)) / items!r}")
                path = out / file_name(arch, source, size, filtered, seed)
                path.write_text("\n".join(lines) + "\n")
                paths.append(path)
    (out / "results_gpt2_best.csv").write_text(",best\n" + "".join(f"{p},0.5\n" for p in PARADIGMS))
    return paths


def main(argv=None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("out")
    ap.add_argument("--sizes", nargs="+", default=["10M", "30M"])
    ap.add_argument("--seeds", nargs="+", type=int, default=[42, 53, 76])
    ap.add_argument("--items", type=int, default=500)
    a = ap.parse_args(argv)
    for p in write_release(a.out, a.sizes, a.seeds, a.items):
        print(p)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
