"""``povstim dyck``: shuffled k-Dyck corpora and formal-language pre-pretraining (POSH §7, Hu et al. 2025).

    povstim dyck generate --params JSON --out-train T --out-dev D [--stats S]
    povstim dyck pretrain --train T --dev D --arch JSON --params JSON --dyck JSON --vocab-size V --out-dir DIR

``generate`` writes one sequence per line (space-separated symbols: type i opens as i and
closes as i + k). ``pretrain`` trains a model on them for exactly ``steps`` updates and
writes an HF folder (config.json, model.safetensors = the last weights, dyck_vocab.json,
train_log.jsonl); ``povstim train --init-from DIR`` continues from it on a condition.
"""

from __future__ import annotations

import argparse
import json
import logging
import time

from ..io import PovstimError, json_object_arg, write_json, write_lines
from . import dyck

log = logging.getLogger("povstim.dyck")

GENERATE_KEYS = ("k", "length", "p_open", "max_depth", "complete", "sequences", "dev_sequences", "seed")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.description = __doc__.split("\n", 1)[1]
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    g = sub.add_parser("generate", help="write a shuffled k-Dyck corpus (train and dev)")
    g.add_argument("--params", required=True, metavar="JSON",
                   help="resolved Dyck settings: k, length, p_open, max_depth, complete, sequences, "
                        "dev_sequences, seed (as povstim.biases.dyck_corpus_spec gives them)")
    g.add_argument("--out-train", required=True)
    g.add_argument("--out-dev", required=True)
    g.add_argument("--stats", help="also write counts and the settings here (JSON)")
    t = sub.add_parser("pretrain", help="pre-pretrain a model on a Dyck corpus")
    t.add_argument("--train", required=True, help="Dyck training sequences (from `povstim dyck generate`)")
    t.add_argument("--dev", required=True, help="Dyck dev sequences")
    t.add_argument("--arch", required=True, help="the archs: entry as JSON (its bias block is ignored)")
    t.add_argument("--params", default="{}", help="the training: section as JSON (lr, batch_size, context, ...)")
    t.add_argument("--dyck", required=True, help="the arch's bias.dyck block as JSON (k, steps)")
    t.add_argument("--vocab-size", type=int, required=True,
                   help="embedding rows: tokenizer.vocab_size, so every condition's tokenizer fits")
    t.add_argument("--seed", type=int, required=True, help="model seed (bias.dyck.seed; the rule passes it)")
    t.add_argument("--out-dir", required=True)
    t.add_argument("--threads", type=int, default=None)
    t.add_argument("--device", default=None)
    t.add_argument("--no-progress", action="store_true")


def run(args) -> int:
    if args.action == "generate":
        return generate(args)
    # deferred: torch and transformers load only for the pre-pretraining, not for the corpus or --help
    from .pretrain import run_pretrain

    summary = run_pretrain(args)
    print(json.dumps({k: summary[k] for k in ("steps", "best_dev_loss", "stop_reason")}, sort_keys=True))
    return 0


def generate(args) -> int:
    spec = json_object_arg(args.params, "--params")
    missing = [k for k in GENERATE_KEYS if k not in spec]
    unknown = sorted(set(spec) - set(GENERATE_KEYS))
    if missing or unknown:
        raise PovstimError(f"--params: missing {', '.join(missing) or '-'}; unknown {', '.join(unknown) or '-'} "
                           f"(keys: {', '.join(GENERATE_KEYS)})")
    ds = dyck.DyckSpec(k=spec["k"], length=spec["length"], p_open=spec["p_open"], max_depth=spec["max_depth"],
                       complete=bool(spec["complete"])).check("--params")
    t0 = time.perf_counter()
    n_train = write_lines(args.out_train, map(dyck.to_line, dyck.generate(ds, int(spec["sequences"]), spec["seed"],
                                                                             "train")))
    n_dev = write_lines(args.out_dev, map(dyck.to_line, dyck.generate(ds, int(spec["dev_sequences"]), spec["seed"],
                                                                         "dev")))
    secs = time.perf_counter() - t0
    log.info("%d train + %d dev shuffled %d-Dyck sequences of %d symbols in %.1fs", n_train, n_dev, ds.k,
             ds.length, secs)
    if args.stats:
        write_json(args.stats, {"settings": spec, "train_sequences": n_train, "dev_sequences": n_dev,
                                "symbols": (n_train + n_dev) * ds.length})
    return 0
