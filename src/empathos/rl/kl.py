"""KL-in-reward (MAPO_SPEC section 4): charge each turn its KL to a reference policy.

The alternative to the KL penalty in the loss (:class:`empathos.rl.loss.PPOLossConfig`'s
``kl_coef``): the per-turn reward becomes r_t - coef * KL_t, where KL_t is the KL estimate of
assistant turn t between the rollout policy and a frozen reference, *before* returns and
advantages are computed. So the cost of drifting from the reference enters the returns (an
early turn also pays, discounted, for the drift of later turns) and both normalisations, like
any other reward. Use one of the two, not both; coefficient 0.05 when enabled.

Three steps, each a pure function computed on torch; numpy in gives numpy out, torch in gives
torch out on the same device (float64):

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

import torch

from empathos.errors import InputError
from empathos.rl._ops import Array, ArrayT, as_bool, as_float, as_long, device_of, restore
from empathos.rl.tokens import response_mask_to_tokens, spans_to_tokens

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


def _detached(x: Array, device: torch.device | None = None) -> torch.Tensor:
    return as_float(x.detach() if isinstance(x, torch.Tensor) else x, device)


def token_kl(logp: ArrayT, logp_ref: Array, estimator: KLEstimator = "k1") -> ArrayT:
    """Per-token KL estimate (B, L) float64 from ``logp`` and ``logp_ref`` (B, L), the
    log-probabilities of the sampled tokens under the rollout policy and the reference."""
    new = _detached(logp)
    log_ratio = new - _detached(logp_ref, new.device)
    if estimator == "k1":
        return restore(log_ratio, logp)
    if estimator == "k3":
        return restore(torch.exp(-log_ratio) + log_ratio - 1.0, logp)
    raise InputError(f"unknown KL estimator {estimator!r}; use 'k1' or 'k3'", field="estimator")


def _reduce_to_turns(
    values: torch.Tensor,
    turn_of_token: torch.Tensor,
    on_turn: torch.Tensor,
    n_turns: int,
    reduce: KLReduce,
) -> torch.Tensor:
    b = int(values.shape[0])
    rows = torch.arange(b, device=values.device)[:, None].expand_as(turn_of_token)[on_turn]
    cols = turn_of_token.to(torch.int64)[on_turn]
    total = torch.zeros((b, n_turns), dtype=torch.float64, device=values.device)
    total.index_put_((rows, cols), values[on_turn], accumulate=True)
    if reduce == "sum":
        return total
    if reduce == "mean":
        count = torch.zeros_like(total)
        count.index_put_((rows, cols), torch.ones_like(values[on_turn]), accumulate=True)
        return total / count.clamp_min(1.0)
    raise InputError(f"unknown reduction {reduce!r}; use 'sum' or 'mean'", field="reduce")


def _turn_index(n_turns: int, like: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(B, T) float turn indices and an all-true (B, T) loss mask, to broadcast onto tokens."""
    b = int(like.shape[0])
    idx = torch.arange(n_turns, dtype=torch.float64, device=like.device).expand(b, n_turns)
    return idx, torch.ones((b, n_turns), dtype=torch.bool, device=like.device)


def turn_kl_from_response_mask(
    kl: ArrayT, response_mask: Array, n_turns: int, reduce: KLReduce = "sum"
) -> ArrayT:
    """(B, T = ``n_turns``) KL of each assistant turn from the token estimates ``kl`` (B, L);
    the k-th run of ones of ``response_mask`` (B, L) is turn k (as in
    :func:`empathos.rl.tokens.broadcast_from_response_mask`); other tokens do not count."""
    v = _detached(kl)
    idx, all_turns = _turn_index(n_turns, v)
    turn_of_token, on_turn = response_mask_to_tokens(
        idx, all_turns, as_bool(response_mask, v.device)
    )
    return restore(_reduce_to_turns(v, turn_of_token, on_turn, n_turns, reduce), kl)


def turn_kl_from_spans(
    kl: ArrayT, turn_spans: Array, turn_mask: Array, reduce: KLReduce = "sum"
) -> ArrayT:
    """(B, T) KL of each assistant turn from the token estimates ``kl`` (B, L); ``turn_spans``
    (B, T, 2) holds [start, end) of turn t, read where ``turn_mask`` (B, T) is true."""
    v = _detached(kl)
    n_turns, seq_len = int(turn_mask.shape[1]), int(v.shape[1])
    idx, all_turns = _turn_index(n_turns, v)
    dev = device_of(kl)
    turn_of_token, on_turn = spans_to_tokens(
        idx, all_turns, as_long(turn_spans, dev), as_bool(turn_mask, dev), seq_len
    )
    return restore(_reduce_to_turns(v, turn_of_token, on_turn, n_turns, reduce), kl)


def kl_in_reward(rewards: ArrayT, turn_kl: Array, coef: float = 0.05) -> ArrayT:
    """(B, T) rewards r_t - ``coef`` * ``turn_kl`` (B, T); NaN (invalid) turns stay NaN and
    ``coef`` = 0 returns the rewards unchanged. Apply before the estimators."""
    if not coef >= 0.0:
        raise InputError(f"must be >= 0, got {coef}", field="coef")
    r = as_float(rewards)
    if tuple(turn_kl.shape) != tuple(r.shape):
        got = tuple(turn_kl.shape)
        raise InputError(f"shape {got} differs from rewards {tuple(r.shape)}", field="turn_kl")
    if coef == 0.0:
        return restore(r.clone(), rewards)
    return restore(r - coef * _detached(turn_kl, r.device), rewards)
