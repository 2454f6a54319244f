"""Shared fixtures.

The published EMPA sample is read through EMPATHOS_EMPA_SAMPLE (set by .ci/run); the other
benchmarks' samples through EMPATHOS_EMOBENCH_SAMPLE, EMPATHOS_EQBENCH_V2_SAMPLE and
EMPATHOS_EQBENCH3_SAMPLE and EMPATHOS_SAGE_SAMPLE (set by scripts/test.sh from ../shared/data)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# One torch thread per test process unless the caller says otherwise: the default (every usable
# core) would have parallel workers' threads spin against each other (docs/models.md,
# "Threads"); scripts/test.sh sets the same. Subprocesses the tests start inherit it.
os.environ.setdefault("EMPATHOS_TORCH_THREADS", "1")


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


def _sample(variable: str, marker: str) -> Path:
    value = os.environ.get(variable)
    if not value:
        pytest.skip(f"{variable} is not set (the sample is not available)")
    path = Path(value)
    if not (path / marker).exists():
        pytest.skip(f"{variable}={path} holds no {marker}")
    return path


@pytest.fixture(scope="session")
def emobench_sample() -> Path:
    """Path of the EmoBench sample (its repository's layout); skips when absent."""
    return _sample("EMPATHOS_EMOBENCH_SAMPLE", "data/EU.jsonl")


@pytest.fixture(scope="session")
def eqbench_v2_sample() -> Path:
    """Path of the EQ-Bench v2 sample (questions and three published result files)."""
    return _sample("EMPATHOS_EQBENCH_V2_SAMPLE", "results/eq-bench")


@pytest.fixture(scope="session")
def eqbench3_sample() -> Path:
    """Path of the EQ-Bench 3 sample (its data/ text files); skips when absent."""
    return _sample("EMPATHOS_EQBENCH3_SAMPLE", "data/scenario_prompts.txt")


@pytest.fixture(scope="session")
def sage_sample() -> Path:
    """Path of the SAGE sample (its SAGE/ folder: code, profiles, two result files); skips
    when absent."""
    return _sample("EMPATHOS_SAGE_SAMPLE", "simulator_response.py")
