"""Inspect ``mockllm`` models scripted as EMPA's roles, for the tests that run the task (or
the judge's meta-check) with no server at all."""

from __future__ import annotations

import json
from collections.abc import Callable

from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    Model,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.tool import ToolChoice, ToolInfo

#: What a scripted model answers, from the request's messages and config.
Respond = Callable[[list[ChatMessage], GenerateConfig], ModelOutput]
#: The judge's levels (progress, harm) of every axis, from the text of its request.
Levels = Callable[[str], tuple[int, int]]


def mock_model(name: str, respond: Respond) -> Model:
    """A ``mockllm`` model answering with ``respond``; its usage given, since mockllm would
    otherwise count tokens with tiktoken, whose encoding is a download."""

    def answer(
        messages: list[ChatMessage],
        tools: list[ToolInfo],
        choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        out = respond(messages, config)
        out.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
        return out

    return get_model(name, memoize=False, custom_outputs=answer)


def text_model(name: str, text: Callable[[list[ChatMessage]], str]) -> Model:
    """A model that answers ``text(messages)``."""
    return mock_model(name, lambda messages, _: ModelOutput.from_content(name, text(messages)))


def director_model() -> Model:
    """A director that always continues."""
    call = {"reason": "steady", "focus": ""}
    return mock_model(
        "mockllm/director",
        lambda *_: ModelOutput.for_tool_call("mockllm/director", "continue", call),
    )


def judge_model(levels: Levels) -> Model:
    """A judge that fills the form it is asked for (read from the request's JSON schema)
    at ``levels(text of the request)``."""

    def respond(messages: list[ChatMessage], config: GenerateConfig) -> ModelOutput:
        schema = config.response_schema
        assert schema is not None, "the judge is always asked for a schema"
        prog, neg = levels("\n".join(m.text for m in messages))
        form = {}
        for key in schema.json_schema.properties or {}:
            level = prog if key.endswith("Prog") else neg
            evidence = "you said it felt heavy" if level else "0"
            form[key] = {"level": level, "evidence": evidence, "reasoning": "a mock rating"}
        return ModelOutput.from_content("mockllm/judge", json.dumps(form))

    return mock_model("mockllm/judge", respond)
