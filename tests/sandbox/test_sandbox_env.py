"""The environment contract: reset / step, rewards, unscored steps, and many concurrent envs."""

from __future__ import annotations

import asyncio
import math
import time

import pytest
from sandbox_helpers import C_ONE, DEEP, HARM, Script, fast_endpoint, scenario

from empathos.epm import TerminationKind
from empathos.errors import ConfigError
from empathos.llm import ChatRequest, ModelClient, RawReply, ScriptedBackend
from empathos.sandbox import EmpathyEnv, Roles, SandboxConfig, run_dialogue


def _d(P: tuple[float, ...]) -> float:
    """Half-space distance written out: distance to the region where every axis >= -1."""
    return math.sqrt(sum(max(0.0, -1.0 - x) ** 2 for x in P))


async def test_reset_and_step_contract() -> None:
    script = Script(judge_levels=[C_ONE, HARM, DEEP])
    env = EmpathyEnv(script.roles(), SandboxConfig(min_turns=3, max_turns=3, director="rules"))
    sc = scenario()
    obs = await env.reset(sc, seed=7)
    assert [m.role for m in obs] == ["system", "user"] and obs[1].content == sc.persona.topic
    assert not env.done and not script.calls("tested")
    prev = env.state.epm.last.P  # type: ignore[union-attr]
    for t in (1, 2, 3):
        obs, reward, done, info = await env.step(f"policy reply {t}")
        assert info.turn == t and info.evaluated and info.scored and info.reward_valid
        assert info.packet is not None and set(info.ratings) == {
            "C.Prog", "C.Neg", "A.Prog", "A.Neg", "P.Prog", "P.Neg"
        }  # fmt: skip
        assert reward == pytest.approx(_d(prev) - _d(info.packet.P))
        prev = info.packet.P
        assert done == (t == 3)
        if not done:
            assert obs[-2].content == f"policy reply {t}" and obs[-1].role == "user"
            assert info.director_action is not None
    assert info.termination is not None and info.termination.kind is TerminationKind.TIMEOUT
    rec = env.record()
    assert rec.model == "policy" and rec.metadata["seed"] == 7
    assert [t.assistant for t in rec.turns] == [
        "policy reply 1",
        "policy reply 2",
        "policy reply 3",
    ]
    with pytest.raises(RuntimeError):
        await env.step("one more")


async def test_delta_e_reward_and_k_greater_than_one() -> None:
    script = Script(judge_levels=[DEEP, HARM])
    cfg = SandboxConfig(min_turns=4, max_turns=4, eval_every=2, reward="delta_e", director="rules")
    env = EmpathyEnv(script.roles(director=False), cfg)
    await env.reset(scenario())
    v_star = (1 / math.sqrt(3),) * 3  # v*_0 = -P0/|P0| for P0 = (-6, -6, -6)
    rewards, infos = [], []
    for t in range(4):
        _, reward, _, info = await env.step(f"r{t}")
        rewards.append(reward)
        infos.append(info)
    assert [i.evaluated for i in infos] == [False, True, False, True]
    # no evaluation: unscored (NaN, not valid), never a 0.0 that reads as "no progress"
    assert math.isnan(rewards[0]) and math.isnan(rewards[2])
    assert [i.reward_valid for i in infos] == [False, True, False, True]
    assert infos[0].unscored_reason and "no evaluation" in infos[0].unscored_reason
    assert rewards[1] == pytest.approx(sum(3 * x for x in v_star))
    assert rewards[3] == pytest.approx(sum(-2 * x for x in v_star))


async def test_unscored_step_has_no_reward_of_its_own() -> None:
    script = Script(judge_levels=[C_ONE, None, C_ONE])
    env = EmpathyEnv(script.roles(), SandboxConfig(min_turns=3, max_turns=3))
    await env.reset(scenario())
    steps = [await env.step(f"r{t}") for t in range(3)]
    _, reward, _, info = steps[1]
    assert math.isnan(reward) and not info.reward_valid and info.scored is False
    assert info.unscored_reason and "refuses" in info.unscored_reason
    assert all(not math.isnan(s.reward) and s.info.reward_valid for s in (steps[0], steps[2]))


async def test_director_model_is_required_unless_rules() -> None:
    with pytest.raises(ConfigError):
        EmpathyEnv(Script().roles(director=False), SandboxConfig(director="model"))


class SlowBackend(ScriptedBackend):
    """A scripted backend whose every answer takes ``latency`` seconds (awaited, not slept)."""

    def __init__(self, script: Script, role: str, latency: float) -> None:
        super().__init__(script.handler(role))
        self.latency = latency

    async def complete(self, request: ChatRequest) -> RawReply:
        await asyncio.sleep(self.latency)
        return await super().complete(request)


def _slow_roles(latency: float) -> Roles:
    script = Script()

    def make(role: str) -> ModelClient:
        return ModelClient(SlowBackend(script, role, latency), fast_endpoint(role, 1024), role)

    return Roles(user=make("user"), judge=make("judge"), director=make("director"),
                 tested=make("tested"))  # fmt: skip


async def test_many_dialogues_run_concurrently() -> None:
    latency, n, turns = 0.02, 32, 3
    cfg = SandboxConfig(min_turns=turns, max_turns=turns)
    t0 = time.perf_counter()
    one = await run_dialogue(scenario(), _slow_roles(latency), cfg)
    single = time.perf_counter() - t0
    calls = len(one.model_calls)
    assert single >= calls * latency  # the calls of one dialogue are sequential
    t0 = time.perf_counter()
    recs = await asyncio.gather(
        *(run_dialogue(scenario(), _slow_roles(latency), cfg, seed=i) for i in range(n))
    )
    together = time.perf_counter() - t0
    assert all(r.termination.kind is TerminationKind.TIMEOUT for r in recs)
    assert [r.metadata["seed"] for r in recs] == list(range(n))
    assert together < n * single / 4, (together, single)


async def test_many_envs_step_concurrently() -> None:
    envs = [
        EmpathyEnv(_slow_roles(0.01), SandboxConfig(min_turns=2, max_turns=2)) for _ in range(16)
    ]
    await asyncio.gather(*(e.reset(scenario(), seed=i) for i, e in enumerate(envs)))
    while not all(e.done for e in envs):
        await asyncio.gather(*(e.step(f"reply from {id(e)}") for e in envs if not e.done))
    for e in envs:
        rec = e.record()
        assert all(t.assistant == f"reply from {id(e)}" for t in rec.turns)
