"""The turn batch every advantage estimator takes, its configuration and its result.

Shapes (B rollouts, T = the longest horizon in the batch, padded):

- ``rewards``   (B, T) float: r[b, t], the reward of assistant turn t of rollout b. Entries
  where ``valid`` is false are ignored (NaN is the recommended marker: never a silent 0).
- ``valid``     (B, T) bool: the turn exists and its reward is known (the judge scored it).
- ``turn_mask`` (B, T) bool: the turn exists (t < horizon of rollout b); ``valid`` implies it.
  A turn with ``turn_mask & ~valid`` is an *invalid* turn (its judge call failed).
- ``uid``       (B,) int: the group id (scenario) of each rollout; rollouts of one scenario
  share it.

The arrays are all numpy or all torch (``TurnBatch[ArrayT]``); the result uses the same library
(and device): ``AdvantageResult[ArrayT]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, Literal

from pydantic import BaseModel, ConfigDict, Field

from empathos.errors import InputError
from empathos.rl._ops import ArrayT, as_bool, device_of

__all__ = [
    "AdvantageConfig",
    "AdvantageResult",
    "InvalidTurnPolicy",
    "NormScope",
    "Signal",
    "TurnBatch",
]

Signal = Literal["reward", "return"]
NormScope = Literal["batch", "group", "turn", "group_turn"]
InvalidTurnPolicy = Literal["drop", "fill_mean"]


@dataclass(frozen=True)
class TurnBatch(Generic[ArrayT]):
    """Per-turn rewards of a batch of rollouts, padded to (B, T); see the module docstring."""

    rewards: ArrayT
    valid: ArrayT
    turn_mask: ArrayT
    uid: ArrayT

    @property
    def shape(self) -> tuple[int, int]:
        """(B, T)."""
        b, t = tuple(self.rewards.shape)
        return int(b), int(t)

    def check(self) -> None:
        """Raise :class:`InputError` when shapes disagree or a valid turn lies outside the mask."""
        shape = tuple(self.rewards.shape)
        if len(shape) != 2:
            raise InputError(f"must be 2-D (B, T), got shape {shape}", field="rewards")
        for name in ("valid", "turn_mask"):
            got = tuple(getattr(self, name).shape)
            if got != shape:
                raise InputError(f"shape {got} differs from rewards {shape}", field=name)
        if tuple(self.uid.shape) != (shape[0],):
            got_uid = tuple(self.uid.shape)
            raise InputError(f"must have shape ({shape[0]},), got {got_uid}", field="uid")
        device = device_of(self.rewards)
        valid, turn_mask = as_bool(self.valid, device), as_bool(self.turn_mask, device)
        if bool((valid & ~turn_mask).any()):
            raise InputError("a valid turn lies outside turn_mask", field="valid")


class AdvantageConfig(BaseModel):
    """Options of the advantage estimators (MAPO_SPEC section 3); defaults follow the paper."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    alpha: float = Field(
        0.5, ge=0.0, le=1.0, description="Weight a of the turn term: A = a*A_turn + (1-a)*A_batch"
    )
    gamma: float = Field(
        0.85, gt=0.0, le=1.0, description="Discount of the turn-level Monte Carlo return"
    )
    eps: float = Field(1e-6, gt=0.0, description="Added to the standard deviation")
    batch_signal: Signal = Field("reward", description="Signal fed to the wide normalisation")
    batch_scope: NormScope = Field(
        "batch", description="Population of the wide normalisation: 'batch' or 'group' (scenario)"
    )
    turn_signal: Signal = Field("return", description="Signal fed to the per-turn normalisation")
    turn_scope: NormScope = Field(
        "group_turn",
        description="Population of the per-turn normalisation: 'group_turn' = rollouts of the "
        "same scenario that reached turn t (the paper), 'turn' = all rollouts that reached t",
    )
    invalid: InvalidTurnPolicy = Field(
        "drop",
        description="Invalid (unscored) turns: 'drop' = no loss, no reward in returns; "
        "'fill_mean' = train on them with their dialogue's mean valid reward. Never in statistics.",
    )


@dataclass(frozen=True)
class AdvantageResult(Generic[ArrayT]):
    """What every estimator returns.

    - ``advantages`` (B, T) float: the advantage of each turn (0 where ``loss_mask`` is false).
    - ``loss_mask``  (B, T) bool: the turns that enter the policy loss.
    - ``returns``    (B, T) float: the discounted turn-level returns G[b, t] used (0 off-mask).
    - ``stats``: counts and rates (floats), e.g. ``turn/degenerate_rate``, the share of
      normalisation groups with one member or zero spread (they contribute 0).
    """

    advantages: ArrayT
    loss_mask: ArrayT
    returns: ArrayT
    stats: dict[str, float] = field(default_factory=dict)
