#!/usr/bin/env python
"""Training throughput: povstim's loop vs the Hugging Face Trainer on the same config.

Trains a tiny GPT-2 (packed causal LM) and a tiny BabyBERTa (one sentence per
sequence, MLM) for the same steps on the same batches with both, and prints
tokens/s (non-pad input tokens per second of training, measured after warm-up
steps, so start-up and imports are not counted). Runs alternate between the
two trainers and the median of --repeats runs is reported, which makes the
comparison fair on a shared machine.

    .venv/bin/python scripts/speed_train.py [--steps 60] [--threads 1] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))

ARCHS = {
    "gpt2-tiny": {"family": "gpt2", "n_layer": 2, "n_embd": 128, "n_head": 4, "n_inner": 512},
    "babyberta-tiny": {"family": "roberta", "n_layer": 2, "n_embd": 128, "n_head": 4, "n_inner": 512},
}
TRAINING = {"lr": 1e-3, "batch_size": 16, "context": 64, "warmup": 10, "weight_decay": 0.1, "dropout": 0.1,
            "device": "cpu", "patience": 10**6}


def corpus(n: int, seed: int) -> list[str]:
    r = random.Random(seed)
    nouns = ["dog", "cat", "boy", "girl", "man", "woman", "bird", "teacher", "baby", "horse", "ball", "book"]
    verbs = ["sees", "likes", "chases", "helps", "finds", "wants", "takes"]
    adjs = ["happy", "big", "small", "red", "sad", "old"]
    out = []
    for _ in range(n):
        words = ["the", r.choice(adjs), r.choice(nouns), r.choice(verbs), "the", r.choice(nouns)]
        if r.random() < 0.5:
            words += ["that", r.choice(verbs), "the", r.choice(nouns)]
        s = " ".join(words) + r.choice([".", "?"])
        out.append(s[0].upper() + s[1:])
    return out


def ours(paths, arch, training, steps, warm, threads) -> float:
    from povstim.train.loop import Trainer
    from povstim.train.params import resolve

    a, t = resolve(arch, {**training, "max_steps": steps, "eval_every": steps, "save_every": steps,
                          "log_every": warm})
    with tempfile.TemporaryDirectory() as out:
        tr = Trainer(train=paths["train"], dev=paths["dev"], tokenizer=paths["tok"], arch=a, training=t, seed=1,
                     out_dir=out, threads=threads, progress=False)
        tr.run()
        log = [json.loads(x) for x in (Path(out) / "train_log.jsonl").read_text().splitlines()]
    # the first window holds warm-up (allocator, first-call overheads); the rest is steady state
    rates = [e["tokens_per_s"] for e in log[1:]]
    return statistics.fmean(rates)


def hf(paths, arch, training, steps, warm, threads) -> float:
    import numpy as np
    import torch
    from transformers import DataCollatorForLanguageModeling, Trainer, TrainerCallback, TrainingArguments

    from povstim.tokenizer import bpe
    from povstim.train import data as D
    from povstim.train.models import build_config, build_model
    from povstim import families
    from povstim.train.params import resolve

    torch.set_num_threads(threads)
    a, t = resolve(arch, {**training, "max_steps": steps})
    tok = bpe.load(paths["tok"])
    ids = bpe.special_ids(tok)
    sents = D.encode(tok, D.read_corpus(paths["train"]), ids["bos"], ids["eos"])
    data = D.Dataset.build(sents, t.context, t.packing, ids["pad"], 1, paths["train"])
    torch.manual_seed(1)
    model = build_model(a, build_config(a, t, tok.get_vocab_size(), ids))
    fam = families.get(a["family"])
    causal = fam.causal
    hf_tok = bpe.hf_tokenizer(tok, fam.tokenizer_frame)

    class DS(torch.utils.data.Dataset):
        def __len__(self):
            return data.n_base

        def __getitem__(self, i):
            ids, _ = data.collate(np.array([i]))  # one unpadded sequence; the HF collator pads
            return {"input_ids": torch.as_tensor(ids[0])}

    collator = DataCollatorForLanguageModeling(hf_tok, mlm=not causal, mlm_probability=t.mask_prob)
    times, tokens = {}, {"n": 0}

    class Clock(TrainerCallback):
        def on_step_end(self, args, state, control, **kw):
            times[state.global_step] = time.perf_counter()

    orig_step = Trainer.training_step

    def counting_step(self, model, inputs, *a_, **kw):
        if len(times) >= warm:  # count tokens of steps after the warm-up window
            tokens["n"] += int(inputs["attention_mask"].sum()) if "attention_mask" in inputs else inputs["input_ids"].numel()
        return orig_step(self, model, inputs, *a_, **kw)

    Trainer.training_step = counting_step
    try:
        with tempfile.TemporaryDirectory() as out:
            args = TrainingArguments(
                output_dir=out, max_steps=steps, per_device_train_batch_size=t.batch_size,
                learning_rate=t.lr, warmup_steps=t.warmup, weight_decay=t.weight_decay,
                lr_scheduler_type="linear", max_grad_norm=t.grad_clip, logging_steps=10**6, save_strategy="no",
                eval_strategy="no", report_to=[], use_cpu=True, dataloader_num_workers=0, seed=1,
                disable_tqdm=True,
            )
            Trainer(model=model, args=args, train_dataset=DS(), data_collator=collator,
                    callbacks=[Clock()]).train()
    finally:
        Trainer.training_step = orig_step
    return tokens["n"] / (times[steps] - times[warm])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--warm", type=int, default=10, help="steps excluded from timing")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sentences", type=int, default=6000)
    args = ap.parse_args()

    import torch
    import transformers

    from povstim.tokenizer import bpe

    transformers.utils.logging.set_verbosity_error()
    with tempfile.TemporaryDirectory() as d:
        paths = {"train": f"{d}/train.txt", "dev": f"{d}/dev.txt", "tok": f"{d}/tokenizer.json"}
        Path(paths["train"]).write_text("\n".join(corpus(args.sentences, 1)) + "\n")
        Path(paths["dev"]).write_text("\n".join(corpus(200, 2)) + "\n")
        bpe.save(bpe.train_file(paths["train"], {"vocab_size": 1024}), paths["tok"])
        print(f"torch {torch.__version__}, transformers {transformers.__version__}, threads {args.threads}, "
              f"{args.steps} steps (first {args.warm} untimed), batch {TRAINING['batch_size']} x context "
              f"{TRAINING['context']}, median of {args.repeats}")
        print(f"{'model':16} {'povstim tok/s':>14} {'HF Trainer tok/s':>17} {'ratio':>6}")
        for name, arch in ARCHS.items():
            a, b = [], []
            for _ in range(args.repeats):
                a.append(ours(paths, arch, TRAINING, args.steps, args.warm, args.threads))
                b.append(hf(paths, arch, TRAINING, args.steps, args.warm, args.threads))
            ma, mb = statistics.median(a), statistics.median(b)
            print(f"{name:16} {ma:14.0f} {mb:17.0f} {ma / mb:6.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
