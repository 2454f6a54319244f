"""Replay: re-run the EPM from a record's P_0 and ratings and compare with what it stored.

Checked per evaluation: the action vector implied by the ratings vs the stored v_t (where
the ratings are complete), P_t, delta_E and E_total; then the termination kind and turn.
Points without complete, valid ratings use the stored v_t (the release applied it).
A stored ``success`` that contradicts the stored termination is a mismatch too. Dialogues
that ended in vector oscillation have no published rule: they are reported as
"not reproducible: unpublished rule" and never as mismatches.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from empathos.epm import (
    EPMConfig,
    EPMState,
    Termination,
    TerminationKind,
    check_termination,
    init_state,
    step,
    step_unscored,
)
from empathos.errors import InputError
from empathos.records import DialogueRecord, Evaluation, LoadedRecord
from empathos.rubric import Rubric, action_vector

__all__ = ["ReplayResult", "replay_loaded", "replay_record"]

ReplayStatus = Literal["ok", "mismatch", "unpublished_rule"]
_VEC_TOL = 1e-6
_ENERGY_TOL = 0.01  # stored values are rounded (delta_E to 2 decimals, E_total to 4)


@dataclass(frozen=True, slots=True)
class ReplayResult:
    """Outcome of replaying one record."""

    label: str
    status: ReplayStatus
    problems: tuple[str, ...] = ()


def _rated_vector(ev: Evaluation, rubric: Rubric) -> np.ndarray | None:
    if ev.flags or len(ev.ratings) != len(rubric.mdep):
        return None
    try:
        return action_vector({k: r.level for k, r in ev.ratings.items()}, rubric)
    except InputError:
        return None


def _compare_point(ev: Evaluation, state: EPMState, problems: list[str]) -> None:
    got, want = state.last, ev.state
    t = ev.turn
    if not np.allclose(got.P, want.P, atol=_VEC_TOL):
        problems.append(f"turn {t}: P_t {list(got.P)} != stored {list(want.P)}")
    if abs(got.E_total - want.E_total) > _ENERGY_TOL:
        problems.append(f"turn {t}: E_total {got.E_total:.4f} != stored {want.E_total:.4f}")
    g_dE, w_dE = got.delta_E, want.delta_E
    if g_dE is not None and w_dE is not None and abs(g_dE - w_dE) > _ENERGY_TOL:
        problems.append(f"turn {t}: delta_E {g_dE:.4f} != stored {w_dE:.4f}")


def _run(rec: DialogueRecord, config: EPMConfig, problems: list[str]) -> Termination | None:
    state = init_state(rec.iedr.P0, config)
    if not np.allclose(rec.initial_state.P, rec.iedr.P0):
        problems.append("turn 0: stored P_t differs from P_0")
    for ev in rec.evaluations:
        if not ev.scored:
            state = step_unscored(state, config, turn=ev.turn)
        else:
            v = _rated_vector(ev, rec.rubric)
            stored_v = ev.state.v
            if v is not None and stored_v is not None and not np.allclose(v, stored_v):
                problems.append(
                    f"turn {ev.turn}: v_t from ratings {v.tolist()} != {list(stored_v)}"
                )
            if v is None:
                v = np.asarray(stored_v if stored_v is not None else [0.0] * rec.rubric.dim)
            state = step(state, v.tolist(), config, turn=ev.turn)
        _compare_point(ev, state, problems)
        term = check_termination(state, config)
        if term is not None:
            return term
    return None


def replay_record(rec: DialogueRecord, label: str, config: EPMConfig | None = None) -> ReplayResult:
    """Replay one record under its own EPM settings (or ``config``)."""
    cfg = config or rec.epm_config
    stored = rec.termination
    problems: list[str] = []
    if rec.success != stored.kind.is_success:
        problems.append(
            f"stored success {str(rec.success).lower()} contradicts the stored termination "
            f"{stored.kind.value}"
        )
    if stored.kind is TerminationKind.FAILURE_OSCILLATION and not problems:
        return ReplayResult(label, "unpublished_rule", ("vector oscillation",))
    if stored.kind is TerminationKind.FAILURE_OSCILLATION:
        return ReplayResult(label, "mismatch", tuple(problems))
    term = _run(rec, cfg, problems)
    if stored.kind is TerminationKind.DIRECTOR_STOP:
        if term is not None and term.turn < stored.turn:
            problems.append(f"the EPM ended it first: {term.kind.value} at turn {term.turn}")
    elif stored.kind is TerminationKind.ERROR:
        pass  # an error is an infrastructure outcome: only the trajectory is compared
    elif term is None:
        problems.append(
            f"no termination replayed; stored {stored.kind.value} at turn {stored.turn}"
        )
    elif (term.kind, term.turn) != (stored.kind, stored.turn):
        problems.append(
            f"termination {term.kind.value} at turn {term.turn}; "
            f"stored {stored.kind.value} at turn {stored.turn}"
        )
    return ReplayResult(label, "mismatch" if problems else "ok", tuple(problems))


def replay_loaded(loaded: Sequence[LoadedRecord]) -> list[ReplayResult]:
    """Replay every loaded record; labels are ``model/scenario (file)``."""
    return [
        replay_record(item.record, f"{item.model_name}/{item.record.scenario_id} ({item.path})")
        for item in loaded
    ]
