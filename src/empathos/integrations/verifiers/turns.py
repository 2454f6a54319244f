"""What the verifiers environment writes on the assistant's trace, and reading it back.

No verifiers import here: the trace is read back as the JSON verifiers' ``vf-eval`` saves
(``traces.jsonl``), so tests and tools in any environment can read it.

On the assistant's trace (``trace.info[INFO_KEY]``, a plain JSON object):

- ``scenario_id``, ``seed``, ``termination`` (the ending's kind: ``success``, ``failure``,
  ``timeout``, ``error``; ``truncated`` when the assistant's harness stopped first),
  ``termination_turn``, ``turns`` (the assistant's replies the environment stepped);
- ``turn_rewards``: one entry per assistant turn, the sandbox's reward (the decrease of the EPM
  distance by default), ``null`` for an unscored turn;
- ``turn_distances``: the EPM distance after each turn's evaluation, ``null`` when unscored;
- ``start_distance``, ``final_distance``: d(P_0) and the distance of the last scored point;
- ``epmq``: the dialogue's EPM-Q (``empathos score``'s, under the config's preset);
- ``record``: the whole :class:`~empathos.records.DialogueRecord` as JSON, for
  ``empathos score`` / ``report`` / ``replay``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from empathos.epm import EPMConfig, PresetName
from empathos.errors import InputError
from empathos.records import DialogueRecord
from empathos.sandbox import EnvStep
from empathos.scoring import score_records

__all__ = ["INFO_KEY", "DialogueLog", "dialogue_epmq", "read_traces", "trace_records"]

INFO_KEY = "empathos"


def dialogue_epmq(record: DialogueRecord, preset: PresetName = "reference") -> float | None:
    """The EPM-Q ``empathos score`` gives this one dialogue (None: an error, not scored)."""
    row = score_records(record.model or "", [record], EPMConfig.preset(preset))
    return row.epmq


@dataclass
class DialogueLog:
    """The per-turn numbers of one dialogue as the environment steps it."""

    scenario_id: str
    seed: int
    start_distance: float | None = None
    rewards: list[float | None] = field(default_factory=list)
    distances: list[float | None] = field(default_factory=list)

    def add(self, step: EnvStep) -> None:
        """One stepped turn: its reward and distance (None when unscored)."""
        info = step.info
        scored = info.evaluated and info.reward_valid and math.isfinite(step.reward)
        self.rewards.append(float(step.reward) if scored else None)
        packet = info.packet if scored else None
        self.distances.append(float(packet.distance) if packet is not None else None)

    def info(self, record: DialogueRecord, preset: PresetName, truncated: bool) -> dict[str, Any]:
        """The ``trace.info[INFO_KEY]`` object (see the module docstring)."""
        last = [d for d in self.distances if d is not None]
        term = record.termination
        return {
            "scenario_id": self.scenario_id,
            "seed": self.seed,
            "termination": "truncated" if truncated else term.kind.value,
            "termination_turn": term.turn,
            "turns": len(self.rewards),
            "turn_rewards": list(self.rewards),
            "turn_distances": list(self.distances),
            "start_distance": self.start_distance,
            "final_distance": last[-1] if last else self.start_distance,
            "epmq": dialogue_epmq(record, preset),
            "record": record.model_dump(mode="json"),
        }


def read_traces(path: str | Path) -> Iterator[dict[str, Any]]:
    """The assistant traces of a ``vf-eval`` run (its ``traces.jsonl``: one episode a line, or
    the run directory) that carry the environment's object, as saved JSON."""
    file = Path(path)
    if file.is_dir():
        file = file / "traces.jsonl"
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InputError(f"cannot read {file}: {exc.strerror or exc}") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            episode = json.loads(line)
        except ValueError:
            raise InputError(f"{file}:{number}: not a JSON episode") from None
        for trace in episode.get("traces") or []:  # one line per episode, its agents' traces
            if INFO_KEY in (trace.get("info") or {}):
                yield trace


def trace_records(path: str | Path) -> list[DialogueRecord]:
    """The dialogue records held by a ``vf-eval`` run's traces (see :func:`read_traces`)."""
    return [DialogueRecord.model_validate(t["info"][INFO_KEY]["record"]) for t in read_traces(path)]
