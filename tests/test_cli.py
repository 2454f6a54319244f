"""The `empathos` command as a whole, and the small rough edges of issue 24 (point 8)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from empathos import __version__
from empathos.cli.main import app
from empathos.run.config import load_run_config

DOCS = Path(__file__).resolve().parents[1] / "docs"


@pytest.mark.parametrize("args", [["version"], ["--version"]])
def test_version_command_prints_version(args: list[str]) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "empathos", *args], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == __version__


def test_unknown_command_fails_without_traceback() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "empathos", "no-such-command"], capture_output=True, text=True
    )
    assert out.returncode != 0
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize(
    ("policy", "name"),
    [
        ("runs/train/checkpoints/step-000100/adapter", "train-step-000100"),
        ("/data/mapo-qwen/checkpoints/step-000002", "mapo-qwen-step-000002"),
        ("models/Qwen2.5-0.5B-Instruct", "Qwen2.5-0.5B-Instruct"),
    ],
)
def test_a_local_checkpoint_runs_under_its_run_and_step(policy: str, name: str) -> None:
    config = load_run_config(None, {"policy": policy}, environ={})
    assert config.role("model_under_test").model == name
    assert config.out == Path("runs") / name


def test_no_doc_calls_a_registered_command_missing() -> None:
    commands = {c.name for c in app.registered_commands} | {g.name for g in app.registered_groups}
    for page in DOCS.glob("*.md"):
        text = " ".join(page.read_text("utf-8").split())
        for m in re.finditer(r"`(\w+)` is not in this build", text):
            assert m.group(1) not in commands, f"{page.name}: says {m.group(1)} is missing"
