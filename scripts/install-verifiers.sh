#!/usr/bin/env bash
# Install empathos with the verifiers extra into ./.venv-verifiers, exactly as
# requirements-verifiers.lock pins it, and the environment package verifiers loads
# (environments/empathos_empa: `vf-eval empathos-empa`). verifiers 0.4 caps openai below the main
# lock's version, so it lives apart from .venv (docs/verifiers.md, "Install"). No torch: the
# environment's roles run on endpoints, and empathos imports without it on that path.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv-verifiers/bin/python ]; then
  "$PY" -m venv .venv-verifiers
fi
pipq() { .venv-verifiers/bin/python -m pip --quiet --disable-pip-version-check "$@"; }
# --no-compile: packages are not byte-compiled up front; Python compiles what it imports, once.
pipq install --no-deps --no-compile -r requirements-verifiers.lock
# --no-deps: empathos's torch stack and openai 3 stay out (the lock is the whole set)
pipq install --no-deps --no-build-isolation -e . -e environments/empathos_empa
