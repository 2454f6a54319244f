"""Scalar, immutable convenience layer over the vectorised dynamics and termination.

The sandbox's turn loop holds one :class:`EPMState` per dialogue and calls :func:`step` (or
:func:`step_unscored`) after each evaluation, then :func:`check_termination`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from empathos.epm.config import EPMConfig
from empathos.epm.dynamics import (
    _TINY,
    Thresholds,
    half_space_distance,
    in_zone,
    init_dynamics,
    round_to,
    thresholds,
)
from empathos.epm.termination import (
    TerminationKind,
    VictoryConditions,
    code_of,
    kind_from_code,
    success_codes_of,
)

__all__ = [
    "EPMPoint",
    "EPMState",
    "Termination",
    "check_termination",
    "failure_code",
    "init_state",
    "step",
    "step_unscored",
    "thresholds_of",
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
    # What the checks below derive from this (immutable) state, per config: each evaluation
    # asks for the victory conditions and thresholds several times (termination check, the
    # director's packet before and after its action). Not part of equality or repr.
    _derived: dict[str, tuple[EPMConfig, Any]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

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
    """Apply one scored evaluation with action vector v (shape (D,)).

    :func:`~empathos.epm.dynamics.step_batch` for one dialogue, in Python floats: the same
    IEEE operations in the same order (numpy adds a short last axis left to right), so the
    same bits, without numpy's per-call overhead on arrays of one row (~100 us a step);
    tests/epm pin the two together."""
    last = state.last
    P_prev, vs0 = last.P, state.v_star0
    va = tuple(float(x) for x in v)
    if len(va) != len(P_prev):
        raise ValueError(f"action vector has {len(va)} axes, the state {len(P_prev)}")
    direction = vs0 if config.direction == "fixed" else _ideal_direction(P_prev)
    delta = _dot(va, direction)
    v_norm = _norm(va)
    P_new = tuple(p + x for p, x in zip(P_prev, va, strict=True))
    gap = tuple(max(0.0, -config.zone_eps - p) for p in P_new)
    point = EPMPoint(
        turn=state.turn + config.eval_every if turn is None else turn,
        P=P_new,
        v=va,
        delta_E=delta,
        E_total=last.E_total + delta,
        alignment=delta / v_norm if v_norm > _TINY else 0.0,
        projection=_dot(P_new, vs0),
        p_norm=_norm(P_new),
        distance=_norm(gap),
        in_zone=all(p >= -config.zone_eps for p in P_new),
    )
    new = replace(state, points=(*state.points, point))
    if "thresholds" in state._derived:  # they depend on r0 and the config only
        new._derived["thresholds"] = state._derived["thresholds"]
    return new


def _dot(a: Sequence[float], b: Sequence[float]) -> float:
    """sum(a_i * b_i) as numpy sums a last axis: left to right below 8 values (the rubric's
    3 axes); from 8 on numpy's pairwise sum itself."""
    if len(a) >= 8:
        return float(np.sum(np.asarray([a]) * np.asarray([b]), axis=-1)[0])
    total = a[0] * b[0]
    for x, y in zip(a[1:], b[1:], strict=True):
        total += x * y
    return total


def _norm(a: Sequence[float]) -> float:
    return math.sqrt(_dot(a, a))


def _ideal_direction(P: Sequence[float]) -> tuple[float, ...]:
    n = _norm(P)
    return tuple(-p / n for p in P) if n > _TINY else tuple(0.0 for _ in P)


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


_T = TypeVar("_T")


def _derived(state: EPMState, config: EPMConfig, key: str, compute: Callable[[], _T]) -> _T:
    """``compute()``, once per state and config (the state and the config are immutable)."""
    hit = state._derived.get(key)
    if hit is not None and hit[0] is config:
        return hit[1]  # type: ignore[no-any-return]
    value = compute()
    state._derived[key] = (config, value)
    return value


def thresholds_of(state: EPMState, config: EPMConfig) -> Thresholds:
    """The dialogue's thresholds (from r0), arrays of shape (1,)."""
    return _derived(state, config, "thresholds", lambda: thresholds([state.r0], config))


def _round(x: float, decimals: int | None) -> float:
    """:func:`~empathos.epm.dynamics.round_to` of one float: numpy rounds to ``decimals`` >= 0
    as rint(x * 10**d) / 10**d, and round() of a float is round-half-even like rint."""
    if decimals is None:
        return x
    if decimals < 0:
        return float(round_to(x, decimals))
    scale = 10.0**decimals
    return float(round(x * scale)) / scale


def _mean_alignment(state: EPMState) -> float:
    """Mean alignment over the scored evaluations, the t = 0 point left out (numpy's mean:
    its pairwise sum differs from a Python sum from 8 values on)."""
    aligns = [p.alignment or 0.0 for p in _scored(state)[1:]]
    return float(np.mean(aligns)) if aligns else 0.0


def victory_checklist(state: EPMState, config: EPMConfig) -> VictoryConditions:
    """Each condition of the active success rule at the latest point, as
    :func:`~empathos.epm.termination.victory_conditions` tests them (same rounding, same
    strict or non-strict comparisons), computed in Python floats; arrays of shape (1,)."""

    def compute() -> VictoryConditions:
        last, th = state.last, thresholds_of(state, config)
        eps_dist, eps_dir, eps_energy = (
            float(th.eps_dist[0]), float(th.eps_dir[0]), float(th.eps_energy[0]),
        )  # fmt: skip
        e = _round(last.E_total, config.energy_decimals)
        if config.success_rule == "reference":
            energy, near = e >= eps_energy, last.p_norm <= eps_dist
            second = last.projection >= -eps_dir
        else:
            energy, near = e > eps_energy, last.p_norm < eps_dist
            second = _mean_alignment(state) > config.tau_align
        # The in-zone rule has its own, non-strict energy condition under both presets.
        zone = last.in_zone and e >= eps_energy and config.in_zone_success
        return VictoryConditions(
            *(np.array([flag]) for flag in (state.turn >= config.min_turns, energy, near,
                                            second, zone))
        )  # fmt: skip

    return _derived(state, config, "victory", compute)


def victory(state: EPMState, config: EPMConfig) -> TerminationKind | None:
    """The success kind whose conditions hold now (None if none); respects min_turns."""
    code = success_codes_of(victory_checklist(state, config), config)
    return kind_from_code(int(code[0]))


def _sum(xs: Sequence[float]) -> float:
    """sum(xs) as numpy sums a last axis: left to right below 8 values; from 8 on numpy's
    pairwise sum itself."""
    if len(xs) >= 8:
        return float(np.sum(np.asarray(xs)))
    total = xs[0]
    for x in xs[1:]:
        total += x
    return total


def _sample_std(xs: Sequence[float]) -> float:
    """numpy's ``std(xs, ddof=1)``, operation for operation (mean, squared deviations, their
    sum over n - 1, the square root)."""
    mean = _sum(xs) / len(xs)
    return math.sqrt(_sum([(x - mean) * (x - mean) for x in xs]) / (len(xs) - 1))


def failure_code(
    turn: int, delta_E: Sequence[float], p_norm: Sequence[float], config: EPMConfig
) -> int:
    """:func:`~empathos.epm.termination.failure_codes` of one dialogue in Python floats (its
    very bits: the same sums in the same order); ``delta_E`` and ``p_norm`` are the scored
    points' histories, the t = 0 point included."""
    if turn < config.min_turns:
        return 0
    w = config.collapse_window
    if len(delta_E) >= w and all(x < 0 for x in delta_E[-w:]):
        return code_of(TerminationKind.FAILURE_COLLAPSE)
    w = config.stagnation_window
    if len(p_norm) < w:
        return 0
    std = _sample_std(p_norm[-w:]) if w > 1 else 0.0
    n = config.regression_window
    if std < config.stagnation_std and len(delta_E) >= n:
        last = delta_E[-n:]
        negative = sum(x < 0 for x in last)
        if negative > config.regression_ratio * n and _sum(last) < config.regression_sum:
            return code_of(TerminationKind.FAILURE_STAGNATION_REGRESSION)
    return 0


def _failure(state: EPMState, config: EPMConfig) -> TerminationKind | None:
    def code() -> int:
        scored = _scored(state)
        dE = [p.delta_E or 0.0 for p in scored]
        return failure_code(state.turn, dE, [p.p_norm for p in scored], config)

    return kind_from_code(_derived(state, config, "failure", code))


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
    if t < config.min_turns and t < config.max_turns:
        return None  # success, failure and the unscored-share error all wait for min_turns
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
