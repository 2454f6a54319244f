"""A real Ctrl-C or SIGTERM part-way through `empathos bench eqbench`: the finished items are
kept, the command says how to resume (the one line of every campaign, exit 130 or 143), and the
same command then asks only for the missing item and ends with the scores of a run that was
never interrupted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from bench_helpers import (
    ScriptedServer,
    cli,
    last_user,
    ratings_text,
    subprocess_env,
    write_eq_questions,
)
from emobench_fixture import write_emobench


def _question(body: dict[str, Any]) -> str:
    return last_user(body).split(":")[0].removeprefix("Question ")


def _model(body: dict[str, Any]) -> str:
    qid = _question(body)
    return ratings_text(qid, {"1": 1, "2": 0, "3": 2}[qid])


def _args(url: str, data: Path, out: Path) -> list[str]:
    return [
        "bench", "eqbench", "--data", str(data), "--model", "rater", "--base-url", url,
        "--out", str(out), "--concurrency", "2",
    ]  # fmt: skip


def _summary(out: Path) -> Any:
    result = cli("bench", "score", out, "--format", "json")
    assert result.exit_code == 0, result.error
    (summary,) = json.loads(result.stdout)
    return summary


def _foreground() -> None:
    """A terminal's foreground job: SIGINT at its default (also when the tests themselves run
    in a background job that inherited it as ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _ignore_sigint() -> None:
    """A background job's start: SIGINT inherited as ignored (asyncio installs no handler)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize(
    ("sig", "how", "code", "background"),
    [
        (signal.SIGINT, "Ctrl-C", 130, False),
        (signal.SIGTERM, "SIGTERM", 143, False),
        (signal.SIGTERM, "SIGTERM", 143, True),
    ],
    ids=["ctrl-c", "sigterm", "sigterm-background"],
)
def test_a_stop_keeps_finished_items_and_the_same_command_runs_only_the_rest(
    tmp_path: Path, sig: signal.Signals, how: str, code: int, background: bool
) -> None:
    write_eq_questions(tmp_path)
    out, full = tmp_path / "run", tmp_path / "full"
    records = out / "records"
    with ScriptedServer(_model, hold=lambda body: _question(body) == "3") as server:
        proc = subprocess.Popen(
            [sys.executable, "-m", "empathos", *_args(server.url, tmp_path, out)],
            cwd=tmp_path, env=subprocess_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True,
            preexec_fn=_ignore_sigint if background else _foreground,
        )  # fmt: skip
        try:
            # Questions 1 and 2 finished, question 3 held in flight by the server: Ctrl-C.
            end = time.monotonic() + 60
            while not (
                {f.name for f in records.glob("*.json")} == {"1__t0.json", "2__t0.json"}
                and "3" in {_question(b) for b in server.bodies}
            ):
                assert proc.poll() is None and time.monotonic() < end, proc.communicate()
                time.sleep(0.05)
            proc.send_signal(sig)
            _, stderr = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == code, stderr
        assert "Traceback" not in stderr, stderr
        assert (
            f"interrupted ({how}): 2 item(s) finished in this session are kept in {out}; "
            "run the same command to resume"
        ) in stderr, stderr
        assert sorted(f.name for f in records.iterdir()) == ["1__t0.json", "2__t0.json"]
        stamps = {f.name: f.stat().st_mtime_ns for f in records.iterdir()}
        manifest = json.loads((out / "manifest.json").read_text())
        assert [s["status"] for s in manifest["sessions"]] == ["interrupted"]

        server.open_gate()  # the endpoint answers question 3 from now on
        before = len(server.bodies)
        resumed = cli(*_args(server.url, tmp_path, out))
        assert resumed.exit_code == 0, resumed.error
        assert [_question(b) for b in server.bodies[before:]] == ["3"]  # only what is missing
        done = cli(*_args(server.url, tmp_path, full))  # the same run, never interrupted
        assert done.exit_code == 0, done.error
    assert {f.name: f.stat().st_mtime_ns for f in records.glob("[12]__t0.json")} == stamps
    manifest = json.loads((out / "manifest.json").read_text())
    assert [s["status"] for s in manifest["sessions"]] == ["interrupted", "completed"]
    resumed_summary, full_summary = _summary(out), _summary(full)
    assert resumed_summary["eqbench"]["total"] == 3 and resumed_summary["errors"] == 0
    assert resumed_summary == full_summary


def test_a_sigterm_while_preparing_stops_with_the_same_line(tmp_path: Path) -> None:
    """SIGTERM before any item runs (here: reading the user's copy, held by a FIFO that
    never gets its content) stops the command as a stop mid-run does, not silently."""
    data = write_emobench(tmp_path / "emobench")
    prompts = data / "src" / "configs" / "prompts.yaml"
    prompts.unlink()
    os.mkfifo(prompts)
    out = tmp_path / "run"
    proc = subprocess.Popen(
        [sys.executable, "-m", "empathos", "bench", "emobench", "--data", str(data),
         "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--out", str(out)],
        cwd=tmp_path, env=subprocess_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_foreground,
    )  # fmt: skip
    writer = None
    try:
        end = time.monotonic() + 60
        while writer is None:  # opening for writing succeeds once the command opens to read
            assert proc.poll() is None and time.monotonic() < end, proc.communicate()
            try:
                writer = os.open(prompts, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                time.sleep(0.02)
        proc.send_signal(signal.SIGTERM)  # the command waits in that read, preparing
        _, stderr = proc.communicate(timeout=60)
    finally:
        if writer is not None:
            os.close(writer)
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143, stderr
    assert "Traceback" not in stderr, stderr
    assert (
        f"interrupted (SIGTERM): 0 item(s) finished in this session are kept in {out}; "
        "run the same command to resume"
    ) in stderr, stderr
