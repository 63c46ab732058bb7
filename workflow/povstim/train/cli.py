"""``povstim train``: train one language model (one arch x condition x size x seed)."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

from ..io import folder_lock, json_object_arg
from .params import resolve

log = logging.getLogger("povstim.train")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Train one language model: a GPT-2 causal LM (POSH Table 5/6) or BabyBERTa, a RoBERTa masked LM "
        "(BabyBERTa Table 3). Writes an HF folder to --out-dir (config.json, model.safetensors = the best "
        "weights by dev loss, tokenizer files), train_log.jsonl, train_summary.json and checkpoints/step{N}/. "
        "Rerunning the same command after a crash or kill resumes from the newest checkpoint and gives the "
        "same weights as an uninterrupted run; into a folder that holds the finished run of the same inputs it "
        "says 'already trained' and changes nothing (--force trains it again from scratch). A folder another "
        "live `povstim train` is training is refused, naming that process (.povstim.lock)."
    )
    p.add_argument("--train", required=True, help="training corpus, one sentence per line")
    p.add_argument("--dev", required=True, help="dev corpus (early stopping and best-model choice)")
    p.add_argument("--tokenizer", required=True, help="tokenizer.json from `povstim tokenize`")
    p.add_argument(
        "--arch", required=True,
        help='an archs: entry as JSON, e.g. \'{"family": "gpt2", "n_layer": 4, "n_embd": 512, "n_head": 8, '
        '"n_inner": 2048}\'; an optional "training" object inside overrides --params for this arch',
    )
    p.add_argument("--params", default="{}", help="the config's training: section as JSON (defaults: POSH Table 6)")
    p.add_argument("--seed", type=int, required=True, help="seed for init, data order, dropout and masking "
                   "(one of the config's seeds)")
    p.add_argument("--out-dir", required=True, help="output model folder")
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    p.add_argument("--max-steps", type=int, default=None, help="override training.max_steps")
    p.add_argument("--device", default=None, help="override training.device (auto, cpu, cuda, cuda:N)")
    p.add_argument("--meta", help='what the model is in the experiment, recorded in train_summary.json so '
                   '`povstim score` labels its rows: JSON {"arch": NAME, "condition": ..., "size": ...}')
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--init-from", metavar="DIR",
                   help="bias.dyck: start from this pre-pretrained checkpoint (`povstim dyck pretrain`)")
    p.add_argument("--parses", nargs="+", metavar="CONLLU",
                   help="bias.tpt: CoNLL-U of the training corpus (and of the dev corpus), '# sent_id' = line index")
    p.add_argument("--force", action="store_true",
                   help="train from scratch even when --out-dir holds this run finished or checkpoints to resume")


SHOWN = ("best_step", "best_dev_loss", "steps", "stop_reason")


def run(args) -> int:
    arch, training = resolve(args.arch, args.params, max_steps=args.max_steps, device=args.device)
    # torch and transformers: imported only when a model is trained, not for --help
    from .checkpoints import SUMMARY_FILE, CheckpointStore
    from .loop import Trainer, run_key

    out = Path(args.out_dir)
    # one trainer per folder: a second one would resume from the first's checkpoints and prune its best weights
    with folder_lock(out, "trained", f"povstim train --out-dir {out}"):
        store = CheckpointStore(out, run_key(arch, training, args.seed, args.train, args.dev, args.tokenizer,
                                             args.init_from, args.parses))
        done = None if args.force else store.finished()
        if done is not None:
            print(f"povstim train: {out} is already trained with these inputs ({done.get('steps')} steps, "
                  f"best dev loss {done.get('best_dev_loss', float('nan')):.4f} at step {done.get('best_step')}; "
                  f"{out / SUMMARY_FILE}): nothing changed. --force trains it again from scratch.", file=sys.stderr)
            print(json.dumps({k: done.get(k) for k in SHOWN}, sort_keys=True))
            return 0
        if args.force:
            log.info("--force: training %s from scratch (its checkpoints and summary removed)", out)
            store.start_afresh()
        trainer = Trainer(
            train=args.train, dev=args.dev, tokenizer=args.tokenizer, arch=arch, training=training, seed=args.seed,
            out_dir=args.out_dir, threads=args.threads, progress=not args.no_progress,
            init_from=args.init_from, parses=args.parses, meta=json_object_arg(args.meta, "--meta"),
        )
        summary = trainer.run()
    print(json.dumps({k: summary[k] for k in SHOWN}, sort_keys=True))
    return 0
