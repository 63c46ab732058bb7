"""Δ accuracy of filtered training: filtered − full on each construction's target paradigms vs the others.

For every condition that names the constructions it removes (``conditions.<c>.filter: [..]``), and every
unfiltered condition of the same corpus as its reference ("full"), from the analysis's
``accuracy.csv`` (paradigm-level rows)::

    condition, constructions, arch, size, suite, kind (target | other), n_paradigms,
    accuracy_filtered, accuracy_full, delta

averaged over seeds and paradigms. A construction's targets are its ``targets:`` (BLiMP UIDs, Zorro and
POSH paradigm names) in the registry. FiCT's reading: a construction the model learns from indirect
evidence loses little on its targets (delta near the others').

    python -m povstim.constructions.delta --config CONFIG --accuracy accuracy.csv --out delta.csv
"""

from __future__ import annotations

import argparse
import csv
from collections import defaultdict

from ..io import PovstimError, load_yaml, write_tsv


def reference_condition(config: dict, condition: str) -> str:
    """The unfiltered condition of the same corpus (the 'full' corpus)."""
    src = config["conditions"][condition]["from"]
    full = [c for c, spec in config["conditions"].items() if spec["from"] == src and not spec.get("filter")]
    if not full:
        raise PovstimError(f"conditions.{condition}: no unfiltered condition of corpus {src!r} to compare with "
                           "(add one with filter: false)")
    return full[0]


def named_conditions(conditions: dict) -> dict[str, list[str]]:
    """condition -> the constructions it removes, for each condition whose ``filter`` names them (a list)."""
    return {c: list(spec["filter"]) for c, spec in conditions.items() if isinstance(spec.get("filter"), list)}


def comparison_targets(conditions: dict) -> dict[str, list[str]]:
    """condition -> its constructions' target paradigms, sorted (the construction-delta rule's params: editing
    a construction's ``targets:`` reruns it)."""
    return {c: sorted(targets_of(names)) for c, names in named_conditions(conditions).items()}


def targets_of(names) -> set[str]:
    from .. import dpe

    out: set[str] = set()
    for n in names:
        for paradigms in dpe.PHENOMENA[n].targets.values():
            out.update(paradigms)
    return out


def delta_rows(config: dict, accuracy: list[dict]) -> list[dict]:
    """One row per filtered condition × arch × size × suite × kind (target/other)."""
    acc: dict = defaultdict(list)  # (condition, arch, size, suite, paradigm) -> accuracies over seeds
    for r in accuracy:
        if r.get("level", "paradigm") != "paradigm":
            continue
        acc[(r["condition"], r["arch"], str(r["size"]), r["suite"], r["paradigm"])].append(float(r["accuracy"]))
    mean = {k: sum(v) / len(v) for k, v in acc.items()}
    out = []
    for cond, spec in config["conditions"].items():
        names = spec.get("filter")
        if not isinstance(names, list):
            continue
        full = reference_condition(config, cond)
        targets = targets_of(names)
        keys = sorted({k[1:4] for k in mean if k[0] == cond})
        for arch, size, suite in keys:
            paradigms = sorted({k[4] for k in mean if k[:4] == (cond, arch, size, suite)
                                and (full, arch, size, suite, k[4]) in mean})
            for kind in ("target", "other"):
                ps = [p for p in paradigms if (p in targets) == (kind == "target")]
                if not ps:
                    continue
                f = sum(mean[(cond, arch, size, suite, p)] for p in ps) / len(ps)
                u = sum(mean[(full, arch, size, suite, p)] for p in ps) / len(ps)
                out.append({"condition": cond, "constructions": "+".join(names), "arch": arch, "size": size,
                            "suite": suite, "kind": kind, "n_paradigms": len(ps), "accuracy_filtered": round(f, 4),
                            "accuracy_full": round(u, 4), "delta": round(f - u, 4)})
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", required=True, help="the experiment's config (its conditions and constructions)")
    p.add_argument("--accuracy", required=True, help="results/<exp>/analysis/accuracy.csv")
    p.add_argument("--out", required=True, help="TSV of the Δ table")
    args = p.parse_args(argv)
    from .library import use

    # the config as written (the conditions and filter sections need no defaults here; povstim check
    # validates the file)
    config = load_yaml(args.config)
    use(config.get("filter"))
    with open(args.accuracy, newline="", encoding="utf-8") as fh:
        rows = delta_rows(config, list(csv.DictReader(fh)))
    if not rows:
        raise PovstimError(f"{args.accuracy}: no condition of {args.config} names constructions with scores")
    write_tsv(args.out, list(rows[0]), [list(r.values()) for r in rows])
    for r in rows:
        print("\t".join(str(v) for v in r.values()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
