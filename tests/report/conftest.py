"""Fixtures of the report tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from report_helpers import empathos

from empathos.examples import examples_dir


@pytest.fixture(scope="session")
def examples_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A report of the bundled example records."""
    out = tmp_path_factory.mktemp("examples-report")
    res = empathos("report", str(examples_dir()), "--out", str(out))
    assert res.returncode == 0, res.stderr
    return out
