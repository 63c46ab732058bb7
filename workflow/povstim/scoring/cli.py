"""``povstim score``: score minimal pairs with a language model (and its checkpoints).

In the pipeline (rules/evaluate.smk):

    povstim score --model results/models/gpt2-tiny/baby/50k/seed1 --suite results/benchmarks/posh
        --params '{"reduction": "sum", "bos": true, "batch_size": 64, "checkpoints": true}'
        --meta '{"arch": "gpt2-tiny", "condition": "baby", "size": "50k", "seed": 1}'
        --out results/scores/gpt2-tiny/baby/50k/seed1/posh.parquet

By hand, for any model (a save_pretrained folder or a locally cached hub name)
and any suite file in the benchmark schema or an importer format:

    povstim score --model my/model/dir --suite blimp/adjunct_island.jsonl --format blimp --out s.parquet

Baselines scored like models (``--baseline``, trained on ``--corpus``):
``unigram`` = BabyBERTa's word-frequency baseline (sum of the corpus frequencies
of the sentence's words), ``ngram`` = an interpolated Kneser-Ney word n-gram
(sum of log-probabilities, sentence boundaries included).

The output parquet has one row per model x checkpoint x item: arch, condition,
size, seed, step, final, suite, paradigm, category, item_id, logp_good,
logp_bad, ntok_good, ntok_bad, correct (a tie is not correct), and with
scoring.sensitivity (default) the sums and token counts with and without BOS
(sum_bos_good ... ntok_nobos_bad) that the metric sensitivity table needs. A
suite with multiple-choice or completion items (docs/evaluation.md, "Task
kinds") has the columns of scoring/tasks.py instead (task, option perplexities,
generations, ...).

POSH-BENCH's published metric (minicons sequence_score, mean surprisal, no BOS):
    povstim score --model DIR --suite DIR --reduction mean --no-bos --out s.parquet
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from pathlib import Path

from ..benchmarks.importers import load_pairs
from ..benchmarks.tasks import resolve_path
from ..io import PovstimError
from ..io import json_object_arg as _json_arg
from ..settings import build
from .run import ScoringSettings, score_baseline, score_model, unigram_for

log = logging.getLogger("povstim.score")

def add_arguments(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = __doc__.split("\n\n", 1)[1]
    p.add_argument("--model", help="model folder (HF save_pretrained with tokenizer) or local hub name")
    p.add_argument("--suite", required=True, help="suite folder or file (benchmark JSONL schema, or see --format)")
    p.add_argument("--format", choices=["jsonl", "blimp", "zorro", "scamp", "posh", "csv", "lm_eval"],
                   help="read --suite with this importer (default: the benchmark JSONL schema, else guessed "
                   "from the file: BLiMP jsonl, SCaMP tsv, csv, an lm-eval task folder; .txt needs zorro or posh)")
    p.add_argument("--suite-name", help="suite name for imported files (default: the file name)")
    p.add_argument("--params", help="the config's scoring section as JSON (keys: reduction, bos, eos, batch_size, "
                   "checkpoints, mlm, device, sensitivity, metric, words, multiple_choice, completion)")
    p.add_argument("--meta", help="JSON {arch, condition, size, seed} written into every row")
    p.add_argument("--arch", help="override meta arch (default: train_summary.json's record, else the "
                   "models/{arch}/{condition}/{size}/seed{N} path, else the folder's name)")
    p.add_argument("--condition", help="override meta condition")
    p.add_argument("--size", help="override meta size")
    p.add_argument("--seed", type=int, help="override meta seed")
    p.add_argument("--reduction", choices=["sum", "mean"], help="sum (default) or mean of token log-probs")
    p.add_argument("--no-bos", dest="bos", action="store_false", default=None,
                   help="causal: do not prepend BOS (the first token is then NOT scored, as in minicons' default)")
    p.add_argument("--eos", action="store_true", default=None,
                   help="causal: append EOS and score it too (log p(end | sentence)); off by default")
    p.add_argument("--mlm", choices=["pll", "pll_word_l2r", "holistic"],
                   help="masked LMs: pseudo-log-likelihood (default), PLL with the scored token's word's tokens to "
                   "its right masked too (Kauf & Ivanova 2023), or holistic")
    p.add_argument("--metric", choices=["sentence", "region", "slor"],
                   help="what a pair compares: the sentences (default), their critical regions (the items' "
                   "'region' field) or SLOR (needs --corpus: the unigram's training text)")
    p.add_argument("--words", action=argparse.BooleanOptionalAction, default=None,
                   help="also write each sentence's words and word surprisals (default scoring.words)")
    p.add_argument("--batch-size", type=int, help="sentences (causal/holistic) or masked rows (PLL) per forward pass")
    p.add_argument("--checkpoints", action=argparse.BooleanOptionalAction, default=None,
                   help="also score every MODEL/checkpoints/step{N}/ (rows final=False); default scoring.checkpoints")
    p.add_argument("--sensitivity", action=argparse.BooleanOptionalAction, default=None,
                   help="keep per-sentence sums and token counts with and without BOS for the metric sensitivity "
                   "table (default scoring.sensitivity)")
    p.add_argument("--device", help="auto (default), cpu, cuda or cuda:N")
    p.add_argument("--threads", type=int, help="CPU threads for torch (default: torch's choice, all cores)")
    p.add_argument("--baseline", choices=["unigram", "ngram"], help="score with a corpus baseline instead of --model")
    p.add_argument("--corpus", action="append", default=[],
                   help="baseline training corpus, or with --model and metric slor the unigram's (repeatable)")
    p.add_argument("--order", type=int, help="n-gram order for --baseline ngram (default 3; a kneser-ney arch's "
                   "order in the pipeline)")
    p.add_argument("--out", required=True, help="output .parquet")



def settings(args) -> ScoringSettings:
    """The scoring section from --params, overridden by the flags, defaulted and checked by the schema."""
    flags = {key: getattr(args, key, None) for key in ("reduction", "bos", "eos", "mlm", "batch_size",
                                                       "checkpoints", "device", "sensitivity", "metric", "words")}
    return build(ScoringSettings, "scoring", _json_arg(args.params, "--params"), **flags)


def metadata(args) -> dict:
    """What the rows say the model is: flags > --meta > the training folder's own record > its path > its name.

    ``povstim train`` records ``model: {arch, condition, size, seed}`` in ``train_summary.json``; a
    folder laid out as ``models/{arch}/{condition}/{size}/seed{N}`` is read from its path; anything else
    is labelled by its folder name (and says so in the log).
    """
    # deferred: numpy loads when the command runs, not for --help
    from .items import model_meta

    meta = _json_arg(args.meta, "--meta")
    if args.baseline:
        found = {"arch": args.baseline}
    else:
        found, source = model_meta(Path(str(args.model)))
        if not meta and all(getattr(args, k) is None for k in ("arch", "condition", "size", "seed")):
            log.info("rows labelled %s (from %s; --arch/--condition/--size/--seed override)",
                     json.dumps(found, sort_keys=True), source)
    for key, value in found.items():
        meta.setdefault(key, value)
    meta.setdefault("condition", "")
    meta.setdefault("size", "")
    meta.setdefault("seed", 0)
    for key in ("arch", "condition", "size", "seed"):
        value = getattr(args, key)
        if value is not None:
            meta[key] = value
    return meta


def run(args) -> int:
    # deferred: numpy loads when the command runs, not for --help
    from .items import write_parquet

    if bool(args.model) == bool(args.baseline):
        raise PovstimError("give exactly one of --model and --baseline")
    opts, meta = settings(args), metadata(args)
    # the suite first: a broken line is an error before torch and the model load (tens of seconds)
    pairs = load_pairs(resolve_path(args.suite), args.format, args.suite_name)
    if args.model and opts.checkpoints and Path(str(args.model)).is_dir():
        from .items import checkpoints  # deferred like the scorer

        if not checkpoints(Path(str(args.model))):
            why = (f"{args.model} has no checkpoints (checkpoints/step<N>/ or checkpoints/chck_<words>/ holding "
                   "weights)")
            if args.checkpoints:  # asked for on the command line: an error, not a final-model-only score
                raise PovstimError(f"--checkpoints: {why}; drop the flag to score the final model only")
            log.warning("scoring.checkpoints is on but %s: only the final model is scored", why)
    if args.model:
        # deferred: numpy, and the scorer's own imports of torch when it preloads them
        from .scorer import preload_and_freeze

        preload_and_freeze()
    t0 = time.perf_counter()
    if args.baseline:
        if not args.corpus:
            raise PovstimError("--baseline needs at least one --corpus (the training text)")
        df = score_baseline(pairs, args.baseline, args.corpus, meta, opts,
                            **({"order": args.order} if args.order is not None else {}))
    else:
        df = score_model(pairs, args.model, opts, meta, threads=args.threads, unigram=unigram_for(opts, args.corpus))
    write_parquet(df, args.out)
    # the final model and each checkpoint: one (step, final) pair each
    targets = len(df[["step", "final"]].drop_duplicates()) if len(df) else 0
    log.info("%d pairs x %d model(s) and checkpoint(s) scored in %.1fs -> %s", len(pairs), targets,
             time.perf_counter() - t0, args.out)
    return 0
