"""Rollouts of the local policy in the real sandbox (:class:`~empathos.sandbox.EmpathyEnv`).

All dialogues of a batch advance together: each round, every unfinished dialogue's
observation is templated, the policy samples the replies as one batch (recording token ids and
log-probabilities), then every environment steps concurrently (user, judge and director on
their endpoints). The order of work is fixed, so a rollout is reproducible from torch's
generator state and the role models.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from numpy.typing import NDArray

from empathos.llm.local import LocalPolicy
from empathos.records import DialogueRecord
from empathos.rl.rewards import delta_e_rewards, distance_rewards, potential_rewards
from empathos.sandbox import EmpathyEnv, Roles, SandboxConfig, state_packet
from empathos.scenarios import Scenario

__all__ = ["Dialogue", "Job", "TurnSample", "collect", "mean_turn_reward", "seeded", "turn_arrays"]


@dataclass(frozen=True)
class Job:
    """One dialogue to roll out: scenario, group id and environment seed."""

    scenario: Scenario
    uid: int
    seed: int


@dataclass
class TurnSample:
    """One assistant turn as the policy produced it."""

    prompt_ids: list[int]
    token_ids: list[int]
    logprobs: list[float]
    text: str


@dataclass
class Dialogue:
    """A finished rollout: its turns, EPM trajectory quantities and record."""

    job: Job
    turns: list[TurnSample] = field(default_factory=list)
    distance: list[float] = field(default_factory=list)  # T + 1 points, P_0 first
    norm: list[float] = field(default_factory=list)  # ||P_t||, T + 1 points
    delta_e: list[float] = field(default_factory=list)  # T entries (0 when unscored)
    valid: list[bool] = field(default_factory=list)  # T entries
    env_reward: list[float] = field(default_factory=list)  # T entries: the sandbox's reward
    record: DialogueRecord | None = None

    @property
    def success(self) -> bool:
        """The dialogue ended in a success."""
        return bool(self.record is not None and self.record.success)

    @property
    def error(self) -> str | None:
        """Why the dialogue ended as an error, if it did."""
        if self.record is None or self.record.termination.kind.value != "error":
            return None
        return self.record.termination.reason or "error"


async def collect(
    policy: LocalPolicy,
    roles: Roles,
    sandbox: SandboxConfig,
    jobs: Sequence[Job],
    *,
    max_new_tokens: int,
    temperature: float,
    top_p: float,
    generation_batch: int,
) -> list[Dialogue]:
    """Roll out every job to its end; see the module docstring."""
    envs = [EmpathyEnv(roles, sandbox, model_name=policy.name) for _ in jobs]
    dialogues = [Dialogue(job) for job in jobs]
    await asyncio.gather(
        *(env.reset(j.scenario, j.seed) for env, j in zip(envs, jobs, strict=True))
    )
    for env, dlg in zip(envs, dialogues, strict=True):
        if env.state.epm is not None:
            packet = state_packet(env.state)
            dlg.distance.append(packet.distance)
            dlg.norm.append(packet.p_norm)
    while True:
        active = [i for i, env in enumerate(envs) if not env.done]
        if not active:
            break
        prompts = [policy.prompt_ids(envs[i].observation(), max_new_tokens) for i in active]
        gens = policy.generate(
            prompts,
            max_new_tokens=max_new_tokens,
            temperature=temperature,
            top_p=top_p,
            batch_size=generation_batch,
        )
        steps = await asyncio.gather(
            *(envs[i].step(g.text) for i, g in zip(active, gens, strict=True))
        )
        for i, gen, step in zip(active, gens, steps, strict=True):
            dlg = dialogues[i]
            dlg.turns.append(TurnSample(gen.prompt_ids, gen.token_ids, gen.logprobs, gen.text))
            info = step.info
            scored = bool(info.evaluated and info.scored)
            dlg.valid.append(info.evaluated and info.reward_valid and not math.isnan(step.reward))
            after = info.packet
            last_d = dlg.distance[-1] if dlg.distance else math.nan
            last_n = dlg.norm[-1] if dlg.norm else math.nan
            dlg.distance.append(after.distance if after is not None else last_d)
            dlg.norm.append(after.p_norm if after is not None else last_n)
            de = after.delta_E if after is not None and scored else None
            dlg.delta_e.append(float(de) if de is not None else 0.0)
            dlg.env_reward.append(float(step.reward))
    for env, dlg in zip(envs, dialogues, strict=True):
        dlg.record = env.record()
    return dialogues


def turn_arrays(
    dialogues: Sequence[Dialogue], reward: str
) -> tuple[NDArray[np.float64], NDArray[np.bool_], NDArray[np.bool_], NDArray[np.int64]]:
    """(rewards, valid, turn_mask, uid) padded to (B, T) for the advantage estimators.

    Rewards come from :mod:`empathos.rl.rewards` (NaN where a turn was not scored: never a
    silent 0); a dialogue that never started has no turns."""
    b = len(dialogues)
    t = max([len(d.turns) for d in dialogues] + [1])
    dist = np.full((b, t + 1), np.nan)
    norm = np.full((b, t + 1), np.nan)
    de = np.zeros((b, t))
    env = np.full((b, t), np.nan)
    valid = np.zeros((b, t), dtype=bool)
    mask = np.zeros((b, t), dtype=bool)
    for i, d in enumerate(dialogues):
        n = len(d.turns)
        mask[i, :n] = True
        valid[i, :n] = d.valid[:n]
        if d.distance:
            dist[i, : n + 1] = d.distance[: n + 1]
            norm[i, : n + 1] = d.norm[: n + 1]
        de[i, :n] = d.delta_e[:n]
        env[i, : len(d.env_reward[:n])] = d.env_reward[:n]
    if reward.startswith("sage_"):  # SAGE's emotion: the sandbox computed it (sandbox/emotion.py)
        rewards = np.where(valid, env, np.nan)
    elif reward == "delta_e":
        rewards = delta_e_rewards(de, valid)
    elif reward == "potential":
        rewards = potential_rewards(norm, valid)
    else:
        rewards = distance_rewards(dist, valid)
    uid = np.asarray([d.job.uid for d in dialogues], dtype=np.int64)
    return np.asarray(rewards, dtype=np.float64), valid, mask, uid


def mean_turn_reward(dialogues: Sequence[Dialogue], reward: str) -> float:
    """Mean per-turn reward over the scored turns (NaN when none was scored)."""
    r, valid, _, _ = turn_arrays(dialogues, reward)
    return float(r[valid].mean()) if valid.any() else math.nan


def seeded(seed: int) -> torch.Generator:
    """A CPU generator seeded with ``seed``."""
    g = torch.Generator()
    g.manual_seed(seed)
    return g
