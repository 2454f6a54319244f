"""Helpers of the ``empathos run`` tests: the CLI as a subprocess, run configs on disk."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml
from run_handlers import GATE_ENV

from empathos.llm.testing import served as serve_subprocess

HANDLERS = Path(__file__).with_name("run_handlers.py").resolve()
ROLES = ("user", "director", "judge", "model_under_test")


def scripted_roles(**handlers: str) -> dict[str, dict[str, Any]]:
    """Every role scripted (auto replies); ``role=function`` names a handler in run_handlers.py."""
    roles: dict[str, dict[str, Any]] = {}
    for role in ROLES:
        entry: dict[str, Any] = {"kind": "scripted", "model": f"scripted-{role}"}
        if role in handlers:
            entry["handler"] = f"{HANDLERS}:{handlers[role]}"
        entry["retry"] = {"max_attempts": 1}
        roles[role] = entry
    return roles


def write_config(path: Path, **fields: Any) -> Path:
    """A run config YAML file."""
    path.write_text(yaml.safe_dump(fields, sort_keys=False), encoding="utf-8")
    return path


def cli_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a CLI subprocess: no EMPATHOS_* run settings leak in (only the
    cache directory, where the offline model's converted copy lives); a wide terminal."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("EMPATHOS_")}
    if "EMPATHOS_CACHE_DIR" in os.environ:
        env["EMPATHOS_CACHE_DIR"] = os.environ["EMPATHOS_CACHE_DIR"]
    return {**env, "COLUMNS": "200", **(extra or {})}


def spawn(
    *args: str | Path,
    cwd: Path,
    stdout: int,
    stderr: int,
    env: Mapping[str, str] | None = None,
) -> subprocess.Popen[str]:
    """Start the ``empathos`` CLI in a subprocess (for tests that signal or stop it)."""
    command = [sys.executable, "-m", "empathos", *map(str, args)]
    return subprocess.Popen(
        command, cwd=cwd, env=cli_env(env), stdout=stdout, stderr=stderr, text=True,
        preexec_fn=foreground,
    )  # fmt: skip


def foreground() -> None:
    """A terminal's foreground job: Ctrl-C's SIGINT at its default, even when the tests run
    in a background job that inherited it as ignored (the command then gets its own handler,
    as a user's does)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def empathos(
    *args: str | Path, cwd: Path, env: Mapping[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """Run the ``empathos`` CLI in a subprocess and wait for it."""
    return subprocess.run(
        [sys.executable, "-m", "empathos", *map(str, args)],
        cwd=cwd,
        env=cli_env(env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def index_rows(run_dir: Path) -> dict[str, dict[str, Any]]:
    """The rows of a run directory's SQLite index, by dialogue id."""
    with sqlite3.connect(run_dir / "index.sqlite") as db:
        db.row_factory = sqlite3.Row
        rows = db.execute("SELECT * FROM dialogues").fetchall()
    return {r["dialogue_id"]: dict(r) for r in rows}


def manifest(run_dir: Path) -> dict[str, Any]:
    """The parsed manifest.json."""
    data: dict[str, Any] = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    return data


@contextmanager
def served(backend: str, cwd: Path, startup_s: float = 180) -> Iterator[str]:
    """``empathos serve --backend BACKEND`` on a free port, in the CLI tests' environment."""
    # The roles ask for the offline model's id: the scripted backend answers to it too.
    names = ("--served-model-name", "smollm2-135m-instruct") if backend == "scripted" else ()
    with serve_subprocess(
        "--backend", backend, *names, startup_s=startup_s, cwd=cwd, env=cli_env()
    ) as url:
        yield url


def openai_roles(url: str, **fields: Any) -> dict[str, dict[str, Any]]:
    """Every role on one OpenAI-compatible endpoint (extra fields apply to each role)."""
    return {
        role: {"kind": "openai", "base_url": url, "model": "smollm2-135m-instruct", **fields}
        for role in ROLES
    }


# Six short bundled cases for the run-control tests (Ctrl-C, SIGTERM, SIGKILL, the lock).
SLOW_CASES = (
    "en-01-sourdough",
    "en-02-night-shift",
    "en-03-lease",
    "en-04-diagnosis",
    "en-05-choir",
    "en-06-faith",
)


def slow_config(tmp_path: Path, trials: int = 1) -> Path:
    """A run of :data:`SLOW_CASES` whose every role answers slowly, one dialogue at a time,
    so a signal sent after the first record lands part-way."""
    slow = {role: "slow" for role in ("user", "director", "judge", "model_under_test")}
    return write_config(
        tmp_path / "run.yaml",
        roles=scripted_roles(**slow),
        cases=",".join(SLOW_CASES),
        max_turns=4,
        concurrency=1,
        trials=trials,
    )


def gate(tmp_path: Path) -> dict[str, str]:
    """Close the gate of ``run_handlers.slow`` (cases after the first two run slowly while
    it is closed) and return the environment that points a run at it; remove the file
    (``(tmp_path / "gate").unlink()``) to open it."""
    path = tmp_path / "gate"
    path.touch()
    return {GATE_ENV: str(path)}


def wait_for(
    condition: Callable[[], bool], proc: subprocess.Popen[str], deadline_s: float = 60
) -> None:
    """Poll ``condition`` until it holds; fail if ``proc`` exits or the deadline passes."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end and proc.poll() is None:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError("the condition was not met before the deadline")
