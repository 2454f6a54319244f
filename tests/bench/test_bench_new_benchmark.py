"""Adding a benchmark is one module and one registry line: a benchmark of the tests' own
(tests/bench/toy) gets `bench <name>` (a locked, resumable run directory like the others'),
its `score` of published files and `bench score` without any other change."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench_helpers import ScriptedServer, last_user, subprocess_env

TOY = Path(__file__).parent / "toy"


def _empathos(*args: str | Path) -> subprocess.CompletedProcess[str]:
    path = os.pathsep.join([str(TOY), *filter(None, [os.environ.get("PYTHONPATH")])])
    env = subprocess_env(PYTHONPATH=path)
    return subprocess.run(
        [sys.executable, str(TOY / "with_toy.py"), *map(str, args)],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip


def _answer(body: dict[str, Any]) -> str:
    a, b = (int(x) for x in last_user(body).removeprefix("What is ").rstrip("?").split(" + "))
    return str(a + b if a < 5 else a + b + 1)  # wrong from 5 on


def test_a_registered_module_is_a_whole_benchmark(tmp_path: Path) -> None:
    (tmp_path / "sums.txt").write_text("1 2\n3 4\n5 6\n7 8\n")
    out = tmp_path / "run"
    with ScriptedServer(_answer) as server:
        ran = _empathos("bench", "toy", "--data", tmp_path, "--model", "adder",
                        "--base-url", server.url, "--out", out)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert "toy: 4 of 4 item(s) to run" in ran.stderr
    assert "usage per item (4): 1.0 calls" in ran.stderr  # a bench counts items, not dialogues
    records = {f.name: json.loads(f.read_text()) for f in (out / "records").glob("*.json")}
    assert {k: r["scores"]["right"] for k, r in records.items()} == {
        "s0__t0.json": 1.0, "s1__t0.json": 1.0, "s2__t0.json": 0.0, "s3__t0.json": 0.0,
    }  # fmt: skip
    assert json.loads((out / "manifest.json").read_text())["bench"]["name"] == "toy"

    scored = _empathos("bench", "score", out, "--format", "json")
    assert scored.returncode == 0, scored.stderr
    (summary,) = json.loads(scored.stdout)
    assert summary["bench"] == "toy" and summary["measures"]["right"]["value"] == 50.0

    (tmp_path / "published.txt").write_text("1 0 1 1\n")
    published = _empathos("bench", "toy", "score", tmp_path / "published.txt", "--format", "json")
    assert published.returncode == 0, published.stderr
    assert json.loads(published.stdout) == [
        {"file": str(tmp_path / "published.txt"), "right": 75.0}
    ]
