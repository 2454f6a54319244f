#!/usr/bin/env bash
# The verl adapter's tests against verl's real code, in its own environment (.venv-verl).
# scripts/test.sh calls this after the main suite; it can also run alone.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-verl.sh
echo "== pytest (verl environment)"
# test_public_api: the adapter's modules import verl, so their __all__ is checked here.
# tests/conformance: the conformance suite's verl door (the reference comes from empathos run).
exec .venv-verl/bin/python -m pytest tests/rl_verl tests/conformance/test_conformance_verl.py \
  tests/test_public_api.py \
  -k "not test_all_is_honest or integrations" "$@"
