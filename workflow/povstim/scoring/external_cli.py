"""``povstim score-model``: score any checkpointed Hugging Face model and each of its checkpoints; learning curves.

    povstim score-model models/babylm-gpt2 --suite results/demo/benchmarks/posh --out-dir babylm-gpt2-scores \\
        --size 10M
    povstim score-model my-org/my-babylm-model --revision chck_1M --revision chck_10M --download \\
        --suite blimp.jsonl --format blimp --out-dir out          # a hub repository at its revisions

The model's checkpoints are found in any of BabyLM's layout (``chck_1M``, ``chck_10M`` ... subfolders or hub
branches), the HF Trainer's (``checkpoint-N``) and povstim's (``checkpoints/step{N}``, ``checkpoints/chck_*``); the
folder itself is the final model (revision ``main``) when it holds one. Writes, in ``--out-dir``:

    {suite}.parquet   item scores of every revision (povstim score's columns + revision, words_seen)
    curve.csv         accuracy per suite x revision x paradigm (+ 'all': the mean over paradigms)
    curve.png         the learning curves: mean accuracy over words seen (from the chck_ names), else step

The config's ``external_models:`` puts such models into the DAG (rule score_external), beside the trained ones
in the tables and curves (docs/evaluation.md, "Any checkpointed model").
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from ..io import PovstimError, atomic_path, atomic_write
from ..io import json_object_arg as _json_arg
from ..settings import build, section
from .run import ScoringSettings, unigram_for

log = logging.getLogger("povstim.score")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = __doc__.split("\n\n", 1)[1]
    p.add_argument("model", help="model folder (with checkpoint subfolders) or a hub repository id")
    p.add_argument("--suite", action="append", required=True,
                   help="suite folder or file (repeatable; benchmark JSONL schema, or see --format)")
    p.add_argument("--format", choices=["jsonl", "blimp", "zorro", "scamp", "posh", "csv", "lm_eval"],
                   help="read every --suite with this importer (default: the benchmark schema, else guessed)")
    p.add_argument("--out-dir", help="folder for {suite}.parquet, curve.csv and curve.png")
    p.add_argument("--out", help="instead of --out-dir: the one --suite's item-score file only (rule score_external)")
    p.add_argument("--where", help="what errors call the model (default: its path; the DAG: external_models.NAME"
                   ".path)")
    p.add_argument("--name", help="the model's name in the rows' condition column (default: the folder's name)")
    p.add_argument("--size", help="the size label the tables group it by (its training words, e.g. 10M for a "
                   "BabyLM strict-small model; default: external_models' size default)")
    p.add_argument("--revision", action="append", default=[], metavar="NAME",
                   help="score only these checkpoints (subfolder names or hub revisions; repeatable)")
    p.add_argument("--checkpoints", action=argparse.BooleanOptionalAction,
                   help="score the checkpoints too (default: external_models' checkpoints default, true); an error "
                   "when there are none")
    p.add_argument("--download", action="store_true",
                   help="a hub repository: download what the local Hugging Face cache lacks")
    p.add_argument("--params", help="the config's scoring section as JSON (as for `povstim score`)")
    p.add_argument("--meta", help="JSON {arch, condition, size, seed} for the rows (the DAG's; overrides --name, "
                   "--size)")
    p.add_argument("--corpus", action="append", default=[], help="scoring.metric slor: the unigram's training text")
    p.add_argument("--threads", type=int, help="CPU threads for torch")
    p.add_argument("--no-figure", dest="figure", action="store_false", help="do not draw curve.png")


def suite_name(pairs: list[dict], given: str) -> str:
    names = sorted({str(p["suite"]) for p in pairs})
    if len(names) != 1:
        raise PovstimError(f"--suite {given}: items of several suites ({', '.join(names)}); give one suite each")
    return names[0]


def draw(curves, out: Path) -> None:
    """Mean accuracy over paradigms per revision, one line per suite: words seen on a log axis where every
    checkpoint has them, else the step."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = curves[(curves["paradigm"] == "all") & ~curves["final"]]
    by_words = len(rows) > 0 and rows["words_seen"].notna().all()
    fig, ax = plt.subplots(figsize=(5, 3.2))
    for suite, sub in rows.groupby("suite", sort=True):
        x = sub["words_seen"] if by_words else sub["step"]
        ax.plot(x, 100 * sub["accuracy"], marker="o", label=suite)
    if by_words:
        ax.set_xscale("log")
    ax.set_xlabel("words seen" if by_words else "step")
    ax.set_ylabel("accuracy (%)")
    ax.axhline(50, color="grey", lw=0.5, ls="--")
    if len(rows):
        ax.legend(fontsize=8)
    fig.tight_layout()
    with atomic_path(out) as tmp:
        fig.savefig(tmp, format="png", dpi=120, metadata={"Software": None})
    plt.close(fig)


def run(args) -> int:
    import pandas as pd

    from ..benchmarks.importers import load_pairs
    from ..benchmarks.tasks import resolve_path
    from .external import curve, find_revisions, score_revisions
    from .items import write_parquet
    from .scorer import preload_and_freeze

    if bool(args.out) == bool(args.out_dir):
        raise PovstimError("give one of --out-dir (scores, curve.csv, curve.png) and --out (one suite's scores)")
    if args.out and len(args.suite) != 1:
        raise PovstimError("--out writes one suite's scores: give exactly one --suite (or use --out-dir)")
    opts = build(ScoringSettings, "scoring", _json_arg(args.params, "--params"))
    # every suite read first: a broken line of the last one is an error before any revision is fetched or scored
    suites = [(given, load_pairs(resolve_path(given), args.format)) for given in args.suite]
    # the flags as one external_models entry: the schema fills what they leave out (size, checkpoints)
    given = {"path": args.model, "size": args.size, "checkpoints": args.checkpoints}
    spec = section("external_models", {"model": {k: v for k, v in given.items() if v is not None}}, "flags")["model"]
    revs = find_revisions(args.model, spec["checkpoints"], args.revision or None, where=args.where or args.model,
                          download=args.download)
    meta = {"arch": "external", "condition": args.name or Path(args.model.rstrip("/")).name,
            "size": str(spec["size"]), "seed": 0, **_json_arg(args.meta, "--meta")}
    unigram = unigram_for(opts, args.corpus)
    preload_and_freeze()
    out = Path(args.out_dir or ".")
    frames = []
    for given, pairs in suites:
        name = suite_name(pairs, given)
        frame = score_revisions(pairs, revs, opts, meta, threads=args.threads, unigram=unigram,
                                download=args.download)
        if args.out:
            write_parquet(frame, args.out)
            log.info("%s: %d revision(s) x %d pairs -> %s", name, len(revs), len(pairs), args.out)
            return 0
        write_parquet(frame, out / f"{name}.parquet")
        frames.append(frame)
        log.info("%s: %d revision(s) x %d pairs -> %s", name, len(revs), len(pairs), out / f"{name}.parquet")
    curves = curve(pd.concat(frames, ignore_index=True))
    with atomic_write(out / "curve.csv") as f:
        curves.to_csv(f, index=False, float_format="%.6g")
    if args.figure:
        draw(curves, out / "curve.png")
    return 0
