"""``povstim score-group``: score one suite with several models in one process.

Each model's parquet is byte-for-byte the one ``povstim score`` writes for that
model alone; one process pays the torch/transformers imports, the CUDA start-up
and the GPU claim once instead of once per model (``scoring.group``):

    povstim score-group --suite results/demo/benchmarks/posh --params '{"batch_size": 64}' \\
        --job results/demo/models/gpt2-tiny/baby/50k/seed1 '{"arch": "gpt2-tiny", "seed": 1, ...}' s1.parquet \\
        --job results/demo/models/gpt2-tiny/baby/50k/seed2 '{"arch": "gpt2-tiny", "seed": 2, ...}' s2.parquet
"""

from __future__ import annotations

import argparse
import logging
import time

from ..benchmarks.importers import load_pairs
from ..benchmarks.tasks import resolve_path
from ..io import PovstimError
from ..io import json_object_arg as _json_arg
from ..settings import build
from .run import ScoringSettings, score_models, unigram_for

log = logging.getLogger("povstim.score")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = __doc__.split("\n\n", 1)[1]
    p.add_argument("--suite", required=True, help="suite folder or file (benchmark JSONL schema, or see --format)")
    p.add_argument("--format", choices=["jsonl", "blimp", "zorro", "scamp", "posh", "csv", "lm_eval"],
                   help="read --suite with this importer (default: the benchmark JSONL schema)")
    p.add_argument("--suite-name", help="suite name for imported files (default: the file name)")
    p.add_argument("--params", help="the config's scoring section as JSON (as for `povstim score`)")
    p.add_argument("--job", nargs=3, action="append", default=[], metavar=("MODEL", "META", "OUT"),
                   help="one model: its folder, its meta JSON {arch, condition, size, seed} and the output "
                   ".parquet (repeatable)")
    p.add_argument("--threads", type=int, help="CPU threads for torch (default: torch's choice)")
    p.add_argument("--corpus", action="append", default=[],
                   help="scoring.metric slor: the unigram's training text, the same for every job (repeatable)")
    p.add_argument("--job-corpus", action="append", default=[], metavar="TXT",
                   help="scoring.metric slor: the unigram's training text of each --job, in their order (one per "
                   "--job; the score rule passes each model's condition's train.txt)")


def job_unigrams(opts: ScoringSettings, corpus: list[str], job_corpus: list[str], n_jobs: int):
    """The unigram model of each job (scoring.metric slor): ``--job-corpus`` gives one training text per job
    (jobs of one condition and size share one model), else ``--corpus`` one for all; None for other metrics."""
    if not job_corpus:
        return unigram_for(opts, corpus)
    if corpus:
        raise PovstimError("give --corpus (one unigram for every job) or --job-corpus (one per job), not both")
    if len(job_corpus) != n_jobs:
        raise PovstimError(f"--job-corpus is given {len(job_corpus)} time(s) for {n_jobs} --job(s): give one "
                           "training text per job, in the jobs' order")
    if opts.metric != "slor":
        return None
    by_path = {path: unigram_for(opts, [path]) for path in dict.fromkeys(job_corpus)}
    return [by_path[path] for path in job_corpus]


def run(args) -> int:
    # deferred: numpy loads when the command runs, not for --help
    from .items import write_parquet

    if not args.job:
        raise PovstimError("give at least one --job MODEL META OUT")
    outs = [out for _, _, out in args.job]
    if len(set(outs)) != len(outs):
        raise PovstimError("two --job entries write the same output file")
    opts = build(ScoringSettings, "scoring", _json_arg(args.params, "--params"))
    jobs = []
    for model, meta, _ in args.job:
        meta = _json_arg(meta, f"--job {model} META")
        for key, default in (("arch", model.rstrip("/").rsplit("/", 1)[-1]), ("condition", ""), ("size", ""),
                             ("seed", 0)):
            meta.setdefault(key, default)
        jobs.append((model, meta))
    # the suite first: a broken line is an error before torch and the models load
    pairs = load_pairs(resolve_path(args.suite), args.format, args.suite_name)
    # deferred: numpy, and the scorer's own imports of torch when it preloads them
    from .scorer import preload_and_freeze

    preload_and_freeze()
    t0 = time.perf_counter()
    for index, frame in score_models(pairs, jobs, opts, threads=args.threads,
                                     unigram=job_unigrams(opts, args.corpus, args.job_corpus, len(jobs))):
        write_parquet(frame, outs[index])
        log.info("%s -> %s", jobs[index][0], outs[index])
    log.info("%d pairs x %d model(s) scored in %.1fs", len(pairs), len(jobs), time.perf_counter() - t0)
    return 0
