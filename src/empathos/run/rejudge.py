"""Re-judge a run: every stored turn of its dialogues re-rated by another judge.

The dialogue itself is the original (its lines, replies and director actions are never
generated again); the judge rates it again exactly as the sandbox asked the original judge
(the same views: the whole conversation and the window of turns since the previous
evaluation, every K turns), the EPM is replayed on the new ratings with the dialogue's own
settings, and the termination is what those ratings give: an EPM stop rule at an evaluation,
an end the director asked for once the new trajectory allows it (its request is replayed),
else the dialogue's own end (its turn cap, or the error it ended with), or, when the original
ended by a stop rule the new ratings do not meet, a timeout at its last turn. P_0 is the new
judge's IEDR rating when the run's came from its judge (``keep_p0`` keeps the original).

The output is a run directory like a run's (manifest, index, records, lock; resumable: a
rerun rates only what is missing) whose records carry ``rejudged`` (the new judge, the
original judge and file, the original termination).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

from empathos.epm import (
    Termination,
    TerminationKind,
    check_termination,
    init_state,
)
from empathos.records import DialogueRecord, InitialDeficit, Rejudged
from empathos.sandbox.agents import JudgeAgent
from empathos.sandbox.env import initial_deficit
from empathos.sandbox.state import DialogueState, judge_view
from empathos.sandbox.transitions import apply_evaluation, current_epm, victory_now
from empathos.scenarios import Scenario

__all__ = ["Source", "rejudge_record"]


@dataclass(frozen=True)
class Source:
    """One stored dialogue to re-judge (a case of the runner: the original's id and its
    scenario's hash)."""

    record: DialogueRecord
    path: Path

    @property
    def id(self) -> str:
        """The scenario id."""
        return self.record.scenario_id

    def scenario_hash(self) -> str:
        """The scenario hash the original was made with."""
        return self.record.scenario_hash or ""


def _end_request(record: DialogueRecord, turn: int) -> str | None:
    """The reason of the director's end request at ``turn`` (None: it asked for none)."""
    for action in record.director:
        if action.turn == turn and action.action == "end_conversation":
            try:
                detail = json.loads(action.detail or "{}")
            except ValueError:
                detail = {}
            return str(detail.get("reason", "")) if isinstance(detail, dict) else ""
    return None


async def _replay(record: DialogueRecord, state: DialogueState, judge: JudgeAgent) -> DialogueState:
    """The turns of ``record`` rated again, turn by turn in the environment's order."""
    cfg = state.epm_config
    last_eval = 0
    for turn in record.turns:
        if not (turn.assistant or turn.empty_reply):
            break  # the dialogue ended before this turn's reply
        state = state.with_user_line(turn.user).with_reply(
            turn.assistant, finish_reason=turn.finish_reason
        )
        t, term = state.turn, None
        if t % cfg.eval_every == 0 or t >= cfg.max_turns:
            out, state = await judge.act(judge_view(state, "mdep", since=last_eval), state)
            last_eval = t
            state, _ = apply_evaluation(state, out, t)
            term = check_termination(current_epm(state), cfg)
        reason = _end_request(record, t) if term is None else None
        if reason is not None and victory_now(state) is not None:
            term = Termination(kind=TerminationKind.DIRECTOR_STOP, turn=t, reason=reason)
        if term is None and t >= cfg.max_turns:
            term = Termination(kind=TerminationKind.TIMEOUT, turn=t, reason="max_turns reached")
        if term is not None:
            return state.ended(term)
    orig = record.termination
    if orig.kind in (TerminationKind.TIMEOUT, TerminationKind.ERROR):
        return state.ended(orig)
    why = (
        f"re-judged: no stop rule met in the {state.turn} turn(s) the dialogue ran "
        f"(originally {orig.kind.value} at turn {orig.turn})"
    )
    return state.ended(Termination(kind=TerminationKind.TIMEOUT, turn=state.turn, reason=why))


async def rejudge_record(
    source: Source, scenario: Scenario, judge: JudgeAgent, judge_name: str, *, keep_p0: bool
) -> DialogueRecord:
    """The record of ``source`` re-rated by ``judge`` (see the module docstring)."""
    record = source.record
    language = str(record.metadata.get("language") or scenario.labels.language)
    state = DialogueState(scenario=scenario, language=language, epm_config=record.epm_config)
    iedr: InitialDeficit | None = record.iedr
    if not keep_p0:
        iedr, state = await initial_deficit(judge, state)
    if iedr is not None and state.termination is None:
        state = replace(state, iedr=iedr, epm=init_state(iedr.P0, record.epm_config))
        state = await _replay(record, state, judge)
    term = state.termination or record.termination
    epm = state.epm or init_state(record.iedr.P0, record.epm_config)
    mark = Rejudged(
        judge=judge_name,
        original_judge=record.roles.get("judge"),
        source=str(source.path),
        original_termination=record.termination,
        p0="kept" if keep_p0 or scenario.initial_state() is not None else "rerated",
    )
    return record.model_copy(
        update={
            "schema_version": 3,
            "roles": {**record.roles, "judge": judge_name},
            "iedr": iedr or record.iedr,
            "initial_state": epm.points[0],
            "evaluations": list(state.evaluations),
            "model_calls": list(state.calls),
            "total_turns": term.turn,
            "termination": term,
            "success": term.kind.is_success,
            "n_unscored": epm.n_unscored,
            "rejudged": mark,
        }
    )
