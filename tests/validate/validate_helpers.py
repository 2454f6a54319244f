"""Build recorded dialogues for the validation tests (ratings run through the real EPM)."""

from __future__ import annotations

from pathlib import Path

from validate_handlers import REPLIES, REPLIES_ZH

from empathos.epm import EPMConfig
from empathos.records import IndicatorRating, Turn, record_from_ratings, write_record
from empathos.rubric import EMPATHY_RUBRIC
from empathos.scenarios import Axis, PriorityLevel, Scenario, load_builtin

HANDLERS = Path(__file__).parent / "validate_handlers.py"
N_TURNS = 5


def english(language: str = "en") -> list[Scenario]:
    """The bundled scenarios in ``language`` (English by default)."""
    return [s for s in load_builtin().scenarios if s.labels.language == language]


def _axis(scenario: Scenario, level: PriorityLevel) -> str:
    for axis in Axis:
        if scenario.persona.priorities.level(axis) is level:
            return axis.key
    return "A"


def _ratings(axis: str) -> dict[str, IndicatorRating]:
    return {
        ind.key: IndicatorRating(level=1 if ind.key == f"{axis}.Prog" else 0)
        for ind in EMPATHY_RUBRIC.mdep
    }


def write_runs(root: Path, language: str = "en") -> Path:
    """``root/model-a`` and ``root/model-b``, one record per bundled scenario in
    ``language`` each (the replies in that language)."""
    config = EPMConfig(max_turns=N_TURNS, min_turns=N_TURNS)
    replies = REPLIES_ZH if language == "zh" else REPLIES
    for model, level in (("model-a", PriorityLevel.HIGH), ("model-b", PriorityLevel.LOW)):
        for sc in english(language):
            axis = _axis(sc, level)
            turns = [
                Turn(index=i, user=f"line {i} of {sc.id}", assistant=replies[axis])
                for i in range(1, N_TURNS + 1)
            ]
            iedr = {k: IndicatorRating(level=v) for k, v in (sc.iedr or {}).items()}
            rec = record_from_ratings(
                scenario_id=sc.id, model=model, iedr=iedr, turns=turns,
                mdep=[_ratings(axis)] * N_TURNS, config=config,
            )  # fmt: skip
            write_record(rec, root / model / f"{sc.id}.json")
    return root
