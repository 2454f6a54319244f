"""`empathos scenarios check|list` as a user runs them (a real subprocess)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "empathos", "scenarios", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_check_builtin_passes() -> None:
    for args in ((), ("builtin",)):
        proc = _run("check", *args)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "scenarios read: 18, errors: 0" in proc.stdout
        assert "language: en 12, zh 6" in proc.stdout
        assert "threshold: high 6, low 6, medium 6" in proc.stdout


def test_check_reports_every_error_and_exits_1(
    tmp_path: Path, make_scenario: Any, write: Any
) -> None:
    write.yaml(tmp_path / "good.yaml", make_scenario(id="good"))
    bad = make_scenario(id="bad")
    bad["persona"]["threshold"] = "extreme"
    del bad["story"]["outcome"]
    bad_path = write.yaml(tmp_path / "bad.yaml", bad)
    proc = _run("check", str(tmp_path))
    assert proc.returncode == 1
    errors = sorted(ln for ln in proc.stdout.splitlines() if ln.startswith("error: "))
    assert len(errors) == 2
    assert errors[0].startswith(f"error: {bad_path}: persona.threshold: ")
    assert errors[1] == f"error: {bad_path}: story.outcome: required field is missing"
    assert "extreme" in proc.stdout
    assert "scenarios read: 1, errors: 2" in proc.stdout
    assert "Traceback" not in proc.stderr


def test_list_shows_a_table() -> None:
    proc = _run("list")
    assert proc.returncode == 0, proc.stderr
    assert "en-01-sourdough *" in proc.stdout
    assert "zh-06-exam" in proc.stdout
    assert "18 scenarios" in proc.stdout


def test_list_missing_path_says_the_path_is_missing(tmp_path: Path) -> None:
    proc = _run("list", str(tmp_path / "absent"))
    assert proc.returncode == 1
    assert proc.stderr.strip() == (
        f"error: {tmp_path / 'absent'}: no such file or directory (the path is missing)"
    )
    assert "0 scenarios" not in proc.stdout


@pytest.mark.usefixtures("empa_sample")
def test_check_published_sample(empa_sample: Path) -> None:
    proc = _run("check", str(empa_sample))
    assert proc.returncode == 0, proc.stdout
    assert "scenarios read: 30, errors: 0" in proc.stdout
    assert "official: 30" in proc.stdout
    assert "dominant_axis: affective 10, cognitive 10, proactive 10" in proc.stdout
