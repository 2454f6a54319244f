"""Evaluation points: one judge evaluation of a recorded dialogue, with what re-judging it needs.

A point is a scored evaluation whose scenario is known (matched by id) and whose last turn
has a reply. It carries the judge's context exactly as the sandbox built it (the whole
history up to the evaluated turn and the window of turns since the previous evaluation) and
the EPM state before the evaluation (P_{t-1}, v*_0), so a re-judged rating can be turned into
a delta_E at the same place in the trajectory.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from empathos.epm import EPMConfig, ideal_direction
from empathos.prompts.blocks import Turn as BlockTurn
from empathos.records import DialogueRecord, LoadedRecord
from empathos.scenarios import Scenario

__all__ = ["EvalPoint", "dialogue_points", "eval_points", "sample_points", "with_reply"]


@dataclass(frozen=True, slots=True)
class EvalPoint:
    """One evaluation of one recorded dialogue, ready to be re-judged."""

    id: str
    group: str
    scenario: Scenario
    language: str
    turn: int
    history: tuple[BlockTurn, ...]
    window: tuple[BlockTurn, ...]
    k: int
    P0: tuple[float, ...]
    P_prev: tuple[float, ...]
    v_star0: tuple[float, ...]
    config: EPMConfig
    stored_levels: Mapping[str, int]
    stored_delta_E: float | None

    @property
    def reply(self) -> str:
        """The rated reply: the supporter's line of the evaluated turn."""
        return self.window[-1][1]


def _turns(record: DialogueRecord, lo: int, hi: int) -> list[BlockTurn]:
    out: list[BlockTurn] = []
    for t in record.turns:
        if lo < t.index <= hi:
            out.append(("user", t.user))
            if t.assistant:
                out.append(("model", t.assistant))
    return out


def dialogue_points(loaded: LoadedRecord, scenario: Scenario) -> list[EvalPoint]:
    """Every scored evaluation of the record with a level for each MDEP indicator and a reply
    at its turn, in turn order (an imported evaluation with missing ratings is skipped)."""
    rec = loaded.record
    lang = scenario.labels.language
    v_star0 = tuple(float(x) for x in ideal_direction(list(rec.initial_state.P)))
    by_index = {t.index: t for t in rec.turns}
    out: list[EvalPoint] = []
    prev = rec.initial_state
    since = 0
    for ev in rec.evaluations:
        turn = by_index.get(ev.turn)
        levels = {k: r.level for k, r in ev.ratings.items() if r.level is not None}
        complete = set(levels) == {ind.key for ind in rec.rubric.mdep}
        if ev.scored and turn is not None and turn.assistant and complete:
            window = _turns(rec, since, ev.turn)
            out.append(
                EvalPoint(
                    id=f"{loaded.group}/{loaded.path.stem}@t{ev.turn}",
                    group=loaded.model_name,
                    scenario=scenario,
                    language=lang,
                    turn=ev.turn,
                    history=tuple(_turns(rec, 0, ev.turn)),
                    window=tuple(window),
                    k=ev.turn - since,
                    P0=tuple(rec.initial_state.P),
                    P_prev=tuple(prev.P),
                    v_star0=v_star0,
                    config=rec.epm_config,
                    stored_levels=levels,
                    stored_delta_E=ev.state.delta_E,
                )
            )
        if ev.scored:
            prev = ev.state
        since = ev.turn
    return out


def eval_points(
    records: Sequence[LoadedRecord], scenarios: Mapping[str, Scenario]
) -> tuple[list[list[EvalPoint]], list[str]]:
    """Points of every record whose scenario is known, one list per dialogue (in record
    order), and the ids of the scenarios that were not found."""
    dialogues: list[list[EvalPoint]] = []
    missing: set[str] = set()
    for loaded in records:
        scenario = scenarios.get(loaded.record.scenario_id)
        if scenario is None:
            missing.add(loaded.record.scenario_id)
            continue
        pts = dialogue_points(loaded, scenario)
        if pts:
            dialogues.append(pts)
    return dialogues, sorted(missing)


def sample_points(dialogues: Sequence[Sequence[EvalPoint]], n: int, seed: int) -> list[EvalPoint]:
    """``n`` points drawn without replacement, spread over dialogues: dialogues are shuffled
    (seeded) and visited round-robin, taking a random not-yet-drawn point of each in turn."""
    rng = random.Random(seed)
    pools = [list(d) for d in dialogues]
    for pool in pools:
        rng.shuffle(pool)
    rng.shuffle(pools)
    out: list[EvalPoint] = []
    while len(out) < n and any(pools):
        for pool in pools:
            if pool and len(out) < n:
                out.append(pool.pop())
    return out


def with_reply(point: EvalPoint, reply: str) -> EvalPoint:
    """The point with the rated reply (the last line of history and window) replaced."""

    def swap(turns: tuple[BlockTurn, ...]) -> tuple[BlockTurn, ...]:
        return (*turns[:-1], ("model", reply))

    return EvalPoint(
        id=point.id,
        group=point.group,
        scenario=point.scenario,
        language=point.language,
        turn=point.turn,
        history=swap(point.history),
        window=swap(point.window),
        k=point.k,
        P0=point.P0,
        P_prev=point.P_prev,
        v_star0=point.v_star0,
        config=point.config,
        stored_levels=point.stored_levels,
        stored_delta_E=point.stored_delta_E,
    )
