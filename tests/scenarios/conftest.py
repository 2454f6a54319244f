"""Fixtures of the scenario tests: a valid scenario mapping written here by hand."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

_BASE: dict[str, Any] = {
    "schema_version": 1,
    "id": "t-garden",
    "labels": {"domain": "leisure", "language": "en"},
    "persona": {
        "identity": {"name": "Iris Vale", "gender": "female", "age": 45},
        "traits": {"outer": "Cheerful gardener.", "inner": "Afraid of wasted effort."},
        "threshold": "medium",
        "needs": {
            "vent": "Slugs ate the whole vegetable bed.",
            "hoped_for": "Someone who sees the months of work.",
            "sensitivities": "Dislikes jokes about it.",
        },
        "priorities": {
            "cognitive": {"level": "low", "rationale": "Simple situation."},
            "affective": {"level": "high", "rationale": "She is sad."},
            "proactive": {"level": "medium", "rationale": "Wants to try again."},
        },
        "experience": {
            "childhood": "Grew beans with her mother.",
            "adolescence": "Ran the school garden club.",
            "young_adulthood": "Kept balcony pots in a tiny flat.",
            "growth_arc": "Accepting loss as part of growing.",
            "current_situation": "Allotment holder, works in a library.",
            "main_goal": "Win the allotment prize.",
        },
        "topic": "Slugs ate everything. Everything!",
        "trigger": "She found the bed stripped this morning.",
    },
    "story": {
        "stages": [
            {"title": "Beans with mum", "content": "ALPHA-MARKER memory of her mother."},
            {"title": "The wasted spring", "content": "BRAVO-MARKER counting the hours lost."},
            {"title": "Am I careless", "content": "CHARLIE-MARKER doubts about herself."},
            {"title": "Giving up", "content": "DELTA-MARKER she nearly quits."},
        ],
        "outcome": "ECHO-MARKER to feel her effort counted.",
        "interlude": "FOXTROT-MARKER a hailstorm years ago.",
    },
    "iedr": {
        "C.1": 0,
        "C.2": 1,
        "C.3": 1,
        "A.1": 2,
        "A.2": 1,
        "A.3": 3,
        "P.1": 1,
        "P.2": 1,
        "P.3": 2,
    },
}

STAGE_MARKERS = ("ALPHA-MARKER", "BRAVO-MARKER", "CHARLIE-MARKER", "DELTA-MARKER")


def _scenario_dict(**changes: Any) -> dict[str, Any]:
    """A fresh valid scenario mapping; top-level keys in ``changes`` replace the base ones."""
    data = copy.deepcopy(_BASE)
    data.update(changes)
    return data


def _write_yaml(path: Path, data: Any) -> Path:
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def _write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


class Files:
    """Writers for scenario files in tests."""

    yaml = staticmethod(_write_yaml)
    json = staticmethod(_write_json)


@pytest.fixture
def make_scenario() -> Any:
    """Factory of fresh, valid scenario mappings (top-level keys may be replaced)."""
    return _scenario_dict


@pytest.fixture
def write() -> type[Files]:
    """``write.yaml(path, data)`` / ``write.json(path, data)``."""
    return Files
