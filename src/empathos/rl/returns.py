"""Turn-level rewards prepared for the estimators, and discounted Monte Carlo returns.

Shapes: B rollouts, T turns (padded). Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from empathos.rl._ops import Array, Ops, ops_for
from empathos.rl.batch import InvalidTurnPolicy, TurnBatch

__all__ = ["PreparedTurns", "discounted_returns", "prepare_turns"]


@dataclass(frozen=True)
class PreparedTurns:
    """A :class:`TurnBatch` after the invalid-turn policy is applied.

    - ``rewards``    (B, T) float: valid rewards; at invalid turns the dialogue's mean valid
      reward (``fill_mean``) or 0 (``drop``: such a turn is off ``loss_mask`` and adds nothing
      to any return); 0 beyond the horizon.
    - ``stat_mask``  (B, T) bool: the turns that enter statistics (the valid ones, always).
    - ``loss_mask``  (B, T) bool: the turns that enter the loss.
    - ``group``      (B,) int64: ``uid`` renumbered to 0..U-1.
    - ``n_groups``: U.
    """

    rewards: Array
    stat_mask: Array
    loss_mask: Array
    group: Array
    n_groups: int


def prepare_turns(batch: TurnBatch, invalid: InvalidTurnPolicy, ops: Ops) -> PreparedTurns:
    """Sanitise rewards (no NaN leaks) and build the statistic and loss masks."""
    batch.check()
    valid = ops.bool_(batch.valid)
    turn_mask = ops.bool_(batch.turn_mask)
    raw = ops.float_(batch.rewards)
    r = ops.where(valid, raw, 0.0)
    group, n_groups = ops.unique_inverse(ops.long(batch.uid))
    if invalid == "drop":
        return PreparedTurns(r, valid, valid, group, n_groups)
    n_valid = ops.sum_rows(ops.float_(valid, like=raw))
    has_valid = n_valid > 0
    safe_n = ops.where(has_valid, n_valid, 1.0)
    mean = ops.sum_rows(r) / safe_n
    invalid_turns = turn_mask & ~valid & has_valid[:, None]
    filled = ops.where(invalid_turns, mean[:, None] + 0.0 * r, r)
    return PreparedTurns(filled, valid, valid | invalid_turns, group, n_groups)


def discounted_returns(rewards: Array, gamma: float) -> Array:
    """G[b, t] = sum over k >= t of gamma^(k - t) * rewards[b, k], over turns (not tokens).

    ``rewards`` (B, T) float must already be 0 where nothing should be added (padding,
    dropped invalid turns). Computed as one (B, T) x (T, T) product with an upper-triangular
    discount matrix, so numpy and torch give the same numbers.
    """
    ops = ops_for(rewards)
    r = ops.float_(rewards)
    t = int(r.shape[1])
    idx = ops.arange(t, like=r)
    lag = ops.float_(idx[:, None] - idx[None, :], like=r)  # lag[k, t] = k - t
    disc = ops.where(lag >= 0, float(gamma) ** ops.where(lag >= 0, lag, 0.0), 0.0)
    out: Array = r @ disc
    return out
