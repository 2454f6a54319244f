"""What a sample of the ``empa`` task keeps in its store, for ``inspect view`` and for us.

- ``empathos:record``: the dialogue's whole record (our schema, the same JSON as a record
  file of ``empathos run``), from which the scorer scores and ``empathos import-inspect``
  writes record files;
- ``empathos:turns``: the turns as text, one line per turn, for reading in ``inspect view``
  (which folds a list of objects into ``Object(n)``): the judge's levels, the EPM state
  after the turn's evaluation and the director's action.

The sample's messages are the model under test's own view of the conversation (its system
prompt, the person as ``user``, its replies as ``assistant``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspect_ai.util import Store

from empathos.records import DialogueRecord, record_from_data

__all__ = ["RECORD_KEY", "TURNS_KEY", "keep_record", "stored_record", "turn_lines", "turn_rows"]

RECORD_KEY = "empathos:record"
TURNS_KEY = "empathos:turns"


def turn_rows(record: DialogueRecord) -> list[dict[str, Any]]:
    """One row per turn: judge levels by indicator, the EPM point after the turn (if it was
    evaluated) and the director's action (if it acted)."""
    evaluations = {ev.turn: ev for ev in record.evaluations}
    actions = {act.turn: act for act in record.director}
    rows: list[dict[str, Any]] = []
    for turn in record.turns:
        row: dict[str, Any] = {"turn": turn.index}
        ev = evaluations.get(turn.index)
        if ev is not None:
            row["scored"] = ev.scored
            row["ratings"] = {key: rating.level for key, rating in ev.ratings.items()}
            row["P"] = list(ev.state.P)
            row["distance"] = ev.state.distance
            row["delta_E"] = ev.state.delta_E
            row["E_total"] = ev.state.E_total
        act = actions.get(turn.index)
        if act is not None:
            row["director"] = f"{act.action}: {act.detail}" if act.detail else act.action
        rows.append(row)
    return rows


def _line(row: dict[str, Any]) -> str:
    parts = [f"turn {row['turn']}"]
    if "ratings" in row:
        levels = " ".join(
            f"{key} {'?' if level is None else format(level, '+d')}"
            for key, level in row["ratings"].items()
        )
        parts.append(f"judge {levels}" if row["scored"] else "judge unscored")
        p = ", ".join(f"{x:g}" for x in row["P"])
        parts.append(f"P ({p}) distance {row['distance']:.2f}")
        # an unscored evaluation leaves P where it was and has no delta_E
        delta = "-" if row["delta_E"] is None else f"{row['delta_E']:.2f}"
        parts.append(f"delta_E {delta} E_total {row['E_total']:.2f}")
    if "director" in row:
        parts.append(f"director {row['director']}")
    return " | ".join(parts)


def turn_lines(record: DialogueRecord) -> str:
    """The turn table as text: one line per turn (:func:`turn_rows`, fields by ``|``)."""
    return "\n".join(_line(row) for row in turn_rows(record))


def keep_record(store: Store, record: DialogueRecord) -> None:
    """Put the record and its turns as text into the sample's store."""
    store.set(RECORD_KEY, record.model_dump(mode="json"))
    store.set(TURNS_KEY, turn_lines(record))


def stored_record(store: Store | dict[str, Any], where: str) -> DialogueRecord | None:
    """The record a sample's store holds (None if it holds none); ``where`` names the sample
    in the RecordError raised for a record that does not validate."""
    data = store.get(RECORD_KEY)
    return None if data is None else record_from_data(data, file=Path(where))
