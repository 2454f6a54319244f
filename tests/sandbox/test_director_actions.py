"""The director's tools as the sandbox offers them: the spec's seven actions, their wire form,
and the validation the LLM client applies to the model's call (the one path there is)."""

from __future__ import annotations

import json

import pytest

from empathos.llm import RawReply, RawToolCall
from empathos.llm.structured import OutputInvalid, validate_tool_call
from empathos.prompts import LANGUAGES, load_template
from empathos.sandbox.actions import (
    DIRECTOR_SPECS,
    DIRECTOR_TOOLS,
    EndConversation,
    RevealMemory,
    RevealStoryStage,
)

NAMES = [
    "reveal_story_stage",
    "reveal_memory",
    "adjust_focus",
    "introduce_turning_point",
    "observe",
    "continue",
    "end_conversation",
]


def _call(name: str, arguments: dict[str, object]) -> RawReply:
    return RawReply(tool_calls=[RawToolCall(name=name, arguments=json.dumps(arguments))])


def test_director_tools_are_the_seven_actions() -> None:
    assert list(DIRECTOR_TOOLS) == NAMES
    assert [s.name for s in DIRECTOR_SPECS] == NAMES
    for spec in DIRECTOR_SPECS:
        assert spec.arguments is DIRECTOR_TOOLS[spec.name]
        wire = spec.to_def()
        # lean on the wire: the director's prompt says when to use each tool, in its language
        assert wire.name == spec.name and not wire.description
        assert "action" not in wire.parameters["properties"]  # the tool's name says it
        assert "title" not in json.dumps(wire.parameters)
        props = wire.parameters["properties"]
        assert set(wire.parameters.get("required", [])) <= set(props)
        for language in LANGUAGES:
            assert f"- {spec.name}" in load_template("director", language).body
    stage = next(s for s in DIRECTOR_SPECS if s.name == "reveal_story_stage").to_def()
    assert stage.parameters["required"] == ["stage", "reason", "guidance"]


def test_the_clients_validation_gives_typed_actions_and_rejects_bad_calls() -> None:
    call, _ = validate_tool_call(
        _call("reveal_story_stage", {"stage": 2, "reason": "r", "guidance": "g"}), DIRECTOR_SPECS
    )
    assert isinstance(call.arguments, RevealStoryStage) and call.arguments.stage == 2
    call, _ = validate_tool_call(_call("end_conversation", {"reason": "done"}), DIRECTOR_SPECS)
    assert isinstance(call.arguments, EndConversation)
    call, _ = validate_tool_call(_call("reveal_memory", {"period": "current"}), DIRECTOR_SPECS)
    assert isinstance(call.arguments, RevealMemory) and call.arguments.action == "reveal_memory"
    with pytest.raises(
        OutputInvalid, match=r"unknown tool .write_dialogue.; the tools are: reveal_story"
    ):
        validate_tool_call(_call("write_dialogue", {}), DIRECTOR_SPECS)
    with pytest.raises(OutputInvalid, match="stage: Input should be less than or equal to 4"):
        validate_tool_call(
            _call("reveal_story_stage", {"stage": 5, "reason": "r", "guidance": "g"}),
            DIRECTOR_SPECS,
        )
    with pytest.raises(OutputInvalid, match="period: Input should be"):
        validate_tool_call(_call("reveal_memory", {"period": "infancy"}), DIRECTOR_SPECS)
