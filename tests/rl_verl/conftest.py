"""Fixtures of the verl tests (verl env): the bundled model, verl's config, one generation step
of real dialogues (made once per session: it loads the model and generates, tens of seconds)."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("verl", reason="verl is not installed (the empathos[verl] environment)")

from empathos.llm.local import LocalPolicy, load_policy


@pytest.fixture(scope="session")
def policy() -> LocalPolicy:
    return load_policy(None)


@pytest.fixture(scope="session")
def trainer_config() -> Any:
    from verl_setup import trainer_config

    return trainer_config()


@pytest.fixture(scope="session")
def rollouts(
    trainer_config: Any, policy: LocalPolicy, tmp_path_factory: pytest.TempPathFactory
) -> Any:
    from verl_setup import make_rollouts

    return make_rollouts(trainer_config, policy, tmp_path_factory.mktemp("verl-data"))
