"""The training loop: one model, one seed, resumable from its latest checkpoint.

Layout of an output folder DIR while training runs:

    DIR/checkpoints/step{N}/   HF folder (config, weights, tokenizer) + the log up
                               to step N; the newest one also holds
                               trainer_state.pt (optimizer, RNG, early-stopping
                               state) so a killed job resumes there
    DIR/best/step{N}/          the best-by-dev-loss weights so far
    DIR/train_log.partial.jsonl

and when it finishes, DIR itself becomes the best model (config.json,
model.safetensors, tokenizer files), with train_log.jsonl and
train_summary.json. None of the checkpoint files are Snakemake outputs, so a
failed job's checkpoints survive for the rerun to resume from.

Why resuming gives the same weights as an uninterrupted run: batches and MLM
masks are pure functions of (seed, step) (see data.py), the learning rate is a
pure function of the step, and the checkpoint restores the model, the AdamW
moments and the torch RNG that drives dropout. A checkpoint also records a key
(hash of data, tokenizer, arch, training params, seed and this package's code):
when anything changed, old checkpoints are discarded instead of resumed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import logging
import math
import os
import re
import shutil
import sys
import time
from pathlib import Path

import numpy as np

from ..attention import restore_attention, use_unmasked_causal
from ..biases import training as biases_training
from ..io import PovstimError, atomic_write, code_hash, sha256_file, write_json
from ..tokenizer import bpe
from . import data as D
from . import gpu
from .. import families
from ..settings import as_dict
from .models import build_config, build_model, count_params

log = logging.getLogger("povstim.train")
STATE_FILE = "trainer_state.pt"
_STEP_RE = re.compile(r"^step(\d+)$")


def _steps(folder: Path, need: str | None = None) -> list[int]:
    if not folder.is_dir():
        return []
    out = []
    for p in folder.iterdir():
        m = _STEP_RE.match(p.name)
        if m and p.is_dir() and (need is None or (p / need).exists()):
            out.append(int(m.group(1)))
    return sorted(out)


def _replace_dir(tmp: Path, final: Path) -> None:
    if final.exists():
        shutil.rmtree(final)
    os.replace(tmp, final)


class Trainer:
    def __init__(self, *, train: str, dev: str, tokenizer: str, arch: dict, training: dict, seed: int,
                 out_dir: str, threads: int | None = None, progress: bool = True,
                 init_from: str | None = None, parses: list[str] | None = None, compile_backend: str | None = None,
                 meta: dict | None = None, graph_backend=None, cpu_fp16: bool = False):
        t_start = time.perf_counter()
        import torch

        from ..devices import capability, held_gpu, resolve_device, train_precision

        import transformers

        transformers.utils.logging.disable_progress_bar()  # no "Writing model shards" bar per checkpoint
        self.torch = torch
        self.arch, self.p, self.seed = arch, training, int(seed)
        self.out = Path(out_dir)
        self.ckpt_dir = self.out / "checkpoints"
        self.best_dir = self.out / "best"
        self.partial_log = self.out / "train_log.partial.jsonl"
        self.progress = progress
        # what this model is in the experiment (arch name, condition, size): recorded in train_summary.json
        # so `povstim score` on the folder labels its rows without being told
        self.meta = dict(meta or {})
        torch.set_num_threads(int(threads or training.threads or 1))
        t_device = time.perf_counter()
        self.device = resolve_device(training.device)
        # on a GPU: waiting for a free slot (gpus.slots), then CUDA's start-up; logged apart in the `time:` line
        slot = held_gpu() if self.device.startswith("cuda") else None
        waited = slot.waited if slot is not None and slot.torch_device == self.device else 0.0
        t_device = time.perf_counter() - t_device
        self.cuda = self.device.startswith("cuda")
        # auto: bf16 autocast where the GPU has bf16 tensor cores (Ampere+), else fp32 (povstim.devices); fp16 is
        # asked for (loss-scaled). cpu_fp16 lets a test run the fp16 path's autocast and loss scaling on the CPU.
        if cpu_fp16 and training.precision == "fp16" and not self.cuda:
            self.precision = "fp16"
        else:
            self.precision = train_precision(training.precision, self.device)
        if self.cuda and self.precision == "fp32" and training.precision == "auto":
            log.info("training.precision auto: %s has no bf16 tensor cores (compute capability %s, before Ampere's "
                     "8.0): training in fp32 (precision: fp16 would use its fp16 tensor cores, loss-scaled)",
                     self.device, ".".join(map(str, capability(self.device))))
        self.amp_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(self.precision)
        self.amp_device = "cuda" if self.cuda else "cpu"
        # fp16's narrow range: the loss is scaled up before backward, and a step whose gradients overflowed is
        # skipped (the scale halves); the scaler's state is part of a checkpoint, so a resumed run stays exact
        self.scaler = torch.amp.GradScaler(self.amp_device) if self.precision == "fp16" else None

        # --- data ---------------------------------------------------------
        self.key = self._resume_key(train, dev, tokenizer, biases_training.key_material(init_from, parses))
        t0 = time.perf_counter()
        self.load_data(train, dev, tokenizer)
        for name, data in (("train", self.train_data), ("dev", self.dev_data)):
            if data.excluded:
                log.info("%s: %d sentence(s) longer than the context of %d tokens left out (not truncated)",
                         name, data.excluded, training.context)
        self.schedule = D.Schedule(self.train_data.n_items, training.batch_size, self.seed, training.ordered)
        if training.epochs is not None:
            # a fixed number of passes (POSH §7: 10 epochs): a larger corpus trains proportionally longer, the LR
            # decay ends there, and the epoch is a pure function of the step (the recency bias reads it)
            steps = max(1, math.ceil(training.epochs * self.schedule.batches_per_epoch))
            if steps > training.max_steps:
                log.warning("training.epochs %g needs %d steps; capped at training.max_steps %d",
                            training.epochs, steps, training.max_steps)
            self.p = training = dataclasses.replace(training, max_steps=min(steps, training.max_steps))
            log.info("training.epochs %g: %d steps of %d batches/epoch", training.epochs, training.max_steps,
                     self.schedule.batches_per_epoch)
        self.special = np.array(sorted(self.ids.values()), dtype=np.int64)
        log.info("data: %d train sequences (%d tokens), %d dev sequences, %d batches/epoch, encoded in %.1fs",
                 self.train_data.n_items, self.train_data.n_tokens, self.dev_data.n_items,
                 self.schedule.batches_per_epoch, time.perf_counter() - t0)
        # where a job's wall time goes (logged at the end of run(); logs only: timings are not results)
        self.times = {"start": t0 - t_start - t_device, "wait": waited, "device": t_device - waited,
                      "data": time.perf_counter() - t0, "model": 0.0, "steps": 0.0,
                      "evaluation": 0.0, "checkpoints": 0.0, "final": 0.0}
        t_model = time.perf_counter()

        # --- model and optimizer --------------------------------------------
        torch.manual_seed(self.seed)
        self.model_config = build_config(arch, training, self.vocab_size, self.ids)
        self.family = families.get(arch["family"])
        self.causal = self.family.causal
        self.hf_tok = self.make_hf_tokenizer()
        self.raw_model = build_model(arch, self.model_config).to(self.device)
        # inductive biases (povstim.biases): Dyck initialisation, recency epoch, TPT supervision
        self.bias = biases_training.TrainingBiases(self, init_from=init_from, parses=parses)
        # causal batches are packed blocks (no padding) or right-padded sentences (padding only after a row's last
        # real token, and never a label): SDPA's own causal masking, no mask tensor (povstim/attention.py); not with
        # a bias that edits the attention mask (recency) or reads attention maps (TPT)
        self.attn_restore = use_unmasked_causal(self.raw_model) if self.causal and not self.bias.active else None
        log.info("model: %s, %.2fM parameters (%.2fM without position embeddings), device %s%s, %d CPU thread(s)%s",
                 arch["family"], count_params(self.raw_model, False) / 1e6, count_params(self.raw_model) / 1e6,
                 self.device, f" {self.precision}" + (" (loss-scaled)" if self.scaler else ""), torch.get_num_threads(),
                 # a run's jobs share the cores: idle threads sleep (povstim.devices.job_environment)
                 f" (OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']})" if "OMP_WAIT_POLICY" in os.environ else "")
        if self.cuda and training.tf32:
            torch.backends.cuda.matmul.allow_tf32 = True
            torch.backends.cudnn.allow_tf32 = True
        # torch.compile and CUDA graphs are CUDA paths (train/gpu.py); compile_backend / graph_backend let a
        # CPU test trace the same code
        self.compile_mode = (gpu.compile_mode(training.compile)
                             if (self.cuda or compile_backend or graph_backend) else None)
        step_graphs = self.compile_mode == gpu.STEP_GRAPHS
        # a recorded step reads the learning rate from a device tensor that the loop fills in place
        self.lr_tensor = torch.tensor(float(training.lr), device=self.device) if step_graphs else None
        # weight decay on matrices and embeddings only, not on biases or LayerNorm (as HF Trainer does)
        decay = [p for p in self.raw_model.parameters() if p.dim() >= 2]
        no_decay = [p for p in self.raw_model.parameters() if p.dim() < 2]
        if self.cuda:
            impl = {"fused": True, "capturable": step_graphs}
        else:  # the CPU's foreach AdamW takes no tensor learning rate
            impl = {"foreach": not step_graphs}
        self.optimizer = torch.optim.AdamW(
            [{"params": decay, "weight_decay": training.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
            lr=self.lr_tensor if step_graphs else training.lr,
            betas=(training.adam_beta1, training.adam_beta2),
            eps=training.adam_eps,
            **impl,
        )
        self.model = self.raw_model
        self.forward_loss = self._forward_loss
        if gpu.compiles(self.compile_mode):
            # compiling forward and loss together lets the logits' fp32 cast fuse into the cross-entropy
            self.forward_loss = gpu.compile_loss(self._forward_loss, self.compile_mode, compile_backend)
        # CUDA-graph modes keep real .grad tensors, zeroed and never freed (gpu.persistent_grads)
        self.keep_grads = gpu.uses_graphs(self.compile_mode) and (self.cuda or graph_backend is not None)
        if self.keep_grads:
            gpu.persistent_grads(self.raw_model.parameters())
        # autocast's weight-cast cache must be off inside a recorded step (torch.cuda.graph's AMP note)
        self.autocast_cache = not step_graphs
        self.step_graphs = None
        if step_graphs:
            backend = graph_backend or gpu.CudaGraphBackend(self.device)
            self.step_graphs = gpu.StepGraphs(self._graph_step, backend)
        # gradient accumulation (micro-batches of at most micro_batch sequences) and, when compiled,
        # one-sentence-per-sequence batches padded to a few widths (static shapes)
        self.micro, self.pad_multiple = gpu.batching(training, self.cuda, self.compile_mode, self.train_data.packed,
                                                     bool(self.bias.tpt))
        # packed training data on the GPU: a batch is one gather there
        self.device_blocks = gpu.DeviceBlocks.maybe(self.train_data, self.device) if self.cuda else None
        # other batches: one pinned asynchronous copy per batch (None: CPU tensors straight from numpy)
        self.to_device = functools.partial(gpu.to_device, device=self.device) if self.cuda else None
        # the model built and moved to its device (on a GPU: the CUDA context, the first allocations)
        self.times["model"] = time.perf_counter() - t_model

        # --- loop state -----------------------------------------------------
        self.step = 0
        self.best_loss = math.inf
        self.best_step = 0
        self.ckpt_best_step = 0  # the best step the newest checkpoint refers to (its best weights must survive)
        self.elapsed = 0.0
        self.tokens_seen = 0  # training tokens (non-pad) of every step so far: sizes compare by it
        self.finished = False
        self.stop_reason = ""

    # ------------------------------------------------------------------ data
    def load_data(self, train, dev, tokenizer) -> None:
        """Tokenise the corpora into train_data / dev_data (a subclass may read other formats)."""
        training = self.p
        self.tok = bpe.load(tokenizer)
        self.ids = bpe.special_ids(self.tok)
        self.vocab_size = self.tok.get_vocab_size()
        self.train_sentences = D.read_corpus(train)
        self.dev_sentences = D.read_corpus(dev)
        train_sents = D.encode(self.tok, self.train_sentences, self.ids["bos"], self.ids["eos"])
        dev_sents = D.encode(self.tok, self.dev_sentences, self.ids["bos"], self.ids["eos"])
        self.train_lengths, self.dev_lengths = train_sents.lengths, dev_sents.lengths
        ctx, packed = training.context, bool(training.packing)
        self.train_data = D.Dataset.build(train_sents, ctx, packed, self.ids["pad"], training.repeats, train)
        self.dev_data = D.Dataset.build(dev_sents, ctx, packed, self.ids["pad"], 1, dev, allow_short=True)

    def make_hf_tokenizer(self):
        return bpe.hf_tokenizer(self.tok, self.family.tokenizer_frame)

    # ------------------------------------------------------------------ keys
    def _resume_key(self, train, dev, tokenizer, extra: dict | None = None) -> str:
        h = hashlib.sha256()
        payload = {
            "arch": self.arch, "training": {k: v for k, v in as_dict(self.p).items() if k not in ("device", "threads")}, "seed": self.seed,
            "train": sha256_file(train), "dev": sha256_file(dev),
            "tokenizer": sha256_file(tokenizer) if tokenizer else None,
            "code": code_hash(Path(__file__).parent, Path(bpe.__file__), Path(biases_training.__file__).parent,
                              Path(__file__).parents[1] / "attention.py"),
        }
        if extra:
            payload["inputs"] = extra
        h.update(json.dumps(payload, sort_keys=True, default=str).encode())
        return h.hexdigest()[:20]

    # ------------------------------------------------------------- schedule
    def lr_at(self, step: int) -> float:
        """Linear warmup then linear decay to 0 at max_steps (POSH Table 6), for 0-based update ``step``."""
        p = self.p
        if p.warmup and step < p.warmup:
            return p.lr * (step + 1) / p.warmup
        span = max(1, p.max_steps - p.warmup)
        return p.lr * max(0.0, (p.max_steps - step) / span)

    # -------------------------------------------------------------- batches
    def batch(self, data: D.Dataset, idx: np.ndarray, mask_rng: np.random.Generator | None):
        """(inputs, labels, attention mask or None, real tokens) of items ``idx`` as device tensors."""
        return self._batch(data, idx, mask_rng)[:4]

    def _batch(self, data: D.Dataset, idx: np.ndarray, mask_rng: np.random.Generator | None):
        """batch() plus the predicted tokens per row (numpy: weighting micro-batches needs no GPU sync)."""
        torch = self.torch
        if self.device_blocks is not None and data is self.train_data and self.causal:
            # packed causal LM on a GPU: the labels are the inputs, every token is real
            ids = self.device_blocks.gather(idx, data.repeats)
            b, t = ids.shape
            return ids, ids, None, b * t, np.full(b, t - 1)
        ids, att = data.collate(idx)
        if self.causal:
            inputs, labels = ids, np.where(att == 1, ids, -100)
        else:
            inputs, labels = D.mask_tokens(
                ids, att, mask_rng, mask_id=self.ids["mask"], special=self.special, vocab_size=self.vocab_size,
                mask_prob=self.p.mask_prob, leave_unmasked_prob=self.p.leave_unmasked_prob,
                random_token_prob=self.p.random_token_prob,
            )
        if self.pad_multiple > 1 and not data.packed:
            inputs, labels, att = D.pad_to_multiple(inputs, labels, att, self.pad_multiple, data.context,
                                                    self.ids["pad"])
        ntok = int(att.sum())
        # predicted tokens per row; a packed causal row predicts all but its first token
        n_pred = np.full(len(ids), ids.shape[1] - 1) if (data.packed and self.causal) else D.n_pred(labels, self.causal)
        if self.to_device is not None:
            tensors = self.to_device([inputs, labels] + ([] if data.packed else [att]))
            return tensors[0], tensors[1], None if data.packed else tensors[2], ntok, n_pred
        return (torch.from_numpy(inputs), torch.from_numpy(labels), None if data.packed else torch.from_numpy(att),
                ntok, n_pred)

    def micro_batches(self, n_rows: int, n_pred: np.ndarray) -> list[tuple[slice, float]]:
        """(rows, weight) of each micro-batch; weight = its share of the batch's predicted tokens, so the
        summed micro-batch losses (each a mean over its own tokens) are the batch's mean token loss."""
        if not self.micro or self.micro >= n_rows:
            return [(slice(None), 1.0)]
        total = max(1, int(n_pred.sum()))
        parts = []
        for start in range(0, n_rows, self.micro):
            rows = slice(start, min(n_rows, start + self.micro))
            share = int(n_pred[rows].sum())
            if share:
                parts.append((rows, share / total))
        return parts

    def train_loss(self, inputs, labels, att, idx):
        """The loss of one (micro-)batch, with the bias hooks (recency, TPT) when the arch has any."""
        if self.bias.active:
            return self.bias.train_loss(inputs, labels, att, idx)
        return self.forward_loss(inputs, labels, att)

    def autocast(self, cache: bool = True):
        """The forward's autocast (bf16 or fp16, fp32 master weights), or nothing in fp32."""
        if self.amp_dtype is None:
            return contextlib.nullcontext()
        return self.torch.autocast(self.amp_device, dtype=self.amp_dtype, cache_enabled=cache)

    def backward(self, loss) -> None:
        """Backward from ``loss``, scaled up first in fp16 (its gradients would underflow otherwise)."""
        (loss if self.scaler is None else self.scaler.scale(loss)).backward()

    def _forward_loss(self, inputs, labels, attention, reduction: str = "mean"):
        with self.autocast(self.autocast_cache):
            mask = None if self.attn_restore else attention  # right padding: causal masking suffices (above)
            logits = self.model(input_ids=inputs, attention_mask=mask, use_cache=False).logits
        return self.lm_loss(logits, labels, reduction)

    def lm_loss(self, logits, labels, reduction: str = "mean"):
        """Next-token (causal) or masked-token cross-entropy of a forward's logits."""
        torch = self.torch
        if self.causal:
            # position t predicts token t+1: the labels move left (the last position predicts nothing), not the
            # logits, whose slice would copy the [batch, context, vocabulary] matrix and zero-fill its gradient
            labels = torch.nn.functional.pad(labels[:, 1:], (0, 1), value=-100)
        return torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.size(-1)).float(), labels.reshape(-1), ignore_index=-100, reduction=reduction
        )

    def _graph_step(self, inputs, labels, attention):
        """One whole training step without touching the host (recorded by StepGraphs): the same
        operations as the loop's eager step -- gradients zeroed (kept, not freed), forward + loss,
        backward, clipping, AdamW at the learning rate in ``lr_tensor`` -- returning the loss."""
        self.optimizer.zero_grad(set_to_none=False)
        loss = self.forward_loss(inputs, labels, attention)
        loss.backward()
        self.update()
        return loss.detach()

    def update(self) -> None:
        """Clip the accumulated gradients (training.grad_clip) and take the AdamW step. In fp16 the gradients are
        unscaled first (the clipping sees their true norm), and a step whose gradients overflowed is skipped."""
        if self.scaler is not None:
            self.scaler.unscale_(self.optimizer)
        if self.p.grad_clip:
            self.torch.nn.utils.clip_grad_norm_(self.raw_model.parameters(), self.p.grad_clip)
        if self.scaler is None:
            self.optimizer.step()
        else:
            self.scaler.step(self.optimizer)
            self.scaler.update()

    def set_lr(self, lr: float) -> None:
        if self.lr_tensor is not None:
            self.lr_tensor.fill_(lr)  # in place: recorded steps read this tensor
            return
        for group in self.optimizer.param_groups:
            group["lr"] = lr

    def loss(self, inputs, labels, attention, reduction="mean"):
        """(loss, number of predicted tokens). On CUDA with compile, forward + loss form one compiled graph."""
        n = labels[:, 1:] if self.causal else labels
        return self.forward_loss(inputs, labels, attention, reduction), int((n != -100).sum())

    def dev_batches(self) -> list[np.ndarray]:
        """Item indices of the dev batches an evaluation reads (the first ``eval_batches``, in order)."""
        bs, n = self.p.batch_size, self.dev_data.n_items
        n_batches = -(-n // bs)
        if self.p.eval_batches:
            n_batches = min(n_batches, int(self.p.eval_batches))
        return [np.arange(b * bs, min(n, (b + 1) * bs)) for b in range(n_batches)]

    def evaluate(self) -> float:
        torch = self.torch
        total, count = 0.0, 0
        self.model.eval()
        with torch.no_grad():
            for b, idx in enumerate(self.dev_batches()):
                # dev masks are fixed per batch, so dev losses are comparable across evaluations
                rng = None if self.causal else np.random.default_rng([self.seed, 2, b])
                inputs, labels, att, _ = self.batch(self.dev_data, idx, rng)
                loss_sum, k = self.loss(inputs, labels, att, reduction="sum")
                total += float(loss_sum)
                count += k
        self.model.train()
        return total / max(1, count)

    # ---------------------------------------------------------- checkpoints
    def save_hf(self, folder: Path) -> None:
        self.raw_model.save_pretrained(folder)
        self.hf_tok.save_pretrained(folder)

    def save_checkpoint(self) -> None:
        torch = self.torch
        final = self.ckpt_dir / f"step{self.step}"
        tmp = self.ckpt_dir / f".step{self.step}.tmp"
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir(parents=True)
        self.save_hf(tmp)
        state = {
            "key": self.key, "step": self.step, "best_loss": self.best_loss, "best_step": self.best_step,
            "elapsed": self.elapsed, "finished": self.finished, "stop_reason": self.stop_reason,
            "tokens_seen": self.tokens_seen,
            "optimizer": self.optimizer.state_dict(), "torch_rng": torch.get_rng_state(),
            "scaler": self.scaler.state_dict() if self.scaler is not None else None,
            "cuda_rng": torch.cuda.get_rng_state_all() if self.cuda else [],
        }
        torch.save(state, tmp / STATE_FILE)
        # the log up to this step travels with the checkpoint, so a resumed run continues it exactly
        if self.partial_log.exists():
            shutil.copyfile(self.partial_log, tmp / "train_log.jsonl")
        _replace_dir(tmp, final)
        self.ckpt_best_step = self.best_step
        # only the newest checkpoint keeps optimizer state: older ones stay as learning-curve snapshots
        for s in _steps(self.ckpt_dir, STATE_FILE):
            if s != self.step:
                (self.ckpt_dir / f"step{s}" / STATE_FILE).unlink()
        self._prune_best()

    def save_best(self) -> None:
        tmp = self.best_dir / f".step{self.step}.tmp"
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir(parents=True)
        self.raw_model.save_pretrained(tmp)
        _replace_dir(tmp, self.best_dir / f"step{self.step}")
        self._prune_best()

    def _prune_best(self) -> None:
        for s in _steps(self.best_dir):
            if s not in (self.best_step, self.ckpt_best_step):
                shutil.rmtree(self.best_dir / f"step{s}")

    def try_resume(self) -> bool:
        torch = self.torch
        steps = _steps(self.ckpt_dir, STATE_FILE)
        if not steps:
            self._discard_stale()
            return False
        folder = self.ckpt_dir / f"step{steps[-1]}"
        try:
            state = torch.load(folder / STATE_FILE, map_location="cpu", weights_only=True)
        except Exception as exc:  # a corrupt state file: start afresh rather than crash
            log.warning("cannot read %s (%s): starting from scratch", folder / STATE_FILE, exc)
            self._discard_stale()
            return False
        if state.get("key") != self.key:
            log.info("checkpoints in %s come from other data/params/code: starting from scratch", self.ckpt_dir)
            self._discard_stale()
            return False
        if state.get("finished") and not (self.out / "model.safetensors").exists():
            # The run had finished and its outputs are gone: they were deleted on purpose (snakemake
            # --forcerun/-R deletes a job's outputs first). Forcing a stage must redo it, so train afresh;
            # a crash never leaves a *finished* checkpoint without outputs, so exact resume is unaffected.
            log.info("%s holds a finished run but its outputs were deleted (a forced rerun): training from scratch",
                     self.ckpt_dir)
            self._discard_stale()
            return False
        best = self.best_dir / f"step{state['best_step']}"
        ckpt_of_best = self.ckpt_dir / f"step{state['best_step']}"
        if state["best_step"] and not best.is_dir() and ckpt_of_best.is_dir():
            # a finished run removed best/; the checkpoint of that step holds the same weights
            shutil.copytree(ckpt_of_best, best, ignore=shutil.ignore_patterns(STATE_FILE))
        if state["best_step"] and not best.is_dir():
            log.warning("best weights of step %d are missing: starting from scratch", state["best_step"])
            self._discard_stale()
            return False
        from safetensors.torch import load_file

        weights = load_file(folder / "model.safetensors", device=str(self.device))
        missing, unexpected = self.raw_model.load_state_dict(weights, strict=False)
        # tied weights (lm_head = wte) are stored once; anything else missing is a real problem
        if unexpected or [m for m in missing if "lm_head" not in m and "decoder" not in m]:
            raise PovstimError(f"{folder}: checkpoint weights do not match the model ({missing or unexpected})")
        self.optimizer.load_state_dict(state["optimizer"])
        if self.scaler is not None and state.get("scaler"):
            self.scaler.load_state_dict(state["scaler"])
        torch.set_rng_state(state["torch_rng"])
        if self.cuda and state["cuda_rng"]:
            torch.cuda.set_rng_state_all(state["cuda_rng"])
        self.step, self.best_loss, self.best_step = state["step"], state["best_loss"], state["best_step"]
        self.ckpt_best_step = self.best_step
        self.elapsed, self.finished, self.stop_reason = state["elapsed"], state["finished"], state["stop_reason"]
        self.bias.after_resume(self.step)
        self.tokens_seen = int(state.get("tokens_seen", 0))
        # checkpoints and log lines from after this point belong to the killed run's future; replay rewrites them
        for s in _steps(self.ckpt_dir):
            if s > self.step:
                shutil.rmtree(self.ckpt_dir / f"step{s}")
        if (folder / "train_log.jsonl").exists():
            shutil.copyfile(folder / "train_log.jsonl", self.partial_log)
        elif self.partial_log.exists():
            self.partial_log.unlink()
        log.info("resumed from %s (step %d, best dev loss %.4f at step %d)", folder, self.step, self.best_loss,
                 self.best_step)
        return True

    def _discard_stale(self) -> None:
        for folder in (self.ckpt_dir, self.best_dir):
            if folder.exists():
                shutil.rmtree(folder)
        if self.partial_log.exists():
            self.partial_log.unlink()

    def write_log(self, entry: dict) -> None:
        self.partial_log.parent.mkdir(parents=True, exist_ok=True)
        with open(self.partial_log, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry, sort_keys=True) + "\n")

    # ------------------------------------------------------------------ run
    def run(self) -> dict:
        torch = self.torch
        p = self.p
        self.out.mkdir(parents=True, exist_ok=True)
        t_run = time.perf_counter()
        resumed = self.try_resume()
        self.times["checkpoints"] += time.perf_counter() - t_run
        if not resumed:
            torch.manual_seed(self.seed)  # dropout stream starts from the seed, as on resume it starts from the state
        if self.lr_tensor is not None:
            # a loaded optimizer state brings its own learning-rate values: every group reads the one tensor
            for group in self.optimizer.param_groups:
                group["lr"] = self.lr_tensor
        bar = None
        if self.progress:
            from tqdm import tqdm

            bar = tqdm(total=p.max_steps, initial=self.step, desc="train", unit="step", file=sys.stderr,
                       mininterval=1.0 if sys.stderr.isatty() else 30.0, dynamic_ncols=True)
        self.model.train()
        window_loss = torch.zeros((), device=self.device)
        window_steps = window_tokens = 0
        t_window = time.perf_counter()
        t_last = time.perf_counter()
        while not self.finished:
            if self.step >= p.max_steps:
                self.finished, self.stop_reason = True, "max_steps"
                break
            mask_rng = None if self.causal else np.random.default_rng([self.seed, 1, self.step])
            idx = self.schedule.batch(self.step)
            # the whole batch is drawn (and masked) at once, so micro-batching changes no mask
            inputs, labels, att, ntok, n_pred = self._batch(self.train_data, idx, mask_rng)
            lr = self.lr_at(self.step)
            self.set_lr(lr)
            self.bias.set_epoch_for_step(self.step)
            # no token count here: it would sync the GPU
            parts = self.micro_batches(len(idx), n_pred)
            graphed = self.step_graphs is not None and len(parts) == 1 and not self.bias.active
            if graphed:
                # the whole step, clipping and AdamW included, as one graph replay (train/gpu.py)
                loss = self.step_graphs(inputs, labels, att)
            elif len(parts) == 1:
                loss = self.train_loss(inputs, labels, att, idx)
                self.backward(loss)
            else:  # gradient accumulation: same effective batch, same loss normalisation
                loss = None
                for rows, weight in parts:
                    part = self.train_loss(inputs[rows], labels[rows], None if att is None else att[rows],
                                           idx[rows]) * weight
                    self.backward(part)
                    loss = part.detach() if loss is None else loss + part.detach()
            if not graphed:
                self.update()
                self.optimizer.zero_grad(set_to_none=not self.keep_grads)
            self.step += 1
            window_loss += loss.detach()
            window_steps += 1
            window_tokens += ntok
            self.tokens_seen += ntok
            now = time.perf_counter()
            self.elapsed += now - t_last
            t_last = now
            if bar is not None:
                bar.update(1)
            is_eval = self.step % p.eval_every == 0 or self.step >= p.max_steps
            if is_eval or self.step % p.log_every == 0:
                train_loss = float(window_loss) / window_steps
                entry = {
                    "step": self.step, "epoch": round(self.schedule.epoch_of(self.step), 4), "loss": train_loss,
                    "lr": lr, "tokens_per_s": window_tokens / max(1e-9, now - t_window),
                    "elapsed": round(self.elapsed, 3), "dev_loss": None,
                }
                if is_eval:
                    t_eval = time.perf_counter()
                    dev = self.evaluate()
                    self.times["evaluation"] += time.perf_counter() - t_eval
                    entry["dev_loss"] = dev
                    if dev < self.best_loss:
                        self.best_loss, self.best_step = dev, self.step
                        t_save = time.perf_counter()
                        self.save_best()
                        self.times["checkpoints"] += time.perf_counter() - t_save
                    if self.step - self.best_step >= p.patience:
                        self.finished, self.stop_reason = True, "early_stopping"
                    if self.step >= p.max_steps:
                        self.finished, self.stop_reason = True, "max_steps"
                    if bar is not None:
                        bar.set_postfix(loss=f"{train_loss:.3f}", dev=f"{dev:.3f}")
                if self.bias.active:
                    entry.update(self.bias.log_fields(is_eval))
                self.write_log(entry)
                window_loss = torch.zeros((), device=self.device)
                window_steps = window_tokens = 0
                t_window = time.perf_counter()
            if self.step % p.save_every == 0 or self.finished:
                t_save = time.perf_counter()
                self.save_checkpoint()
                self.times["checkpoints"] += time.perf_counter() - t_save
                t_window = time.perf_counter()  # tokens/s measures training, not checkpoint I/O
        if bar is not None:
            bar.close()
        # the loop's wall less its evaluations and checkpoints (resuming counts as the latter's)
        self.times["steps"] = time.perf_counter() - t_run - self.times["evaluation"] - self.times["checkpoints"]
        t_final = time.perf_counter()
        summary = self.finalize()
        # the trained model in memory takes padded batches again (a notebook's, a test's)
        restore_attention(self.raw_model, self.attn_restore)
        self.times["final"] = time.perf_counter() - t_final
        log.info("time: %s; total %.2f s", ", ".join(f"{k} {v:.2f} s" for k, v in self.times.items()),
                 sum(self.times.values()))
        return summary

    def finalize(self) -> dict:
        if self.best_step == 0:
            # no evaluation ran (max_steps reached before the first eval): the last weights are the final ones
            self.best_loss, self.best_step = self.evaluate(), self.step
            self.save_best()
        best = self.best_dir / f"step{self.best_step}"
        for name in sorted(os.listdir(best)):
            if not name.startswith("."):
                with open(best / name, "rb") as src, atomic_write(self.out / name, "wb") as dst:
                    shutil.copyfileobj(src, dst)
        self.hf_tok.save_pretrained(self.out)
        summary = {
            "arch": self.arch["family"], "best_step": self.best_step, "best_dev_loss": self.best_loss,
            "steps": self.step, "stop_reason": self.stop_reason, "seed": self.seed, "elapsed": round(self.elapsed, 3),
            "checkpoints": _steps(self.ckpt_dir), "device": self.device, "key": self.key,
            # one sentence per sequence: sentences longer than the context, left out (never truncated)
            "excluded_long_sentences": {"train": self.train_data.excluded, "dev": self.dev_data.excluded,
                                        "context": int(self.p.context)},
            "max_steps": self.p.max_steps, "epochs": round(self.schedule.epoch_of(self.step), 4),
            "tokens_seen": self.tokens_seen, "train_tokens": int(self.train_data.n_tokens),
            "batches_per_epoch": self.schedule.batches_per_epoch,
            "model": {**self.meta, "seed": self.seed},
        }
        write_json(self.out / "train_summary.json", summary)
        with open(self.partial_log, "rb") as src, atomic_write(self.out / "train_log.jsonl", "wb") as dst:
            shutil.copyfileobj(src, dst)
        # DIR now is the best model; the working copies are no longer needed
        shutil.rmtree(self.best_dir)
        self.partial_log.unlink()
        log.info("done: %d steps (%s), best dev loss %.4f at step %d -> %s", self.step, self.stop_reason,
                 self.best_loss, self.best_step, self.out)
        return summary
