"""SIGTERM stops a run cleanly also when SIGINT was inherited as ignored (a job started in
the background by a shell script, where asyncio installs no SIGINT handler of its own): no
traceback, exit 143, the finished dialogues kept (issue 33)."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from run_helpers import cli_env, gate, index_rows, manifest, slow_config, wait_for


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def test_sigterm_with_sigint_ignored_stops_without_a_traceback(tmp_path: Path) -> None:
    config = slow_config(tmp_path)
    out = tmp_path / "out"
    command = [sys.executable, "-m", "empathos", "run", "--config", str(config), "--out", str(out)]
    proc = subprocess.Popen(
        command, cwd=tmp_path, env=cli_env(gate(tmp_path)), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, preexec_fn=_ignore_sigint,
    )  # fmt: skip
    try:
        wait_for(lambda: len(list((out / "records").glob("*.json"))) >= 2, proc)
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143, stderr
    assert "Traceback" not in stderr and "never retrieved" not in stderr
    assert "interrupted (SIGTERM)" in stderr and "run the same command to resume" in stderr
    session = manifest(out)["sessions"][-1]
    assert session["status"] == "interrupted"
    assert session["ran"] == len(index_rows(out)) < 6  # stopped part-way, not run to the end
