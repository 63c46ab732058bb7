#!/usr/bin/env bash
# GPU check for `povstim train`: GPT-2 small (POSH Table 5: 12 layers x 768, 12 heads,
# FFN 3072) at context 512, batch 32 (POSH Table 6), bf16 autocast + TF32 + fused
# AdamW (+ torch.compile unless COMPILE=0), on a synthetic corpus whose BPE reaches a
# 32,768-token vocabulary (POSH's choice). Prints tokens/s and model FLOPs utilisation
# (MFU, PaLM/nanoGPT estimate: 6N + 12*L*d*T FLOPs per token, N = non-embedding
# parameters + the tied output layer) against the GPU's dense bf16 peak.
#
#   bash scripts/gpu_check.sh            # ~3-5 minutes on an H100/H200
#   DRY=1 bash scripts/gpu_check.sh      # a tiny CPU run of the same code (seconds), no GPU needed
#   STEPS=400 COMPILE=0 BATCH=64 bash scripts/gpu_check.sh   # BATCH: sequences per step (paper: 32)
#   COMPILE=max-autotune MICRO=16 bash scripts/gpu_check.sh  # a torch.compile mode; micro-batches of 16
#   PRECISION=fp16 PEAK_TFLOPS=65 bash scripts/gpu_check.sh    # training.precision (default auto); a T4's fp16 peak
#
# Needs Python with torch (CUDA build), transformers, tokenizers, numpy, safetensors,
# tqdm; uses .venv/bin/python when it has CUDA, else python3. PEAK_TFLOPS overrides
# the peak (default: 989 for H100/H200 SXM, 312 for A100, else required).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${DRY:-0}" = 1 ]; then STEPS=${STEPS:-30}; else STEPS=${STEPS:-300}; fi
COMPILE=${COMPILE:-1}
BATCH=${BATCH:-32}
# PYTHON=... picks the interpreter; else the first of .venv/bin/python, python3, python with CUDA torch
PY=${PYTHON:-}
if [ -z "$PY" ]; then
  for cand in .venv/bin/python python3 python; do
    if command -v "$cand" >/dev/null 2>&1 && "$cand" -c "import torch,sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
      PY=$cand; break
    fi
  done
fi
if [ -z "$PY" ] && [ "${DRY:-0}" = 1 ]; then  # DRY=1: a tiny CPU run of this script's logic, in seconds
  for cand in .venv/bin/python python3 python; do
    if command -v "$cand" >/dev/null 2>&1 && "$cand" -c "import torch" 2>/dev/null; then PY=$cand; break; fi
  done
fi
if [ -z "$PY" ]; then echo "gpu_check: no Python with a CUDA-enabled torch found" >&2; exit 2; fi
if ! "$PY" -c "import transformers, tokenizers, safetensors, tqdm, numpy" 2>/dev/null; then
  echo "gpu_check: installing transformers/tokenizers (needs PyPI)" >&2
  "$PY" -m pip install -q "transformers==5.24.0" "tokenizers==0.23.3" safetensors tqdm numpy pyyaml jsonschema
fi
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null || true
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
PYTHONPATH="$PWD/workflow${PYTHONPATH:+:$PYTHONPATH}" DRY=${DRY:-0} BATCH=$BATCH STEPS=$STEPS COMPILE=$COMPILE MICRO=${MICRO:-} PRECISION=${PRECISION:-auto} WORK=$WORK "$PY" - <<'PYEOF'
import itertools, json, os, random, time
from pathlib import Path

import torch

from povstim.tokenizer import bpe
from povstim.train.loop import Trainer
from povstim.train.params import resolve

work = Path(os.environ["WORK"])
steps = int(os.environ["STEPS"])
compile_ = {"1": True, "0": False}.get(os.environ["COMPILE"], os.environ["COMPILE"])  # or a torch.compile mode
micro = int(os.environ["MICRO"]) if os.environ.get("MICRO") else None
dry = os.environ.get("DRY") == "1"
# Zipf-distributed pseudo-words, so byte-level BPE really learns 32,768 tokens.
r = random.Random(0)
letters = "etaoinshrdlcumwfgypbvkjxqz"
lexicon = sorted({"".join(r.choice(letters) for _ in range(r.randint(2, 11))) for _ in range(60000)})
# Cumulative weights once: `choices(lexicon, weights)` would re-add all 60k weights for every
# sentence (400k sentences x 60k = hours); with cum_weights each draw is a bisection.
cum_weights = list(itertools.accumulate(1 / (i + 1) for i in range(len(lexicon))))
def sentences(n, seed):
    g = random.Random(seed)
    for _ in range(n):
        words = g.choices(lexicon, cum_weights=cum_weights, k=g.randint(4, 24))
        yield " ".join(words).capitalize() + g.choice(".?!")
(work / "train.txt").write_text("\n".join(sentences(4_000 if dry else 400_000, 1)) + "\n")
(work / "dev.txt").write_text("\n".join(sentences(2_000, 2)) + "\n")
t0 = time.time()
tok = bpe.train_file(work / "train.txt", {"vocab_size": 2048 if dry else 32768})
bpe.save(tok, work / "tokenizer.json")
print(f"BPE: vocab {tok.get_vocab_size()} in {time.time() - t0:.1f}s")

arch_spec = ({"family": "gpt2", "n_layer": 2, "n_embd": 64, "n_head": 2, "n_inner": 128} if dry else
             {"family": "gpt2", "n_layer": 12, "n_embd": 768, "n_head": 12, "n_inner": 3072})
log_every = 5 if dry else 50
arch, training = resolve(arch_spec, {"batch_size": int(os.environ["BATCH"]), "context": 512, "max_steps": steps, "warmup": 100,
                             "eval_every": steps, "save_every": steps, "log_every": log_every,
                             "eval_batches": 20, "compile": compile_, "device": "auto", "micro_batch": micro,
                             "precision": os.environ["PRECISION"],
                             **({"batch_size": 4, "context": 64} if dry else {})})
tr = Trainer(train=str(work / "train.txt"), dev=str(work / "dev.txt"), tokenizer=str(work / "tokenizer.json"),
             arch=arch, training=training, seed=1, out_dir=str(work / "model"), threads=4, progress=False)
t0 = time.time()
summary = tr.run()
wall = time.time() - t0
log = [json.loads(l) for l in (work / "model" / "train_log.jsonl").read_text().splitlines()]
steady = [e["tokens_per_s"] for e in log[2:]] or [log[-1]["tokens_per_s"]]  # skip compile/warm-up windows
tps = sorted(steady)[len(steady) // 2]
cfg = tr.learner.model_config
model = tr.learner.raw_model
n_params = sum(p.numel() for p in model.parameters()) - model.transformer.wpe.weight.numel()
flops_per_token = 6 * n_params + 12 * cfg.n_layer * cfg.n_embd * training.context
name = torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu (DRY run)"
peak = os.environ.get("PEAK_TFLOPS")
if peak is None:
    peak = 989 if ("H100" in name or "H200" in name) else 312 if "A100" in name else None
mfu = tps * flops_per_token / (float(peak) * 1e12) if peak else float("nan")
print(json.dumps({
    "gpu": name, "params_M": round(n_params / 1e6, 1), "context": training.context, "batch": training.batch_size,
    "precision": tr.runtime.precision, "compile": compile_, "micro_batch": micro, "steps": summary["steps"],
    "tokens_per_s": round(tps), "mfu": round(mfu, 4), "peak_tflops": peak, "wall_s": round(wall, 1),
    "final_loss": log[-1]["loss"], "dev_loss": summary["best_dev_loss"],
    "max_mem_GiB": round(torch.cuda.max_memory_allocated() / 2**30, 1) if torch.cuda.is_available() else None,
}, indent=1))
PYEOF
