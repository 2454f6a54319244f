"""Turn-level rewards prepared for the estimators, and discounted Monte Carlo returns.

Shapes: B rollouts, T turns (padded). Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from empathos.rl._ops import ArrayT, as_bool, as_float, as_long, device_of, restore
from empathos.rl.batch import InvalidTurnPolicy, TurnBatch

__all__ = ["PreparedTurns", "discounted_returns", "discounted_returns_tensor", "prepare_turns"]


@dataclass(frozen=True)
class PreparedTurns:
    """A :class:`TurnBatch` after the invalid-turn policy is applied, as tensors on the batch's
    device (the CPU for numpy input).

    - ``rewards``    (B, T) float64: valid rewards; at invalid turns the dialogue's mean valid
      reward (``fill_mean``) or 0 (``drop``: such a turn is off ``loss_mask`` and adds nothing
      to any return); 0 beyond the horizon.
    - ``stat_mask``  (B, T) bool: the turns that enter statistics (the valid ones, always).
    - ``loss_mask``  (B, T) bool: the turns that enter the loss.
    - ``group``      (B,) int64: ``uid`` renumbered to 0..U-1.
    - ``n_groups``: U.
    """

    rewards: torch.Tensor
    stat_mask: torch.Tensor
    loss_mask: torch.Tensor
    group: torch.Tensor
    n_groups: int


def prepare_turns(batch: TurnBatch[ArrayT], invalid: InvalidTurnPolicy) -> PreparedTurns:
    """Sanitise rewards (no NaN leaks) and build the statistic and loss masks."""
    batch.check()
    device = device_of(batch.rewards)
    valid = as_bool(batch.valid, device)
    turn_mask = as_bool(batch.turn_mask, device)
    r = torch.where(valid, as_float(batch.rewards, device), 0.0)
    uniq, group = torch.unique(as_long(batch.uid, device), return_inverse=True)
    n_groups = int(uniq.numel())
    if invalid == "drop":
        return PreparedTurns(r, valid, valid, group, n_groups)
    n_valid = valid.sum(dim=1).to(torch.float64)
    has_valid = n_valid > 0
    mean = r.sum(dim=1) / n_valid.clamp_min(1.0)
    invalid_turns = turn_mask & ~valid & has_valid[:, None]
    filled = torch.where(invalid_turns, mean[:, None], r)
    return PreparedTurns(filled, valid, valid | invalid_turns, group, n_groups)


def discounted_returns_tensor(rewards: torch.Tensor, gamma: float) -> torch.Tensor:
    """:func:`discounted_returns` on a float64 tensor (the estimators' internal form)."""
    t = int(rewards.shape[1])
    idx = torch.arange(t, device=rewards.device)
    lag = (idx[:, None] - idx[None, :]).to(torch.float64)  # lag[k, t] = k - t
    disc = torch.where(lag >= 0, torch.pow(float(gamma), lag.clamp_min(0.0)), 0.0)
    return rewards @ disc


def discounted_returns(rewards: ArrayT, gamma: float) -> ArrayT:
    """G[b, t] = sum over k >= t of gamma^(k - t) * rewards[b, k], over turns (not tokens).

    ``rewards`` (B, T) float must already be 0 where nothing should be added (padding,
    dropped invalid turns). Computed as one (B, T) x (T, T) product with an upper-triangular
    discount matrix; numpy in gives numpy out, torch in gives torch out (float64).
    """
    return restore(discounted_returns_tensor(as_float(rewards), gamma), rewards)
