"""``povstim word-curves``: one model's surprisal of each word of a list in its training contexts, at every word
checkpoint (training.checkpoint_words) and the final model (analysis/timing/word_learning.py; docs/analysis.md,
"Acquisition points").

    povstim word-curves --model results/<exp>/models/ARCH/COND/SIZE/seedN --train results/<exp>/corpus/COND/SIZE/train.txt \\
        --params '{"child_words": ["dog", "juice"], "contexts": 20}' --meta '{"arch": ..., "condition": ..., "size": ..., "seed": N}' \\
        --out word_curves.csv
"""

from __future__ import annotations

import argparse
from pathlib import Path

from povstim.io import PovstimError, atomic_write, json_object_arg
from povstim.settings import build


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.description = __doc__.split("\n", 1)[1] if __doc__ else None
    p.add_argument("--model", required=True, metavar="DIR", help="a model folder trained with word checkpoints")
    p.add_argument("--train", required=True, metavar="TXT", help="the model's training text (contexts, frequencies)")
    p.add_argument("--params", metavar="JSON", help="the config's acquisition section (child_words, contexts)")
    p.add_argument("--meta", metavar="JSON", help="the model's identity columns: arch, condition, size, seed")
    p.add_argument("--out", required=True, metavar="CSV")


def run(args) -> int:
    # deferred: torch and pandas load when the command runs, not for --help
    from povstim.analysis.timing.acquisition_settings import AcquisitionSettings
    from povstim.analysis.timing.word_curves import word_curves

    settings = build(AcquisitionSettings, "acquisition", json_object_arg(args.params, "--params") or {})
    if not settings.child_words:
        raise PovstimError("acquisition.child_words: word curves need a list of words")
    meta = json_object_arg(args.meta, "--meta") or {}
    # on the CPU: a word list's contexts at a handful of checkpoints is a small job
    frame = word_curves(args.model, args.train, settings.child_words, settings.contexts, meta)
    with atomic_write(Path(args.out)) as fh:  # as analysis.pipeline.write_csv, without the analysis' imports
        frame.to_csv(fh, index=False, lineterminator="\n", float_format="%.6g")
    return 0
