"""Field-by-field JSON construction: any sequence of decoder choices yields a valid object."""

from __future__ import annotations

import json
from typing import Literal

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from empathos.llm.offline.constrained import FirstChoiceDecoder, build_json, build_tool_call


class Inner(BaseModel):
    mood: Literal["calm", "upset", "angry"] = Field(description="Mood.")
    intensity: int = Field(ge=-2, le=2, description="Small bounded int.")


class Judgement(BaseModel):
    level: Literal[0, 1, 2, 3] = Field(description="Level.")
    reason: str = Field(max_length=40, description="Short reason.")
    note: str | None = Field(None, description="Optional note.")
    flags: list[bool] = Field(min_length=2, max_length=3, description="Flags.")
    inner: Inner = Field(description="Nested object.")
    score: int = Field(ge=10, le=1000, description="Wide bounded int.")
    weight: float = Field(gt=0.0, le=1.0, description="Bounded float.")
    tags: list[Literal["a", "b"]] = Field(description="Enum array.")


class RandomDecoder:
    """Makes whatever choices the data stream says: any string, any number, any option."""

    def __init__(self, data: st.DataObject) -> None:
        self.data = data

    def emit(self, text: str) -> None:
        pass

    def choose(self, options: list[str]) -> int:
        return self.data.draw(st.integers(0, len(options) - 1))

    def free_string(self, max_tokens: int) -> str:
        return json.dumps(self.data.draw(st.text(max_size=4 * max_tokens)))

    def number(self, low: float | None, high: float | None, integer: bool) -> str:
        value = float(self.data.draw(st.integers(-(10**6), 10**6)))
        value = max(value, low) if low is not None else value
        value = min(value, high) if high is not None else value
        return str(int(value)) if integer else json.dumps(value)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_any_choices_give_a_valid_object(data: st.DataObject) -> None:
    text = build_json(Judgement.model_json_schema(), RandomDecoder(data))
    value = Judgement.model_validate_json(text)
    assert 2 <= len(value.flags) <= 3


def test_first_choice_decoder_picks_the_first_options() -> None:
    value = Judgement.model_validate_json(
        build_json(Judgement.model_json_schema(), FirstChoiceDecoder("x"))
    )
    assert (value.level, value.inner.mood, value.inner.intensity, value.score) == (
        0,
        "calm",
        -2,
        10,
    )
    assert value.reason == "x" and value.tags == ["a"]


class Ask(BaseModel):
    question: str = Field(description="Question.")


class Close(BaseModel):
    outcome: Literal["resolved", "stuck"] = Field(description="Outcome.")


@settings(max_examples=50, deadline=None)
@given(st.data())
def test_tool_calls_are_always_one_of_the_tools(data: st.DataObject) -> None:
    tools = {"ask": Ask, "close": Close}
    name, arguments = build_tool_call(
        [(n, m.model_json_schema()) for n, m in tools.items()], RandomDecoder(data)
    )
    tools[name].model_validate_json(arguments)


@given(st.lists(st.integers(0, 4), max_size=30), st.integers(0, 4))
def test_no_repeat_rule_bans_exactly_the_repeating_tokens(tokens: list[int], nxt: int) -> None:
    from empathos.llm.offline.decoder import _repeats

    grams = {tuple(tokens[i : i + 3]) for i in range(len(tokens) - 2)}
    repeats = len(tokens) >= 2 and (*tokens[-2:], nxt) in grams
    assert (nxt in _repeats(tokens)) == repeats
