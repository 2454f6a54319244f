"""A real SIGTERM part-way through `empathos bench sage`: the finished dialogues are kept,
the command says how to resume and exits 143, and the same command then plays only the
missing dialogue and ends with the records, SAGE-layout file and numbers of a run that was
never interrupted."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench_helpers import ScriptedServer, cli, subprocess_env
from sage_fixture import scripted, write_sage


def _held(body: dict[str, Any]) -> bool:
    """p3's first reply of the model under test waits for the gate."""
    return body["model"] == "tested" and "hello from p3" in json.dumps(body, ensure_ascii=False)


def _args(url: str, data: Path, out: Path) -> list[str]:
    return [
        "bench", "sage", "--data", str(data), "--model", "tested", "--base-url", url,
        "--roles-model", "sim", "--roles-base-url", url, "--out", str(out), "--concurrency", "4",
    ]  # fmt: skip


def _stable(out: Path) -> dict[str, Any]:
    """A record without what differs between two runs (times, latencies)."""
    out_records = {}
    for f in sorted((out / "records").glob("*.json")):
        r = json.loads(f.read_text())
        r.pop("finished_at")
        for c in r["model_calls"]:
            c.pop("latency_s")
            c["metadata"].pop("started_at")
        out_records[f.name] = r
    return out_records


def test_sigterm_then_resume_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    data = write_sage(tmp_path / "copy")
    out, full = tmp_path / "run", tmp_path / "full"
    records = out / "records"
    with ScriptedServer(scripted, hold=_held) as server:
        proc = subprocess.Popen(
            [sys.executable, "-m", "empathos", *_args(server.url, data, out)],
            cwd=tmp_path, env=subprocess_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        try:
            end = time.monotonic() + 60
            while not (
                {f.name for f in records.glob("*.json")} == {"p1__t0.json", "p2__t0.json",
                                                             "p4__t0.json"}
                and any(_held(b) for b in server.bodies)
            ):  # fmt: skip
                assert proc.poll() is None and time.monotonic() < end, proc.communicate()
                time.sleep(0.05)
            proc.send_signal(signal.SIGTERM)
            _, stderr = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == 143, stderr
        assert "Traceback" not in stderr, stderr
        assert "interrupted (SIGTERM): 3 item(s) finished in this session are kept" in stderr
        manifest = json.loads((out / "manifest.json").read_text())
        assert [s["status"] for s in manifest["sessions"]] == ["interrupted"]
        partial = (out / "sage" / "tested_result.jsonl").read_text(encoding="utf-8")
        assert [json.loads(x)["id"] for x in partial.splitlines()] == ["p1", "p2", "p4"]

        server.open_gate()
        before = len(server.bodies)
        assert cli(*_args(server.url, data, out)).exit_code == 0
        assert all("p3" in json.dumps(b) for b in server.bodies[before:])  # only what is missing
        assert cli(*_args(server.url, data, full)).exit_code == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert [s["status"] for s in manifest["sessions"]] == ["interrupted", "completed"]
    assert _stable(out) == _stable(full)
    layout = "sage/tested_result.jsonl"
    assert (out / layout).read_text(encoding="utf-8") == (full / layout).read_text(encoding="utf-8")
    scores = [json.loads(cli("bench", "score", d, "--format", "json").stdout) for d in (out, full)]
    assert scores[0] == scores[1] and scores[0][0]["sage"]["dialogues"] == 4
