"""Per-turn advantages onto the tokens of TRL's completions (no TRL import).

The rows of a generation batch (every process's, gathered) become one
:class:`~empathos.rl.TurnBatch`: ``rewards`` (B, T) from each row's ``turn_rewards`` (NaN and
``valid`` false for an unscored turn), ``turn_mask`` the turns that exist, ``uid`` (B,) the
group: rows ``g * n .. g * n + n - 1`` are the ``n = num_generations`` dialogues of one
prompt (TRL's sampler repeats each prompt consecutively). The estimator named in the config
(any name of :func:`empathos.rl.estimator_names`) gives (B, T) advantages and the turns in the
loss; :func:`empathos.rl.broadcast_from_spans` puts turn k's advantage on the tokens of its
reply (``turn_spans``) and 0 elsewhere. The token mask is false on the user's tokens, on
template tokens and on turns the estimator keeps out of the loss (unscored turns, with
``invalid="drop"``).

A failed dialogue (``failed``: the rollout's ``dialogue_error``, a role failed or the judge
failed too often) enters the batch with no turns: it is in no normalisation group (batch,
scenario, turn), gets no advantage and no token in the loss, and its peers' advantages are
exactly those of the batch without it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from empathos.errors import InputError
from empathos.rl import (
    AdvantageConfig,
    AdvantageResult,
    TurnBatch,
    broadcast_from_spans,
    compute_advantages,
)

__all__ = ["TokenAdvantages", "group_uids", "place_advantages", "turn_tensors"]


@dataclass(frozen=True)
class TokenAdvantages:
    """The advantage step of one generation batch.

    ``batch``, ``result`` and ``spans`` (B, T, 2) cover every row (all processes); ``rows`` is
    this process's slice; ``advantages`` (b, L) float32 and ``mask`` (b, L) bool are its
    tokens; ``failed`` (B,) bool the failed dialogues, left out."""

    batch: TurnBatch[torch.Tensor]
    result: AdvantageResult[torch.Tensor]
    spans: torch.Tensor
    rows: slice
    advantages: torch.Tensor
    mask: torch.Tensor
    failed: torch.Tensor


def group_uids(rows: int, num_generations: int) -> torch.Tensor:
    """(rows,) int64 group id of each row: consecutive blocks of ``num_generations``."""
    if num_generations < 1 or rows % num_generations:
        raise InputError(
            f"{rows} rows are not whole groups of {num_generations}", field="num_generations"
        )
    return torch.arange(rows, dtype=torch.int64) // num_generations


def turn_tensors(
    turn_rewards: Sequence[Sequence[float | None]],
    turn_spans: Sequence[Sequence[Sequence[int]]],
    uid: torch.Tensor,
    failed: Sequence[bool] | None = None,
) -> tuple[TurnBatch[torch.Tensor], torch.Tensor]:
    """The :class:`TurnBatch` (float64) and the spans (B, T, 2) int64 of the rows; a
    ``failed`` row has no turn (out of every statistic and of the loss)."""
    b = len(turn_rewards)
    gone = [False] * b if failed is None else [bool(x) for x in failed]
    if len(turn_spans) != b:
        raise InputError(f"{len(turn_spans)} rows of spans for {b} rows", field="turn_spans")
    t = max([len(r) for r in turn_rewards] + [1])
    rewards = torch.full((b, t), float("nan"), dtype=torch.float64)
    valid = torch.zeros((b, t), dtype=torch.bool)
    turn_mask = torch.zeros((b, t), dtype=torch.bool)
    spans = torch.zeros((b, t, 2), dtype=torch.int64)
    for i, (row, row_spans) in enumerate(zip(turn_rewards, turn_spans, strict=True)):
        if len(row_spans) != len(row):
            raise InputError(f"row {i}: {len(row_spans)} spans for {len(row)} turns",
                             field="turn_spans")  # fmt: skip
        n = len(row)
        if gone[i]:
            continue
        turn_mask[i, :n] = True
        for k, r in enumerate(row):
            if r is not None:
                rewards[i, k], valid[i, k] = float(r), True
        if n:
            spans[i, :n] = torch.tensor([list(s) for s in row_spans], dtype=torch.int64)
    batch = TurnBatch(rewards=rewards, valid=valid, turn_mask=turn_mask, uid=uid)
    batch.check()
    return batch, spans


def place_advantages(
    turn_rewards: Sequence[Sequence[float | None]],
    turn_spans: Sequence[Sequence[Sequence[int]]],
    *,
    num_generations: int,
    estimator: str,
    config: AdvantageConfig,
    rows: slice,
    seq_len: int,
    failed: Sequence[bool] | None = None,
) -> TokenAdvantages:
    """Advantages of every row by ``estimator``; this process's ``rows`` on ``seq_len`` tokens;
    ``failed`` rows (failed dialogues) left out of the batch's statistics and the loss."""
    uid = group_uids(len(turn_rewards), num_generations)
    batch, spans = turn_tensors(turn_rewards, turn_spans, uid, failed)
    result = compute_advantages(estimator, batch, config)
    adv, mask = broadcast_from_spans(
        result.advantages[rows],
        result.loss_mask[rows],
        spans[rows],
        batch.turn_mask[rows],
        seq_len,
    )
    gone = torch.tensor([bool(x) for x in failed or [False] * len(turn_rewards)])
    return TokenAdvantages(batch, result, spans, rows, adv.to(torch.float32), mask, gone)
