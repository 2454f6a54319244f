"""Fixtures of the Inspect task's tests: the loopback role server and a fresh Inspect home.

The tests need the ``inspect`` extra; each test module skips without it (with the install
command as the reason)."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator

import pytest
from empa_server import RoleServer


@pytest.fixture(scope="module", autouse=True)
def _restore_process_state() -> Iterator[None]:
    """Inspect's eval installs its log handler on the root logger, quiets httpx's loggers
    and replaces sys.excepthook, for the rest of the process: put them back after each
    module, so the tests that run later see the logging they set up themselves."""
    root = logging.getLogger()
    handlers, level, hook = list(root.handlers), root.level, sys.excepthook
    quiet = {name: logging.getLogger(name).level for name in ("httpx", "httpx2")}
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    for name, was in quiet.items():
        logging.getLogger(name).setLevel(was)
    sys.excepthook = hook


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RoleServer]:
    """The role server, and the environment Inspect's ``openai-api`` models read; Inspect's
    data folder (traces, buffers) in a temporary folder, not the home directory."""
    data = tmp_path_factory.mktemp("inspect-data")
    with RoleServer() as running, pytest.MonkeyPatch.context() as env:
        for name, value in running.env().items():
            env.setenv(name, value)
        env.setenv("XDG_DATA_HOME", str(data))
        env.delenv("INSPECT_EVAL_MODEL", raising=False)
        yield running
