"""The sandbox as verl's interaction, created through verl's interaction registry (verl env)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml

pytest.importorskip("verl", reason="verl is not installed (the empathos[verl] environment)")

from verl.interactions.utils.interaction_registry import (
    initialize_interactions_from_config,
)

from empathos.llm import EndpointConfig, build_model
from empathos.sandbox import EmpathyEnv
from empathos.sandbox.config import Roles, SandboxConfig
from empathos.scenarios import load_scenarios

SANDBOX = {"max_turns": 6, "min_turns": 2, "director": "rules"}
SCRIPTED = {"kind": "scripted"}


def _interaction(tmp_path: Path) -> object:
    config = {
        "interaction": [
            {
                "name": "empathos",
                "class_name": "empathos.integrations.verl.interaction.EmpathyInteraction",
                "config": {
                    "roles": {"user": SCRIPTED, "judge": SCRIPTED},
                    "sandbox": SANDBOX,
                    "scenarios": "builtin",
                },
            }
        ]
    }
    path = tmp_path / "interaction.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return initialize_interactions_from_config(str(path))["empathos"]


REPLIES = [
    "That sounds really hard. What happened?",
    "I hear how tired you are.",
    "It makes sense you feel that way.",
    "What would help most right now?",
    "You handled a lot today.",
    "I'm here with you.",
]


async def _drive(interaction: object, scenario_id: str) -> tuple[list[float], bool, int]:
    iid = await interaction.start_interaction("req-1", scenario_id=scenario_id)  # type: ignore[attr-defined]
    messages: list[dict[str, str]] = [{"role": "user", "content": "opening"}]
    rewards: list[float] = []
    done = False
    for reply in REPLIES:
        messages.append({"role": "assistant", "content": reply})
        done, user_line, reward, _info = await interaction.generate_response(iid, messages)  # type: ignore[attr-defined]
        rewards.append(reward)
        if done:
            break
        assert user_line, "the simulated user answered"
        messages.append({"role": "user", "content": user_line})
    await interaction.finalize_interaction(iid)  # type: ignore[attr-defined]
    return rewards, done, len(interaction._envs)  # type: ignore[attr-defined]


async def test_interaction_runs_whole_dialogues_and_matches_the_environment(
    tmp_path: Path,
) -> None:
    interaction = _interaction(tmp_path)
    scenario = load_scenarios("builtin", kind="builtin").scenarios[0]
    rewards, done, left = await _drive(interaction, scenario.id)
    assert done, "the dialogue ended within max_turns"
    assert left == 0, "finalize released the environment"
    # The same replies straight through EmpathyEnv with the same scripted roles.
    roles = Roles(
        user=build_model(EndpointConfig(kind="scripted"), "user"),
        judge=build_model(EndpointConfig(kind="scripted"), "judge"),
    )
    env = EmpathyEnv(roles, SandboxConfig(**SANDBOX))
    await env.reset(scenario)
    direct: list[float] = []
    for reply in REPLIES[: len(rewards)]:
        step = await env.step(reply)
        direct.append(step.reward if step.info.evaluated and step.info.reward_valid else math.nan)
    assert env.done
    assert len(direct) == len(rewards)
    for a, b in zip(rewards, direct, strict=True):
        assert (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b)
    assert any(math.isfinite(r) for r in rewards), "the judge scored some turns"


async def test_unknown_scenario_is_a_clear_error(tmp_path: Path) -> None:
    from empathos.errors import ConfigError

    interaction = _interaction(tmp_path)
    with pytest.raises(ConfigError, match="unknown scenario"):
        await interaction.start_interaction("r", scenario_id="no-such")  # type: ignore[attr-defined]
