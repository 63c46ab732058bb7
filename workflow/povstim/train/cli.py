"""``povstim train``: train one language model (one arch x condition x size x seed)."""

from __future__ import annotations

import argparse
import json
import logging

from ..io import json_object_arg
from .params import resolve

log = logging.getLogger("povstim.train")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Train one language model: a GPT-2 causal LM (POSH Table 5/6) or BabyBERTa, a RoBERTa masked LM "
        "(BabyBERTa Table 3). Writes an HF folder to --out-dir (config.json, model.safetensors = the best "
        "weights by dev loss, tokenizer files), train_log.jsonl, train_summary.json and checkpoints/step{N}/. "
        "Rerunning the same command after a crash or kill resumes from the newest checkpoint and gives the "
        "same weights as an uninterrupted run."
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


def run(args) -> int:
    arch, training = resolve(args.arch, args.params, max_steps=args.max_steps, device=args.device)
    # torch and transformers: imported only when a model is trained, not for --help
    from .loop import Trainer

    trainer = Trainer(
        train=args.train, dev=args.dev, tokenizer=args.tokenizer, arch=arch, training=training, seed=args.seed,
        out_dir=args.out_dir, threads=args.threads, progress=not args.no_progress,
        init_from=args.init_from, parses=args.parses, meta=json_object_arg(args.meta, "--meta"),
    )
    summary = trainer.run()
    print(json.dumps({k: summary[k] for k in ("best_step", "best_dev_loss", "steps", "stop_reason")}, sort_keys=True))
    return 0
