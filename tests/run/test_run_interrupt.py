"""Ctrl-C part-way through a run leaves a directory that the same command resumes."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

from run_helpers import (
    SLOW_CASES,
    empathos,
    gate,
    index_rows,
    manifest,
    slow_config,
    spawn,
    wait_for,
)

from empathos.records import read_record


def test_ctrl_c_then_the_same_command_resumes(tmp_path: Path) -> None:
    config = slow_config(tmp_path)
    out = tmp_path / "out"
    args = ["run", "--config", str(config), "--out", str(out)]
    proc = spawn(*args, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                 env=gate(tmp_path))  # fmt: skip
    try:
        wait_for(lambda: bool(list((out / "records").glob("*.json"))), proc)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    assert "run the same command to resume" in stderr and "Traceback" not in stderr
    finished = index_rows(out)
    assert 1 <= len(finished) < len(SLOW_CASES)
    assert manifest(out)["sessions"][-1]["status"] == "interrupted"
    assert not list((out / "records").glob(".*"))  # no half-written file
    files = sorted((out / "records").glob("*.json"))
    assert {f.stem for f in files} == set(finished)
    stamps = {f.name: f.stat().st_mtime_ns for f in files}
    for f in files:
        read_record(f)  # every file on disk is a complete record

    resumed = empathos(*args, cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    expect = f"{len(finished)} of {len(SLOW_CASES)} dialogue(s) already finished"
    assert expect in resumed.stderr
    assert set(index_rows(out)) == {f"{c}__t0" for c in SLOW_CASES}
    assert {f.name: f.stat().st_mtime_ns for f in files} == stamps  # not redone
    assert [s["status"] for s in manifest(out)["sessions"]] == ["interrupted", "completed"]
