#!/usr/bin/env bash
# The verifiers environment's tests against verifiers' real code, in its own environment
# (.venv-verifiers): the environment through verifiers' own `vf-eval` is the conformance
# suite's verifiers door. scripts/test.sh calls this after test-verl.sh; it can also run alone.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-verifiers.sh
echo "== pytest (verifiers environment)"
# tests/conformance: vf-eval end to end (test_conformance_verifiers.py) and the doors this
# environment has (the gym's); the others skip here and run in theirs.
# test_public_api: the environment's modules import verifiers, so their __all__ is checked here.
exec .venv-verifiers/bin/python -m pytest tests/conformance tests/test_public_api.py \
  -k "not test_public_api or integrations.verifiers" "$@"
