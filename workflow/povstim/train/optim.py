"""The optimiser side of a training step: AdamW, the learning-rate schedule, clipping, fp16 loss scaling,
gradient accumulation over micro-batches, and (``compile: step-graphs``) whole steps as CUDA graphs.

On CUDA the AdamW is fused; on the CPU it is the foreach AdamW in fp32. Weight decay applies to matrices and
embeddings, not to biases or LayerNorm (as the HF Trainer does).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from . import gpu


def lr_at(training, step: int, decay_start: int | None = None) -> float:
    """The learning rate of 0-based update ``step``: linear warmup, then

    * ``schedule: linear`` -- linear decay to 0 at max_steps (POSH Table 6);
    * ``schedule: wsd`` -- warmup-stable-decay: the peak lr, constant, until the decay phase
      (:func:`decay_window`) starts at ``decay_start`` (the step early stopping's patience found the plateau;
      the loop records it) or, when no plateau came, where the budget's own decay must start to end at max_steps.
      A constant lr cannot make a curve flat: a plateau seen before the decay is the model's, not the schedule's.
    """
    p = training
    if p.warmup and step < p.warmup:
        return p.lr * (step + 1) / p.warmup
    if p.schedule == "wsd":
        start, end = decay_window(p, decay_start)
        if step < start:
            return p.lr
        return p.lr * max(0.0, (end - step) / max(1, end - start))
    span = max(1, p.max_steps - p.warmup)
    return p.lr * max(0.0, (p.max_steps - step) / span)


def decay_window(training, decay_start: int | None = None) -> tuple[int, int]:
    """``schedule: wsd``'s decay phase as (first step, step the run ends at): ``decay_fraction`` x the steps
    before it, linearly to 0. ``decay_start`` None: the budget's decay, the one that ends at max_steps
    (it starts at max_steps / (1 + decay_fraction)); a plateau found later than that start changes nothing."""
    p = training
    # (+1e-9: 110 / 1.1 is 99.99999 in floating point, and the budget decay of 110 steps starts at 100)
    budget_start = max(p.warmup, math.floor(p.max_steps / (1.0 + p.decay_fraction) + 1e-9))
    if decay_start is None or decay_start >= budget_start:
        return budget_start, p.max_steps
    start = max(p.warmup, int(decay_start))
    return start, min(p.max_steps, start + max(1, math.ceil(p.decay_fraction * start)))


def micro_batches(micro: int | None, n_rows: int, n_pred: np.ndarray) -> list[tuple[slice, float]]:
    """(rows, weight) of each micro-batch of at most ``micro`` rows; weight = its share of the batch's predicted
    tokens, so the summed micro-batch losses (each a mean over its own tokens) are the batch's mean token loss."""
    if not micro or micro >= n_rows:
        return [(slice(None), 1.0)]
    total = max(1, int(n_pred.sum()))
    parts = []
    for start in range(0, n_rows, micro):
        rows = slice(start, min(n_rows, start + micro))
        share = int(n_pred[rows].sum())
        if share:
            parts.append((rows, share / total))
    return parts


class Optimiser:
    """AdamW over ``model``'s parameters with ``training``'s settings, on ``runtime``'s device.

    ``compile_mode`` (train/gpu.py) decides whether gradients stay allocated between steps (CUDA-graph modes)
    and whether whole steps are recorded (``step-graphs``: ``self.graphs`` replays ``forward_loss`` + backward
    + clipping + AdamW as one graph); ``graph_backend`` lets a CPU test record them.
    """

    def __init__(self, model, training, runtime, compile_mode: str | None = None, graph_backend=None,
                 forward_loss=None):
        self.params, self.training, self.scaler = list(model.parameters()), training, runtime.scaler
        step_graphs = compile_mode == gpu.STEP_GRAPHS
        # a recorded step reads the learning rate from a device tensor that the loop fills in place
        self.lr_tensor = torch.tensor(float(training.lr), device=runtime.device) if step_graphs else None
        decay = [p for p in self.params if p.dim() >= 2]
        no_decay = [p for p in self.params if p.dim() < 2]
        if runtime.cuda:
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
        # CUDA-graph modes keep real .grad tensors, zeroed and never freed (gpu.persistent_grads)
        self.keep_grads = gpu.uses_graphs(compile_mode) and (runtime.cuda or graph_backend is not None)
        if self.keep_grads:
            gpu.persistent_grads(self.params)
        self.forward_loss = forward_loss
        self.graphs = None
        if step_graphs:
            self.graphs = gpu.StepGraphs(self.graph_step, graph_backend or gpu.CudaGraphBackend(runtime.device))

    def set_lr(self, lr: float) -> None:
        if self.lr_tensor is not None:
            self.lr_tensor.fill_(lr)  # in place: recorded steps read this tensor
            return
        for group in self.optimizer.param_groups:
            group["lr"] = lr

    def backward(self, loss) -> None:
        """Backward from ``loss``, scaled up first in fp16 (its gradients would underflow otherwise)."""
        (loss if self.scaler is None else self.scaler.scale(loss)).backward()

    def update(self) -> None:
        """Clip the accumulated gradients (training.grad_clip) and take the AdamW step. In fp16 the gradients are
        unscaled first (the clipping sees their true norm), and a step whose gradients overflowed is skipped."""
        if self.scaler is not None:
            self.scaler.unscale_(self.optimizer)
        if self.training.grad_clip:
            torch.nn.utils.clip_grad_norm_(self.params, self.training.grad_clip)
        if self.scaler is None:
            self.optimizer.step()
        else:
            self.scaler.step(self.optimizer)
            self.scaler.update()

    def zero_grad(self) -> None:
        self.optimizer.zero_grad(set_to_none=not self.keep_grads)

    def graph_step(self, inputs, labels, attention):
        """One whole training step without touching the host (recorded by StepGraphs): the same
        operations as the loop's eager step -- gradients zeroed (kept, not freed), forward + loss,
        backward, clipping, AdamW at the learning rate in ``lr_tensor`` -- returning the loss."""
        self.optimizer.zero_grad(set_to_none=False)
        loss = self.forward_loss(inputs, labels, attention)
        loss.backward()
        self.update()
        return loss.detach()

    def state(self) -> dict:
        """What a checkpoint keeps of the optimiser: AdamW's moments and the fp16 scaler."""
        return {"optimizer": self.optimizer.state_dict(),
                "scaler": self.scaler.state_dict() if self.scaler is not None else None}

    def restore(self, state: dict) -> None:
        self.optimizer.load_state_dict(state["optimizer"])
        if self.scaler is not None and state.get("scaler"):
            self.scaler.load_state_dict(state["scaler"])
        if self.lr_tensor is not None:
            # a loaded optimizer state brings its own learning-rate values: every group reads the one tensor
            for group in self.optimizer.param_groups:
                group["lr"] = self.lr_tensor
