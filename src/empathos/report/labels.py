"""Scenario labels for the report's breakdowns, and where to find the scenarios of records.

Records carry only a scenario id; the labels come from the scenarios themselves. They are
looked up in the sources given with ``--scenarios``, in the scenario source named by a run
directory's manifest, and in a published layout that holds a results folder
(``<layout>/results/<model>/``). A scenario found nowhere is "unlabelled" in every grouping.

The groupings follow the paper's breakdowns:

- **domain**: one of the six life domains;
- **mechanism**: dominant deficit axis x routine / hard (routine: difficulty band easy or
  medium; hard: hard or very hard);
- **persona**: dominant need (the C/A/P priority ranked first: the card's ordering if it
  gives one, else the highest level, ties broken C, A, P) x threshold (receptive: low or
  medium; defensive: high).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from empathos.errors import ScenarioError
from empathos.records.io import RUN_MANIFEST_NAME, RUN_RECORDS_DIR
from empathos.scenarios import Axis, DifficultyBand, PriorityLevel, Scenario, load_scenarios
from empathos.scenarios.published import is_published_layout

__all__ = [
    "GROUPINGS",
    "UNLABELLED",
    "find_scenario_sources",
    "labels_of",
    "load_labels",
]

UNLABELLED = "unlabelled"
#: The breakdowns, in the report's order.
GROUPINGS: tuple[str, ...] = ("domain", "mechanism", "persona")

_AXIS_KEY = {Axis.COGNITIVE: "C", Axis.AFFECTIVE: "A", Axis.PROACTIVE: "P"}
_ROUTINE = {DifficultyBand.EASY, DifficultyBand.MEDIUM}
_RANK = {PriorityLevel.HIGH: 0, PriorityLevel.MEDIUM: 1, PriorityLevel.LOW: 2}


def _dominant_need(scenario: Scenario) -> Axis:
    prio = scenario.persona.priorities
    if prio.order:
        return prio.order[0]
    return min(Axis, key=lambda a: (_RANK[prio.level(a)], list(Axis).index(a)))


def labels_of(scenario: Scenario | None) -> dict[str, str]:
    """The three groupings' labels of one scenario (all "unlabelled" when unknown)."""
    if scenario is None:
        return dict.fromkeys(GROUPINGS, UNLABELLED)
    res = scenario.resolved_labels()
    domain = res.domain.value if res.domain is not None else UNLABELLED
    if res.dominant_axis is not None and res.difficulty is not None:
        hard = "routine" if res.difficulty in _ROUTINE else "hard"
        mechanism = f"{_AXIS_KEY[res.dominant_axis]} {hard}"
    else:
        mechanism = UNLABELLED
    stance = "defensive" if res.threshold.value == "high" else "receptive"
    persona = f"{_AXIS_KEY[_dominant_need(scenario)]} {stance}"
    return {"domain": domain, "mechanism": mechanism, "persona": persona}


def _manifest_source(run_dir: Path) -> list[Path | str]:
    try:
        data = json.loads((run_dir / RUN_MANIFEST_NAME).read_text(encoding="utf-8"))
        src = data["config"]["scenarios"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    if not isinstance(src, str):
        return []
    if src == "builtin":
        return [src]
    p = Path(src)
    return [p if p.is_absolute() or p.exists() else run_dir.parent / p]


def find_scenario_sources(paths: Iterable[Path]) -> list[Path | str]:
    """Scenario sources implied by record paths: a run directory's manifest, or a published
    layout two levels above a model's results folder (or one above ``results/``)."""
    out: list[Path | str] = []
    for raw in paths:
        p = Path(raw).resolve()
        if p.is_file():
            p = p.parent
        if (p / RUN_MANIFEST_NAME).is_file() and (p / RUN_RECORDS_DIR).is_dir():
            out.extend(_manifest_source(p))
            continue
        for cand in (p, p.parent, p.parent.parent):
            if is_published_layout(cand):
                out.append(cand)
                break
    unique: list[Path | str] = []
    for s in out:
        if s not in unique:
            unique.append(s)
    return unique


def load_labels(
    sources: Sequence[Path | str], scenario_ids: Iterable[str]
) -> tuple[dict[str, dict[str, str]], list[ScenarioError]]:
    """Labels of every id in ``scenario_ids`` (unlabelled when no source has it), and the
    problems met while reading the sources. The first source that has an id wins."""
    found: dict[str, Scenario] = {}
    problems: list[ScenarioError] = []
    for src in sources:
        result = load_scenarios(src)
        problems.extend(result.errors)
        for sc in result.scenarios:
            found.setdefault(sc.id, sc)
    return {sid: labels_of(found.get(sid)) for sid in scenario_ids}, problems
