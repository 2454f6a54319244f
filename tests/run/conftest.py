"""Fixtures of the ``empathos run`` tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from run_helpers import scripted_roles, write_config


@pytest.fixture
def scripted_config(tmp_path: Path) -> Path:
    """A config running three bundled English cases with every role scripted, 3 turns."""
    return write_config(
        tmp_path / "run.yaml",
        roles=scripted_roles(),
        cases="en-01-sourdough,en-02-night-shift,en-03-lease",
        max_turns=3,
        concurrency=2,
    )
