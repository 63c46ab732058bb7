#!/usr/bin/env bash
# The GPU speed table, povstim vs its peer, side by side as ratios, on one GPU machine:
# the embedded-default DAG with and without the GPU, one scoring job vs minicons, GPT-2 small
# (tokens/s, MFU) and the BabyBERTa recipe (steps/s) vs the HF Trainer, and gpu_check.sh's
# corpus generator before/after its fix. Nothing is downloaded. See scripts/gpu_bench.py.
#
#   bash scripts/gpu_bench.sh                       # all rows (aimed at <= 8 min on an H100/H200)
#   ROWS=score,babyberta bash scripts/gpu_bench.sh  # some rows
#   DRY=1 bash scripts/gpu_bench.sh                 # the same code on the CPU, tiny sizes (~1-2 min)
#   GPT2_COMPILE=max-autotune GPT2_MICRO=16 BB_COMPILE=reduce-overhead CORES=16 PEAK_TFLOPS=989 ...
#   ROWS=babyberta BB_REFERENCE=false bash scripts/gpu_bench.sh  # + the eager loop's rate and loss gap
#   ROWS=babyberta,bbseeds BB_SEEDS=4 PROFILE=$OUT bash scripts/gpu_bench.sh  # + seeds at once, profiles
#   ROWS=dag DAG_CONFIG=my.yaml PROFILE=$OUT bash scripts/gpu_bench.sh  # DAG with settings merged over config.yaml
#   ROWS=score SCORE_WHOLE=1 bash scripts/gpu_bench.sh  # + the 20k-pair job without prefix sharing
#
# PYTHON=... picks the interpreter (default: .venv/bin/python when present, else python3); it needs
# povstim's dependencies plus minicons (the scoring peer).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-}
if [ -z "$PY" ]; then
  if [ -x .venv/bin/python ]; then PY=.venv/bin/python; else PY=python3; fi
fi
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null || true
exec "$PY" scripts/gpu_bench.py "$@"
