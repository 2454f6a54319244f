#!/usr/bin/env bash
# The verifiers environment's tests against verifiers' real code, in its own environment
# (.venv-verifiers): the environment through verifiers' own `vf-eval`, and the conformance
# suite's verifiers door. scripts/test.sh calls this after test-verl.sh; it can also run alone.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-verifiers.sh
echo "== pytest (verifiers environment)"
exec .venv-verifiers/bin/python -m pytest tests/verifiers_empa tests/conformance "$@"
