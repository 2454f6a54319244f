#!/usr/bin/env bash
# Quick start, command 1: install, then run the benchmark's main job on the offline default
# (every role on the bundled SmolLM2-135M model; no API key, no network).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
exec .venv/bin/empathos run "$@"
