"""Ctrl-C part-way through a run leaves a directory that the same command resumes."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

from run_helpers import empathos, index_rows, manifest, scripted_roles, spawn, write_config

from empathos.records import read_record

CASES = (
    "en-01-sourdough",
    "en-02-night-shift",
    "en-03-lease",
    "en-04-diagnosis",
    "en-05-choir",
    "en-06-faith",
)


def _wait_for_records(records: Path, proc: subprocess.Popen[str], deadline_s: float) -> None:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end and proc.poll() is None:
        if list(records.glob("*.json")):
            return
        time.sleep(0.05)
    raise AssertionError("no record appeared before the deadline")


def test_ctrl_c_then_the_same_command_resumes(tmp_path: Path) -> None:
    slow = {role: "slow" for role in ("user", "director", "judge", "model_under_test")}
    config = write_config(
        tmp_path / "run.yaml",
        roles=scripted_roles(**slow),
        cases=",".join(CASES),
        max_turns=4,
        concurrency=1,
    )
    out = tmp_path / "out"
    args = ["run", "--config", str(config), "--out", str(out)]
    proc = spawn(*args, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _wait_for_records(out / "records", proc, deadline_s=60)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    assert "run the same command to resume" in stderr and "Traceback" not in stderr
    finished = index_rows(out)
    assert 1 <= len(finished) < len(CASES)
    assert manifest(out)["sessions"][-1]["status"] == "interrupted"
    assert not list((out / "records").glob(".*"))  # no half-written file
    files = sorted((out / "records").glob("*.json"))
    assert {f.stem for f in files} == set(finished)
    stamps = {f.name: f.stat().st_mtime_ns for f in files}
    for f in files:
        read_record(f)  # every file on disk is a complete record

    resumed = empathos(*args, cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    expect = f"{len(finished)} of {len(CASES)} dialogue(s) already finished"
    assert expect in resumed.stderr
    assert set(index_rows(out)) == {f"{c}__t0" for c in CASES}
    assert {f.name: f.stat().st_mtime_ns for f in files} == stamps  # not redone
    assert [s["status"] for s in manifest(out)["sessions"]] == ["interrupted", "completed"]
