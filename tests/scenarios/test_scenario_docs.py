"""docs/scenarios.md carries the JSON schema of the current scenario model."""

from __future__ import annotations

import json
from pathlib import Path

from empathos.scenarios import Scenario

DOC = Path(__file__).resolve().parents[2] / "docs" / "scenarios.md"


def test_documented_schema_matches_the_model() -> None:
    text = DOC.read_text(encoding="utf-8")
    block = text.split("<!-- schema:start -->", 1)[1].split("<!-- schema:end -->", 1)[0]
    documented = json.loads(block.strip().removeprefix("```json").removesuffix("```"))
    assert documented == Scenario.model_json_schema()
