#!/usr/bin/env bash
# MAPO on Qwen2.5-7B-Instruct with verl 0.9, one node of 8 GPUs (docs/verl.md).
# Run from the repository root in an environment with verl's GPU stack and empathos installed
# (docs/verl.md, "Install"). empathos reaches verl's processes through its plugin entry point.
# Multi-node: start Ray first (head: `ray start --head`, workers: `ray start --address=HEAD:6379`),
# then run this on the head with NNODES set. EMPATHOS_VERL_ROLLOUT=sglang for SGLang rollouts.
set -euo pipefail
export EMPATHOS_VERL_DATA=${EMPATHOS_VERL_DATA:-$PWD/data/empathos-verl}
if [ ! -f "$EMPATHOS_VERL_DATA/train.parquet" ]; then
  # 18 bundled scenarios: 16 for training (one step of 16 x 4 rollouts per epoch), 2 held out
  empathos verl prepare "${EMPATHOS_VERL_SCENARIOS:-builtin}" --out "$EMPATHOS_VERL_DATA" --val-fraction 0.1
fi
python3 -c 'import empathos.integrations.verl.plugin' || {
  echo "empathos or its verl plugin cannot be imported here: see docs/verl.md, Install" >&2
  exit 1
}
exec python3 -m verl.trainer.main_ppo \
  --config-path="$PWD/examples/verl" --config-name=mapo_qwen2_5_7b \
  trainer.nnodes="${NNODES:-1}" trainer.n_gpus_per_node="${GPUS_PER_NODE:-8}" "$@"
