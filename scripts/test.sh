#!/usr/bin/env bash
# Quick start, command 2: install from the lock, then lint, type-check and run the whole test
# suite. .ci/run calls this script.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
# Nothing left in the home directory counts: every cache the code and the tests use starts
# empty (so the offline model's GGUF conversion runs on every call) and is removed afterwards.
caches=$(mktemp -d "${TMPDIR:-/tmp}/empathos-test-caches.XXXXXX")
trap 'rm -rf "$caches"' EXIT
export EMPATHOS_CACHE_DIR="$caches/empathos" XDG_CACHE_HOME="$caches/xdg" \
  HF_HOME="$caches/huggingface" MPLCONFIGDIR="$caches/matplotlib"
# The published EMPA sample sits beside the repository (non-commercial: read, never copied).
if [ -z "${EMPATHOS_EMPA_SAMPLE:-}" ] && [ -d ../shared/data/empa-official-sample ]; then
  EMPATHOS_EMPA_SAMPLE="$(cd ../shared/data/empa-official-sample && pwd)"
  export EMPATHOS_EMPA_SAMPLE
fi
# The other benchmarks' samples (MIT; read through a path, never copied; docs/bench.md).
for pair in EMOBENCH:emobench-sample EQBENCH_V2:eqbench-v2-sample EQBENCH3:eqbench3-sample SAGE:sage-sample; do
  var="EMPATHOS_${pair%%:*}_SAMPLE" dir="../shared/data/${pair#*:}"
  if [ -z "${!var:-}" ] && [ -d "$dir" ]; then
    export "$var=$(cd "$dir" && pwd)"
  fi
done
# The report's browser tests drive Debian's chromium (Playwright's own browser download is not used).
if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  echo "== installing chromium (report browser tests)"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq chromium >/dev/null
fi
echo "== lock"
.venv/bin/python scripts/check_lock.py
echo "== ruff"
.venv/bin/ruff check src tests benchmarks scripts
.venv/bin/ruff format --check src tests benchmarks scripts
echo "== mypy"
.venv/bin/mypy
echo "== layers and sizes"
.venv/bin/python scripts/layers.py          # no import breaks docs/layers.toml
.venv/bin/python scripts/layers.py --check  # docs/architecture.md's picture is current
.venv/bin/python scripts/sizes.py           # no function over 60 lines, no module over 450
echo "== inspect-evals-lint"
# the Inspect Evals register's checks on the empa task, laid out as an externally kept eval
.venv/bin/inspect-evals-lint --preset single-eval --task src/empathos/integrations/inspect/task.py
echo "== pytest"
# Two workers (pytest-xdist): the suite is CPU-bound and single-threaded per test (torch runs
# one intra-op thread), so CI's two cores run it in about half the time. Work stealing evens
# out the few long tests. Pass -n 0 to run in one process.
# One torch thread per worker: the default (every usable core) would have the workers' threads
# spin against each other (docs/models.md, "Threads").
export EMPATHOS_TORCH_THREADS="${EMPATHOS_TORCH_THREADS:-1}"
.venv/bin/python -m pytest -n "${EMPATHOS_TEST_WORKERS:-2}" --dist worksteal "$@"
# The verl adapter's tests run against verl's real code in its own environment (docs/verl.md).
bash scripts/test-verl.sh
# The verifiers environment and its conformance door run in theirs (docs/verifiers.md).
bash scripts/test-verifiers.sh
