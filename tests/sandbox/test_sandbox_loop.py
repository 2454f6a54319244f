"""The turn loop through scripted roles: call order, what each role sees, K > 1, terminations,
errors recorded apart, and records that `empathos score` / `empathos replay` accept."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from sandbox_helpers import (
    C_ONE,
    DEEP,
    DRIFT,
    HARM,
    JUDGE_MARK,
    LIFT,
    ZERO,
    Script,
    scenario,
)
from typer.testing import CliRunner

from empathos.cli.main import app
from empathos.epm import TerminationKind
from empathos.errors import ConfigError
from empathos.llm import ToolReply
from empathos.records import read_record, write_record
from empathos.sandbox import SandboxConfig, TurnEvent, run_dialogue
from empathos.scenarios import load_builtin
from empathos.scoring.replay import replay_record

K = TerminationKind


def _reveal(stage: int) -> ToolReply:
    return ToolReply(
        "reveal_story_stage", {"stage": stage, "reason": "r", "guidance": f"GUIDE-{stage}"}
    )


async def test_call_order_per_turn() -> None:
    script = Script()
    rec = await run_dialogue(scenario(), script.roles(), SandboxConfig(min_turns=3, max_turns=3))
    order = [(role, _turn) for role, _turn in ((c.role, c.turn) for c in rec.model_calls)]
    expected = [("tested", 1), ("judge", 1), ("director", 1)]
    for t in (2, 3):
        expected += [("user", t), ("tested", t), ("judge", t)] + ([("director", t)] * (t < 3))
    assert order == expected
    assert [name for name, _ in script.log] == [role for role, _ in expected]
    assert rec.termination.kind is K.TIMEOUT and rec.total_turns == 3
    assert [t.user for t in rec.turns] == [scenario().persona.topic, "user line 2", "user line 3"]
    assert [t.assistant for t in rec.turns] == ["reply 1", "reply 2", "reply 3"]


async def test_iedr_runs_once_when_p0_is_unknown_and_never_when_stored() -> None:
    script = Script(iedr_level=1)
    rec = await run_dialogue(
        scenario(None), script.roles(), SandboxConfig(min_turns=2, max_turns=2)
    )
    iedr_calls = [r for r in script.calls("judge") if r.schema_name == "IEDRForm"]
    assert len(iedr_calls) == 1 and script.log[0][1] is iedr_calls[0]
    # level 1 on every IEDR indicator, summed per axis with the rubric's own keys
    assert rec.iedr.P0 == rec.initial_state.P and all(x < 0 for x in rec.iedr.P0)
    assert rec.metadata["p0_source"] == "judge_iedr"
    stored = Script()
    rec2 = await run_dialogue(scenario(), stored.roles(), SandboxConfig(min_turns=2, max_turns=2))
    assert not [r for r in stored.calls("judge") if r.schema_name == "IEDRForm"]
    assert rec2.iedr.P0 == (-6.0, -6.0, -6.0)


async def test_user_never_sees_unreleased_stages() -> None:
    sc = scenario()
    stages = [s.content for s in sc.story.stages]
    script = Script(director_actions={2: _reveal(1), 4: _reveal(2)})
    await run_dialogue(sc, script.roles(), SandboxConfig(min_turns=6, max_turns=6))
    prompts = [r.messages[-1].content for r in script.calls("user")]  # turns 2..6
    assert len(prompts) == 5
    for turn, text in enumerate(prompts, start=2):
        released = ({1} if turn > 2 else set()) | ({2} if turn > 4 else set())
        for index, content in enumerate(stages, start=1):
            assert (content in text) == (index in released), (turn, index)
        assert ("GUIDE-1" in text) == (turn == 3)  # only the latest guidance
        assert JUDGE_MARK not in text and "E_total" not in text


async def test_model_under_test_sees_only_its_prompt_and_the_chat() -> None:
    sc = scenario()
    script = Script(judge_levels=[C_ONE] * 4, director_actions={1: _reveal(1)})
    rec = await run_dialogue(sc, script.roles(), SandboxConfig(min_turns=4, max_turns=4))
    for t, request in enumerate(script.calls("tested"), start=1):
        msgs = request.messages
        assert msgs[0].role == "system" and "companion" in msgs[0].content
        convo = [(m.role, m.content) for m in msgs[1:]]
        expected = []
        for turn in rec.turns[:t]:
            expected.append(("user", turn.user))
            if turn.index < t:
                expected.append(("assistant", turn.assistant))
        assert convo == expected
        blob = json.dumps([m.content for m in msgs])
        assert JUDGE_MARK not in blob and "E_total" not in blob and "GUIDE-1" not in blob
        assert not any(s.content in blob for s in sc.story.stages)
    assert rec.metadata["system_prompt"]["id"].startswith("model_under_test.")


@pytest.fixture
def custom_prompt(tmp_path: Path) -> str:
    path = tmp_path / "mine.txt"
    path.write_text("CUSTOM-PROMPT be kind", encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("mode", ["none", "custom"])
async def test_system_prompt_modes(mode: str, custom_prompt: str) -> None:
    spec = custom_prompt if mode == "custom" else "none"
    script = Script()
    cfg = SandboxConfig(min_turns=1, max_turns=1, system_prompt=spec)
    rec = await run_dialogue(scenario(), script.roles(), cfg)
    first = script.calls("tested")[0].messages
    if mode == "none":
        assert [m.role for m in first] == ["user"] and rec.metadata["system_prompt"] is None
    else:
        assert first[0].content == "CUSTOM-PROMPT be kind"
        assert rec.metadata["system_prompt"]["id"] == "custom:mine.txt"


async def test_missing_system_prompt_file_is_a_config_error(tmp_path: Path) -> None:
    cfg = SandboxConfig(system_prompt=str(tmp_path / "absent.txt"))
    with pytest.raises(ConfigError):
        await run_dialogue(scenario(), Script().roles(), cfg)


async def test_judge_sees_exactly_its_window_with_k_2() -> None:
    script = Script(judge_levels=[C_ONE, C_ONE, C_ONE])
    cfg = SandboxConfig(min_turns=5, max_turns=5, eval_every=2)
    rec = await run_dialogue(scenario(), script.roles(), cfg)
    assert [e.turn for e in rec.evaluations] == [2, 4, 5]  # every K, and at max_turns
    mdep = [r.messages[-1].content for r in script.calls("judge")]
    windows = {2: "replies in turns 1 to 2", 4: "replies in turns 3 to 4", 5: "reply in turn 5"}
    for text, (turn, named) in zip(mdep, windows.items(), strict=True):
        history, window = text.split("# The window to rate", 1)
        assert named in window  # named by its turns: its text is the end of the history
        for t in rec.turns:
            assert (t.assistant in history) == (t.index <= turn), (turn, t.index)
            assert t.assistant not in window
    assert rec.evaluations[0].state.P == (-5.0, -6.0, -6.0)  # one C.Prog 1 per window
    # the director still acts every turn, evaluations or not
    assert [a.turn for a in rec.director] == [1, 2, 3, 4]


CASES: dict[str, tuple[dict[str, Any], list[Sequence[int] | None]]] = {
    "success_geometric": (dict(alpha=0.2, min_turns=3, max_turns=10), [DEEP, DEEP, C_ONE]),
    "success_positional": (dict(min_turns=3, max_turns=10), [DEEP] * 3),
    "failure_collapse": (dict(min_turns=3, max_turns=10), [HARM] * 5),
    "failure_stagnation_regression": (
        dict(min_turns=3, max_turns=20),
        [DRIFT, DRIFT, DRIFT, LIFT] * 4,
    ),
    "timeout": (dict(min_turns=4, max_turns=4), [ZERO] * 4),
}
END_TURN = {
    "success_geometric": 3,
    "success_positional": 3,
    "failure_collapse": 5,
    "failure_stagnation_regression": 13,
    "timeout": 4,
}


@pytest.mark.parametrize("kind", list(CASES))
async def test_epm_terminations_through_the_loop(kind: str) -> None:
    overrides, levels = CASES[kind]
    script = Script(judge_levels=list(levels))
    rec = await run_dialogue(scenario(), script.roles(), SandboxConfig(**overrides))
    assert rec.termination.kind.value == kind
    assert rec.termination.turn == rec.total_turns == END_TURN[kind] == len(rec.turns)
    assert rec.success == kind.startswith("success")
    assert replay_record(rec, kind).status == "ok"


async def test_director_stop_only_when_victory_holds() -> None:
    end = ToolReply("end_conversation", {"reason": "done"})
    # K = 2: the evaluation at turn 4 meets every victory condition but t < min_turns = 5;
    # the director's stops at turns 1 and 4 are ignored (recorded), the one at turn 5 (no
    # evaluation there) is honoured. P_0 sits two deep steps from the goal: one step can never
    # close a start distance of at least MIN_START_DISTANCE.
    script = Script(judge_levels=[DEEP, DEEP], director_actions={1: end, 4: end, 5: end})
    cfg = SandboxConfig(min_turns=5, max_turns=8, eval_every=2)
    rec = await run_dialogue(scenario((-5.0, -5.0, -5.0)), script.roles(), cfg)
    assert rec.termination.kind is K.DIRECTOR_STOP and rec.termination.turn == 5
    assert [
        (a.turn, a.action, a.honoured) for a in rec.director if a.action == "end_conversation"
    ] == [
        (1, "end_conversation", False),
        (4, "end_conversation", False),
        (5, "end_conversation", True),
    ]
    assert rec.success and replay_record(rec, "stop").status == "ok"


@pytest.mark.parametrize("role", ["tested", "user"])
async def test_a_failing_role_ends_the_dialogue_as_error(role: str) -> None:
    script = Script()
    script.failing.add(role)
    events: list[TurnEvent] = []
    rec = await run_dialogue(
        scenario(), script.roles(), SandboxConfig(min_turns=3, max_turns=5), observer=events.append
    )
    assert rec.termination.kind is K.ERROR and not rec.success
    assert role in rec.termination.reason and "refuses" in rec.termination.reason
    failed = [c for c in rec.model_calls if c.error]
    assert len(failed) == 1 and failed[0].role == role
    assert [e.done for e in events].count(True) == 1 and events[-1].done
    assert events[-1].termination is K.ERROR


async def test_failed_iedr_is_an_error_at_turn_0() -> None:
    script = Script()
    script.failing.add("judge")
    rec = await run_dialogue(scenario(None), script.roles(), SandboxConfig())
    assert rec.termination.kind is K.ERROR and rec.termination.turn == 0 and not rec.turns
    assert "no initial deficit" in rec.termination.reason


async def test_failed_judge_windows_are_unscored_then_too_many_is_an_error() -> None:
    script = Script(judge_levels=[C_ONE, None, C_ONE, None, None])
    cfg = SandboxConfig(min_turns=5, max_turns=10, unscored_share_limit=0.5)
    rec = await run_dialogue(scenario(), script.roles(), cfg)
    scored = [e.scored for e in rec.evaluations]
    assert scored == [True, False, True, False, False]
    bad = rec.evaluations[1]
    assert bad.unscored_reason and "refuses" in bad.unscored_reason and bad.state.delta_E is None
    assert bad.state.P == rec.evaluations[0].state.P  # P unchanged, no made-up increment
    assert rec.n_unscored == 3 and rec.termination.kind is K.ERROR
    assert "unscored" in rec.termination.reason


async def test_failing_director_falls_back_to_rules() -> None:
    script = Script()
    script.failing.add("director")
    rec = await run_dialogue(
        scenario(), script.roles(), SandboxConfig(min_turns=4, max_turns=4, reveal_every=2)
    )
    assert rec.termination.kind is K.TIMEOUT
    assert {a.source for a in rec.director} == {"rules"}
    assert all("refuses" in a.note for a in rec.director)
    assert [a.action for a in rec.director if a.action == "reveal_story_stage"] == [
        "reveal_story_stage"
    ] and rec.director[1].turn == 2
    last = script.calls("user")[-1].messages  # turn 4 sees stage 1 only
    user_prompt = "\n".join(m.content for m in last)
    stages = scenario().story.stages
    assert stages[0].content in user_prompt and stages[1].content not in user_prompt


async def test_rules_director_makes_no_director_calls() -> None:
    script = Script(judge_levels=[HARM, HARM, ZERO])
    rec = await run_dialogue(
        scenario(),
        script.roles(director=False),
        SandboxConfig(min_turns=3, max_turns=3, director="rules", reveal_every=5),
    )
    assert not script.calls("director") and rec.roles["director"] == "rules"
    # P_0 = (-6, -6, -6): every axis ties, the first is the deepest; two harms in a row turn
    assert [a.action for a in rec.director] == ["adjust_focus", "introduce_turning_point"]
    assert json.loads(rec.director[0].detail)["axis"] == "cognitive"


async def test_record_round_trips_and_cli_scores_and_replays(tmp_path: Path) -> None:
    recs = []
    runs: list[list[Sequence[int] | None]] = [[DEEP] * 3, [HARM] * 5]
    for levels in runs:
        script = Script(judge_levels=levels)
        recs.append(
            await run_dialogue(scenario(), script.roles(), SandboxConfig(min_turns=3, max_turns=6))
        )
    for i, rec in enumerate(recs):
        path = write_record(rec, tmp_path / "tested-model" / f"d{i}.json")
        assert read_record(path) == rec
    runner = CliRunner()
    replay = runner.invoke(app, ["replay", str(tmp_path)])
    assert replay.exit_code == 0, replay.output
    assert "2 reproduce, 0 mismatch" in replay.output
    score = runner.invoke(app, ["score", str(tmp_path), "--format", "json"])
    assert score.exit_code == 0, score.output
    assert "tested-model" in score.output
    for call in recs[0].model_calls:
        assert call.template_id or call.role == "tested"
        assert call.metadata["messages_sha256"] and not math.isnan(call.latency_s or 0.0)


async def test_memories_reach_the_user_only_once_revealed() -> None:
    sc = scenario()
    memory = ToolReply(
        "reveal_memory", {"period": "adolescence", "reason": "r", "guidance": "bring it up"}
    )
    script = Script(director_actions={2: memory})
    await run_dialogue(sc, script.roles(), SandboxConfig(min_turns=4, max_turns=4))
    # the user's whole prompt (every message), not one block: a memory is nowhere in it
    # before the director reveals it, so revealing it brings something new to mind
    texts = ["\n".join(m.content for m in r.messages) for r in script.calls("user")]
    exp = sc.persona.experience
    assert [exp.adolescence in t for t in texts] == [False, True, True]  # turns 2, 3, 4
    for hidden in (exp.childhood, exp.young_adulthood, exp.current_situation):
        assert not any(hidden in t for t in texts)


async def test_published_layout_card_is_rendered_from_its_fields() -> None:
    card = "VERBATIM-CARD: you are someone who writes short messages."
    base = scenario()
    whole = base.persona.model_copy(
        update={"experience": base.persona.experience.model_copy(update={"vision": "V."})}
    )
    systems = []
    for persona in (whole, base.persona):  # every field parsed; one field missing (vision)
        sc = base.model_copy(update={"raw_persona_prompt": card, "persona": persona})
        script = Script()
        await run_dialogue(sc, script.roles(), SandboxConfig(min_turns=2, max_turns=2))
        systems.append(script.calls("user")[0].messages[0].content)
    assert card not in systems[0] and base.persona.traits.inner in systems[0]
    assert card in systems[1]  # the card is then sent verbatim: nothing it says is lost


async def test_chinese_scenario_uses_chinese_prompts() -> None:
    zh = next(s for s in load_builtin().scenarios if s.labels.language == "zh")
    script = Script()
    rec = await run_dialogue(zh, script.roles(), SandboxConfig(min_turns=2, max_turns=2))
    assert rec.termination.kind is K.TIMEOUT and rec.metadata["language"] == "zh"
    ids = {c.template_id for c in rec.model_calls if c.template_id}
    assert ids and all(i.endswith(".zh") for i in ids), ids


async def test_opening_line_from_the_user_agent_when_not_the_topic() -> None:
    script = Script()
    cfg = SandboxConfig(min_turns=1, max_turns=1, open_with_topic=False)
    rec = await run_dialogue(scenario(), script.roles(), cfg)
    assert [name for name, _ in script.log][:2] == ["user", "tested"]
    assert rec.turns[0].user == "user line 2"  # the scripted user's first answer
    assert "has not started yet" in script.calls("user")[0].messages[-1].content


async def test_run_dialogue_needs_the_model_under_test() -> None:
    roles = Script().roles()
    with pytest.raises(ConfigError):
        await run_dialogue(scenario(), replace(roles, tested=None), SandboxConfig())
