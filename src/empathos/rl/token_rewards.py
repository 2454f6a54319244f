"""Token-level rewards to and from the turn batch (pure torch): the layout verl uses.

A token-level trainer (verl) hands an advantage estimator ``token_level_rewards`` and
``response_mask``, both (B, L) over the response part of each packed multi-turn sequence.
The k-th run of ones in a row of ``response_mask`` is the policy's assistant turn k; the
tokens between runs (user lines, chat-template markers) are 0. The reward of turn k sits on
the last token of its run; NaN there marks an unscored turn (the judge gave no usable
rating), which empathos keeps out of the loss and the statistics instead of reading it as a
reward of 0.
"""

from __future__ import annotations

import numpy as np
import torch

from empathos.errors import InputError
from empathos.rl.batch import TurnBatch

__all__ = ["group_ids", "place_turn_rewards", "turn_batch_from_tokens", "turn_ends"]


def turn_ends(response_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(ends, turn_mask), each (B, T): the token index of each run's last token, and which
    of the T = max runs per row exist. ``ends`` is 0 where the turn does not exist."""
    resp = response_mask.bool()
    if resp.dim() != 2:
        raise InputError(
            f"must be 2-D (B, L), got shape {tuple(resp.shape)}", field="response_mask"
        )
    nxt = torch.zeros_like(resp)
    nxt[:, :-1] = resp[:, 1:]
    is_end = resp & ~nxt
    counts = is_end.sum(dim=1)
    t = int(counts.max().item()) if resp.shape[0] else 0
    t = max(t, 1)
    rank = torch.cumsum(is_end.long(), dim=1) - 1  # run index at each end token
    ends = torch.zeros((resp.shape[0], t), dtype=torch.long, device=resp.device)
    rows, cols = torch.nonzero(is_end, as_tuple=True)
    ends[rows, rank[rows, cols]] = cols
    turn_mask = torch.arange(t, device=resp.device)[None, :] < counts[:, None]
    return ends, turn_mask


def group_ids(index: object, batch_size: int) -> np.ndarray:
    """Integer group ids from verl's ``index`` (uids of any hashable type); None: one group each."""
    if index is None:
        return np.arange(batch_size, dtype=np.int64)
    values = np.asarray(index, dtype=object).reshape(-1)
    if values.shape[0] != batch_size:
        raise InputError(f"has {values.shape[0]} entries for {batch_size} rows", field="index")
    _, inverse = np.unique(values.astype(str), return_inverse=True)
    return inverse.astype(np.int64)


def turn_batch_from_tokens(
    token_level_rewards: torch.Tensor, response_mask: torch.Tensor, index: object = None
) -> tuple[TurnBatch[torch.Tensor], torch.Tensor]:
    """The :class:`TurnBatch` of a verl batch, and the (B, T) token index of each turn's end."""
    if token_level_rewards.shape != response_mask.shape:
        raise InputError(
            f"shape {tuple(token_level_rewards.shape)} differs from response_mask "
            f"{tuple(response_mask.shape)}",
            field="token_level_rewards",
        )
    ends, turn_mask = turn_ends(response_mask)
    rewards = torch.gather(token_level_rewards.float(), 1, ends)
    rewards = torch.where(turn_mask, rewards, torch.full_like(rewards, float("nan")))
    valid = turn_mask & torch.isfinite(rewards)
    uid = torch.as_tensor(group_ids(index, int(turn_mask.shape[0])), device=rewards.device)
    return TurnBatch(rewards=rewards, valid=valid, turn_mask=turn_mask, uid=uid), ends


def place_turn_rewards(turn_scores: list[list[float]], response_mask: torch.Tensor) -> torch.Tensor:
    """(B, L) float: turn k's score of row b on the last token of its k-th run, 0 elsewhere.

    A row with fewer scores than runs leaves its last runs unscored (NaN): the dialogue ended
    (or failed) before the judge rated them. More scores than runs is an error."""
    ends, turn_mask = turn_ends(response_mask)
    out = torch.zeros(response_mask.shape, dtype=torch.float32, device=response_mask.device)
    for b, scores in enumerate(turn_scores):
        runs = int(turn_mask[b].sum().item())
        if len(scores) > runs:
            raise InputError(
                f"row {b} has {len(scores)} turn scores for {runs} assistant turns",
                field="turn_scores",
            )
        for k in range(runs):
            value = float(scores[k]) if k < len(scores) and scores[k] is not None else float("nan")
            out[b, ends[b, k]] = value
    return out
