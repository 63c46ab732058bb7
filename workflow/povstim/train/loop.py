"""The training loop: one model, one seed, resumable from its latest good checkpoint.

Read this file first. :class:`Trainer` builds a run from its parts and runs the loop; each part is its own
module with explicit inputs:

    runtime.py      CPU threads, the device (a GPU slot), precision: autocast and fp16 loss scaling
    data.py         corpora -> datasets; the batch schedule, a pure function of (seed, step)
    learner.py      the model: batches, loss, evaluation, weights; it wires the arch's bias hooks
                    (povstim.biases.training). A family that is not a transformers model brings its own learner.
    optim.py        AdamW, the learning-rate schedule, clipping, micro-batches, whole-step CUDA graphs
    checkpoints.py  resume (every file verified), checkpoints, best weights, pruning, the final folder
    gpu.py          torch.compile and CUDA-graph helpers

Why resuming gives the same weights as an uninterrupted run: batches and MLM masks are pure functions of
(seed, step) (data.py, learner.py), the learning rate is a pure function of the step (and, ``schedule: wsd``,
of the step its plateau was found, which the checkpoint keeps), and the checkpoint restores the model, the
AdamW moments and the torch RNG that drives dropout. A checkpoint also records a key
(hash of data, tokenizer, arch, training params, seed and this package's code): when anything changed, old
checkpoints are discarded instead of resumed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import logging
import math
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from .. import families
from ..biases import training as biases_training
from ..io import code_hash, sha256_file
from ..settings import as_dict
from ..tokenizer import bpe
from . import budgets as B
from . import data as D
from . import gpu, runtime
from .checkpoints import CheckpointStore, RunState
from .learner import learner_for
from .optim import Optimiser, decay_window, lr_at, micro_batches

log = logging.getLogger("povstim.train")


class Trainer:
    """Train ``arch`` on the ``train`` corpus with ``training`` settings and ``seed`` into ``out_dir``.

    ``init_from`` / ``parses`` are the inputs of an arch's bias block (a Dyck checkpoint, CoNLL-U parses);
    ``meta`` is recorded in train_summary.json; ``compile_backend``, ``graph_backend`` and ``cpu_fp16`` let CPU
    tests run the GPU paths. A subclass may read other data (``load_data``) and save another tokenizer
    (``make_hf_tokenizer``): Dyck pre-pretraining (povstim.formal.pretrain) does. ``key``: the run's
    :func:`run_key` when the caller has it already (``povstim train`` needs it before the trainer exists).
    """

    def __init__(self, *, train: str, dev: str, tokenizer: str | None, arch: dict, training, seed: int,
                 out_dir: str, threads: int | None = None, progress: bool = True, init_from: str | None = None,
                 parses: list[str] | None = None, compile_backend: str | None = None, meta: dict | None = None,
                 graph_backend=None, cpu_fp16: bool = False, key: str | None = None):
        t_start = time.perf_counter()
        self.arch, self.p, self.seed = arch, training, int(seed)
        self.meta = dict(meta or {})  # what this model is in the experiment (arch, condition, size)
        self.progress = progress and not os.environ.get("POVSTIM_NO_PROGRESS")
        self.runtime = runtime.start(training, threads, cpu_fp16)
        key = key or run_key(arch, training, self.seed, train, dev, tokenizer, init_from, parses)
        t_data = time.perf_counter()
        self.corpora = self.load_data(train, dev, tokenizer)
        self.schedule, self.p = plan_steps(self.corpora, training, self.seed, time.perf_counter() - t_data)
        t_model = time.perf_counter()
        self.family = families.get(arch["family"])
        # torch.compile and CUDA graphs are CUDA paths (train/gpu.py); the backends let a CPU test trace them
        self.compile_mode = (gpu.compile_mode(training.compile)
                             if (self.runtime.cuda or compile_backend or graph_backend) else None)
        self.learner = learner_for(self.family)(
            arch, self.p, self.seed, self.family, self.runtime, self.corpora, self.schedule,
            hf_tok=self.make_hf_tokenizer(), compile_mode=self.compile_mode, compile_backend=compile_backend,
            bias_inputs={"init_from": init_from, "parses": parses, "texts": (train, dev)})
        self.opt = Optimiser(self.learner.raw_model, self.p, self.runtime, self.compile_mode, graph_backend,
                             self.learner.forward_loss)
        self.store = CheckpointStore(Path(out_dir), key)
        # training.checkpoint_words: words seen after each step, and the budgets each step reaches
        self.words_seen, self.word_steps = word_plan(self.corpora, self.p, self.schedule)
        self.state = RunState()
        # where a job's wall time goes (logged at the end of run(); logs only: timings are not results)
        rt = self.runtime
        self.times = {"start": t_data - t_start - rt.waited - rt.claimed, "wait": rt.waited, "device": rt.claimed,
                      "data": t_model - t_data, "model": time.perf_counter() - t_model, "steps": 0.0,
                      "evaluation": 0.0, "checkpoints": 0.0, "final": 0.0}

    def load_data(self, train: str, dev: str, tokenizer: str | None) -> D.Corpora:
        return D.load_corpora(train, dev, tokenizer, self.p)

    def make_hf_tokenizer(self):
        return bpe.hf_tokenizer(self.corpora.tok, self.family.tokenizer_frame)

    # ------------------------------------------------------------------ the loop
    def run(self) -> dict:
        """Train until max_steps, early stopping or (schedule wsd) the end of the decay after its plateau (resuming
        where a killed run stopped); write the final model."""
        p, learner, store = self.p, self.learner, self.store
        store.out.mkdir(parents=True, exist_ok=True)
        t_run = time.perf_counter()
        self.resume()
        s = self.state
        bar = progress_bar(p.max_steps, s.step) if self.progress else None
        learner.model.train()
        window_loss, window_steps, window_tokens = torch.zeros((), device=self.runtime.device), 0, 0
        t_window = t_last = time.perf_counter()
        while not s.finished:
            if s.step >= p.max_steps:
                s.finished, s.stop_reason = True, "max_steps"
                break
            loss, ntok, lr = self.train_step(s.step)
            s.step += 1
            window_loss += loss.detach()
            window_steps += 1
            window_tokens += ntok
            s.tokens_seen += ntok
            now = time.perf_counter()
            s.elapsed += now - t_last
            t_last = now
            if bar is not None:
                bar.update(1)
            is_eval = s.step % p.eval_every == 0 or s.step >= self.last_step()
            if is_eval or s.step % p.log_every == 0:
                train_loss = float(window_loss) / window_steps
                entry = {"step": s.step, "epoch": round(self.schedule.epoch_of(s.step), 4), "loss": train_loss,
                         "lr": lr, "tokens_per_s": window_tokens / max(1e-9, now - t_window),
                         "elapsed": round(s.elapsed, 3), "dev_loss": self.evaluate() if is_eval else None}
                if bar is not None and is_eval:
                    bar.set_postfix(loss=f"{train_loss:.3f}", dev=f"{entry['dev_loss']:.3f}")
                entry.update(learner.log_fields(is_eval))
                store.write_log(entry)
                window_loss, window_steps, window_tokens = torch.zeros((), device=self.runtime.device), 0, 0
                t_window = time.perf_counter()
            if s.step in self.word_steps:  # before the step checkpoint: a resume from it finds these written
                with self.timed("checkpoints"):
                    for name, _ in self.word_steps[s.step]:
                        self.store.save_words(name, s.step, int(self.words_seen[s.step]), self.learner.save)
            if s.step % p.save_every == 0 or s.finished:
                self.save_checkpoint()
                t_window = time.perf_counter()  # tokens/s measures training, not checkpoint I/O
        if bar is not None:
            bar.close()
        # the loop's wall less its evaluations and checkpoints (resuming counts as the latter's)
        self.times["steps"] = time.perf_counter() - t_run - self.times["evaluation"] - self.times["checkpoints"]
        with self.timed("final"):
            summary = self.finalize()
            learner.finish()
        log.info("time: %s; total %.2f s", ", ".join(f"{k} {v:.2f} s" for k, v in self.times.items()),
                 sum(self.times.values()))
        return summary

    def train_step(self, step: int):
        """One update at 0-based ``step``: its batch, forward + backward (in micro-batches, or the whole step as
        one recorded CUDA graph), clipping and AdamW at the step's learning rate. Returns (loss, tokens, lr)."""
        learner, opt = self.learner, self.opt
        idx = self.schedule.batch(step)
        inputs, labels, att, ntok, n_pred = learner.train_batch(idx, step)
        lr = lr_at(self.p, step, self.state.decay_start)
        opt.set_lr(lr)
        learner.before_step(step)
        parts = micro_batches(learner.micro, len(idx), n_pred)  # no token count here: it would sync the GPU
        if opt.graphs is not None and len(parts) == 1 and not learner.eager_only:
            return opt.graphs(inputs, labels, att), ntok, lr  # clipping and AdamW included (train/gpu.py)
        if len(parts) == 1:
            loss = learner.train_loss(inputs, labels, att, idx)
            opt.backward(loss)
        else:  # gradient accumulation: same effective batch, same loss normalisation
            loss = None
            for rows, weight in parts:
                part = learner.train_loss(inputs[rows], labels[rows], None if att is None else att[rows],
                                          idx[rows]) * weight
                opt.backward(part)
                loss = part.detach() if loss is None else loss + part.detach()
        opt.update()
        opt.zero_grad()
        return loss, ntok, lr

    def evaluate(self) -> float:
        """Dev loss now; a new best is saved, and early stopping or max_steps ends the run."""
        s, p = self.state, self.p
        with self.timed("evaluation"):
            dev = self.learner.evaluate()
        if dev < s.best_loss:
            s.best_loss, s.best_step = dev, s.step
            with self.timed("checkpoints"):
                self.store.save_best(s.step, self.learner.save_weights)
        if s.step - s.best_step >= p.patience:
            if p.schedule != "wsd":
                s.finished, s.stop_reason = True, "early_stopping"
            elif s.decay_start is None and s.step < decay_window(p)[0]:
                # the plateau, reached at the constant peak lr: decay now (not stop), then stop
                s.decay_start = s.step
                start, end = decay_window(p, s.step)
                log.info("plateau: dev loss not better than %.4f (step %d) for %d steps at lr %g; decaying the lr "
                         "to 0 over steps %d-%d", s.best_loss, s.best_step, s.step - s.best_step, p.lr, start, end)
        if s.step >= self.last_step():
            s.finished, s.stop_reason = True, "plateau" if s.decay_start is not None else "max_steps"
        return dev

    def last_step(self) -> int:
        """The step the run ends at: max_steps, or (schedule wsd, plateau found) the end of its decay phase."""
        if self.p.schedule == "wsd" and self.state.decay_start is not None:
            return decay_window(self.p, self.state.decay_start)[1]
        return self.p.max_steps

    # ------------------------------------------------------------ checkpoints
    def resume(self) -> bool:
        """Continue from the newest checkpoint that verifies (True), or start from the seed (False)."""
        with self.timed("checkpoints"):
            state = self.store.resume(self.restore)
        if state is None:
            torch.manual_seed(self.seed)  # dropout stream starts from the seed, as on resume it starts from the state
            return False
        self.state = state
        self.learner.after_resume(state.step)
        return True

    def restore(self, folder: Path, state: dict) -> None:
        self.learner.load_weights(folder)
        self.opt.restore(state)
        torch.set_rng_state(state["torch_rng"])
        if self.runtime.cuda and state["cuda_rng"]:
            torch.cuda.set_rng_state_all(state["cuda_rng"])

    def save_checkpoint(self) -> None:
        opt = self.opt.state()
        extra = {"optimizer": opt["optimizer"], "torch_rng": torch.get_rng_state(), "scaler": opt["scaler"],
                 "cuda_rng": torch.cuda.get_rng_state_all() if self.runtime.cuda else []}
        with self.timed("checkpoints"):
            self.store.save(self.state, extra, self.learner.save)

    def finalize(self) -> dict:
        s, data = self.state, self.corpora
        if s.best_step == 0:
            # no evaluation ran (max_steps reached before the first eval): the last weights are the final ones
            s.best_loss, s.best_step = self.learner.evaluate(), s.step
            self.store.save_best(s.step, self.learner.save_weights)
        summary = {
            "arch": self.arch["family"], "best_step": s.best_step, "best_dev_loss": s.best_loss, "steps": s.step,
            "stop_reason": s.stop_reason, "seed": self.seed, "elapsed": round(s.elapsed, 3),
            "checkpoints": self.store.steps(), "device": self.runtime.device, "key": self.store.key,
            # one sentence per sequence: sentences longer than the context, left out (never truncated)
            "excluded_long_sentences": {"train": data.train.excluded, "dev": data.dev.excluded,
                                        "context": int(self.p.context)},
            "max_steps": self.p.max_steps, "epochs": round(self.schedule.epoch_of(s.step), 4),
            "tokens_seen": s.tokens_seen, "train_tokens": int(data.train.n_tokens),
            "batches_per_epoch": self.schedule.batches_per_epoch, "model": {**self.meta, "seed": self.seed},
            # training.ordered: items in corpus (e.g. age) order rather than reshuffled every epoch
            "ordered": bool(self.p.ordered),
        }
        if self.p.schedule == "wsd":  # where the plateau was found (None: the budget's decay ended the run)
            summary.update(schedule="wsd", decay_start=s.decay_start,
                           decay_end=decay_window(self.p, s.decay_start)[1] if s.decay_start is not None else None)
        if self.p.checkpoint_words is not None:
            summary.update(word_summary(self.words_seen, self.word_steps, self.p, s))
        self.store.finalize(s.best_step, self.learner.save_tokenizer, summary)
        log.info("done: %d steps (%s), best dev loss %.4f at step %d -> %s", s.step, s.stop_reason, s.best_loss,
                 s.best_step, self.store.out)
        return summary

    @contextlib.contextmanager
    def timed(self, part: str):
        t = time.perf_counter()
        try:
            yield
        finally:
            self.times[part] += time.perf_counter() - t


def plan_steps(corpora: D.Corpora, training, seed: int, seconds: float):
    """(the batch schedule, ``training`` with max_steps resolved from ``epochs``); logs what the data are."""
    for name, data in (("train", corpora.train), ("dev", corpora.dev)):
        if data.excluded:
            log.info("%s: %d sentence(s) longer than the context of %d tokens left out (not truncated)",
                     name, data.excluded, training.context)
    schedule = D.Schedule(corpora.train.n_items, training.batch_size, seed, training.ordered)
    if training.epochs is not None:
        # a fixed number of passes (POSH §7: 10 epochs): a larger corpus trains proportionally longer, the LR
        # decay ends there, and the epoch is a pure function of the step (the recency bias reads it)
        steps = max(1, math.ceil(training.epochs * schedule.batches_per_epoch))
        if steps > training.max_steps:
            log.warning("training.epochs %g needs %d steps; capped at training.max_steps %d",
                        training.epochs, steps, training.max_steps)
        training = dataclasses.replace(training, max_steps=min(steps, training.max_steps))
        log.info("training.epochs %g: %d steps of %d batches/epoch", training.epochs, training.max_steps,
                 schedule.batches_per_epoch)
    log.info("data: %d train sequences (%d tokens), %d dev sequences, %d batches/epoch, encoded in %.1fs",
             corpora.train.n_items, corpora.train.n_tokens, corpora.dev.n_items, schedule.batches_per_epoch, seconds)
    log.info("order: %s", "ordered (training.ordered: the corpus's own order, e.g. by age, every epoch)"
             if training.ordered else "shuffled (a new order every epoch; training.ordered: false)")
    return schedule, training


def word_plan(corpora: D.Corpora, training, schedule) -> tuple:
    """(words seen after each step 0..max_steps, {step: [(budget name, budget words)]}) for
    ``training.checkpoint_words``; (None, {}) without it. A budget beyond what max_steps reads is logged."""
    wanted = B.budgets(training.checkpoint_words)
    if not wanted:
        return None, {}
    if corpora.train_words is None:
        log.warning("training.checkpoint_words: this run's data have no words (not a text corpus); no word "
                    "checkpoints saved")
        return None, {}
    seen = D.words_by_step(schedule, corpora.train_words, corpora.train.repeats, training.max_steps)
    plan: dict[int, list] = {}
    for name, words in wanted:
        step = int(np.searchsorted(seen, words, side="left"))
        if step >= len(seen):
            log.warning("training.checkpoint_words %s: the run reads only %d words in its %d steps; no %s%s",
                        name, int(seen[-1]), training.max_steps, B.PREFIX, name)
            continue
        plan.setdefault(step, []).append((name, words))
    log.info("word checkpoints: %s", ", ".join(f"{B.PREFIX}{n} at step {st} ({int(seen[st])} words)"
                                                 for st, names in sorted(plan.items()) for n, _ in names) or "none")
    return seen, plan


def word_summary(seen, plan: dict, training, state: RunState) -> dict:
    """train_summary.json's word fields: words seen at the end and at the best step, each budget's checkpoint,
    and the budgets the run did not reach (max_steps or early stopping came first)."""
    if seen is None:
        return {"checkpoint_words": {}, "checkpoint_words_unreached": [n for n, _ in B.budgets(
            training.checkpoint_words)]}
    saved = {n: {"step": st, "words": int(seen[st]), "budget": w} for st, names in sorted(plan.items())
             if st <= state.step for n, w in names}
    return {"words_seen": int(seen[state.step]), "best_words": int(seen[state.best_step]),
            "checkpoint_words": saved,
            "checkpoint_words_unreached": [n for n, _ in B.budgets(training.checkpoint_words) if n not in saved]}


def run_key(arch: dict, training, seed: int, train: str, dev: str, tokenizer: str | None,
            init_from: str | None = None, parses: list[str] | None = None) -> str:
    """The resume key of a run with these inputs (a bias's extra inputs included): what its checkpoints and
    train_summary.json record."""
    return resume_key(arch, training, int(seed), train, dev, tokenizer, biases_training.key_material(init_from, parses))


def resume_key(arch: dict, training, seed: int, train: str, dev: str, tokenizer: str | None, inputs: dict) -> str:
    """What a checkpoint must have been trained from to be resumed: data, tokenizer, arch, training settings
    (not device or threads), seed, the extra inputs of a bias and the training code."""
    h = hashlib.sha256()
    payload = {
        # checkpoint_words only adds snapshots: the weights do not depend on it, so a run may resume across it
        "arch": arch, "training": {k: v for k, v in as_dict(training).items()
                                   if k not in ("device", "threads", "checkpoint_words")},
        "seed": seed, "train": sha256_file(train), "dev": sha256_file(dev),
        "tokenizer": sha256_file(tokenizer) if tokenizer else None,
        "code": code_hash(Path(__file__).parent, Path(bpe.__file__), Path(biases_training.__file__).parent,
                          Path(__file__).parents[1] / "attention.py", Path(__file__).parents[1] / "lstm.py"),
    }
    if inputs:
        payload["inputs"] = inputs
    h.update(json.dumps(payload, sort_keys=True, default=str).encode())
    return h.hexdigest()[:20]


def progress_bar(total: int, initial: int):
    """The step bar on stderr: redrawn on a terminal, a line at most every 30 s in a log (POVSTIM_NO_PROGRESS
    turns it off, as for every stage)."""
    return tqdm(total=total, initial=initial, desc="train", unit="step", file=sys.stderr,
                mininterval=1.0 if sys.stderr.isatty() else 30.0, dynamic_ncols=True)
