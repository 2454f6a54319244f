"""The main job's command with no arguments: what it says it runs, and where it writes.

The full offline run takes minutes (measured in docs/run.md); this test stops it with
Ctrl-C right after its header, which also checks that an interrupted default run resumes."""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
from run_helpers import manifest, spawn

from empathos.run.config import DEMO_MAX_TURNS
from empathos.scenarios import DEFAULT_BUILTIN_IDS


@pytest.mark.slow
def test_no_arguments_is_the_announced_offline_default(tmp_path: Path) -> None:
    proc = spawn("run", cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    lines: list[str] = []

    def read() -> None:
        assert proc.stderr is not None
        lines.extend(iter(proc.stderr.readline, ""))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        end = time.monotonic() + 120
        while not any("to test a real model" in x for x in lines) and time.monotonic() < end:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        reader.join(10)
        if proc.stderr is not None:
            proc.stderr.close()
    text = "".join(lines)
    assert "offline default" in text and "SmolLM2-135M" in text
    assert f"scenarios: {', '.join(DEFAULT_BUILTIN_IDS)} |" in text
    assert f"turn cap {DEMO_MAX_TURNS}" in text
    assert "--model ID --base-url URL" in text
    assert proc.returncode == 130
    run_dir = tmp_path / "runs" / "offline-demo"
    m = manifest(run_dir)
    assert [s["id"] for s in m["scenarios"]] == list(DEFAULT_BUILTIN_IDS)
    assert {r["kind"] for r in m["config"]["roles"].values() if r} == {"offline"}
    assert m["sessions"][-1]["status"] == "interrupted"
