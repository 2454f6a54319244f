"""Build a record from ratings by running the EPM: for examples, tests and simple runners."""

from __future__ import annotations

import traceback
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

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
from empathos.records.model import (
    DialogueError,
    DialogueRecord,
    Evaluation,
    IndicatorRating,
    InitialDeficit,
    Turn,
)
from empathos.rubric import EMPATHY_RUBRIC, Rubric, action_vector, p0_from_iedr

__all__ = ["crash_record", "record_from_ratings"]

Ratings = Mapping[str, IndicatorRating]


def _evaluation(state: EPMState, ratings: Ratings | None, reason: str) -> Evaluation:
    return Evaluation(
        turn=state.turn,
        scored=ratings is not None,
        ratings=dict(ratings or {}),
        unscored_reason=None if ratings is not None else reason,
        state=state.last,
    )


def record_from_ratings(
    *,
    scenario_id: str,
    model: str | None,
    iedr: Ratings,
    turns: Sequence[Turn],
    mdep: Sequence[Ratings | None],
    config: EPMConfig | None = None,
    rubric: Rubric = EMPATHY_RUBRIC,
    unscored_reason: str = "judge failed",
) -> DialogueRecord:
    """Run the EPM over per-evaluation ratings (None = unscored) and assemble a record.

    The dialogue stops at the first termination; extra turns and ratings are dropped. When
    nothing terminates, the last evaluation's turn is used with kind ``timeout`` only if it is
    ``max_turns``; otherwise the record ends as ``error`` ("dialogue ended early").
    """
    cfg = config or EPMConfig()
    p0 = p0_from_iedr({k: r.level for k, r in iedr.items()}, rubric)
    state = init_state(p0.tolist(), cfg)
    evals: list[Evaluation] = []
    term = None
    for ratings in mdep:
        if ratings is None:
            state = step_unscored(state, cfg)
        else:
            v = action_vector({k: r.level for k, r in ratings.items()}, rubric)
            state = step(state, v.tolist(), cfg)
        evals.append(_evaluation(state, ratings, unscored_reason))
        term = check_termination(state, cfg)
        if term is not None:
            break
    if term is None:
        term = Termination(
            kind=TerminationKind.ERROR, turn=state.turn, reason="dialogue ended early"
        )
    return DialogueRecord(
        scenario_id=scenario_id,
        model=model,
        rubric=rubric,
        epm_config=cfg,
        iedr=InitialDeficit(ratings=dict(iedr), P0=tuple(p0.tolist())),
        initial_state=state.points[0],
        turns=list(turns[: term.turn]),
        evaluations=evals,
        total_turns=term.turn,
        termination=term,
        success=term.kind.is_success,
        n_unscored=state.n_unscored,
    )


def crash_record(
    *,
    scenario_id: str,
    scenario_hash: str | None,
    exc: BaseException,
    model: str | None = None,
    roles: Mapping[str, str] | None = None,
    config: EPMConfig | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> DialogueRecord:
    """The ``error`` record of a dialogue that an exception ended before it had a record of
    its own: the exception's type, message and last frames, no turns, a zero initial state."""
    cfg = config or EPMConfig()
    dim = EMPATHY_RUBRIC.dim
    state = init_state([0.0] * dim, cfg)
    message = str(exc)
    frames = traceback.format_exception(exc)
    reason = f"crashed: {type(exc).__name__}: {message}" if message else type(exc).__name__
    return DialogueRecord(
        scenario_id=scenario_id,
        scenario_hash=scenario_hash,
        model=model,
        roles=dict(roles or {}),
        epm_config=cfg,
        iedr=InitialDeficit(ratings={}, P0=(0.0,) * dim),
        initial_state=state.points[0],
        total_turns=0,
        termination=Termination(kind=TerminationKind.ERROR, turn=0, reason=reason),
        success=False,
        created_at=datetime.now(UTC).isoformat(),
        error=DialogueError(
            type=type(exc).__name__, message=message, traceback="".join(frames[-4:]).strip()
        ),
        metadata=dict(metadata or {}),
    )
