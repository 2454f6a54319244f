"""A judged IEDR that gives a degenerate start (all zero, as the bundled 135M judge does)
ends the dialogue as an error at turn 0, naming the scenario and the value (issue 24)."""

from __future__ import annotations

from sandbox_helpers import Script, scenario

from empathos.epm import TerminationKind
from empathos.records import DialogueRecord
from empathos.sandbox import SandboxConfig, run_dialogue


async def test_a_zero_judged_start_is_an_error_not_a_dialogue() -> None:
    script = Script(iedr_level=0)
    rec = await run_dialogue(
        scenario(None), script.roles(), SandboxConfig(min_turns=3, max_turns=3)
    )
    assert rec.termination.kind is TerminationKind.ERROR and rec.termination.turn == 0
    assert rec.termination.reason == (
        f"scenario {rec.scenario_id!r}: judged IEDR gives a degenerate starting point "
        "P_0 = (0, 0, 0): distance to the goal 0.00, below the minimum 5.20 (one judge step; "
        "docs/epm.md)"
    )
    assert rec.turns == [] and len(script.calls("judge")) == 1  # nobody else was asked
    assert rec.iedr.P0 == (0.0, 0.0, 0.0) and rec.iedr.ratings  # what the judge said is kept
    # the record is written and read back like any error record
    assert DialogueRecord.model_validate_json(rec.model_dump_json()) == rec
