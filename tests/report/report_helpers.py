"""Helpers for the report tests: run the CLI, read score's JSON, unpack the page's packs."""

from __future__ import annotations

import base64
import bz2
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


def un85(text: str) -> bytes:
    """The page's base 85 (``text85``): RFC 1924's alphabet with , . : in place of & < >."""
    return base64.b85decode(text.translate(str.maketrans(",.:", "&<>")))


def unpack(pack: str) -> list[dict[str, Any]]:
    """The dialogues' details a pack of the page holds."""
    out: list[dict[str, Any]] = json.loads(bz2.decompress(un85(pack)).decode("utf-8"))
    return out
