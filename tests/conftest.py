"""Shared fixtures.

The published EMPA sample is read through EMPATHOS_EMPA_SAMPLE (set by .ci/run)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def empa_sample() -> Path:
    """Path of the published EMPA sample; skips when it is not available."""
    value = os.environ.get("EMPATHOS_EMPA_SAMPLE")
    if not value:
        pytest.skip("EMPATHOS_EMPA_SAMPLE is not set (the published EMPA sample is not available)")
    path = Path(value)
    if not (path / "results").is_dir():
        pytest.skip(f"EMPATHOS_EMPA_SAMPLE={path} holds no results/ folder")
    return path
