"""The ``povstim`` command line: one subcommand per pipeline stage.

Every Snakemake rule calls one of these subcommands, and users can run any
stage by hand. A stage module exposes ``add_arguments(parser)`` and
``run(args) -> int | None``; it is imported only when its subcommand runs, so
``povstim --help`` stays fast and one stage's heavy imports (torch, bambi)
never slow down another.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys

from . import __version__, hostmem, warm
from .io import PovstimError, no_space, no_space_message

# name -> (module, one-line help). Order is pipeline order.
STAGES: dict[str, tuple[str, str]] = {
    "check": ("povstim.preflight.check_cli", "validate config files (names the file, line and key) before running"),
    "plan": ("povstim.preflight.plan_cli", "words per source after cleaning, largest sizes, benchmark word pools "
             "(thin-pool warnings), the filter's removals and BABY's targeted pool with reinsertion/dose "
             "shortfalls, casing check"),
    "power": ("povstim.preflight.power_cli", "the power of the three-level model's condition contrasts for the "
              "configured seeds, sizes and pairs at POSH Table 12's effects, minimal detectable effects, seeds needed"),
    "report": ("povstim.preflight.report_cli", "build the HTML report of an experiment from the config that made it"),
    "synth": ("povstim.synth.cli", "generate a synthetic corpus with gold CoNLL-U and DPE labels"),
    "download": ("povstim.sources.download_cli", "download a source's files (checksummed, resumable)"),
    "clean": ("povstim.sources.clean_cli", "clean a downloaded source to one sentence per line"),
    "assemble": ("povstim.corpus.cli", "assemble a corpus of a word budget from a source mixture"),
    "parse": ("povstim.parse.cli", "parse a corpus shard to CoNLL-U (gold, spacy or stanza)"),
    "train-parser": ("povstim.parse.train_cli", "train the parser adapted to child-directed speech (parser.backend "
                     "childes) on gold UD trees"),
    "filter": ("povstim.filter.cli", "find direct positive evidence (DPE) and write the audit dpe.tsv"),
    "filter-validation": ("povstim.filter.validate_cli", "measure the DPE filter on a parser's output against gold trees"),
    "condition": ("povstim.conditions.cli", "build a training condition (BABY-F, BABY, WIKI) with train/dev split"),
    "tokenize": ("povstim.tokenizer.cli", "train a byte-level BPE tokenizer on a training corpus"),
    "vocab-study": ("povstim.tokenizer.study_cli", "corpus token counts per vocab size (POSH Table 9)"),
    "dyck": ("povstim.formal.cli", "shuffled k-Dyck corpus and formal-language pre-pretraining (POSH §7)"),
    "train": ("povstim.train.cli", "train one language model (GPT-2 family or BabyBERTa)"),
    "word-stats": ("povstim.benchmarks.stats_cli", "part-of-speech and object counts per word from parses"),
    "benchmark": ("povstim.benchmarks.cli", "generate or import a minimal-pair benchmark suite"),
    "score": ("povstim.scoring.cli", "score minimal pairs with a model (and its checkpoints)"),
    "score-group": ("povstim.scoring.group_cli", "score a suite with several models in one process (scoring.group)"),
    "score-model": ("povstim.scoring.external_cli", "score any checkpointed Hugging Face model (chck_*, checkpoint-N, "
                    "hub revisions) and each checkpoint: learning curves"),
    "export-babylm": ("povstim.scoring.babylm_cli", "export a model's checkpoints as chck_* folders and its minimal-pair "
                      "predictions in the BabyLM evaluation pipeline's layout"),
    "export-lm-eval": ("povstim.benchmarks.lmeval_cli", "write minimal-pair suites as lm-evaluation-harness tasks "
                       "(task YAMLs and local data; the harness's scores equal povstim score's)"),
    "analyze": ("povstim.analysis.cli", "accuracy tables, chi-square tests and the Bayesian mixed model"),
    "analyze-prewarm": ("povstim.analysis.models.prewarm_cli", "compile the Bayesian model's sampler code ahead of "
                        "analyze (a Snakemake run starts it while its models train)"),
    "probe": ("povstim.probes.cli", "MSGS fine-tuning probes: generate tasks, fine-tune a model, summarise the LBS"),
    "dose": ("povstim.figures.dose_cli", "dose-response curves of the dose series (Bambi) and the counterfactual "
             "audit"),
    "acquisition": ("povstim.figures.acquisition_cli", "acquisition points per paradigm over words seen, condition "
                    "contrasts, children's age of first production (training.checkpoint_words)"),
    "construction-delta": ("povstim.figures.construction_delta_cli", "Δ accuracy of filtered training per "
                           "construction: target vs control paradigms, a Bambi estimate (conditions that name "
                           "constructions)"),
    "word-curves": ("povstim.analysis.timing.word_learning_cli", "one model's surprisal of a word list in its training "
                    "contexts at every word checkpoint (word learning, acquisition.word_learning)"),
    "guardrails": ("povstim.analysis.guardrails.cli", "checks a reviewer would ask for: undertrained models, "
                   "equal training tokens, lexical preferences, below-chance results"),
    "figures": ("povstim.figures.cli", "draw the paper's figures from the analysis outputs"),
    "release": ("povstim.figures.release_cli", "POSH Tables 3/8/12 and Figures 1-3 from published per-model accuracies"),
}


def build_parser(stage: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="povstim",
        description="Reproducible poverty-of-the-stimulus experiments: corpora -> models -> results. "
        "Each subcommand runs one pipeline stage; `povstim SUBCOMMAND --help` documents it.",
    )
    parser.add_argument("--version", action="version", version=f"povstim {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="stage", metavar="SUBCOMMAND")
    for name, (module, help_text) in STAGES.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        if name == stage:
            importlib.import_module(module).add_arguments(p)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    stage = next((a for a in argv if not a.startswith("-")), None)
    if stage is not None and stage not in STAGES:
        stage = None
    try:
        return _main(argv, stage)
    except KeyboardInterrupt:
        # Ctrl-C (or SIGINT from Snakemake) at any point -- in the stage, while its modules import, or while a job
        # waits for the warm-start server to take it: outputs are written atomically, so nothing half-written
        # remains.
        print(f"povstim{' ' + stage if stage else ''}: interrupted (Ctrl-C); unfinished outputs were not written",
              file=sys.stderr)
        return 130


def _main(argv: list[str], stage: str | None) -> int:
    if os.environ.get(warm.ENV_SOCKET):
        # a Snakemake run's warm-start server runs torch stages in a child that has the imports done
        rc = warm.delegate(argv, stage)
        if rc is not None:
            return rc
    parser = build_parser(stage)
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(name)s %(levelname)s: %(message)s",
        stream=sys.stderr,
    )
    if args.stage is None:
        parser.print_help()
        return 2
    if args.stage in hostmem.STAGES and hostmem.wanted():
        # torch's CPU work reuses its freed blocks instead of faulting fresh pages in (povstim/hostmem.py)
        hostmem.keep_freed_memory(*hostmem.STAGES[args.stage])
    try:
        module = importlib.import_module(STAGES[args.stage][0])
        return int(module.run(args) or 0)
    except PovstimError as exc:
        print(f"povstim {args.stage}: error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # `povstim plan ... | head`: the reader left; not an error worth a traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except Exception as exc:
        # a full disk outside povstim.io's writers (a library writing to its own path): the same one line
        why = no_space(exc)
        if not why:
            raise
        print(f"povstim {args.stage}: error: {no_space_message(why, output_path(exc, args))}", file=sys.stderr)
        return 1


def output_path(exc: BaseException, args: argparse.Namespace) -> str:
    """The file a failed write was writing: the OS error's file name, else the stage's output flags."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.filename:
            return str(exc.filename)
        exc = exc.__cause__ or exc.__context__
    outs = [str(v) for k, v in sorted(vars(args).items()) if k.startswith("out") and isinstance(v, (str, os.PathLike))]
    return " or ".join(outs) if outs else "the stage's outputs"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
