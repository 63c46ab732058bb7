"""``povstim condition``: BABY-F, BABY or WIKI from base.txt (+ dpe.tsv), with a train/dev split."""

from __future__ import annotations

import logging
from collections import Counter
from pathlib import Path

import json

from ..io import PovstimError, read_lines, write_json, write_lines
from ..io import json_object_arg as load_json_arg
from .build import build, read_dpe, read_targeted, split

log = logging.getLogger("povstim.condition")


def add_arguments(p) -> None:
    p.description = (
        "Build a training condition: without --dpe the base corpus as is (WIKI); with --dpe every DPE "
        "sentence removed (BABY-F); with --dpe and reinsert rates, DPE sentences put back at those rates, "
        "each replacing another sentence so the sentence count equals BABY-F's (BABY). Then a deterministic "
        "train/dev split."
    )
    p.add_argument("--base", help="results/corpus/{corpus}/{size}/base.txt (required unless --table)")
    p.add_argument("--dpe", help="the filter's dpe.tsv; omit for an unfiltered condition")
    p.add_argument("--reinsert", default="{}", help='phenomenon -> share of sentences put back, JSON, e.g. '
                   '\'{"question_formation": 0.002, "binding": 0.0007}\'')
    p.add_argument("--not-filtered", default="", metavar="REASON",
                   help="the condition asked for the filter but runs unfiltered, and why (e.g. 'not filtered: no "
                   "DPE rules for language it'); recorded in --stats and the log")
    p.add_argument("--split", default="{}", help='the config\'s split: section as JSON ({"dev_fraction": 0.05, "seed": 1})')
    p.add_argument("--out-train", help="train.txt")
    p.add_argument("--out-dev", help="dev.txt")
    p.add_argument("--stats", help="condition.json: counts and measured DPE rates")
    p.add_argument("--table", nargs="+", metavar="CONDITION_JSON",
                   help="instead of building: gather condition.json files (results/corpus/{condition}/{size}/) "
                   "into one TSV of counts and rates, written to --out-table")
    p.add_argument("--out-table", help="TSV for --table")


TABLE_COLUMNS = ("condition", "size", "n_base", "n_dpe_removed", "n_sentences", "n_words", "n_train", "n_dev",
                 "n_replaced")


def write_table(paths: list[str], out: str) -> None:
    """One row per condition x size (from results/corpus/{condition}/{size}/condition.json)."""
    stats = []
    phen: set[str] = set()
    for p in paths:
        path = Path(p)
        try:
            s = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise PovstimError(f"cannot read condition stats {path}: {exc}") from None
        s["condition"], s["size"] = path.parent.parent.name, path.parent.name
        phen |= set(s.get("dpe_rate", {})) | set(s.get("reinsert_config", {}))
        stats.append(s)
    phens = sorted(phen)
    cols = list(TABLE_COLUMNS) + [f"dpe_rate_{p}" for p in phens] + [f"config_rate_{p}" for p in phens]
    rows = ["\t".join(cols)]
    for s in sorted(stats, key=lambda s: (s["condition"], s["size"])):
        vals = [s.get(c, "") for c in TABLE_COLUMNS]
        vals += [s.get("dpe_rate", {}).get(p, "") for p in phens]
        vals += [s.get("reinsert_config", {}).get(p, "") for p in phens]
        rows.append("\t".join(str(v) for v in vals))
    write_lines(out, rows)



def _rate(k: int, n: int) -> float:
    return round(k / n, 8) if n else 0.0


def run(args) -> int:
    if args.table:
        if not args.out_table:
            raise PovstimError("--table needs --out-table")
        write_table(args.table, args.out_table)
        return 0
    missing = [f for f in ("base", "out_train", "out_dev", "stats") if not getattr(args, f)]
    if missing:
        raise PovstimError("missing " + ", ".join("--" + f.replace("_", "-") for f in missing))
    reinsert = load_json_arg(args.reinsert, "--reinsert")
    for phen, rate in reinsert.items():
        if not isinstance(rate, (int, float)) or isinstance(rate, bool) or not 0 <= rate < 1:
            raise PovstimError(f"reinsert.{phen}: rate must be a number in [0, 1), got {rate!r}")
    sp = load_json_arg(args.split, "--split")
    dev_fraction = float(sp.get("dev_fraction", 0.05))
    seed = int(sp.get("seed", 0))
    if not 0 < dev_fraction < 0.5:
        raise PovstimError(f"split.dev_fraction must be in (0, 0.5), got {dev_fraction}")
    base_path = Path(args.base)
    if not base_path.is_file():
        raise PovstimError(f"base corpus {base_path} does not exist")
    lines = read_lines(base_path)
    if not lines:
        raise PovstimError(f"base corpus {base_path} is empty")
    dpe = read_dpe(args.dpe, len(lines)) if args.dpe else None
    targeted = read_targeted(args.dpe) if args.dpe else None
    cond = build(len(lines), dpe, reinsert, seed, targeted)
    train, dev = split(cond.ids, dev_fraction, seed)
    write_lines(args.out_train, (lines[i] for i in train))
    write_lines(args.out_dev, (lines[i] for i in dev))

    n = len(cond.ids)
    dpe_of = cond.dpe_of
    present = Counter(p for i in cond.ids for p in dpe_of.get(i, []))
    removed = Counter(p for ps in dpe_of.values() for p in ps)
    stats = {
        "base": str(base_path),
        "filtered": dpe is not None,
        "n_base": len(lines),
        "n_dpe_removed": len(dpe_of),
        "dpe_removed": dict(sorted(removed.items())),
        "n_filtered": len(lines) - len(dpe_of),
        "reinsert_config": dict(sorted(reinsert.items())),
        "reinserted": {p: len(v) for p, v in sorted(cond.reinserted.items())},
        "n_replaced": len(cond.replaced),
        "reinsert_pool": cond.pool,
        "reinserted_targeted": dict(sorted(cond.reinserted_targeted.items())),
        "n_sentences": n,
        "n_words": sum(len(lines[i].split()) for i in cond.ids),
        "n_train": len(train),
        "n_dev": len(dev),
        "dev_fraction": dev_fraction,
        "seed": seed,
        "dpe_count": dict(sorted(present.items())),
        "dpe_rate": {p: _rate(present.get(p, 0), n) for p in sorted(set(removed) | set(reinsert))},
    }
    if getattr(args, "not_filtered", ""):  # [issue 16] say so, never silently
        stats["not_filtered"] = args.not_filtered
        log.warning("%s: %s", args.out_train, args.not_filtered)
    write_json(args.stats, stats)
    log.info("%s: %d sentences (%d train, %d dev), DPE rates %s", args.out_train, n, len(train), len(dev),
             stats["dpe_rate"])
    return 0
