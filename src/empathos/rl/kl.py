"""KL-in-reward (MAPO_SPEC section 4): charge each turn its KL to a reference policy.

The alternative to the KL penalty in the loss (:class:`empathos.rl.loss.PPOLossConfig`'s
``kl_coef``): the per-turn reward becomes r_t - coef * KL_t, where KL_t is the KL estimate of
assistant turn t between the rollout policy and a frozen reference, *before* returns and
advantages are computed. So the cost of drifting from the reference enters the returns (an
early turn also pays, discounted, for the drift of later turns) and both normalisations, like
any other reward. Use one of the two, not both; coefficient 0.05 when enabled.

Three steps, each a pure function, numpy or torch like the inputs (float64 out):

1. :func:`token_kl` (B, L): per-token estimate from the rollout log-probs of the sampled tokens
   under the policy and the reference (``k1`` = log pi - log pi_ref, the default; ``k3`` =
   exp(-k1) + k1 - 1, non-negative, lower variance, as in the loss's penalty).
2. :func:`turn_kl_from_response_mask` / :func:`turn_kl_from_spans` (B, T): the token estimates
   of each assistant turn reduced to one number. ``reduce="sum"`` (the default) is the KL of
   the turn's *action*: the action is the whole reply, and log pi(y | x) - log pi_ref(y | x)
   is the sum of the token log-ratios, so the summed k1 is the standard single-sample
   estimate of the reply-level KL. ``"mean"`` gives a per-token rate that does not grow with
   the reply's length; it is offered for comparison, but it makes a long reply as cheap as a
   short one with the same per-token drift (a length incentive), so it is not the default.
3. :func:`kl_in_reward` (B, T): r - coef * turn KL.

Invalid (unscored, NaN) turns stay NaN: they have no reward of their own to charge. With
``invalid="fill_mean"`` such a turn is then trained on with its dialogue's mean *penalised*
valid reward, not with its own KL. Turns that do not exist carry no tokens and get KL 0.
The KL values are rollout-time numbers (no gradient): torch inputs are detached.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from empathos.errors import InputError
from empathos.rl._ops import Array, ops_for
from empathos.rl.tokens import broadcast_from_response_mask, broadcast_from_spans

__all__ = [
    "KLEstimator",
    "KLReduce",
    "kl_in_reward",
    "token_kl",
    "turn_kl_from_response_mask",
    "turn_kl_from_spans",
]

KLEstimator = Literal["k1", "k3"]
KLReduce = Literal["sum", "mean"]


def _detached(x: Array) -> Array:
    return x.detach() if hasattr(x, "detach") else x


def token_kl(logp: Array, logp_ref: Array, estimator: KLEstimator = "k1") -> Array:
    """Per-token KL estimate (B, L) float64 from ``logp`` and ``logp_ref`` (B, L), the
    log-probabilities of the sampled tokens under the rollout policy and the reference."""
    ops = ops_for(logp)
    log_ratio = ops.float_(_detached(logp)) - ops.float_(_detached(logp_ref))
    if estimator == "k1":
        return log_ratio
    if estimator == "k3":
        neg = -log_ratio
        return (neg.exp() if hasattr(neg, "exp") else np.exp(neg)) + log_ratio - 1.0
    raise InputError(f"unknown KL estimator {estimator!r}; use 'k1' or 'k3'", field="estimator")


def _reduce_to_turns(
    values: Array, turn_of_token: Array, on_turn: Array, n_turns: int, reduce: KLReduce
) -> Array:
    ops = ops_for(values)
    v = ops.float_(_detached(values))
    rows = (ops.arange(int(v.shape[0]), like=turn_of_token)[:, None] + 0 * turn_of_token)[on_turn]
    cols = ops.long(turn_of_token)[on_turn]
    shape = (int(v.shape[0]), n_turns)
    total = ops.scatter_add_2d(shape, rows, cols, v[on_turn])
    if reduce == "sum":
        return total
    if reduce == "mean":
        count = ops.scatter_add_2d(shape, rows, cols, ops.float_(on_turn, like=v)[on_turn])
        return total / ops.where(count > 0, count, 1.0)
    raise InputError(f"unknown reduction {reduce!r}; use 'sum' or 'mean'", field="reduce")


def _turn_index(n_turns: int, like: Array) -> tuple[Array, Array]:
    """(B, T) float turn indices and an all-true (B, T) loss mask, to broadcast onto tokens."""
    ops = ops_for(like)
    b = int(like.shape[0])
    idx = ops.float_(ops.arange(n_turns, like=like), like=like)[None, :] + ops.zeros((b, 1), like)
    return idx, idx >= 0


def turn_kl_from_response_mask(
    kl: Array, response_mask: Array, n_turns: int, reduce: KLReduce = "sum"
) -> Array:
    """(B, T = ``n_turns``) KL of each assistant turn from the token estimates ``kl`` (B, L);
    the k-th run of ones of ``response_mask`` (B, L) is turn k (as in
    :func:`empathos.rl.tokens.broadcast_from_response_mask`); other tokens do not count."""
    idx, all_turns = _turn_index(n_turns, ops_for(kl).float_(kl))
    turn_of_token, on_turn = broadcast_from_response_mask(idx, all_turns, response_mask)
    return _reduce_to_turns(kl, ops_for(kl).long(turn_of_token), on_turn, n_turns, reduce)


def turn_kl_from_spans(
    kl: Array, turn_spans: Array, turn_mask: Array, reduce: KLReduce = "sum"
) -> Array:
    """(B, T) KL of each assistant turn from the token estimates ``kl`` (B, L); ``turn_spans``
    (B, T, 2) holds [start, end) of turn t, read where ``turn_mask`` (B, T) is true."""
    n_turns, seq_len = int(turn_mask.shape[1]), int(kl.shape[1])
    idx, all_turns = _turn_index(n_turns, ops_for(kl).float_(kl))
    turn_of_token, on_turn = broadcast_from_spans(idx, all_turns, turn_spans, turn_mask, seq_len)
    return _reduce_to_turns(kl, ops_for(kl).long(turn_of_token), on_turn, n_turns, reduce)


def kl_in_reward(rewards: Array, turn_kl: Array, coef: float = 0.05) -> Array:
    """(B, T) rewards r_t - ``coef`` * ``turn_kl`` (B, T); NaN (invalid) turns stay NaN and
    ``coef`` = 0 returns the rewards unchanged. Apply before the estimators."""
    if not coef >= 0.0:
        raise InputError(f"must be >= 0, got {coef}", field="coef")
    ops = ops_for(rewards)
    r = ops.float_(rewards)
    if tuple(turn_kl.shape) != tuple(r.shape):
        got = tuple(turn_kl.shape)
        raise InputError(f"shape {got} differs from rewards {tuple(r.shape)}", field="turn_kl")
    if coef == 0.0:
        return ops.copy(r)
    return r - coef * ops.float_(_detached(turn_kl), like=r)
