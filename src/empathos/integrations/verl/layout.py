"""The per-turn reward layout of an empathos dialogue in verl's per-token tensors (no verl import).

verl 0.9 gives an advantage estimator one float per response token (``token_level_rewards``:
the sample's ``rm_scores``, minus verl's in-reward KL penalty on the ``response_mask`` tokens
when ``algorithm.use_kl_in_reward`` is on), the ``response_mask`` and the group ids; its V1
trainer fetches exactly these for the advantage step, nothing else the agent loop wrote. So the
agent loop (:mod:`.agent_loop`) writes each dialogue's turn structure into its own
``rm_scores``, and the estimator (:mod:`.estimator`) reads it back:

- **Header**: every assistant turn is preceded, in the response, by its generation prompt
  (``<|im_start|>assistant\\n``; turn 1's too), masked out. On its last two tokens the agent loop
  writes the pair (+1, -1) for a scored turn, (+2, -2) for an unscored one. A header sums to 0,
  so verl's score and reward statistics (sums over the row) are the dialogue's total; it lies
  on masked tokens, which verl's KL penalty does not touch, so it reaches the estimator exact.
- **Scored turn**: its tokens are the policy's (``response_mask`` 1); its score sits on its last
  token. The turn's reward is the sum of ``token_level_rewards`` over its tokens: the score
  plus every token's in-reward KL penalty (so the penalty of the whole reply is charged to the
  turn, as :func:`empathos.rl.kl.kl_in_reward` with ``reduce="sum"`` does).
- **Unscored turn** (the judge gave no usable rating): its tokens are taken out of
  ``response_mask``: out of the loss, out of verl's KL penalty and its statistics. The header
  keeps its place, so later turns keep their turn index (MAPO normalises per turn index).
- **Failed dialogue** (it ended as ``error``: a role failed, or the judge failed too often):
  every header carries (+3, -3), every reply leaves ``response_mask`` and no score is written.
  The estimator reads such a row as having no turn at all: it is in no normalisation (batch,
  scenario, turn) and gets no advantage, so its peers get exactly what they would without it.

A turn spans from after its header to the next header (or the row's end); the user's lines and
templates in between are masked and carry nothing. A row with policy tokens and no header did
not come from the empathos agent loop: :func:`decode_turns` raises, saying what to configure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from empathos.errors import ConfigError, InputError
from empathos.rl import TurnBatch
from empathos.rl.kl import turn_kl_from_spans

__all__ = [
    "FAILED",
    "SCORED",
    "UNSCORED",
    "DecodedTurns",
    "PlacedTurn",
    "decode_turns",
    "encode_turns",
    "group_ids",
]

SCORED = 1.0
UNSCORED = 2.0
FAILED = 3.0

_WHAT_TO_CONFIGURE = (
    "the rows did not come from the empathos agent loop: give the rows agent_name "
    "'empathos_dialogue' (empathos verl prepare writes it) and keep trainer.use_v1=true "
    "(verl 0.9's default; its legacy trainer drops the agent loop's per-turn rewards)"
)


def group_ids(index: object, batch_size: int) -> np.ndarray:
    """Integer group ids from verl's ``index`` (uids of any hashable type); None: one group each."""
    if index is None:
        return np.arange(batch_size, dtype=np.int64)
    values = np.asarray(index, dtype=object).reshape(-1)
    if values.shape[0] != batch_size:
        raise InputError(f"has {values.shape[0]} entries for {batch_size} rows", field="index")
    _, inverse = np.unique(values.astype(str), return_inverse=True)
    return inverse.astype(np.int64)


@dataclass(frozen=True)
class PlacedTurn:
    """One assistant turn of a response: where its header and reply lie, and its score.

    ``header`` is the response index of the header's first token (the header is
    ``header, header + 1``); the reply is ``[start, end)`` with ``start == header + 2``;
    ``score`` is None for an unscored turn."""

    header: int
    start: int
    end: int
    score: float | None


def encode_turns(
    response_mask: Sequence[int], turns: Sequence[PlacedTurn], failed: bool = False
) -> tuple[list[float], list[int]]:
    """(rm_scores, response_mask) of one response with ``turns`` placed (see the module
    docstring); ``response_mask`` marks the policy's tokens, turns in order; ``failed``: the
    dialogue failed (every turn marked so, no score, no token in the mask)."""
    mask = [int(x) for x in response_mask]
    rm = [0.0] * len(mask)
    previous_end = 0
    for k, turn in enumerate(turns):
        if not (previous_end <= turn.header and turn.start == turn.header + 2 < turn.end):
            raise ValueError(f"turn {k + 1} is misplaced: {turn}")
        if mask[turn.header] or mask[turn.header + 1] or not all(mask[turn.start : turn.end]):
            raise ValueError(f"turn {k + 1}: the header must be masked, the reply not: {turn}")
        code = FAILED if failed else SCORED if turn.score is not None else UNSCORED
        rm[turn.header], rm[turn.header + 1] = code, -code
        if failed or turn.score is None:
            mask[turn.start : turn.end] = [0] * (turn.end - turn.start)
        else:
            rm[turn.end - 1] = float(turn.score)
        previous_end = turn.end
    return rm, mask


@dataclass(frozen=True)
class DecodedTurns:
    """A verl batch read back as turns: the :class:`TurnBatch` for :mod:`empathos.rl` and
    ``spans`` (B, T, 2), each turn's [start, end) token range (its reply and the masked
    context after it), to broadcast the turn advantages onto tokens; ``failed`` (B,) the
    failed dialogues (no turn in ``batch``)."""

    batch: TurnBatch[torch.Tensor]
    spans: torch.Tensor
    failed: torch.Tensor


def _headers(values: torch.Tensor, off: torch.Tensor) -> torch.Tensor:
    """(B, L) int8: 1, 2 or 3 where a scored, unscored or failed turn's header starts, else 0."""
    code = torch.zeros(values.shape, dtype=torch.int8, device=values.device)
    if values.shape[1] < 2:
        return code
    first, second = values[:, :-1], values[:, 1:]
    both_off = off[:, :-1] & off[:, 1:]
    for value, mark in ((SCORED, 1), (UNSCORED, 2), (FAILED, 3)):
        hit = both_off & (first == value) & (second == -value)
        code[:, :-1] = torch.where(hit, torch.tensor(mark, dtype=torch.int8), code[:, :-1])
    return code


def _fail_if(bad: torch.Tensor, problem: str, field: str) -> None:
    """Raise naming the first row where ``bad`` (B, ...) holds, and what to configure."""
    if bool(bad.any()):
        row = int(torch.nonzero(bad)[0, 0])
        raise ConfigError(f"row {row} {problem}: {_WHAT_TO_CONFIGURE}", field=field)


def _check_rows(values: torch.Tensor, on: torch.Tensor, code: torch.Tensor) -> None:
    """Fail loudly unless every nonzero masked value is a header and every row with policy
    tokens has a header before them."""
    header_cells = (code > 0) | torch.roll(code > 0, shifts=1, dims=1)
    stray = ~on & (values != 0) & ~header_cells
    _fail_if(stray, "has rewards on masked tokens that are no empathos turn header",
             "token_level_rewards")  # fmt: skip
    first_header = torch.where(
        (code > 0).any(dim=1), torch.argmax((code > 0).to(torch.int64), dim=1), values.shape[1]
    )
    pos = torch.arange(values.shape[1], device=values.device)[None, :]
    early = on & (pos < (first_header + 2)[:, None])
    _fail_if(early, "has the policy's tokens without an empathos turn header",
             "token_level_rewards")  # fmt: skip


def _turn_table(code: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(header positions, header codes, turn_mask), each (B, T), T = most headers in a row."""
    starts = code > 0
    counts = starts.sum(dim=1)
    t = max(int(counts.max().item()) if code.shape[0] else 0, 1)
    rank = torch.cumsum(starts.to(torch.int64), dim=1) - 1
    rows, cols = torch.nonzero(starts, as_tuple=True)
    pos = torch.zeros((code.shape[0], t), dtype=torch.int64, device=code.device)
    kind = torch.zeros((code.shape[0], t), dtype=torch.int8, device=code.device)
    pos[rows, rank[rows, cols]] = cols
    kind[rows, rank[rows, cols]] = code[rows, cols]
    turn_mask = torch.arange(t, device=code.device)[None, :] < counts[:, None]
    return pos, kind, turn_mask


def decode_turns(
    token_level_rewards: torch.Tensor, response_mask: torch.Tensor, index: object = None
) -> DecodedTurns:
    """Read the turns of a verl batch (see the module docstring); ``index``: verl's group ids.

    Raises :class:`ConfigError` when the layout is missing or broken (the rows did not come
    from the empathos agent loop), naming what to configure."""
    if token_level_rewards.shape != response_mask.shape or token_level_rewards.dim() != 2:
        raise ConfigError(
            f"shape {tuple(token_level_rewards.shape)} does not match response_mask "
            f"{tuple(response_mask.shape)} (both (B, L))",
            field="token_level_rewards",
        )
    values = token_level_rewards.detach().float()
    on = response_mask.bool()
    code = _headers(values, ~on)
    _check_rows(values, on, code)
    pos, kind, turn_mask = _turn_table(code)
    length = int(values.shape[1])
    nxt = torch.full_like(pos, length)
    nxt[:, :-1] = torch.where(turn_mask[:, 1:], pos[:, 1:], length)
    spans = torch.stack([pos + 2, nxt], dim=-1)
    rows = torch.arange(pos.shape[0], device=pos.device)[:, None].expand_as(pos)
    opens = on[rows, (pos + 2).clamp_max(max(length - 1, 0))] & (pos + 2 < length)
    scored = turn_mask & (kind == 1)
    bad = (scored & ~opens) | (turn_mask & (kind >= 2) & opens)
    _fail_if(bad, "has a turn header that does not match the policy's tokens after it",
             "response_mask")  # fmt: skip
    sums = turn_kl_from_spans(values.double() * on, spans, turn_mask)
    rewards = torch.where(scored, sums, torch.full_like(sums, float("nan")))
    uid = torch.as_tensor(group_ids(index, int(pos.shape[0])), device=values.device)
    failed = (turn_mask & (kind == 3)).any(dim=1)
    present = turn_mask & ~failed[:, None]  # a failed dialogue has no turn in the batch
    batch = TurnBatch(rewards=rewards, valid=scored & present, turn_mask=present, uid=uid)
    return DecodedTurns(batch=batch, spans=spans, failed=failed)
