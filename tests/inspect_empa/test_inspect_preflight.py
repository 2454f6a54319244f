"""``inspect eval empathos/empa`` stops before its first sample, with one line and a non-zero
exit, when a role is bound to nothing or a model's server refuses connections; and the task
uses Inspect's public API only."""

from __future__ import annotations

import ast
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="needs the inspect extra: pip install 'empathos[inspect]'")

from empa_server import RoleServer, model_name

import empathos.integrations.inspect as package

INSPECT = Path(sys.executable).with_name("inspect")


def _eval(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    command = [
        str(INSPECT), "eval", "empathos/empa", "--model", model_name("tested"),
        "-T", "cases=en-01-sourdough", "-T", "max_turns=3", "-T", "min_turns=2",
        "--log-dir", str(tmp_path), "--display", "plain", *args,
    ]  # fmt: skip
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=300, env={**os.environ, **(env or {})}
    )
    return done.returncode, done.stdout + done.stderr


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _one_message(output: str) -> str:
    """The output as one line (Inspect wraps a long message at the terminal's width)."""
    assert "Traceback" not in output, output
    return " ".join(output.split())


def test_a_role_bound_to_nothing_stops_inspect_eval(server: RoleServer, tmp_path: Path) -> None:
    rc, output = _eval(tmp_path, "--model-role", f"judge={model_name('judge')}")
    assert rc == 1, output
    assert _one_message(output) == (
        "empathos/empa: no model for the role(s) user, director: pass --model-role "
        "user=MODEL --model-role director=MODEL (or -T roles=MODEL for every sandbox role)"
    )
    assert not list(tmp_path.iterdir())  # stopped before the eval began: no log
    assert not server.requests("tested")


def test_a_server_that_refuses_connections_stops_inspect_eval(
    server: RoleServer, tmp_path: Path
) -> None:
    closed = f"http://127.0.0.1:{_closed_port()}/v1"
    rc, output = _eval(
        tmp_path,
        "--model-role", f"judge={model_name('judge')}", "-T", f"roles={model_name('sandbox')}",
        env={"JUDGE_BASE_URL": closed},
    )  # fmt: skip
    assert rc == 1, output
    assert _one_message(output) == (
        f"empathos/empa: the judge role, {model_name('judge')}: connection refused by "
        f"{closed} (is the server running?)"
    )
    assert not list(tmp_path.iterdir())


def test_the_task_imports_no_private_inspect_module() -> None:
    """Only Inspect's public modules: a private one (``inspect_ai._util``...) may change in
    any 0.3.x release the extra allows."""
    private = []
    for path in Path(package.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            private += [
                f"{path.name}: {n}" for n in names if n.startswith("inspect_ai") and "._" in n
            ]
    assert not private
