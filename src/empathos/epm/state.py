"""Scalar, immutable convenience layer over the vectorised dynamics and termination.

The sandbox's turn loop holds one :class:`EPMState` per dialogue and calls :func:`step` (or
:func:`step_unscored`) after each evaluation, then :func:`check_termination`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict, Field

from empathos.epm.config import EPMConfig
from empathos.epm.dynamics import (
    Thresholds,
    half_space_distance,
    in_zone,
    init_dynamics,
    step_batch,
    thresholds,
)
from empathos.epm.termination import (
    TerminationKind,
    VictoryConditions,
    failure_codes,
    kind_from_code,
    success_codes,
    victory_conditions,
)

__all__ = [
    "EPMPoint",
    "EPMState",
    "Termination",
    "check_termination",
    "init_state",
    "step",
    "step_unscored",
    "victory",
    "victory_checklist",
]


class EPMPoint(BaseModel):
    """The EPM state after one evaluation (turn 0 is the initial point). Numbers are finite."""

    model_config = ConfigDict(frozen=True, allow_inf_nan=False)

    turn: int = Field(ge=0, description="Turn index of the evaluation (0 = initial point).")
    P: tuple[float, ...] = Field(description="Latent state P_t, one value per axis.")
    v: tuple[float, ...] | None = Field(
        description="Action vector v_t (zeros at turn 0; None when unscored)."
    )
    delta_E: float | None = Field(description="Energy increment (None when unscored).")
    E_total: float = Field(description="Cumulative energy after this evaluation.")
    alignment: float | None = Field(description="cos(v_t, ideal direction); None if unscored.")
    projection: float = Field(description="P_t . v*_0.")
    p_norm: float = Field(description="||P_t||.")
    distance: float = Field(description="Half-space distance d(P_t) with eps = zone_eps.")
    in_zone: bool = Field(description="Every axis >= -zone_eps.")
    scored: bool = Field(default=True, description="False when the judge failed (unscored).")


class Termination(BaseModel):
    """How and when a dialogue ended."""

    model_config = ConfigDict(frozen=True)

    kind: TerminationKind = Field(description="Termination kind.")
    turn: int = Field(ge=0, description="Turn at which the dialogue ended.")
    reason: str = Field(default="", description="Human-readable reason.")


@dataclass(frozen=True, slots=True)
class EPMState:
    """Immutable EPM state of one dialogue; ``points[0]`` is the turn-0 point."""

    P0: tuple[float, ...]
    r0: float
    v_star0: tuple[float, ...]
    points: tuple[EPMPoint, ...]

    @property
    def last(self) -> EPMPoint:
        """The latest point."""
        return self.points[-1]

    @property
    def turn(self) -> int:
        """Turn of the latest evaluation."""
        return self.last.turn

    @property
    def n_unscored(self) -> int:
        """Number of unscored evaluations so far."""
        return sum(1 for p in self.points if not p.scored)

    @property
    def n_evaluations(self) -> int:
        """Number of evaluations so far (turn-0 point excluded)."""
        return len(self.points) - 1


def init_state(P0: Sequence[float], config: EPMConfig) -> EPMState:
    """The state before the first turn: P = P0, E_total = 0."""
    arr = np.asarray(P0, dtype=np.float64)
    r0, vs = init_dynamics(arr[None, :])
    point = EPMPoint(
        turn=0,
        P=tuple(arr.tolist()),
        v=tuple(0.0 for _ in arr),
        delta_E=0.0,
        E_total=0.0,
        alignment=0.0,
        projection=float(arr @ vs[0]),
        p_norm=float(r0[0]),
        distance=float(half_space_distance(arr, config.zone_eps)),
        in_zone=bool(in_zone(arr, config.zone_eps)),
    )
    return EPMState(tuple(arr.tolist()), float(r0[0]), tuple(vs[0].tolist()), (point,))


def step(
    state: EPMState, v: Sequence[float], config: EPMConfig, turn: int | None = None
) -> EPMState:
    """Apply one scored evaluation with action vector v (shape (D,))."""
    last = state.last
    res = step_batch(
        np.asarray([last.P]), np.asarray([last.E_total]), np.asarray([v]),
        np.asarray([state.v_star0]), config,
    )  # fmt: skip
    point = EPMPoint(
        turn=state.turn + config.eval_every if turn is None else turn,
        P=tuple(res.P[0].tolist()),
        v=tuple(float(x) for x in v),
        delta_E=float(res.delta_E[0]),
        E_total=float(res.E_total[0]),
        alignment=float(res.alignment[0]),
        projection=float(res.projection[0]),
        p_norm=float(res.p_norm[0]),
        distance=float(res.distance[0]),
        in_zone=bool(res.in_zone[0]),
    )
    return replace(state, points=(*state.points, point))


def step_unscored(state: EPMState, config: EPMConfig, turn: int | None = None) -> EPMState:
    """Record an unscored evaluation: P and E_total unchanged, no delta_E."""
    last = state.last
    point = last.model_copy(
        update={
            "turn": state.turn + config.eval_every if turn is None else turn,
            "v": None,
            "delta_E": None,
            "alignment": None,
            "scored": False,
        }
    )
    return replace(state, points=(*state.points, point))


def _scored(state: EPMState) -> list[EPMPoint]:
    return [p for p in state.points if p.scored]


_Latest = tuple[
    int, NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64],
    NDArray[np.bool_], Thresholds,
]  # fmt: skip


def _latest(state: EPMState, config: EPMConfig) -> _Latest:
    """The arguments of the victory rule at the latest point, arrays of shape (1,): turn,
    |P|, projection, rounded-later E_total, mean alignment (t = 0 left out), zone, thresholds."""
    last = state.last
    aligns = [p.alignment or 0.0 for p in _scored(state)[1:]]
    return (
        state.turn,
        np.asarray([last.p_norm]),
        np.asarray([last.projection]),
        np.asarray([last.E_total]),
        np.asarray([float(np.mean(aligns)) if aligns else 0.0]),
        np.asarray([last.in_zone]),
        thresholds(np.asarray([state.r0]), config),
    )


def victory_checklist(state: EPMState, config: EPMConfig) -> VictoryConditions:
    """Each condition of the active success rule at the latest point, as :func:`victory`
    tests them (same rounding, same strict or non-strict comparisons); arrays of shape (1,)."""
    return victory_conditions(*_latest(state, config), config)


def victory(state: EPMState, config: EPMConfig) -> TerminationKind | None:
    """The success kind whose conditions hold now (None if none); respects min_turns."""
    code = success_codes(*_latest(state, config), config)
    return kind_from_code(int(code[0]))


def _failure(state: EPMState, config: EPMConfig) -> TerminationKind | None:
    scored = _scored(state)
    dE = np.asarray([[p.delta_E or 0.0 for p in scored]])
    pn = np.asarray([[p.p_norm for p in scored]])
    code = failure_codes(state.turn, dE, pn, np.asarray([len(scored)]), config)
    return kind_from_code(int(code[0]))


_REASONS = {
    TerminationKind.SUCCESS_GEOMETRIC: "reached the neighbourhood of the origin",
    TerminationKind.SUCCESS_POSITIONAL: "crossed into the target half-space with enough energy",
    TerminationKind.SUCCESS_COMPANIONSHIP: "sustained well-aligned support with enough energy",
    TerminationKind.FAILURE_COLLAPSE: "consecutive negative-energy evaluations (collapse)",
    TerminationKind.FAILURE_STAGNATION_REGRESSION: "stagnation with persistent regression",
    TerminationKind.TIMEOUT: "reached the maximum number of turns",
}


def check_termination(state: EPMState, config: EPMConfig) -> Termination | None:
    """Check after an evaluation, in the spec's order: success, failure, timeout.

    Unscored evaluations are skipped by the detectors; a dialogue whose unscored share exceeds
    ``unscored_share_limit`` ends as ``error`` once it would end anyway or reaches min_turns.
    A director stop is not decided here: victory is checked first and would already end the
    dialogue after an evaluation, so the director can only stop between evaluations (K > 1),
    when :func:`victory` holds at that turn (see ``empathos.sandbox.transitions``).
    """
    t = state.turn
    kind = victory(state, config) or _failure(state, config)
    if kind is None and t >= config.max_turns:
        kind = TerminationKind.TIMEOUT
    n = state.n_evaluations
    share = state.n_unscored / n if n else 0.0
    if share > config.unscored_share_limit and (kind is not None or t >= config.min_turns):
        return Termination(
            kind=TerminationKind.ERROR,
            turn=t,
            reason=f"{state.n_unscored} of {n} evaluations unscored "
            f"(limit {config.unscored_share_limit:.0%})",
        )
    if kind is None:
        return None
    return Termination(kind=kind, turn=t, reason=_REASONS[kind])
