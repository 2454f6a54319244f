"""Fixtures of the Inspect task's tests: the loopback role server and a fresh Inspect home.

The tests need the ``inspect`` extra; each test module skips without it (with the install
command as the reason)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from empa_server import RoleServer


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
