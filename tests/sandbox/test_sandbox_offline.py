"""One short dialogue with every role on the real offline model: the offline path works."""

from __future__ import annotations

import pytest
from sandbox_helpers import scenario

from empathos.epm import TerminationKind
from empathos.llm import EndpointConfig, build_model
from empathos.llm.offline import OfflineModel
from empathos.records import DialogueRecord
from empathos.sandbox import Roles, SandboxConfig, run_dialogue
from empathos.scoring.replay import replay_record


@pytest.mark.slow
async def test_offline_dialogue_produces_a_valid_record(offline_lm: OfflineModel) -> None:
    roles = Roles(
        user=build_model(EndpointConfig(kind="offline", max_tokens=24), "user"),
        judge=build_model(EndpointConfig(kind="offline", max_tokens=24), "judge"),
        director=build_model(EndpointConfig(kind="offline", max_tokens=24), "director"),
        tested=build_model(EndpointConfig(kind="offline", max_tokens=24), "tested"),
    )
    # two turns, the judge every two: each role is called (tested twice, the others once)
    cfg = SandboxConfig(min_turns=2, max_turns=2, eval_every=2)
    rec = await run_dialogue(scenario(), roles, cfg)
    assert rec.termination.kind is not TerminationKind.ERROR, rec.termination.reason
    assert [c.role for c in rec.model_calls] == ["tested", "director", "user", "tested", "judge"]
    assert all(c.error is None and c.model == "smollm2-135m-instruct" for c in rec.model_calls)
    assert all(t.user.strip() and t.assistant.strip() for t in rec.turns) and len(rec.turns) == 2
    ev = rec.evaluations[0]
    assert ev.turn == 2 and ev.scored and len(ev.ratings) == 6
    assert rec.director[0].source == "model"
    assert DialogueRecord.model_validate_json(rec.model_dump_json()) == rec
    assert replay_record(rec, "offline").status == "ok"
