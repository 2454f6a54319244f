#!/usr/bin/env bash
# The verl adapter's tests against verl's real code, in its own environment (.venv-verl).
# scripts/test.sh calls this after the main suite; it can also run alone.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-verl.sh
echo "== pytest (verl environment)"
exec .venv-verl/bin/python -m pytest tests/rl_verl tests/rl/test_rl_token_rewards.py "$@"
