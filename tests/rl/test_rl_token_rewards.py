"""Token-level rewards <-> turns (the layout verl uses), checked against per-turn loops."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from empathos.errors import InputError
from empathos.rl import AdvantageConfig, broadcast_from_response_mask, compute_advantages
from empathos.rl.token_rewards import place_turn_rewards, turn_batch_from_tokens, turn_ends


def _layout(turn_lengths: list[list[int]], gap: int = 3, length: int = 48) -> torch.Tensor:
    """A response mask: per row, assistant runs of the given lengths separated by user gaps."""
    mask = torch.zeros((len(turn_lengths), length), dtype=torch.long)
    for b, lengths in enumerate(turn_lengths):
        pos = 0
        for n in lengths:
            mask[b, pos : pos + n] = 1
            pos += n + gap
    return mask


LENGTHS = [[4, 2, 5], [3, 3], [6], [2, 2, 2, 2], [5, 1]]


def test_turn_ends_are_the_last_token_of_each_run() -> None:
    mask = _layout(LENGTHS)
    ends, turn_mask = turn_ends(mask)
    for b, lengths in enumerate(LENGTHS):
        pos, expected = 0, []
        for n in lengths:
            expected.append(pos + n - 1)
            pos += n + 3
        assert ends[b, : len(lengths)].tolist() == expected
        assert turn_mask[b].tolist() == [k < len(lengths) for k in range(4)]


def test_place_then_read_back_keeps_scores_and_marks_missing_turns_unscored() -> None:
    mask = _layout(LENGTHS)
    scores = [[0.5, -1.0, 2.0], [1.0], [0.25], [0.0, 1.0, 2.0, 3.0], [4.0, None]]
    dense = place_turn_rewards(scores, mask)  # type: ignore[arg-type]
    assert float(dense[mask == 0].abs().sum()) == 0.0  # nothing on user tokens
    batch, _ = turn_batch_from_tokens(dense, mask, index=["a", "a", "b", "c", "c"])
    for b, row in enumerate(scores):
        for k in range(len(LENGTHS[b])):
            value = row[k] if k < len(row) else None
            got = float(batch.rewards[b, k])
            if value is None:
                assert math.isnan(got) and not bool(batch.valid[b, k])
            else:
                assert got == value and bool(batch.valid[b, k])
    assert batch.uid.tolist() == [0, 0, 1, 2, 2]


def test_more_scores_than_turns_is_an_error() -> None:
    with pytest.raises(InputError, match="turn scores"):
        place_turn_rewards([[1.0, 2.0]], _layout([[3]]))


def test_token_advantages_equal_the_turn_estimator_spread_over_each_turn() -> None:
    rng = np.random.default_rng(3)
    mask = _layout(LENGTHS)
    scores = [list(rng.normal(size=len(n))) for n in LENGTHS]
    scores[1][1] = float("nan")  # an unscored turn
    uid = ["s1", "s1", "s2", "s2", "s3"]
    batch, _ = turn_batch_from_tokens(place_turn_rewards(scores, mask), mask, uid)
    result = compute_advantages("mapo_dialogue", batch, AdvantageConfig())
    tokens, in_loss = broadcast_from_response_mask(result.advantages, result.loss_mask, mask)
    for b, lengths in enumerate(LENGTHS):
        pos = 0
        for k, n in enumerate(lengths):
            span = tokens[b, pos : pos + n]
            assert torch.all(span == result.advantages[b, k])
            assert bool(in_loss[b, pos : pos + n].all()) == bool(result.loss_mask[b, k])
            pos += n + 3
    assert not bool(result.loss_mask[1, 1])  # the unscored turn is out of the loss
