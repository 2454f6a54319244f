"""Termination (EPM_SPEC section 5), vectorised over a leading batch axis.

Termination kinds travel through arrays as small integer codes (``TERMINATION_CODES``);
code 0 means "continue".
"""

from __future__ import annotations

from enum import StrEnum
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from empathos.epm.config import EPMConfig
from empathos.epm.dynamics import Thresholds, round_to

__all__ = [
    "CONTINUE",
    "TERMINATION_CODES",
    "TerminationKind",
    "VictoryConditions",
    "code_of",
    "failure_codes",
    "kind_from_code",
    "success_codes",
    "success_codes_of",
    "termination_codes",
    "victory_conditions",
]

F64 = NDArray[np.float64]
I8 = NDArray[np.int8]


class TerminationKind(StrEnum):
    """How a dialogue ended. ``error`` is never a model failure."""

    SUCCESS_GEOMETRIC = "success_geometric"
    SUCCESS_POSITIONAL = "success_positional"
    SUCCESS_COMPANIONSHIP = "success_companionship"
    FAILURE_COLLAPSE = "failure_collapse"
    FAILURE_STAGNATION_REGRESSION = "failure_stagnation_regression"
    FAILURE_OSCILLATION = "failure_oscillation"
    DIRECTOR_STOP = "director_stop"
    TIMEOUT = "timeout"
    ERROR = "error"

    @property
    def is_success(self) -> bool:
        """A victory (the director's stop counts: it is only allowed when victory holds)."""
        return self.value.startswith("success") or self is TerminationKind.DIRECTOR_STOP

    @property
    def is_failure(self) -> bool:
        """A model failure (not a timeout, not an error)."""
        return self.value.startswith("failure")


CONTINUE = 0
TERMINATION_CODES: tuple[TerminationKind, ...] = tuple(TerminationKind)
_CODE = {k: i + 1 for i, k in enumerate(TERMINATION_CODES)}


def kind_from_code(code: int) -> TerminationKind | None:
    """The kind of an integer code (None for :data:`CONTINUE`)."""
    return None if code == CONTINUE else TERMINATION_CODES[code - 1]


def code_of(kind: TerminationKind) -> int:
    """Integer code of a kind (1-based; 0 is continue)."""
    return _CODE[kind]


class VictoryConditions(NamedTuple):
    """Each condition of the active success rule, shape (N,) bool (EPM_SPEC 5.1).

    ``energy``: E_total (rounded per ``energy_decimals``) >= eps_energy (``reference``) or
    > eps_energy (``paper``); ``near``: ||P_t|| <= eps_dist (``reference``) or < (``paper``);
    ``second``: projection >= -eps_dir (``reference``) or mean alignment > tau_align
    (``paper``); ``zone``: the whole in-zone rule, every axis >= -zone_eps and
    E_total >= eps_energy under both presets (EPM_SPEC 5.1; False when ``in_zone_success`` is
    off); ``old_enough``: t >= min_turns. Victory: old_enough and (energy and (near or
    second), or zone).
    """

    old_enough: NDArray[np.bool_]
    energy: NDArray[np.bool_]
    near: NDArray[np.bool_]
    second: NDArray[np.bool_]
    zone: NDArray[np.bool_]


def victory_conditions(
    t: ArrayLike,
    p_norm: ArrayLike,
    projection: ArrayLike,
    E_total: ArrayLike,
    mean_alignment: ArrayLike,
    zone: ArrayLike,
    th: Thresholds,
    config: EPMConfig,
) -> VictoryConditions:
    """The conditions :func:`success_codes` combines, with the same comparisons and rounding
    (the director's victory checklist shows these)."""
    pn = np.asarray(p_norm, dtype=np.float64)
    e = round_to(E_total, config.energy_decimals)
    if config.success_rule == "reference":
        energy = e >= th.eps_energy
        near = pn <= th.eps_dist
        second = np.asarray(projection, dtype=np.float64) >= -th.eps_dir
    else:
        energy = e > th.eps_energy
        near = pn < th.eps_dist
        second = np.asarray(mean_alignment, dtype=np.float64) > config.tau_align
    # The in-zone rule has its own, non-strict energy condition under both presets.
    in_zone = np.asarray(zone, dtype=bool) & (e >= th.eps_energy) & config.in_zone_success
    return VictoryConditions(
        old_enough=np.broadcast_to(np.asarray(t) >= config.min_turns, pn.shape),
        energy=np.asarray(energy, dtype=bool),
        near=np.asarray(near, dtype=bool),
        second=np.asarray(second, dtype=bool),
        zone=np.broadcast_to(in_zone, pn.shape),
    )


def success_codes(
    t: ArrayLike,
    p_norm: ArrayLike,
    projection: ArrayLike,
    E_total: ArrayLike,
    mean_alignment: ArrayLike,
    zone: ArrayLike,
    th: Thresholds,
    config: EPMConfig,
) -> I8:
    """Victory per dialogue, shape (N,): a success code or 0.

    t: turn (scalar or (N,)); p_norm = ||P_t||, projection = P_t . v*_0, E_total,
    mean_alignment (mean over the scored evaluations so far; :func:`empathos.epm.victory`
    leaves the t = 0 point out) and zone (in-zone bool), each (N,). Only when t >= min_turns.
    The in-zone rule is labelled ``success_positional`` under ``reference`` and
    ``success_geometric`` under ``paper`` (which has no positional kind).
    """
    c = victory_conditions(t, p_norm, projection, E_total, mean_alignment, zone, th, config)
    return success_codes_of(c, config)


def success_codes_of(c: VictoryConditions, config: EPMConfig) -> I8:
    """The success code per dialogue, shape (N,), that conditions ``c`` (from
    :func:`victory_conditions`) give under ``config``'s rule (0: no victory)."""
    if config.success_rule == "reference":
        second_kind = zone_kind = TerminationKind.SUCCESS_POSITIONAL
    else:
        second_kind, zone_kind = (
            TerminationKind.SUCCESS_COMPANIONSHIP,
            TerminationKind.SUCCESS_GEOMETRIC,
        )
    out = np.zeros(c.energy.shape, dtype=np.int8)
    ok = c.old_enough & c.energy
    out = np.where(c.old_enough & c.zone, code_of(zone_kind), out)
    out = np.where(ok & c.second, code_of(second_kind), out)
    out = np.where(ok & c.near, code_of(TerminationKind.SUCCESS_GEOMETRIC), out)
    return out.astype(np.int8)


def _window(hist: F64, n_valid: NDArray[np.int64], w: int) -> tuple[F64, NDArray[np.bool_]]:
    """Last w columns of a right-aligned history and whether each row has w valid points."""
    if hist.shape[-1] < w:
        return np.zeros((*hist.shape[:-1], w)), np.zeros(hist.shape[:-1], dtype=bool)
    return hist[..., -w:], n_valid >= w


def failure_codes(
    t: ArrayLike,
    delta_E_hist: ArrayLike,
    p_norm_hist: ArrayLike,
    n_valid: ArrayLike,
    config: EPMConfig,
) -> I8:
    """Failure per dialogue, shape (N,): a failure code or 0.

    delta_E_hist, p_norm_hist: (N, L) histories of the scored points (t = 0 point included),
    right-aligned: the last n_valid[i] columns of row i are real, earlier ones are padding.
    Only when t >= min_turns.
    """
    dE = np.asarray(delta_E_hist, dtype=np.float64)
    pn = np.asarray(p_norm_hist, dtype=np.float64)
    nv = np.broadcast_to(np.asarray(n_valid, dtype=np.int64), dE.shape[:-1])
    old_enough = np.asarray(t) >= config.min_turns

    w, full = _window(dE, nv, config.collapse_window)
    collapse = full & np.all(w < 0, axis=-1)

    w, full = _window(pn, nv, config.stagnation_window)
    std = np.std(w, axis=-1, ddof=1) if w.shape[-1] > 1 else np.zeros(w.shape[:-1])
    stagnation = full & (std < config.stagnation_std)

    n = config.regression_window
    w, full = _window(dE, nv, n)
    regression = (
        full
        & (np.sum(w < 0, axis=-1) > config.regression_ratio * n)
        & (np.sum(w, axis=-1) < config.regression_sum)
    )
    out = np.zeros(dE.shape[:-1], dtype=np.int8)
    out = np.where(
        old_enough & stagnation & regression,
        code_of(TerminationKind.FAILURE_STAGNATION_REGRESSION),
        out,
    )
    out = np.where(old_enough & collapse, code_of(TerminationKind.FAILURE_COLLAPSE), out)
    return out.astype(np.int8)


def termination_codes(
    t: ArrayLike, success: ArrayLike, failure: ArrayLike, config: EPMConfig
) -> I8:
    """Combine in the spec's order: success, then failure, then timeout at max_turns."""
    s = np.asarray(success, dtype=np.int8)
    f = np.asarray(failure, dtype=np.int8)
    timeout = np.broadcast_to(np.asarray(t) >= config.max_turns, s.shape)
    out = np.where(s != 0, s, np.where(f != 0, f, 0))
    out = np.where((out == 0) & timeout, code_of(TerminationKind.TIMEOUT), out)
    return out.astype(np.int8)
