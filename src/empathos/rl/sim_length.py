"""SIMULATION: a length-choice dialogue whose best length is known (`rl compare --env length`).

This is a simulation built to study how an advantage estimator treats the *length* of a
dialogue when the policy decides it; it is not a model of real people or real models.

Each turn the policy either **continues** (a supportive turn: a small reward ``turn_reward``
now, the dialogue goes on) or **closes** (it wraps up: the turn pays the closing reward and the
dialogue ends). The closing reward grows with the square of the turn until ``ripe_turn`` (the
user is ready to close then) and shrinks by ``overstay_cost`` per turn after it; at
``max_turns`` the dialogue times out. Every reward reaches the trainer through a noisy judge
(Gaussian ``noise``) that fails with probability ``judge_fail`` (an unscored turn: NaN, as in
the sandbox). The policy sees the turn index only. The state is the turn, so the best policy
is a fixed closing turn: :func:`optimal_length` finds it exactly by comparing every closing
turn's discounted return.
Deterministic under the generators passed in.
"""

from __future__ import annotations

import numpy as np
import torch
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "CLOSE",
    "CONTINUE",
    "LengthSimConfig",
    "close_reward",
    "length_observation",
    "length_step",
    "optimal_length",
    "sample_actions",
]

CONTINUE, CLOSE = 0, 1


class LengthSimConfig(BaseModel):
    """Parameters of the length-choice simulation (defaults: the best length is 6 turns for
    gamma = 0.85 and for gamma = 1 alike)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_turns: int = Field(10, ge=2, description="Timeout turn")
    ripe_turn: int = Field(6, ge=1, description="The closing reward grows until this turn")
    close_reward: float = Field(3.0, gt=0.0, description="Closing reward at the ripe turn")
    overstay_cost: float = Field(0.5, ge=0.0, description="Closing reward lost per turn after it")
    turn_reward: float = Field(0.1, description="Reward of a continuing turn")
    noise: float = Field(0.3, ge=0.0, description="Std of the judge's noise on every reward")
    judge_fail: float = Field(0.03, ge=0.0, le=1.0, description="Chance a turn goes unscored")


def close_reward(cfg: LengthSimConfig, turn: int) -> float:
    """Mean reward of closing at ``turn`` (1-based)."""
    ripe = cfg.close_reward * (min(turn, cfg.ripe_turn) / cfg.ripe_turn) ** 2
    return ripe - cfg.overstay_cost * max(0, turn - cfg.ripe_turn)


def optimal_length(cfg: LengthSimConfig, gamma: float) -> int:
    """The closing turn with the largest expected discounted return (ties: the shortest);
    continuing to the timeout counts as a dialogue of ``max_turns``."""
    best, best_value = cfg.max_turns, -float("inf")
    for length in range(1, cfg.max_turns + 1):
        before = sum(cfg.turn_reward * gamma**t for t in range(length - 1))
        value = before + gamma ** (length - 1) * close_reward(cfg, length)
        if value > best_value + 1e-12:
            best, best_value = length, value
    timeout = sum(cfg.turn_reward * gamma**t for t in range(cfg.max_turns))
    return cfg.max_turns if timeout > best_value + 1e-12 else best


def length_observation(cfg: LengthSimConfig, n: int, turn: int) -> NDArray[np.float32]:
    """(n, max_turns + 1): the one-hot turn index (0-based) and the turn over ``max_turns``."""
    obs = np.zeros((n, cfg.max_turns + 1), dtype=np.float32)
    obs[:, turn] = 1.0
    obs[:, -1] = turn / cfg.max_turns
    return obs


def length_step(
    cfg: LengthSimConfig, action: NDArray[np.int64], turn: int, rng: np.random.Generator
) -> tuple[NDArray[np.float64], NDArray[np.bool_], NDArray[np.bool_]]:
    """One turn (0-based ``turn``) for every dialogue: (reward, NaN where unscored), scored,
    done (closed or timed out)."""
    n = int(action.shape[0])
    mean = np.where(action == CLOSE, close_reward(cfg, turn + 1), cfg.turn_reward)
    reward = mean + rng.normal(0.0, cfg.noise, n)
    scored = rng.random(n) >= cfg.judge_fail
    done = (action == CLOSE) | (turn + 1 >= cfg.max_turns)
    return np.where(scored, reward, np.nan), scored, done


def sample_actions(logits: torch.Tensor, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Actions (N,) sampled from ``logits`` (N, K) and their log-probabilities (N,)."""
    a = torch.multinomial(torch.softmax(logits, dim=-1), 1, generator=gen)[:, 0]
    return a, torch.log_softmax(logits, dim=-1).gather(1, a[:, None])[:, 0]
