#!/usr/bin/env bash
# MAPO on Qwen2.5-7B-Instruct with verl, one node of 8 GPUs (docs/verl.md).
# Run from the repository root inside the verl environment (bash scripts/install-verl.sh).
# Multi-node: start Ray first (head: `ray start --head`, workers: `ray start --address=HEAD:6379`),
# then run this on the head with NNODES set.
set -euo pipefail
export EMPATHOS_VERL_DATA=${EMPATHOS_VERL_DATA:-data/empathos-verl}
export EMPATHOS_VERL_INTERACTION=${EMPATHOS_VERL_INTERACTION:-$PWD/examples/verl/interaction.yaml}
EMPATHOS_VERL_REWARD_FN=$(python3 -c 'import empathos.integrations.verl.reward_fn as m; print(m.__file__)')
export EMPATHOS_VERL_REWARD_FN
if [ ! -f "$EMPATHOS_VERL_DATA/train.parquet" ]; then
  empathos verl prepare builtin --out "$EMPATHOS_VERL_DATA" --val-fraction 0.2
fi
exec python3 -m verl.trainer.main_ppo \
  --config-path="$PWD/examples/verl" --config-name=mapo_qwen2_5_7b \
  trainer.nnodes="${NNODES:-1}" trainer.n_gpus_per_node="${GPUS_PER_NODE:-8}" "$@"
