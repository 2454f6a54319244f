"""Fixtures of the conformance suite: the reference every door is compared with (the
``empathos run`` door, once per session) and the process state Inspect changes."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator

import pytest
from every_door import Outcome, reference


@pytest.fixture(scope="session")
def ref(tmp_path_factory: pytest.TempPathFactory) -> Outcome:
    return reference(tmp_path_factory.mktemp("reference"))


@pytest.fixture(scope="module", autouse=True)
def _restore_process_state() -> Iterator[None]:
    """Inspect's eval installs its log handler on the root logger, quiets httpx's loggers and
    replaces sys.excepthook for the rest of the process: put them back after each module."""
    root = logging.getLogger()
    handlers, level, hook = list(root.handlers), root.level, sys.excepthook
    quiet = {name: logging.getLogger(name).level for name in ("httpx", "httpx2")}
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    for name, was in quiet.items():
        logging.getLogger(name).setLevel(was)
    sys.excepthook = hook
