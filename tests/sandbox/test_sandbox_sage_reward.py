"""SAGE's emotion as the sandbox's reward source: with ``reward: sage_emotion`` each step's
reward is the simulated user's emotion change (its own analyser answer, on the user role) /
100; with ``sage_outcome`` 0 until the end, then the final emotion / 100; the EPM default is
untouched. The SAGE copy here is a tiny one of our own writing in SAGE's layout."""

from __future__ import annotations

from pathlib import Path

import pytest
from sandbox_helpers import C_ONE, Script, fast_endpoint, scenario

from empathos.errors import ConfigError
from empathos.llm import ChatRequest, ModelClient, ScriptedBackend
from empathos.sandbox import EmpathyEnv, Roles, SandboxConfig
from sage_copy import write_sage_copy


def _roles(changes: list[str], prompts: list[str]) -> Roles:
    script = Script(judge_levels=[C_ONE] * 5)
    answers = iter(changes)

    def user(request: ChatRequest) -> str:
        text = request.messages[-1].content
        if text.startswith("ANALYSE"):
            prompts.append(text)
            sections = "Content:\nc\nTargetCompletion:\nt\nActivity:\na\nAnalyse:\nz\n"
            return f"{sections}Change:\n{next(answers)}"
        return "another user line"

    base = script.roles(director=False)
    sim = ModelClient(ScriptedBackend(user), fast_endpoint("user-model"), "user")
    return Roles(user=sim, judge=base.judge, tested=base.tested)


async def test_the_emotion_change_is_the_reward(tmp_path: Path) -> None:
    prompts: list[str] = []
    cfg = SandboxConfig(min_turns=3, max_turns=3, director="rules", reward="sage_emotion",
                        sage_data=str(write_sage_copy(tmp_path / "sage")))  # fmt: skip
    env = EmpathyEnv(_roles(["+10", "-4", "+25"], prompts), cfg)
    sc = scenario()
    await env.reset(sc)
    rewards = []
    for t in (1, 2, 3):
        _, reward, _, info = await env.step(f"reply {t}")
        assert info.reward_valid
        rewards.append(reward)
    assert rewards == pytest.approx([0.10, -0.04, 0.10])  # +25 clamped to +10
    assert env.emotion is not None and env.emotion.emotion == 56
    assert prompts[0].startswith("ANALYSE {") and "/ AIM: feel heard / 40 /\n" in prompts[0]
    assert sc.persona.trigger in prompts[0] and "/ 50 /\n" in prompts[1]
    assert '"content": "reply 2"' in prompts[1]
    assert sum(c.role == "user" for c in env.state.calls) >= 3  # the analyser's calls recorded


async def test_the_final_emotion_is_the_outcome_reward(tmp_path: Path) -> None:
    cfg = SandboxConfig(min_turns=3, max_turns=3, director="rules", reward="sage_outcome",
                        sage_data=str(write_sage_copy(tmp_path / "sage")))  # fmt: skip
    env = EmpathyEnv(_roles(["+10", "+10", "-5"], []), cfg)
    await env.reset(scenario())
    rewards = [(await env.step(f"reply {t}")).reward for t in (1, 2, 3)]
    assert rewards == pytest.approx([0.0, 0.0, 0.55]) and env.done


def test_a_sage_reward_needs_the_copy() -> None:
    with pytest.raises(ConfigError, match="sage_data"):
        SandboxConfig(reward="sage_emotion")
