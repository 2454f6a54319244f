"""Judge forms and director tools: shapes follow the rubric and the spec's action list."""

from __future__ import annotations

import json
from typing import get_args

import pytest
from pydantic import ValidationError

from empathos.errors import ModelOutputError
from empathos.prompts.director_tools import (
    DIRECTOR_TOOLS,
    EndConversation,
    RevealStoryStage,
    tool_specs,
    validate_call,
)
from empathos.prompts.judge_forms import (
    IEDR_KEYS,
    MDEP_KEYS,
    IEDRForm,
    MDEPForm,
    form_skeleton,
)
from empathos.rubric import EMPATHY_RUBRIC


def _item_levels(form: type[IEDRForm] | type[MDEPForm]) -> dict[str, tuple[int, ...]]:
    out = {}
    for name, field in form.model_fields.items():
        item = field.annotation
        assert item is not None
        level_type = item.model_fields["level"].annotation  # type: ignore[union-attr]
        out[field.alias or name] = tuple(sorted(get_args(level_type)))
    return out


def test_form_keys_and_levels_follow_the_rubric() -> None:
    assert tuple(i.key for i in EMPATHY_RUBRIC.iedr) == IEDR_KEYS
    assert set(MDEP_KEYS) == {i.key for i in EMPATHY_RUBRIC.mdep}
    rubric_levels = {i.key: i.levels for i in (*EMPATHY_RUBRIC.iedr, *EMPATHY_RUBRIC.mdep)}
    for form in (IEDRForm, MDEPForm):
        for key, levels in _item_levels(form).items():
            assert levels == rubric_levels[key], key


def test_forms_validate_and_reject() -> None:
    good = {k: {"level": 1, "evidence": "q", "reasoning": "r"} for k in IEDR_KEYS}
    form = IEDRForm.model_validate(good)
    assert form.levels() == dict.fromkeys(IEDR_KEYS, 1)
    with pytest.raises(ValidationError):
        IEDRForm.model_validate({**good, "C.1": {"level": 4, "evidence": "", "reasoning": ""}})
    mdep = {
        k: {"level": -2 if k.endswith("Neg") else 2, "evidence": "q", "reasoning": "r"}
        for k in MDEP_KEYS
    }
    assert MDEPForm.model_validate(mdep).levels()["A.Neg"] == -2
    with pytest.raises(ValidationError):
        MDEPForm.model_validate({**mdep, "C.Prog": {"level": -1, "evidence": "", "reasoning": ""}})
    skeleton = json.loads(form_skeleton(MDEPForm))
    assert tuple(skeleton) == MDEP_KEYS
    MDEPForm.model_validate(skeleton)  # the example in the prompt is itself a valid form


def test_director_tools_are_the_seven_actions() -> None:
    names = [
        "reveal_story_stage",
        "reveal_memory",
        "adjust_focus",
        "introduce_turning_point",
        "observe",
        "continue",
        "end_conversation",
    ]
    assert list(DIRECTOR_TOOLS) == names
    specs = tool_specs()
    assert [s["function"]["name"] for s in specs] == names
    for spec in specs:
        params = spec["function"]["parameters"]
        assert "action" not in params["properties"]
        assert spec["function"]["description"]
        assert set(params["required"]) <= set(params["properties"])
    stage = next(s for s in specs if s["function"]["name"] == "reveal_story_stage")
    assert stage["function"]["parameters"]["required"] == ["stage", "reason", "guidance"]


def test_validate_call() -> None:
    action = validate_call("reveal_story_stage", {"stage": 2, "reason": "r", "guidance": "g"})
    assert isinstance(action, RevealStoryStage) and action.stage == 2
    assert isinstance(validate_call("end_conversation", {"reason": "done"}), EndConversation)
    with pytest.raises(ModelOutputError, match="valid: reveal_story_stage"):
        validate_call("write_dialogue", {})
    with pytest.raises(ModelOutputError, match="stage"):
        validate_call("reveal_story_stage", {"stage": 5, "reason": "r", "guidance": "g"})
    with pytest.raises(ModelOutputError, match="period"):
        validate_call("reveal_memory", {"period": "infancy"})
