"""The whole pipeline on the bundled offline model (SmolLM2-135M): structure valid, quality low."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import CORPUS
from empathos.distill import DistillOptions, read_conversations, run_distill
from empathos.distill.config import DistillConfig, build_distill_model
from empathos.scenarios import load_scenarios


@pytest.mark.slow
async def test_offline_model_distils_one_bundled_conversation(tmp_path: Path) -> None:
    conv = next(c for c in read_conversations([CORPUS]) if c.id == "en-exam-fail")
    config = DistillConfig()
    assert config.endpoint("distiller").kind == "offline"
    distiller = build_distill_model(config, "distiller")
    judge = build_distill_model(config, "judge")
    out = tmp_path / "out"
    summary = await run_distill(
        [conv],
        distiller,
        judge,
        DistillOptions(out=out),
        models={"distiller": "offline", "judge": "offline"},
    )
    item = summary.items[0]
    assert item.status == "written", item.reason
    loaded = load_scenarios(out / "scenarios")
    assert loaded.errors == [] and len(loaded.scenarios) == 1
    scenario = loaded.scenarios[0]
    assert scenario.iedr is not None and len(scenario.story.stages) == 4
    for stage in ("extract", "persona", "crisis", "iedr"):
        rec = json.loads((out / "state" / conv.id / f"{stage}.json").read_text("utf-8"))
        assert rec["raw"]
