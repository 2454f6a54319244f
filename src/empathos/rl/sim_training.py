"""Train a small policy on the SIMULATED environment with any registered advantage estimator.

The policy maps an observation to a distribution over the support strategies of
:mod:`empathos.rl.sim` (a SIMULATION). Training follows MAPO_SPEC section 4 per action: the
PPO clip loss of :mod:`empathos.rl.loss` on the advantages of the estimator named in the
config, computed by the same registry the language-model path uses. The trainer never
branches on the estimator's name. Deterministic under the seed (CPU).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict, Field

from empathos.epm import TrajectoryBatch, dialogue_indices, half_space_distance
from empathos.epm.termination import TERMINATION_CODES
from empathos.rl.advantages import compute_advantages
from empathos.rl.batch import AdvantageConfig, TurnBatch
from empathos.rl.loss import PPOLossConfig, ppo_clip_loss
from empathos.rl.sim import OBS_DIM, STRATEGIES, Personas, SimConfig, SimEnv, sample_personas
from empathos.rl.sim_length import (
    CLOSE,
    LengthSimConfig,
    length_observation,
    length_step,
    optimal_length,
    sample_actions,
)

__all__ = [
    "Policy",
    "Rollout",
    "TrainConfig",
    "TrainResult",
    "length_rollout",
    "log_prob",
    "rollout",
    "train",
]

F64 = NDArray[np.float64]
_SUCCESS = np.array([0] + [int(k.is_success) for k in TERMINATION_CODES], dtype=bool)


class TrainConfig(BaseModel):
    """One training run on the simulation (the rollout budget is steps x scenarios x n)."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    estimator: str = Field("mapo_dialogue", description="Registered advantage estimator name")
    steps: int = Field(60, ge=1, description="Policy updates (rollout batches)")
    scenarios_per_step: int = Field(16, ge=1, description="Scenarios (uid groups) per batch")
    rollouts_per_scenario: int = Field(4, ge=1, description="Dialogues per scenario (n)")
    epochs: int = Field(2, ge=1, description="Passes over each batch")
    minibatches: int = Field(4, ge=1, description="Minibatches per pass")
    lr: float = Field(3e-3, gt=0.0, description="Adam learning rate")
    grad_clip: float = Field(1.0, gt=0.0, description="Gradient norm clip")
    hidden: int = Field(64, ge=4, description="Hidden width of the policy MLP")
    eval_personas: int = Field(128, ge=1, description="Held-out personas for evaluation")
    eval_every: int = Field(10, ge=1, description="Evaluate every this many steps (and at the end)")
    advantage: AdvantageConfig = Field(default_factory=AdvantageConfig, description="Estimator")
    loss: PPOLossConfig = Field(default_factory=PPOLossConfig, description="Policy loss")
    sim: SimConfig = Field(default_factory=SimConfig, description="The simulated environment")
    env: Literal["epm", "length"] = Field(
        "epm", description="'epm': the EPM simulation; 'length': the length-choice simulation"
    )
    length: LengthSimConfig = Field(
        default_factory=LengthSimConfig, description="The length-choice simulation (env 'length')"
    )


class Policy(torch.nn.Module):
    """Observation (N, F) -> logits over the K strategies (N, K): a two-layer tanh MLP."""

    def __init__(self, obs_dim: int, n_actions: int, hidden: int) -> None:
        super().__init__()
        self.net = torch.nn.Sequential(
            torch.nn.Linear(obs_dim, hidden),
            torch.nn.Tanh(),
            torch.nn.Linear(hidden, hidden),
            torch.nn.Tanh(),
            torch.nn.Linear(hidden, n_actions),
        )

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.net(obs)
        return out


def log_prob(logits: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
    """log pi(a | s) of ``actions`` (N,) under ``logits`` (N, K); shape (N,)."""
    return torch.log_softmax(logits, dim=-1).gather(1, actions[:, None])[:, 0]


@dataclass
class Rollout:
    """A batch of N simulated dialogues padded to T = max_turns.

    obs (N, T, F) float32; actions, logp (N, T); rewards (N, T) NaN where unscored; valid,
    turn_mask (N, T) bool; uid (N,); success (N,) bool; final_distance (N,) half-space
    distance of the last state; epmq (N,) EPM-Q-like score of each dialogue (simulation).
    """

    obs: NDArray[np.float32]
    actions: NDArray[np.int64]
    logp: F64
    rewards: F64
    valid: NDArray[np.bool_]
    turn_mask: NDArray[np.bool_]
    uid: NDArray[np.int64]
    success: NDArray[np.bool_]
    final_distance: F64
    epmq: F64


def _epmq(env: SimEnv, traj: dict[str, F64], scored: NDArray[np.bool_], turns: F64) -> F64:
    """Per-dialogue EPM-Q (reference indices of the EPM core) over the scored points."""
    n, t = scored.shape
    keep = np.concatenate([np.ones((n, 1), dtype=bool), scored], axis=1)
    order = np.argsort(~keep, axis=1, kind="stable")
    count = keep.sum(axis=1)
    pos = np.minimum(np.arange(t + 1)[None, :], count[:, None] - 1)
    idx = np.take_along_axis(order, pos, axis=1)
    mask = np.arange(t + 1)[None, :] < count[:, None]
    p = np.take_along_axis(traj["P"], idx[..., None], axis=1)
    de = np.where(mask, np.take_along_axis(traj["dE"], idx, axis=1), 0.0)
    al = np.where(mask, np.take_along_axis(traj["align"], idx, axis=1), 0.0)
    lv = traj["levels"]
    batch = TrajectoryBatch(
        p, de, al, mask, env.E.copy(), turns, lv.sum(axis=(1, 2)), (-np.minimum(lv, 0)).sum((1, 2))
    )
    config = env.epm
    ind = dialogue_indices(batch, config)
    groups = ind.reshape(ind.shape[0], 3, 3).mean(axis=2)  # (N, 3): the groups, in index order
    return np.asarray(groups @ np.asarray(config.weights))


def rollout(
    policy: Policy,
    personas: Personas,
    n: int,
    cfg: SimConfig,
    rng: np.random.Generator,
    gen: torch.Generator,
) -> Rollout:
    """Run ``n`` dialogues per persona to termination with actions sampled from ``policy``."""
    p0 = np.repeat(personas.p0, n, axis=0)
    env = SimEnv(p0, np.repeat(personas.threshold, n), cfg, rng)
    big_n, t_max = env.n, cfg.max_turns
    obs = np.zeros((big_n, t_max, env.observation().shape[1]), dtype=np.float32)
    actions = np.zeros((big_n, t_max), dtype=np.int64)
    logp = np.zeros((big_n, t_max))
    rewards = np.full((big_n, t_max), np.nan)
    valid = np.zeros((big_n, t_max), dtype=bool)
    turn_mask = np.zeros((big_n, t_max), dtype=bool)
    traj = {"P": np.repeat(p0[:, None, :], t_max + 1, axis=1), "dE": np.zeros((big_n, t_max + 1))}
    traj["align"] = np.zeros((big_n, t_max + 1))
    traj["levels"] = np.zeros((big_n, t_max, 6))
    success = np.zeros(big_n, dtype=bool)
    for t in range(t_max):
        live = env.active.copy()
        if not live.any():
            break
        o = env.observation().astype(np.float32)
        with torch.no_grad():
            logits = policy(torch.from_numpy(o))
            a = torch.multinomial(torch.softmax(logits, dim=-1), 1, generator=gen)[:, 0]
            lp = log_prob(logits, a)
        out = env.step(a.numpy())
        obs[:, t], actions[:, t], logp[:, t] = o, a.numpy(), lp.numpy()
        rewards[:, t], valid[:, t], turn_mask[:, t] = out.reward, out.scored, live
        traj["P"][:, t + 1] = env.P
        traj["dE"][:, t + 1], traj["align"][:, t + 1] = out.delta_e, out.align
        traj["levels"][:, t] = np.where(out.scored[:, None], out.levels, 0)
        success |= out.done & _SUCCESS[out.code]
    turns = turn_mask.sum(axis=1).astype(np.float64)
    dist_final = half_space_distance(env.P, env.epm.zone_eps)
    uid = np.repeat(np.arange(personas.p0.shape[0]), n)
    epmq = _epmq(env, traj, valid, turns)
    return Rollout(obs, actions, logp, rewards, valid, turn_mask, uid, success, dist_final, epmq)


def length_rollout(
    policy: Policy,
    scenarios: int,
    n_per: int,
    cfg: LengthSimConfig,
    rng: np.random.Generator,
    gen: torch.Generator,
) -> Rollout:
    """Run ``n_per`` length-choice dialogues for each of ``scenarios`` groups
    (:mod:`empathos.rl.sim_length`, a SIMULATION); success = closed at the best turn
    (:func:`optimal_length` of the undiscounted return; the same turn at gamma 0.85 by
    default). EPM-Q and the final distance do not exist there (NaN)."""
    t_max, n = cfg.max_turns, scenarios * n_per
    obs = np.zeros((n, t_max, t_max + 1), dtype=np.float32)
    actions = np.zeros((n, t_max), dtype=np.int64)
    logp = np.zeros((n, t_max))
    rewards = np.full((n, t_max), np.nan)
    valid = np.zeros((n, t_max), dtype=bool)
    turn_mask = np.zeros((n, t_max), dtype=bool)
    closed_at = np.zeros(n, dtype=np.int64)
    live = np.ones(n, dtype=bool)
    for t in range(t_max):
        o = length_observation(cfg, n, t)
        with torch.no_grad():
            a, lp = sample_actions(policy(torch.from_numpy(o)), gen)
        reward, scored, done = length_step(cfg, a.numpy(), t, rng)
        obs[:, t], actions[:, t], logp[:, t] = o, a.numpy(), lp.numpy()
        rewards[:, t] = np.where(live, reward, np.nan)
        valid[:, t], turn_mask[:, t] = live & scored, live
        closed_at = np.where(live & (a.numpy() == CLOSE), t + 1, closed_at)
        live = live & ~done
    best = optimal_length(cfg, 1.0)
    nan = np.full(n, np.nan)
    uid = np.repeat(np.arange(scenarios), n_per)
    return Rollout(obs, actions, logp, rewards, valid, turn_mask, uid, closed_at == best, nan, nan)


def _update(
    policy: Policy,
    opt: torch.optim.Optimizer,
    roll: Rollout,
    cfg: TrainConfig,
    gen: torch.Generator,
) -> dict[str, float]:
    batch = TurnBatch(roll.rewards, roll.valid, roll.turn_mask, roll.uid)
    res = compute_advantages(cfg.estimator, batch, cfg.advantage)
    mask = np.asarray(res.loss_mask)
    obs = torch.from_numpy(roll.obs[mask])
    act = torch.from_numpy(roll.actions[mask])
    old = torch.from_numpy(roll.logp[mask]).float()
    adv = torch.from_numpy(np.asarray(res.advantages)[mask]).float()
    stats: dict[str, float] = {}
    for _ in range(cfg.epochs):
        perm = torch.randperm(int(obs.shape[0]), generator=gen)
        for chunk in torch.chunk(perm, cfg.minibatches):
            logits = policy(obs[chunk])
            new = log_prob(logits, act[chunk])
            loss, stats = ppo_clip_loss(new, old[chunk], adv[chunk], torch.ones_like(new), cfg.loss)
            opt.zero_grad()
            loss.backward()  # type: ignore[no-untyped-call]
            torch.nn.utils.clip_grad_norm_(policy.parameters(), cfg.grad_clip)
            opt.step()
    return {**stats, **{k: v for k, v in res.stats.items() if k.endswith("degenerate_rate")}}


@dataclass
class TrainResult:
    """Curves of one run (SIMULATION): per-step training-batch metrics and periodic evals."""

    train: dict[str, list[float]]
    eval_steps: list[int]
    eval: dict[str, list[float]]


def _summary(roll: Rollout, cfg: TrainConfig) -> dict[str, float]:
    length = float(roll.turn_mask.sum(axis=1).mean())
    out = {
        "success": float(roll.success.mean()),
        "return": float(np.nansum(roll.rewards, 1).mean()),
    }
    if cfg.env == "length":
        return {**out, "length": length, "length_gap": length - optimal_length(cfg.length, 1.0)}
    epm = {"epmq": float(roll.epmq.mean()), "final_distance": float(roll.final_distance.mean())}
    return {**out, **epm, "length": length}


def _roll(
    policy: Policy,
    personas: Personas,
    n: int,
    cfg: TrainConfig,
    rng: np.random.Generator,
    gen: torch.Generator,
) -> Rollout:
    """Rollouts of the configured environment (the personas only count groups for 'length')."""
    if cfg.env == "length":
        return length_rollout(policy, personas.p0.shape[0], n, cfg.length, rng, gen)
    return rollout(policy, personas, n, cfg.sim, rng, gen)


def train(cfg: TrainConfig, seed: int, on_step: Callable[[int], None] | None = None) -> TrainResult:
    """Train one policy with ``cfg.estimator`` from ``seed``; the persona stream, the eval
    personas and the policy initialisation depend on the seed only (common random numbers
    across estimators)."""
    torch.manual_seed(seed)
    persona_rng = np.random.default_rng([seed, 1])
    env_rng = np.random.default_rng([seed, 2])
    gen = torch.Generator().manual_seed(seed)
    eval_personas = sample_personas(np.random.default_rng([seed, 3]), cfg.eval_personas)
    dims = (cfg.length.max_turns + 1, 2) if cfg.env == "length" else (OBS_DIM, len(STRATEGIES))
    policy = Policy(*dims, cfg.hidden)
    opt = torch.optim.Adam(policy.parameters(), lr=cfg.lr)
    result = TrainResult({}, [], {})

    def evaluate(step: int) -> None:
        eval_rng = np.random.default_rng([seed, 4, step])
        eval_gen = torch.Generator().manual_seed(seed * 7919 + step)
        roll = _roll(policy, eval_personas, 2, cfg, eval_rng, eval_gen)
        result.eval_steps.append(step)
        for k, v in _summary(roll, cfg).items():
            result.eval.setdefault(k, []).append(v)

    evaluate(0)
    for step in range(1, cfg.steps + 1):
        personas = sample_personas(persona_rng, cfg.scenarios_per_step)
        roll = _roll(policy, personas, cfg.rollouts_per_scenario, cfg, env_rng, gen)
        stats = _update(policy, opt, roll, cfg, gen)
        for k, v in {**_summary(roll, cfg), **stats}.items():
            result.train.setdefault(k, []).append(v)
        if step % cfg.eval_every == 0 or step == cfg.steps:
            evaluate(step)
        if on_step is not None:
            on_step(step)
    return result
