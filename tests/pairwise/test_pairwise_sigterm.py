"""``compare --pairwise`` stops on SIGTERM as ``empathos run`` does (issue 47): the judge
calls that ended are kept, one line says so, exit 143; also as a background job (SIGINT
inherited as ignored), where asyncio installs no Ctrl-C handler."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pairwise_helpers import JudgeServer, judge_flags, judgements, write_run


def _prefers_a(first: str, second: str) -> str:
    return "first" if "[a]" in first else "second"


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize("background", [False, True])
def test_sigterm_keeps_the_judge_calls_that_ended(tmp_path: Path, background: bool) -> None:
    runs = [
        str(write_run(tmp_path / m, m, ["s1", "s2", "s3"], lambda s, t, m=m: f"[{m}] {s} {t}"))
        for m in ("a", "b", "c")
    ]
    out = tmp_path / "pw"
    args = ["compare", "--pairwise", *runs, "--out", str(out), "--concurrency", "1"]
    with JudgeServer(_prefers_a, hang_after=3) as server:
        proc = subprocess.Popen(
            [sys.executable, "-m", "empathos", *args, "--bootstrap", "20",
             *judge_flags(server.url)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            preexec_fn=_ignore_sigint if background else None,
        )  # fmt: skip
        deadline = time.monotonic() + 120
        while len(server.requests) < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert "Traceback" not in err and "never retrieved" not in err
    assert len(judgements(out)) == 3
    assert f"interrupted (SIGTERM): 3 judge call(s) in this session are kept in {out}" in err
