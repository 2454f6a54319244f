"""Helpers for the report tests: run the CLI, read score's JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any


def empathos(*args: str, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    """Run ``python -m empathos ARGS`` (this checkout's src, via PYTHONPATH)."""
    return subprocess.run(
        [sys.executable, "-m", "empathos", *args], capture_output=True, text=True, timeout=timeout
    )


def score_json(*paths: Path | str) -> dict[str, dict[str, Any]]:
    """``empathos score --format json`` rows by model (extra options may follow the paths)."""
    out = empathos("score", *map(str, paths), "--format", "json")
    assert out.returncode == 0, out.stderr
    return {row["model"]: row for row in json.loads(out.stdout)}
