#!/usr/bin/env bash
# The checks of issue 46 that need a GPU (MAPO under TRL with a real vLLM engine; see
# docs/trl.md, "What was verified where"). Needs CUDA and vLLM in the environment
# (pip install 'trl[vllm]'); prints one JSON line per rank and stops at the first failure.
#   bash scripts/gpu-check-mapo.sh            # colocated vLLM, one process (1 GPU)
# With 3 GPUs or more it also runs vLLM's server mode on GPU 0 with two training processes
# on GPUs 1 and 2, each asking for its own reply cap (the cap agreed across processes).
# verl's engine path (main_ppo with FSDP and a vLLM replica) is examples/verl/
# run_mapo_qwen2_5_7b.sh on 8 GPUs; this script does not start it.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
OUT=${OUT:-/tmp/gpu-check-mapo}
"$PY" -c 'import torch, vllm; assert torch.cuda.is_available()' \
  || { echo "gpu-check-mapo: needs CUDA and vLLM (pip install 'trl[vllm]')"; exit 2; }
GPUS=$("$PY" -c 'import torch; print(torch.cuda.device_count())')

echo "== TRL + vLLM colocated, one process"
CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0} "$PY" benchmarks/gpu_check_mapo.py \
  --mode colocate --out "$OUT/colocate"

if [ "$GPUS" -ge 3 ]; then
  echo "== TRL + vLLM server (GPU 0), two training processes (GPUs 1, 2)"
  MODEL=$("$PY" -c 'from empathos.llm.local import resolve_model_dir; print(resolve_model_dir(None, None, "policy")[0])')
  CUDA_VISIBLE_DEVICES=0 "$PY" -m trl.cli.main vllm-serve --model "$MODEL" --port 8000 \
    --gpu-memory-utilization 0.3 > "$OUT-server.log" 2>&1 &
  SERVER=$!
  trap 'kill "$SERVER" 2>/dev/null || true' EXIT
  for _ in $(seq 120); do
    curl -sf http://127.0.0.1:8000/health/ > /dev/null && break
    sleep 2
  done
  CUDA_VISIBLE_DEVICES=1,2 "$PY" -m accelerate.commands.launch --num_processes 2 \
    benchmarks/gpu_check_mapo.py --mode server --out "$OUT/server"
else
  echo "== server mode skipped: $GPUS GPU(s), it needs 3 (the server and two training ranks)"
fi
echo "gpu-check-mapo: all checks passed"
