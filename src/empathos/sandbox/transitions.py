"""Pure transitions of the dialogue state: an evaluation, a director action, a victory check.

No I/O and no model calls: the environment awaits the agents, then applies their outputs
here.
"""

from __future__ import annotations

from dataclasses import replace

from empathos.epm import EPMState, Termination, TerminationKind, step, step_unscored, victory
from empathos.errors import InputError
from empathos.prompts.blocks import Surfaced
from empathos.records import DirectorAction, Evaluation
from empathos.rubric import EMPATHY_RUBRIC, action_vector
from empathos.sandbox.actions import (
    AdjustFocus,
    ContinueAction,
    EndConversation,
    IntroduceTurningPoint,
    RevealMemory,
    RevealStoryStage,
)
from empathos.sandbox.agents import DirectorDecision, Failure, Ratings
from empathos.sandbox.state import DialogueState

__all__ = ["apply_director", "apply_evaluation", "current_epm", "victory_now"]


def current_epm(state: DialogueState) -> EPMState:
    """The EPM state of a started dialogue."""
    if state.epm is None:
        raise RuntimeError("the EPM state is not initialised")
    return state.epm


def apply_evaluation(
    state: DialogueState, out: Ratings | Failure, t: int
) -> tuple[DialogueState, str | None]:
    """Step the EPM with the judge's ratings at turn t, or record an unscored evaluation
    (P unchanged, no delta_E). Returns the new state and the unscored reason (None: scored)."""
    cfg, epm = state.epm_config, current_epm(state)
    if isinstance(out, Failure):
        ratings: Ratings = {}
        reason: str | None = out.reason
    else:
        ratings, reason = out, None
        try:
            vec = action_vector({k: r.level for k, r in out.items()}, EMPATHY_RUBRIC)
        except InputError as exc:
            reason = f"judge ratings unusable: {exc.line()}"
    if reason is not None:
        epm = step_unscored(epm, cfg, turn=t)
        ev = Evaluation(
            turn=t, scored=False, ratings=ratings, unscored_reason=reason, state=epm.last
        )
    else:
        epm = step(epm, vec.tolist(), cfg, turn=t)
        ev = Evaluation(turn=t, scored=True, ratings=ratings, state=epm.last)
    return replace(state, epm=epm, evaluations=(*state.evaluations, ev)), reason


def victory_now(state: DialogueState) -> TerminationKind | None:
    """The victory kind that holds at the current turn, on the latest evaluation's state."""
    epm = current_epm(state)
    moved = epm.last.model_copy(update={"turn": state.turn})
    return victory(replace(epm, points=(*epm.points[:-1], moved)), state.epm_config)


def apply_director(
    state: DialogueState, decision: DirectorDecision
) -> tuple[DialogueState, Termination | None]:
    """Apply the director's action: releases, guidance, or an honoured (or ignored) stop."""
    t, a = state.turn, decision.action
    term, honoured = None, True
    released, memories = state.released_stages, state.memories
    newest_stage: int | None = None
    newest_memory: str | None = None
    guidance: str | None = None
    surfaced = state.surfaced
    if isinstance(a, EndConversation):
        if victory_now(state) is not None:
            term = Termination(kind=TerminationKind.DIRECTOR_STOP, turn=t, reason=a.reason)
        else:
            honoured = False
    elif isinstance(a, RevealStoryStage | IntroduceTurningPoint):
        if a.stage is not None and a.stage <= len(state.scenario.story.stages):
            released = tuple(dict.fromkeys((*released, a.stage)))
            newest_stage = a.stage
            surfaced = (*surfaced, Surfaced(t, stage=a.stage))
        guidance = a.guidance
    elif isinstance(a, RevealMemory):
        memories = tuple(dict.fromkeys((*memories, a.period)))
        newest_memory, guidance = a.period, a.guidance or None
        surfaced = (*surfaced, Surfaced(t, memory=a.period))
    elif isinstance(a, AdjustFocus):
        guidance = a.guidance
    elif isinstance(a, ContinueAction):
        guidance = a.focus or None
    entry = DirectorAction(
        turn=t,
        action=a.action,
        detail=a.model_dump_json(exclude={"action"}),
        source=decision.source,
        honoured=honoured,
        note=decision.note,
    )
    new = replace(
        state,
        director=(*state.director, entry),
        released_stages=released,
        newest_stage=newest_stage,
        memories=memories,
        newest_memory=newest_memory,
        surfaced=surfaced,
        guidance=guidance,
    )
    return new, term
