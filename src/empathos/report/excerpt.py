"""A short excerpt of one dialogue, as plain lines: what the end of a run shows first.

Per turn: the simulated user's line, the model's reply and the judge's move (progress and
harm per axis, and how the distance to the goal changed), so a reader sees what happened
before reading the scores. Pure: a record in, lines out.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Sequence
from pathlib import Path

from empathos.records import DialogueRecord, Evaluation, LoadedRecord

__all__ = ["dialogue_excerpt", "pick_dialogue"]

_AXES = ("C", "A", "P")


def pick_dialogue(records: Iterable[LoadedRecord], wanted: Sequence[str]) -> LoadedRecord | None:
    """The first record (in the order of ``wanted``, file stems) that ended without error
    and has turns; else the first that has turns; else None."""
    by_stem = {r.path.stem: r for r in records}
    chosen = [by_stem[k] for k in wanted if k in by_stem and by_stem[k].record.turns]
    clean = [r for r in chosen if r.record.termination.kind.value != "error"]
    pool = clean or chosen
    return pool[0] if pool else None


def _short(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: max(1, width - 1)].rstrip() + "…"


def _wrapped(label: str, text: str, width: int, max_lines: int = 3) -> list[str]:
    """``label`` and ``text`` wrapped to ``width``, at most ``max_lines`` lines (then '…')."""
    indent = " " * len(label)
    lines = textwrap.wrap(" ".join(text.split()) or "-", width=max(20, width - len(label)))
    if len(lines) > max_lines:
        lines = [
            *lines[: max_lines - 1],
            _short(" ".join(lines[max_lines - 1 :]), width - len(label)),
        ]
    return [(label if i == 0 else indent) + line for i, line in enumerate(lines)]


def _judge(ev: Evaluation | None, before: float | None) -> str:
    if ev is None:
        return "not rated this turn"
    if not ev.scored:
        return f"unscored ({ev.unscored_reason or 'no ratings'})"
    moves = []
    for axis in _AXES:
        prog = ev.ratings.get(f"{axis}.Prog")
        neg = ev.ratings.get(f"{axis}.Neg")
        p = prog.level if prog and prog.level is not None else 0
        n = neg.level if neg and neg.level is not None else 0
        moves.append(f"{axis} {p:+d}/{n:+d}")
    step = (
        f"; distance to the goal {before:.2f} -> {ev.state.distance:.2f}"
        if before is not None
        else ""
    )
    return "progress/harm " + ", ".join(moves) + step


def dialogue_excerpt(
    record: DialogueRecord, path: Path | str, *, turns: int = 3, width: int = 100
) -> list[str]:
    """Lines showing the first ``turns`` turns of ``record`` (read from ``path``)."""
    term = record.termination
    head = (
        f"one dialogue ({record.scenario_id}, {len(record.turns)} turn(s), ended: "
        f"{term.kind.value}; {term.reason})"
    )
    lines = _wrapped("", head, width)
    evaluations = {ev.turn: ev for ev in record.evaluations}
    distance: float | None = record.initial_state.distance
    for turn in record.turns[:turns]:
        ev = evaluations.get(turn.index)
        lines.append(f"  turn {turn.index}")
        lines += _wrapped("    user:  ", turn.user, width)
        lines += _wrapped("    model: ", turn.assistant or "(no reply)", width)
        lines += _wrapped("    judge: ", _judge(ev, distance), width)
        if ev is not None and ev.scored:
            distance = ev.state.distance
    if len(record.turns) > turns:
        lines.append(f"  ... {len(record.turns) - turns} more turn(s)")
    lines.append(f"  the whole dialogue, with every call and rating: {path}")
    return lines
