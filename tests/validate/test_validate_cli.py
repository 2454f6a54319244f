"""`empathos validate` as a user runs it: a subprocess, real files, scripted and offline judges."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from validate_helpers import HANDLERS


def validate(*args: str | Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "empathos", "validate", *map(str, args)],
        capture_output=True, text=True, timeout=timeout, env=os.environ.copy(),
    )  # fmt: skip


def test_cli_writes_table_json_markdown_and_report(runs: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "judges.yaml"
    cfg.write_text(
        f"judge: {{kind: scripted, model: sensitive, handler: '{HANDLERS}:persona_sensitive'}}\n"
        f"judge_b: {{kind: scripted, model: blind, handler: '{HANDLERS}:persona_blind'}}\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    res = validate(
        runs / "model-a", "--config", cfg, "--out", out, "--pairs", "8", "--seed", "3",
        "--agreement-dialogues", "2", "--resamples", "200", "--report",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert "Persona Flip" in res.stdout and "detects" in res.stdout
    doc = json.loads((out / "validate.json").read_text(encoding="utf-8"))
    assert doc["options"]["seed"] == 3 and doc["sample"]["points"] == 8
    assert doc["judge"]["handler"].endswith(":persona_sensitive")
    assert doc["agreement"][0]["rater_b"] == "blind (B)"
    md = (out / "validate.md").read_text(encoding="utf-8")
    assert "| Persona Flip | aligned | EPM (delta_E) |" in md
    html = (out / "report" / "index.html").read_text(encoding="utf-8")
    assert 'id="sec-validate"' in html
    assert (out / "cache.sqlite").is_file()


def test_bad_config_is_one_line_exit_2(runs: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "bad.yaml"
    cfg.write_text("judge: {kind: telepathy}\n", encoding="utf-8")
    res = validate(runs / "model-a", "--config", cfg, "--out", tmp_path / "o")
    assert res.returncode == 2
    assert "Traceback" not in res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "judge.kind" in lines[0] and str(cfg) in lines[0]


def test_records_without_known_scenarios_are_an_input_error(runs: Path, tmp_path: Path) -> None:
    empty = tmp_path / "scen"
    empty.mkdir()
    (empty / "x.yaml").write_text("not: a scenario\n", encoding="utf-8")
    res = validate(runs / "model-a", "--scenarios", empty, "--out", tmp_path / "o")
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert "--scenarios" in res.stderr


@pytest.mark.slow
@pytest.mark.timeout(1800)  # the offline model on a shared CPU
def test_offline_judge_runs_end_to_end_and_says_it_is_too_small(runs: Path, tmp_path: Path) -> None:
    out = tmp_path / "offline"
    res = validate(
        runs / "model-a", "--out", out, "--pairs", "1", "--sycophancy", "affect", "--no-direct",
        "--agreement-dialogues", "0", "--resamples", "200", timeout=1500,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert "too small to be a meaningful judge" in res.stdout
    doc = json.loads((out / "validate.json").read_text(encoding="utf-8"))
    assert doc["judge"]["kind"] == "offline"
    assert doc["sample"]["points"] == 1 and doc["sample"]["pairs"] == 2
    assert doc["sample"]["judge_calls"] == 3  # original, flipped, affect
    assert any("too small" in w for w in doc["warnings"])
