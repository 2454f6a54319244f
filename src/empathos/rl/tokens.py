"""Broadcast turn advantages onto the tokens of packed multi-turn sequences.

Each assistant turn's advantage goes to every token of that reply; user-agent tokens (and
anything the policy did not generate) get 0 and are off the token loss mask. Two ways to say
where the turns lie in a packed sequence of length L:

- ``turn_spans`` (B, T, 2) int: [start, end) token offsets of assistant turn t of row b,
  turns in order and not overlapping; only turns with ``turn_mask`` are read.
- ``response_mask`` (B, L) bool/int: 1 on the policy's tokens; the k-th run of ones of a row
  is its assistant turn k.

Vectorised (no Python loop over rows or turns); numpy or torch, like the inputs. Pure.
"""

from __future__ import annotations

from empathos.errors import InputError
from empathos.rl._ops import Array, ops_for

__all__ = ["broadcast_from_response_mask", "broadcast_from_spans"]


def _gather_turns(
    advantages: Array, loss_mask: Array, turn_idx: Array, covered: Array
) -> tuple[Array, Array]:
    ops = ops_for(advantages)
    t = int(advantages.shape[1])
    idx = ops.where(covered, turn_idx, 0 * turn_idx)
    idx = ops.where(idx < t, idx, 0 * idx)
    adv = ops.gather_rows(ops.float_(advantages), idx)
    in_loss = ops.gather_rows(ops.bool_(loss_mask), idx) & covered
    return ops.where(in_loss, adv, 0.0), in_loss


def broadcast_from_spans(
    advantages: Array, loss_mask: Array, turn_spans: Array, turn_mask: Array, seq_len: int
) -> tuple[Array, Array]:
    """Token advantages (B, L) float and token loss mask (B, L) bool from turn spans.

    ``advantages`` (B, T) and ``loss_mask`` (B, T) come from an estimator; ``turn_spans``
    (B, T, 2) holds [start, end) per turn; ``turn_mask`` (B, T) marks the turns that exist.
    """
    ops = ops_for(advantages)
    spans = ops.long(turn_spans)
    mask = ops.bool_(turn_mask)
    b, t = int(mask.shape[0]), int(mask.shape[1])
    starts, ends = spans[..., 0], spans[..., 1]
    if bool(((starts < 0) | (ends > seq_len) | (ends < starts))[mask].any()):
        raise InputError(
            f"a turn span lies outside [0, {seq_len}] or ends first", field="turn_spans"
        )
    rows = (ops.arange(b, like=spans)[:, None] + 0 * starts)[mask]
    w = ops.float_(mask[mask], like=ops.float_(advantages))
    marks = ops.scatter_add_2d((b, seq_len + 1), rows, starts[mask], w)
    count = ops.cumsum(marks, axis=1)[:, :seq_len]  # number of turns started at or before l
    turn_idx = ops.long(count) - 1
    safe = ops.where(turn_idx >= 0, turn_idx, 0 * turn_idx)
    safe = ops.where(safe < t, safe, 0 * safe)
    pos = ops.arange(seq_len, like=spans)[None, :]
    covered = (turn_idx >= 0) & (pos < ops.gather_rows(ends, safe))
    covered = covered & ops.gather_rows(mask, safe)
    return _gather_turns(advantages, loss_mask, safe, covered)


def broadcast_from_response_mask(
    advantages: Array, loss_mask: Array, response_mask: Array
) -> tuple[Array, Array]:
    """Token advantages (B, L) float and token loss mask (B, L) bool from a response mask.

    The k-th run of ones in row b of ``response_mask`` (B, L) is assistant turn k of rollout
    b; a row with more runs than ``advantages`` has columns (T) raises :class:`InputError`.
    """
    ops = ops_for(advantages)
    resp = ops.bool_(response_mask)
    start = ops.copy(resp)
    start[:, 1:] = resp[:, 1:] & ~resp[:, :-1]
    run = ops.long(ops.cumsum(ops.long(start), axis=1)) - 1
    t = int(advantages.shape[1])
    if bool((run[resp] >= t).any()):
        raise InputError(f"a row has more assistant runs than {t} turns", field="response_mask")
    safe = ops.where(resp, run, 0 * run)
    return _gather_turns(advantages, loss_mask, safe, resp)
