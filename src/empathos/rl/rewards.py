"""Per-turn rewards of a dialogue (MAPO_SPEC section 2), from quantities of the EPM trajectory.

Shapes: B dialogues, T turns. Trajectory quantities carry the t = 0 point, so they have T + 1
columns. An unscored turn (``valid`` false) gets NaN: it has no reward of its own and the
estimators exclude it from every statistic (never a silent 0).

- ``distance``: r_t = d(P_{t-1}) - d(P_t) with d the half-space distance (EPM section 4);
  positive when the turn moved the user toward resolution; telescopes to d(P_0) - d(P_T).
- ``delta_e``: r_t = delta_E_t, the energy increment along the ideal direction.
- ``potential``: r_t = g * Phi(P_t) - Phi(P_{t-1}) with Phi = a / (a + ||P_t||).

SAGE's emotion as the reward source (docs/bench.md, "SAGE"; e_t the simulated user's emotion,
0-100, after turn t, e_0 = 40):

- ``emotion``: r_t = (e_t - e_{t-1}) / 100, the turn's emotion change; telescopes to
  (e_T - e_0) / 100;
- ``emotion_outcome``: the final emotion e_T / 100 on the dialogue's last turn and 0 on the
  others (as RLVER rewards a whole dialogue).

One implementation, on torch: numpy arrays in give a float64 numpy array out; torch tensors in
(any device) give a float64 tensor on the same device, with the same numbers (property-tested).
Pure: no I/O. The caller computes d(P_t), ||P_t|| and delta_E with :mod:`empathos.epm` (numpy)
or its own torch code.
"""

from __future__ import annotations

from typing import Literal

import torch

from empathos.rl._ops import Array, ArrayT, as_bool, as_float, restore

__all__ = [
    "EmotionRewardKind",
    "RewardKind",
    "delta_e_rewards",
    "distance_rewards",
    "emotion_outcome_rewards",
    "emotion_rewards",
    "potential_rewards",
]

RewardKind = Literal["distance", "delta_e", "potential"]
EmotionRewardKind = Literal["emotion", "emotion_outcome"]
#: The emotion scale: rewards are emotion points / 100.
EMOTION_SCALE = 100.0


def _mark_invalid(r: torch.Tensor, valid: Array, like: ArrayT) -> ArrayT:
    return restore(torch.where(as_bool(valid, r.device), r, float("nan")), like)


def distance_rewards(distance: ArrayT, valid: Array) -> ArrayT:
    """(B, T) rewards d(P_{t-1}) - d(P_t) from ``distance`` (B, T + 1), the half-space distance
    of each trajectory point (column 0 = P_0); NaN where ``valid`` (B, T) is false."""
    d = as_float(distance)
    return _mark_invalid(d[:, :-1] - d[:, 1:], valid, distance)


def delta_e_rewards(delta_e: ArrayT, valid: Array) -> ArrayT:
    """(B, T) rewards delta_E_t from ``delta_e`` (B, T); NaN where ``valid`` is false."""
    return _mark_invalid(as_float(delta_e), valid, delta_e)


def potential_rewards(norm: ArrayT, valid: Array, a: float = 9.0, g: float = 0.99) -> ArrayT:
    """(B, T) potential-based rewards g * Phi(P_t) - Phi(P_{t-1}), Phi = a / (a + ||P||), from
    ``norm`` (B, T + 1) = ||P_t|| per trajectory point; NaN where ``valid`` is false."""
    phi = a / (a + as_float(norm))
    return _mark_invalid(g * phi[:, 1:] - phi[:, :-1], valid, norm)


def emotion_rewards(emotion: ArrayT, valid: Array) -> ArrayT:
    """(B, T) rewards (e_t - e_{t-1}) / 100 from ``emotion`` (B, T + 1), the simulated user's
    emotion after each turn (column 0: before the first reply); NaN where ``valid`` is false."""
    e = as_float(emotion)
    return _mark_invalid((e[:, 1:] - e[:, :-1]) / EMOTION_SCALE, valid, emotion)


def emotion_outcome_rewards(emotion: ArrayT, valid: Array, turn_mask: Array) -> ArrayT:
    """(B, T) rewards: the final emotion / 100 on each dialogue's last turn (the last True of
    ``turn_mask``), 0 on its other turns; NaN where ``valid`` is false (a dialogue whose last
    turn is invalid has no outcome reward)."""
    e = as_float(emotion) / EMOTION_SCALE
    mask = as_bool(turn_mask, e.device)
    t = mask.shape[1]
    steps = torch.arange(t, device=e.device)
    last = torch.where(mask, steps, -1).max(dim=1).values  # (B,)
    final = e.gather(1, (last + 1).clamp(min=0)[:, None])  # e after the last turn
    r = torch.where(steps[None, :] == last[:, None], final, torch.zeros_like(final))
    return _mark_invalid(r, valid, emotion)
