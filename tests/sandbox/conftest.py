"""Fixtures of the sandbox tests."""

from __future__ import annotations

import pytest

from empathos.llm.offline import OfflineModel, load_offline_model


@pytest.fixture(scope="session")
def offline_lm() -> OfflineModel:
    """The bundled offline model, loaded once per test session (one instance per process)."""
    return load_offline_model()
