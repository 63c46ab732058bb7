"""``povstim train``: train one language model (one arch x condition x size x seed)."""

from __future__ import annotations

import argparse
import contextlib
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
    p.add_argument("--reuse-dir", metavar="DIR",
                   help="an index shared by an experiment's train jobs (the rules pass results/<exp>/models/.reuse): "
                   "a run whose inputs hash like one trained there (identical train, dev and tokenizer files, arch, "
                   "training settings, seed, code: a void duplicate's) links that model into --out-dir instead of "
                   "training again, waiting while it trains (train/reuse.py)")


SHOWN = ("best_step", "best_dev_loss", "steps", "stop_reason")


def run(args) -> int:
    arch, training = resolve(args.arch, args.params, max_steps=args.max_steps, device=args.device)
    # torch and transformers: imported only when a model is trained, not for --help
    from . import reuse
    from .checkpoints import SUMMARY_FILE, CheckpointStore
    from .loop import Trainer, run_key

    out = Path(args.out_dir)
    index_root = reuse.check_index(args.reuse_dir)
    meta = json_object_arg(args.meta, "--meta")
    # one trainer per folder: a second one would resume from the first's checkpoints and prune its best weights
    with folder_lock(out, "trained", f"povstim train --out-dir {out}"):
        key = run_key(arch, training, args.seed, args.train, args.dev, args.tokenizer, args.init_from, args.parses)
        store = CheckpointStore(out, key)
        done = None if args.force else store.finished()
        if done is not None:
            print(f"povstim train: {out} is already trained with these inputs ({done.get('steps')} steps, "
                  f"best dev loss {done.get('best_dev_loss', float('nan')):.4f} at step {done.get('best_step')}; "
                  f"{out / SUMMARY_FILE}): nothing changed. --force trains it again from scratch.", file=sys.stderr)
            print(json.dumps({k: done.get(k) for k in SHOWN}, sort_keys=True))
            if index_root is not None and not done.get("reused"):
                # trained before the index knew it (or its record was lost): a duplicate may still reuse it;
                # a record that already names this folder is left as it is (written once, not at every rerun)
                index = index_root / reuse.reuse_key(key, training)
                if not reuse.recorded(index, key, out):
                    with folder_lock(index, "trained", f"povstim train --out-dir {out}", wait=True):
                        if reuse.source_of(index, key, out) is None and not reuse.recorded(index, key, out):
                            reuse.record(index, out, key, done)
            return 0
        # the job training this run's key holds its index folder till the model is final; a duplicate waits there
        index = index_root / reuse.reuse_key(key, training) if index_root is not None else None
        with (folder_lock(index, "trained", f"povstim train --out-dir {out}", wait=True)
              if index is not None else contextlib.nullcontext()):
            found = reuse.source_of(index, key, out) if index is not None and not args.force else None
            if found is not None:
                summary = reuse.copy_model(*found, out, key, meta, args.seed)
                line = reuse.describe(found[0], found[1], args.train)
                log.info("%s", line)
                print(f"povstim train: {out}: {line}", file=sys.stderr)
            else:
                if args.force:
                    log.info("--force: training %s from scratch (its checkpoints and summary removed)", out)
                    store.start_afresh()
                trainer = Trainer(
                    train=args.train, dev=args.dev, tokenizer=args.tokenizer, arch=arch, training=training,
                    seed=args.seed, out_dir=args.out_dir, threads=args.threads, progress=not args.no_progress,
                    init_from=args.init_from, parses=args.parses, meta=meta, key=key,
                )
                summary = trainer.run()
                if index is not None:
                    reuse.record(index, out, key, summary)
    print(json.dumps({k: summary[k] for k in SHOWN}, sort_keys=True))
    return 0
