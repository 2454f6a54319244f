"""Build a record from ratings by running the EPM: for examples, tests and simple runners."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

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
    DialogueRecord,
    Evaluation,
    IndicatorRating,
    InitialDeficit,
    Turn,
)
from empathos.rubric import EMPATHY_RUBRIC, Rubric, action_vector, p0_from_iedr

__all__ = ["record_from_ratings"]

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
