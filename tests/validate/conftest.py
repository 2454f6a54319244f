"""Fixtures of the validation tests: recorded dialogues over the bundled English scenarios."""

from __future__ import annotations

from pathlib import Path

import pytest
from validate_helpers import write_runs


@pytest.fixture(scope="session")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two run folders (model-a aims at the persona's top priority, model-b at its lowest)."""
    return write_runs(tmp_path_factory.mktemp("validate-runs"))


@pytest.fixture(scope="session")
def runs_zh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same two run folders over the bundled Chinese scenarios, with Chinese replies."""
    return write_runs(tmp_path_factory.mktemp("validate-runs-zh"), language="zh")
