#!/usr/bin/env bash
# Install empathos with the verl extra into ./.venv-verl, exactly as requirements-verl.lock pins it.
# verl pins its own versions (numpy < 2 among them), so it lives apart from .venv (docs/verl.md).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv-verl/bin/python ]; then
  "$PY" -m venv .venv-verl
fi
pipq() { .venv-verl/bin/python -m pip --quiet --disable-pip-version-check "$@"; }
pipq install --no-deps -r requirements-verl.lock
pipq install --no-deps -e .
