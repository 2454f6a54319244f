"""Fixtures of the validation tests: recorded dialogues over the bundled English scenarios."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from validate_helpers import write_runs  # noqa: E402


@pytest.fixture(scope="session")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two run folders (model-a aims at the persona's top priority, model-b at its lowest)."""
    return write_runs(tmp_path_factory.mktemp("validate-runs"))
