"""Fixtures of the TRL tests: MAPOTrainer.train() on a tiny randomly initialised model (built
from a config, the bundled model's tokenizer, nothing downloaded) with scripted roles. Each
run is made once per session and shared by the tests that read it."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("trl", reason="TRL is not installed (the empathos[trl] extra)")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")  # rollout_func is "experimental"

from trl_run import Run, run_trainer


@pytest.fixture(scope="session")
def mapo_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return run_trainer(tmp_path_factory.mktemp("mapo"), estimator="mapo")


@pytest.fixture(scope="session")
def grpo_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    # TRL's KL term (beta, reference = the adapter switched off) and another loss_type
    return run_trainer(tmp_path_factory.mktemp("grpo"), estimator="grpo", beta=0.04,
                       loss_type="grpo")  # fmt: skip
