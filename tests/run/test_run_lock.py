"""One run directory, one writer; SIGTERM like Ctrl-C; a killed session is not "running"."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
from pathlib import Path

import pytest
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

from empathos.errors import ConfigError
from empathos.run.lock import RunLock


def _records(out: Path) -> list[Path]:
    return sorted((out / "records").glob("*.json"))


def test_a_second_run_on_the_same_directory_is_refused_naming_the_holder(
    tmp_path: Path,
) -> None:
    config = slow_config(tmp_path, trials=20)  # long enough to outlast the second
    out = tmp_path / "out"
    args = ["run", "--config", str(config), "--out", str(out)]
    first = spawn(*args, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for(lambda: (out / "manifest.json").is_file(), first)
        second = empathos(*args, cwd=tmp_path, timeout=120)
        assert first.poll() is None, "the first run should still be running"
    finally:
        first.kill()
        first.communicate(timeout=60)
    assert second.returncode == 2, second.stderr
    lines = second.stderr.strip().splitlines()
    assert len(lines) == 1, second.stderr
    assert "in use by another empathos run" in lines[0]
    assert f"pid {first.pid}" in lines[0] and socket.gethostname() in lines[0]
    assert "Traceback" not in second.stderr
    # the refused run changed nothing: one session, the first one's
    assert len(manifest(out)["sessions"]) == 1


def test_a_run_killed_with_sigkill_is_taken_over_and_shown_interrupted(tmp_path: Path) -> None:
    config = slow_config(tmp_path)
    out = tmp_path / "out"
    args = ["run", "--config", str(config), "--out", str(out)]
    proc = spawn(*args, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                 env=gate(tmp_path))  # fmt: skip
    try:
        wait_for(lambda: len(_records(out)) >= 2, proc)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    killed_ran = len(index_rows(out))
    assert manifest(out)["sessions"][-1]["status"] == "running"  # nobody could say otherwise

    resumed = empathos(*args, cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert f"pid {proc.pid}" in resumed.stderr and "was killed" in resumed.stderr
    sessions = manifest(out)["sessions"]
    assert [s["status"] for s in sessions] == ["interrupted", "completed"]
    assert sessions[0]["ran"] == killed_ran >= 2
    assert sessions[1]["ran"] == len(SLOW_CASES) - killed_ran
    assert set(index_rows(out)) == {f"{c}__t0" for c in SLOW_CASES}


def test_sigterm_stops_the_run_like_ctrl_c_and_counts_what_it_finished(tmp_path: Path) -> None:
    config = slow_config(tmp_path)
    out = tmp_path / "out"
    args = ["run", "--config", str(config), "--out", str(out)]
    proc = spawn(*args, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                 env=gate(tmp_path))  # fmt: skip
    try:
        wait_for(lambda: len(_records(out)) >= 2, proc)
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143, stderr
    assert "run the same command to resume" in stderr and "Traceback" not in stderr
    session = manifest(out)["sessions"][-1]
    assert session["status"] == "interrupted"
    assert session["finished_at"] is not None
    assert session["ran"] == len(index_rows(out)) >= 2
    # the lock was released: the same command resumes at once
    resumed = empathos(*args, cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert "was killed" not in resumed.stderr


def test_ctrl_c_counts_the_dialogues_the_session_finished(tmp_path: Path) -> None:
    config = slow_config(tmp_path)
    out = tmp_path / "out"
    args = ["run", "--config", str(config), "--out", str(out)]
    proc = spawn(*args, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                 env=gate(tmp_path))  # fmt: skip
    try:
        wait_for(lambda: len(_records(out)) >= 2, proc)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    session = manifest(out)["sessions"][-1]
    assert session["status"] == "interrupted"
    assert session["ran"] == len(index_rows(out)) >= 2


def test_the_lock_is_exclusive_within_one_process_too_and_free_after_release(
    tmp_path: Path,
) -> None:
    held = RunLock.acquire(tmp_path, "2026-01-01T00:00:00+00:00")
    with pytest.raises(ConfigError, match=f"pid {os.getpid()}"):
        RunLock.acquire(tmp_path, "later")
    held.release()
    again = RunLock.acquire(tmp_path, "later")
    assert again.previous is None  # released cleanly: nobody was killed
    again.release()
