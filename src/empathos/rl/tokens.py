"""Broadcast turn advantages onto the tokens of packed multi-turn sequences.

Each assistant turn's advantage goes to every token of that reply; user-agent tokens (and
anything the policy did not generate) get 0 and are off the token loss mask. Two ways to say
where the turns lie in a packed sequence of length L:

- ``turn_spans`` (B, T, 2) int: [start, end) token offsets of assistant turn t of row b,
  turns in order and not overlapping; only turns with ``turn_mask`` are read.
- ``response_mask`` (B, L) bool/int: 1 on the policy's tokens; the k-th run of ones of a row
  is its assistant turn k.

Vectorised on torch tensors (no Python loop over rows or turns); numpy in gives numpy out,
torch in gives torch out on the same device. Pure.
"""

from __future__ import annotations

import torch

from empathos.errors import InputError
from empathos.rl._ops import Array, ArrayT, as_bool, as_float, as_long, device_of, restore

__all__ = [
    "broadcast_from_response_mask",
    "broadcast_from_spans",
    "response_mask_to_tokens",
    "spans_to_tokens",
]


def _gather_turns(
    advantages: torch.Tensor, loss_mask: torch.Tensor, turn_idx: torch.Tensor, covered: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    t = int(advantages.shape[1])
    idx = torch.where(covered & (turn_idx < t), turn_idx, 0)
    adv = torch.gather(advantages, 1, idx)
    in_loss = torch.gather(loss_mask, 1, idx) & covered
    return torch.where(in_loss, adv, 0.0), in_loss


def spans_to_tokens(
    advantages: torch.Tensor,
    loss_mask: torch.Tensor,
    turn_spans: torch.Tensor,
    turn_mask: torch.Tensor,
    seq_len: int,
) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`broadcast_from_spans` on tensors: ``advantages`` (B, T) float, ``loss_mask`` and
    ``turn_mask`` (B, T) bool, ``turn_spans`` (B, T, 2) int64, all on one device."""
    b, t = int(turn_mask.shape[0]), int(turn_mask.shape[1])
    starts, ends = turn_spans[..., 0], turn_spans[..., 1]
    if bool(((starts < 0) | (ends > seq_len) | (ends < starts))[turn_mask].any()):
        raise InputError(
            f"a turn span lies outside [0, {seq_len}] or ends first", field="turn_spans"
        )
    device = advantages.device
    rows = torch.arange(b, device=device)[:, None].expand(b, t)[turn_mask]
    marks = torch.zeros((b, seq_len + 1), dtype=torch.float64, device=device)
    ones = torch.ones(rows.shape, dtype=torch.float64, device=device)
    marks.index_put_((rows, starts[turn_mask]), ones, accumulate=True)
    count = torch.cumsum(marks, dim=1)[:, :seq_len]  # number of turns started at or before l
    turn_idx = count.to(torch.int64) - 1
    safe = torch.where((turn_idx >= 0) & (turn_idx < t), turn_idx, 0)
    pos = torch.arange(seq_len, device=device)[None, :]
    covered = (turn_idx >= 0) & (pos < torch.gather(ends, 1, safe))
    covered = covered & torch.gather(turn_mask, 1, safe)
    return _gather_turns(advantages, loss_mask, safe, covered)


def response_mask_to_tokens(
    advantages: torch.Tensor, loss_mask: torch.Tensor, response_mask: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`broadcast_from_response_mask` on tensors: ``advantages`` (B, T) float,
    ``loss_mask`` (B, T) bool, ``response_mask`` (B, L) bool, all on one device."""
    start = response_mask.clone()
    start[:, 1:] = response_mask[:, 1:] & ~response_mask[:, :-1]
    run = torch.cumsum(start.to(torch.int64), dim=1) - 1
    t = int(advantages.shape[1])
    if bool((run[response_mask] >= t).any()):
        raise InputError(f"a row has more assistant runs than {t} turns", field="response_mask")
    safe = torch.where(response_mask, run, 0)
    return _gather_turns(advantages, loss_mask, safe, response_mask)


def broadcast_from_spans(
    advantages: ArrayT, loss_mask: Array, turn_spans: Array, turn_mask: Array, seq_len: int
) -> tuple[ArrayT, ArrayT]:
    """Token advantages (B, L) float and token loss mask (B, L) bool from turn spans.

    ``advantages`` (B, T) and ``loss_mask`` (B, T) come from an estimator; ``turn_spans``
    (B, T, 2) holds [start, end) per turn; ``turn_mask`` (B, T) marks the turns that exist.
    """
    dev = device_of(advantages)
    adv, mask = spans_to_tokens(
        as_float(advantages, dev),
        as_bool(loss_mask, dev),
        as_long(turn_spans, dev),
        as_bool(turn_mask, dev),
        seq_len,
    )
    return restore(adv, advantages), restore(mask, advantages)


def broadcast_from_response_mask(
    advantages: ArrayT, loss_mask: Array, response_mask: Array
) -> tuple[ArrayT, ArrayT]:
    """Token advantages (B, L) float and token loss mask (B, L) bool from a response mask.

    The k-th run of ones in row b of ``response_mask`` (B, L) is assistant turn k of rollout
    b; a row with more runs than ``advantages`` has columns (T) raises :class:`InputError`.
    """
    dev = device_of(advantages)
    adv, mask = response_mask_to_tokens(
        as_float(advantages, dev), as_bool(loss_mask, dev), as_bool(response_mask, dev)
    )
    return restore(adv, advantages), restore(mask, advantages)
