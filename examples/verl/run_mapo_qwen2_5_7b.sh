#!/usr/bin/env bash
# MAPO on Qwen2.5-7B-Instruct with verl 0.9.1, one node of 8 GPUs or several (docs/verl.md).
# Run from the repository root in an environment with verl's GPU stack and empathos installed
# (docs/verl.md, "Install"). empathos reaches verl's processes through its plugin entry point.
# Multi-node: start Ray first (head: `ray start --head`, workers: `ray start --address=HEAD:6379`),
# then run this on the head with NNODES set.
#
# Everything taken from this shell goes to verl as a Hydra override on the command line: verl
# resolves its config in a Ray actor that may run on another node and does not see this shell.
#   EMPATHOS_ROLES_URL     the roles' server (user, director, judge), e.g. http://HOST:8001/v1 (required)
#   EMPATHOS_ROLES_MODEL   the model it serves (default Qwen/Qwen2.5-72B-Instruct)
#   EMPATHOS_VERL_DATA     the prepared data (default ./data/empathos-verl; passed as an absolute
#                          path, which every node must be able to read: a shared file system)
#   EMPATHOS_VERL_ROLLOUT  the policy's rollout engine: vllm (default) or sglang
#   EMPATHOS_VERL_PRINT_ARGS=1  print verl's arguments, one a line, and stop
# Extra arguments go to verl as further overrides.
set -euo pipefail
: "${EMPATHOS_ROLES_URL:?set it to the roles server every node can reach, e.g. http://HOST:8001/v1}"
here=$(cd "$(dirname "$0")" && pwd)
data=$(realpath -m "${EMPATHOS_VERL_DATA:-$PWD/data/empathos-verl}")
model=${EMPATHOS_ROLES_MODEL:-Qwen/Qwen2.5-72B-Instruct}
args=(
  "--config-path=$here" --config-name=mapo_qwen2_5_7b
  "data.train_files='$data/train.parquet'" "data.val_files='$data/val.parquet'"
  "actor_rollout_ref.rollout.name=${EMPATHOS_VERL_ROLLOUT:-vllm}"
  "trainer.nnodes=${NNODES:-1}" "trainer.n_gpus_per_node=${GPUS_PER_NODE:-8}"
)
for role in user director judge; do
  args+=("empathos.roles.$role.base_url='$EMPATHOS_ROLES_URL'" "empathos.roles.$role.model='$model'")
done
if [ -n "${EMPATHOS_VERL_PRINT_ARGS:-}" ]; then
  printf '%s\n' "${args[@]}" "$@"
  exit 0
fi
if [ ! -f "$data/train.parquet" ]; then
  # 18 bundled scenarios: 16 for training (one step of 16 x 4 rollouts per epoch), 2 held out
  empathos verl prepare "${EMPATHOS_VERL_SCENARIOS:-builtin}" --out "$data" --val-fraction 0.1
fi
python3 -c 'import empathos.integrations.verl.plugin' || {
  echo "empathos or its verl plugin cannot be imported here: see docs/verl.md, Install" >&2
  exit 1
}
exec python3 -m verl.trainer.main_ppo "${args[@]}" "$@"
