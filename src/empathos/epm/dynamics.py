"""EPM dynamics (EPM_SPEC section 4), vectorised over a leading batch axis.

Shapes: N = batch (dialogues / episodes), D = axes. All functions are pure.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from empathos.epm.config import EPMConfig

__all__ = [
    "MIN_START_DISTANCE",
    "StepResult",
    "Thresholds",
    "alignment",
    "half_space_distance",
    "ideal_direction",
    "in_zone",
    "init_dynamics",
    "round_to",
    "start_problem",
    "step_batch",
    "thresholds",
]

F64 = NDArray[np.float64]
_TINY = 1e-12
#: The smallest distance to the goal (the half-space distance d(P_0), EPM_SPEC 4) a dialogue
#: may start from: sqrt(27), the largest step toward the goal one evaluation can make (every
#: Prog at level 2). From closer, one reply can close the whole gap, so the trajectory measures
#: nothing, the success thresholds (alpha * r_0, r_0) collapse, and the indices that divide by
#: the start distance (RDI, E_tot, S_net) are undefined or absurd. d(P_0) <= ||P_0||, so the
#: bound holds for the norm (the paper's r_0) too.
MIN_START_DISTANCE = math.sqrt(27.0)


def round_to(x: ArrayLike, decimals: int | None) -> F64:
    """Round to ``decimals`` (None: unchanged), as float64."""
    arr = np.asarray(x, dtype=np.float64)
    return arr if decimals is None else np.round(arr, decimals)


def half_space_distance(P: ArrayLike, eps: float = 1.0) -> F64:
    """Distance of P (shape (..., D)) to the region where every axis >= -eps; shape (...)."""
    arr = np.asarray(P, dtype=np.float64)
    gap = np.maximum(0.0, -eps - arr)
    return np.asarray(np.sqrt(np.sum(gap * gap, axis=-1)), dtype=np.float64)


def start_problem(P0: Sequence[float], eps: float = 1.0) -> str | None:
    """Why ``P0`` cannot start a dialogue (None: it can): its half-space distance to the goal
    is below :data:`MIN_START_DISTANCE` (a zero deficit, a positive one, or a tiny one)."""
    d = float(half_space_distance(np.asarray(P0, dtype=np.float64), eps))
    if d >= MIN_START_DISTANCE:
        return None
    shown = ", ".join(f"{x:g}" for x in P0)
    return (
        f"degenerate starting point P_0 = ({shown}): distance to the goal {d:.2f}, below the "
        f"minimum {MIN_START_DISTANCE:.2f} (one judge step; docs/epm.md)"
    )


def in_zone(P: ArrayLike, eps: float = 1.0) -> NDArray[np.bool_]:
    """True where every axis of P (shape (..., D)) is >= -eps; shape (...)."""
    return np.asarray(np.all(np.asarray(P, dtype=np.float64) >= -eps, axis=-1))


def ideal_direction(P: ArrayLike) -> F64:
    """-P / ||P|| for P of shape (..., D); the zero vector where P = 0."""
    arr = np.asarray(P, dtype=np.float64)
    norm = np.linalg.norm(arr, axis=-1, keepdims=True)
    safe = np.where(norm > _TINY, norm, 1.0)
    return np.where(norm > _TINY, -arr / safe, 0.0)


def alignment(v: ArrayLike, direction: ArrayLike) -> F64:
    """(v . dir) / ||v|| over the last axis; 0 where v = 0. Shapes (..., D) -> (...)."""
    va = np.asarray(v, dtype=np.float64)
    dot = np.sum(va * np.asarray(direction, dtype=np.float64), axis=-1)
    norm = np.linalg.norm(va, axis=-1)
    return np.where(norm > _TINY, dot / np.where(norm > _TINY, norm, 1.0), 0.0)


class Thresholds(NamedTuple):
    """Per-dialogue thresholds, each of shape (N,)."""

    eps_dist: F64
    eps_dir: F64
    eps_energy: F64


def thresholds(r0: ArrayLike, config: EPMConfig) -> Thresholds:
    """eps_dist = eps_dir = alpha * r0, eps_energy = r0, rounded per the config."""
    r = np.asarray(r0, dtype=np.float64)
    dist = round_to(config.alpha * r, config.threshold_decimals)
    return Thresholds(dist, dist.copy(), round_to(r, config.threshold_decimals))


def init_dynamics(P0: ArrayLike) -> tuple[F64, F64]:
    """From P0 (N, D): r0 = ||P0|| of shape (N,) and v*_0 = -P0 / r0 of shape (N, D)."""
    arr = np.asarray(P0, dtype=np.float64)
    return np.linalg.norm(arr, axis=-1), ideal_direction(arr)


class StepResult(NamedTuple):
    """Outcome of one vectorised step; every array has a leading N axis.

    P (N, D), E_total (N,), delta_E (N,), alignment (N,), projection (N,) = P . v*_0,
    p_norm (N,), distance (N,) half-space distance, in_zone (N,) bool.
    """

    P: F64
    E_total: F64
    delta_E: F64
    alignment: F64
    projection: F64
    p_norm: F64
    distance: F64
    in_zone: NDArray[np.bool_]


def step_batch(
    P: ArrayLike, E_total: ArrayLike, v: ArrayLike, v_star0: ArrayLike, config: EPMConfig
) -> StepResult:
    """One evaluation for a batch: P (N, D) + v (N, D), energy along the configured direction.

    ``direction="fixed"`` uses v_star0 (N, D); ``"current"`` uses -P_{t-1}/||P_{t-1}||.
    """
    P_prev = np.asarray(P, dtype=np.float64)
    va = np.asarray(v, dtype=np.float64)
    vs0 = np.asarray(v_star0, dtype=np.float64)
    direction = vs0 if config.direction == "fixed" else ideal_direction(P_prev)
    delta = np.sum(va * direction, axis=-1)
    P_new = P_prev + va
    return StepResult(
        P=P_new,
        E_total=np.asarray(E_total, dtype=np.float64) + delta,
        delta_E=delta,
        alignment=alignment(va, direction),
        projection=np.sum(P_new * vs0, axis=-1),
        p_norm=np.linalg.norm(P_new, axis=-1),
        distance=half_space_distance(P_new, config.zone_eps),
        in_zone=in_zone(P_new, config.zone_eps),
    )
