#!/usr/bin/env bash
# Install empathos with the verl extra into ./.venv-verl, exactly as requirements-verl.lock pins it.
# verl 0.9 caps transformers below the main lock's version, so it lives apart from .venv
# (docs/verl.md, "Install"). The lock holds the CPU build of torch: nothing CUDA is pulled.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv-verl/bin/python ]; then
  "$PY" -m venv .venv-verl
fi
pipq() { .venv-verl/bin/python -m pip --quiet --disable-pip-version-check "$@"; }
# --no-compile: the 2.4 GB of packages are not byte-compiled up front (half the CPU time);
# Python compiles the modules it imports, once.
pipq install --no-deps --no-compile -r requirements-verl.lock
pipq install --no-deps -e .
# verl >= 0.9.1 (the agent loop needs AgentLoopBase.ct_merge_context_msg): one line if not.
.venv-verl/bin/python -c 'import sys
from empathos.errors import EmpathosError
from empathos.integrations.verl.version import require_verl
try:
    require_verl()
except EmpathosError as exc:
    sys.exit(f"error: {exc}")'
