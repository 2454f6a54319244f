"""The whole pipeline on the bundled offline model (SmolLM2-135M): it runs every stage, and
what the 135M model writes is never written out as a scenario (it fails the degeneracy checks
or the degenerate-P_0 check, with the reason in the console and the state)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CORPUS


@pytest.mark.slow
def test_offline_model_never_writes_a_degenerate_scenario(tmp_path: Path) -> None:
    one = tmp_path / "one.jsonl"
    line = next(x for x in CORPUS.read_text("utf-8").splitlines() if '"en-exam-fail"' in x)
    one.write_text(line + "\n", "utf-8")
    out = tmp_path / "out"
    res = subprocess.run(
        [sys.executable, "-m", "empathos", "distill", str(one), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    # said up front, before any model call
    first = res.stderr.splitlines()[:2]
    assert any("not a usable scenario set" in x for x in first), res.stderr
    assert "written 0" in res.stdout and "failed 1" in res.stdout, res.stdout + res.stderr
    assert res.returncode == 1
    assert list((out / "scenarios").glob("*.yaml")) == []
    status = json.loads((out / "state" / "en-exam-fail" / "status.json").read_text("utf-8"))
    assert status["status"] == "failed"
    assert status["reason"].startswith(("degenerate output:", "iedr: degenerate starting point"))
    assert f"failed: en-exam-fail: {status['reason']}" in res.stderr
    manifest = json.loads((out / "distill.json").read_text("utf-8"))
    assert manifest["counts"]["written"] == 0
    for stage in ("extract", "persona", "crisis"):
        rec = json.loads((out / "state" / "en-exam-fail" / f"{stage}.json").read_text("utf-8"))
        assert rec["raw"]
