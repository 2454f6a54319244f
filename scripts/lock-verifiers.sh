#!/usr/bin/env bash
# Regenerate requirements-verifiers.lock: resolve the verifiers extra, the part of empathos's own
# dependencies its sandbox, run and score commands need, and the test tools in a throw-away
# environment, and pin every installed version. Run it after changing the verifiers extra.
# verifiers 0.4 caps openai below 3 (the main lock pins 3.x), so it lives apart from .venv
# (docs/verifiers.md, "Install"). The torch stack (torch, gguf, accelerate, peft: the offline
# model and training) is left out: the environment's roles run on endpoints, and empathos
# imports without torch on that path. openai's floor is left to verifiers.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$PY" - > "$T/requirements.in" <<'PYEOF'
import re, tomllib
data = tomllib.load(open("pyproject.toml", "rb"))
project = data["project"]
left_out = {"torch", "gguf", "accelerate", "peft", "transformers"}
for dep in project["dependencies"] + project["optional-dependencies"]["verifiers"]:
    name = re.split(r"[<>=!~ ;\[]", dep, maxsplit=1)[0]
    if name in left_out:
        continue
    print("openai" if name == "openai" else dep)
for dep in data["build-system"]["requires"]:  # installed with --no-build-isolation
    print(dep)
for dep in ("pytest", "pytest-asyncio", "pytest-timeout"):
    print(dep)
PYEOF
"$PY" -m venv "$T/venv"
pipq() { "$T/venv/bin/python" -m pip --quiet --disable-pip-version-check "$@"; }
pipq install -r "$T/requirements.in"
"$T/venv/bin/python" -m pip check
if "$T/venv/bin/python" -m pip freeze | grep -qiE '^(torch|nvidia-|triton)=='; then
  echo "the resolution pulled torch or CUDA packages: refusing to write the lock" >&2
  exit 1
fi
{
  echo "# The verifiers environment (.venv-verifiers): every package pinned. Regenerate: bash scripts/lock-verifiers.sh"
  "$T/venv/bin/python" -m pip freeze --all --exclude-editable | grep -v '^pip==' | sort -f
} > requirements-verifiers.lock
echo "wrote requirements-verifiers.lock ($(grep -vc '^#' requirements-verifiers.lock) packages)"
