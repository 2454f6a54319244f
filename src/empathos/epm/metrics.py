"""EPM-Q (EPM_SPEC section 6), vectorised over dialogues.

A batch of N dialogues is padded to L points (the turn-0 point included). Padding repeats a
dialogue's last point (so it adds no path length) and is excluded through ``mask``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from empathos.epm.config import EPMConfig
from empathos.epm.dynamics import MIN_START_DISTANCE, half_space_distance

__all__ = [
    "GROUPS",
    "INDEX_NAMES",
    "TrajectoryBatch",
    "aggregate_indices",
    "dialogue_indices",
    "signed_tau_index",
    "tortuosity",
]

F64 = NDArray[np.float64]
INDEX_NAMES: tuple[str, ...] = (
    "RDI", "E_tot", "S_net", "Rho", "S_proj", "Tau", "R_pos", "Align", "Pen",
)  # fmt: skip
GROUPS: dict[str, tuple[str, ...]] = {
    "outcome": ("RDI", "E_tot", "S_net"),
    "efficiency": ("Rho", "S_proj", "Tau"),
    "stability": ("R_pos", "Align", "Pen"),
}
_TINY = 1e-9
_RHO_MAX_PAPER = float(np.sqrt(12.0))


class TrajectoryBatch(NamedTuple):
    """Padded trajectories of N dialogues with L points each (scored points only).

    P: (N, L, D) positions, turn 0 first; delta_E, alignment: (N, L), 0 at turn 0;
    mask: (N, L) bool, True for real points; E_total: (N,) final cumulative energy;
    turns: (N,) the dialogue's number of turns T; level_sum: (N,) sum of every raw MDEP
    level (Prog 0..2 plus Neg 0..-2) over rated points; neg_level_sum: (N,) sum of the
    absolute raw Neg levels.
    """

    P: F64
    delta_E: F64
    alignment: F64
    mask: NDArray[np.bool_]
    E_total: F64
    turns: F64
    level_sum: F64
    neg_level_sum: F64


def _last_point(batch: TrajectoryBatch) -> F64:
    idx = np.maximum(batch.mask.sum(axis=1) - 1, 0)
    return np.asarray(batch.P[np.arange(batch.P.shape[0]), idx], dtype=np.float64)


def tortuosity(batch: TrajectoryBatch) -> F64:
    """tau per dialogue, shape (N,): path length / net displacement, floored at 1."""
    seg = np.linalg.norm(np.diff(batch.P, axis=1), axis=-1) * batch.mask[:, 1:]
    length = seg.sum(axis=1)
    disp = np.linalg.norm(_last_point(batch) - batch.P[:, 0], axis=-1)
    small = disp < _TINY
    tau = np.where(small, np.where(length < _TINY, 1.0, 0.0), length / np.where(small, 1, disp))
    return np.asarray(np.maximum(tau, 1.0), dtype=np.float64)


def _phi(x: F64, x0: float, x100: float) -> F64:
    return np.clip((x - x0) / (x100 - x0) * 100.0, 0.0, 100.0)


def dialogue_indices(batch: TrajectoryBatch, config: EPMConfig) -> F64:
    """The nine indices per dialogue, shape (N, 9), columns in :data:`INDEX_NAMES` order.

    A dialogue that starts closer to the goal than :data:`MIN_START_DISTANCE` (see
    :func:`~empathos.epm.dynamics.start_problem`) has no RDI, E_tot or S_net: they divide by
    the start distance, so they are NaN (undefined), never a huge number. Scoring refuses
    such records before they get here."""
    m = batch.mask
    npts = np.maximum(m.sum(axis=1), 1)
    mean_dE = (batch.delta_E * m).sum(axis=1) / npts
    mean_align = (batch.alignment * m).sum(axis=1) / npts
    r_pos = ((batch.delta_E > 0) & m).sum(axis=1) / npts * 100.0
    r_pen = batch.neg_level_sum / npts
    tau = tortuosity(batch)
    E = batch.E_total
    T = np.maximum(batch.turns, 1)
    P0, PT = batch.P[:, 0], _last_point(batch)
    d0 = half_space_distance(P0, config.zone_eps)
    undefined = d0 < MIN_START_DISTANCE
    if config.scoring == "reference":
        eps = config.zone_eps
        r0 = np.where(undefined, 1.0, d0)
        rdi_pct = (r0 - half_space_distance(PT, eps)) / r0 * 100.0
        cols = [
            np.clip((rdi_pct + 100.0) / 2.0, 0.0, 100.0),
            np.maximum(0.0, E) / (1.2 * r0) * 100.0,
            np.maximum(0.0, batch.level_sum) / (1.5 * r0) * 100.0,
            np.maximum(0.0, E / T) / 2.5 * 100.0,
            np.maximum(0.0, mean_dE) / 2.5 * 100.0,
            np.maximum(0.0, (3.0 - tau) / 2.0 * 100.0),
            r_pos,
            (mean_align + 1.0) / 2.0 * 100.0,
            np.maximum(0.0, (3.0 - r_pen) / 3.0 * 100.0),
        ]
    else:
        r0 = np.linalg.norm(P0, axis=-1) + 1e-6
        s_net = (PT - P0).sum(axis=-1)
        cols = [
            _phi((r0 - np.linalg.norm(PT, axis=-1)) / r0, -1.0, 1.0),
            np.maximum(0.0, E) / r0 * 100.0,
            np.maximum(0.0, s_net) / (1.2 * r0) * 100.0,
            np.maximum(0.0, E / T) / _RHO_MAX_PAPER * 100.0,
            np.maximum(0.0, mean_dE) / _RHO_MAX_PAPER * 100.0,
            _phi(tau, 3.0, 1.0),
            r_pos,
            _phi(mean_align, -1.0, 1.0),
            _phi(r_pen, 3.0, 0.0),
        ]
    out = np.stack(cols, axis=1)
    out[undefined, :3] = np.nan  # RDI, E_tot, S_net: relative to the start distance
    return out


def signed_tau_index(batch: TrajectoryBatch, config: EPMConfig) -> F64:
    """Direction-aware Tau index (EPM_SPEC 6.3), shape (N,).

    Like Tau, but a dialogue whose final distance to the goal is larger than its initial one
    (half-space distance under ``reference`` scoring, the norm under ``paper``) gets the worst
    value, 0, however straight its path.
    """
    P0, PT = batch.P[:, 0], _last_point(batch)
    if config.scoring == "reference":
        worse = half_space_distance(PT, config.zone_eps) > half_space_distance(P0, config.zone_eps)
        base = np.maximum(0.0, (3.0 - tortuosity(batch)) / 2.0 * 100.0)
    else:
        worse = np.linalg.norm(PT, axis=-1) > np.linalg.norm(P0, axis=-1)
        base = _phi(tortuosity(batch), 3.0, 1.0)
    return np.where(worse, 0.0, base)


def aggregate_indices(indices: F64, config: EPMConfig) -> dict[str, float]:
    """Model-level scores from per-dialogue indices (N, 9): each index averaged first.

    Returns the nine index means, the three group means and ``epmq``.
    """
    means = np.asarray(indices, dtype=np.float64).mean(axis=0)
    out = {name: float(v) for name, v in zip(INDEX_NAMES, means, strict=True)}
    for group, names in GROUPS.items():
        out[group] = float(np.mean([out[n] for n in names]))
    w_o, w_e, w_s = config.weights
    out["epmq"] = w_o * out["outcome"] + w_e * out["efficiency"] + w_s * out["stability"]
    return out
