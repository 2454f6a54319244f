"""A record whose starting point makes the indices undefined is an error of that record,
named and not scored (issue 24): before, P_0 = (0, 0, 0) scored EPM-Q 360 and S_net 2400."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from empathos.examples import examples_dir
from published_factory import GOOD, make_published


def _score(*paths: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "empathos", "score", *map(str, paths), "--format", "json"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_a_zero_start_is_named_and_not_scored(tmp_path: Path) -> None:
    folder = tmp_path / "results" / "tiny"
    folder.mkdir(parents=True)
    flat = folder / "script_001_result.json"
    flat.write_text(json.dumps(make_published([GOOD] * 12, p0=(0, 0, 0))), "utf-8")
    fine = make_published([GOOD] * 12, p0=(-10, -12, -8))
    fine["script_id"] = "script_002"
    (folder / "script_002_result.json").write_text(json.dumps(fine), "utf-8")
    res = _score(tmp_path / "results")
    assert res.returncode == 1
    errors = [x for x in res.stderr.splitlines() if x.startswith("error: ")]
    assert errors == [
        f"error: {flat}: epj.P_0_initial_deficit: degenerate starting point P_0 = (0, 0, 0): "
        "distance to the goal 0.00, below the minimum 5.20 (one judge step; docs/epm.md); "
        "not scored"
    ]
    (row,) = json.loads(res.stdout)
    assert row["n"] == 1  # the other dialogue is scored, and only it
    assert all(0 <= v <= 300 for v in row["indices"].values()), row["indices"]


def test_an_own_record_with_a_tiny_start_is_named(tmp_path: Path) -> None:
    src = examples_dir() / "example-warm" / "ex-new-city.json"
    data = json.loads(src.read_text("utf-8"))
    assert data["termination"]["kind"] != "error"
    data["initial_state"]["P"] = [-1.5, -2.0, 0.0]
    data["iedr"]["P0"] = [-1.5, -2.0, 0.0]
    bad = tmp_path / "model" / "ex-new-city.json"
    bad.parent.mkdir()
    bad.write_text(json.dumps(data), "utf-8")
    res = _score(bad)
    assert res.returncode == 1
    assert f"error: {bad}: iedr.P0: degenerate starting point P_0 = (-1.5, -2, 0)" in res.stderr
