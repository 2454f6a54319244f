"""The client over the scripted backend: structured output, repair, re-asks, tool calls,
records, cache and the concurrency limit."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from empathos.errors import ConfigError, InputError, ModelOutputError, ModelRateLimitError
from empathos.llm import (
    ChatRequest,
    EndpointConfig,
    ModelClient,
    ResponseCache,
    ScriptedBackend,
    ToolReply,
    ToolSpec,
    build_model,
    fault,
    lean_schema,
    record_of,
    rules,
)


class Rating(BaseModel):
    level: Literal[-1, 0, 1, 2] = Field(description="Level.")
    reason: str = Field(description="Why.")


class Ask(BaseModel):
    question: str = Field(description="Question to ask.")


class Close(BaseModel):
    outcome: Literal["resolved", "stuck"] = Field(description="How it ended.")


TOOLS = [ToolSpec("ask", "Ask a question.", Ask), ToolSpec("close", "End the dialogue.", Close)]
USER = [{"role": "user", "content": "hello"}]


def scripted(handler: Callable[[ChatRequest], Any], make_config: Any, **over: Any) -> ModelClient:
    return build_model(make_config(**over), role="judge", handler=handler)


async def test_chat_returns_text_and_a_record(make_config: Any) -> None:
    model = scripted(rules((lambda r: True, "hi there")), make_config)
    result = await model.chat(USER)
    assert result.text == "hi there"
    rec = result.record
    assert (rec.role, rec.kind, rec.backend, rec.attempts, rec.cache_hit) == (
        "judge",
        "chat",
        "scripted",
        1,
        False,
    )
    assert rec.error is None and rec.input_tokens == 1 and rec.output_tokens == 2


async def test_structured_valid_first_time(make_config: Any) -> None:
    model = scripted(rules((lambda r: True, Rating(level=2, reason="kind"))), make_config)
    result = await model.structured(USER, Rating)
    assert result.value == Rating(level=2, reason="kind")
    assert result.record.reasks == 0 and not result.record.repaired


async def test_structured_asks_with_the_schema(make_config: Any) -> None:
    backend = ScriptedBackend(rules((lambda r: True, '{"level": 0, "reason": "x"}')))
    model = ModelClient(backend, make_config(), role="judge")
    await model.structured(USER, Rating)
    request = backend.requests[0]
    # the schema goes with the request, lean (shape, enums and required fields, no titles or
    # descriptions), and not into the prompt as well: the messages are the caller's
    assert request.response_schema == {
        "properties": {"level": {"enum": [-1, 0, 1, 2], "type": "integer"},
                       "reason": {"type": "string"}},
        "required": ["level", "reason"],
        "type": "object",
    }  # fmt: skip
    assert request.response_schema == lean_schema(Rating.model_json_schema())
    assert [m.content for m in request.messages] == ["hello"]
    # an endpoint that is sent no schema gets it in the prompt
    backend = ScriptedBackend(rules((lambda r: True, '{"level": 0, "reason": "x"}')))
    off = ModelClient(backend, make_config(json_schema="off"), role="judge")
    await off.structured(USER, Rating)
    request = backend.requests[0]
    assert request.response_schema is None and "JSON schema" in request.messages[0].content


class Turn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    stage: int | None = Field(None, ge=1, le=4, description="Stage, or none.")
    reason: str = Field(description="Why.")


def test_the_wire_schema_leaves_out_what_the_server_does_not_need() -> None:
    # no "additionalProperties": false, and an optional field that defaults to None is sent
    # as its type (leaving it out says None); the bounds and the required fields stay
    assert lean_schema(Turn.model_json_schema()) == {
        "properties": {"stage": {"maximum": 4, "minimum": 1, "type": "integer"},
                       "reason": {"type": "string"}},
        "required": ["reason"],
        "type": "object",
    }  # fmt: skip
    # what the wire schema no longer says is still enforced where the reply is validated
    with pytest.raises(ValidationError, match="extra"):
        Turn.model_validate({"reason": "r", "mood": "calm"})
    assert Turn.model_validate({"reason": "r"}).stage is None
    assert Turn.model_validate({"reason": "r", "stage": None}).stage is None


async def test_malformed_json_is_repaired(make_config: Any) -> None:
    broken = "```json\n{'level': 1, 'reason': 'ok',\n```"
    model = scripted(rules((lambda r: True, broken)), make_config)
    result = await model.structured(USER, Rating)
    assert result.value == Rating(level=1, reason="ok")
    assert result.record.repaired and result.record.reasks == 0


async def test_invalid_output_is_reasked_with_the_error(make_config: Any) -> None:
    backend = ScriptedBackend(
        rules(
            (lambda r: len(r.messages) > 2, '{"level": 1, "reason": "fixed"}'),
            (lambda r: True, '{"level": 7, "reason": "out of range"}'),
        )
    )
    model = ModelClient(backend, make_config(max_reasks=1), role="judge")
    result = await model.structured(USER, Rating)
    assert result.value.reason == "fixed" and result.record.reasks == 1
    reask = backend.requests[1].messages
    assert reask[-2].content == '{"level": 7, "reason": "out of range"}'
    assert "level" in reask[-1].content  # the validation error names the field


async def test_output_that_never_validates_is_a_typed_failure(make_config: Any) -> None:
    model = scripted(rules((lambda r: True, "not json at all")), make_config, max_reasks=2)
    with pytest.raises(ModelOutputError) as info:
        await model.structured(USER, Rating)
    record = record_of(info.value)
    assert record is not None and record.reasks == 2 and record.attempts == 3
    assert record.error_type == "ModelOutputError" and "re-ask" in (record.error or "")
    assert "role=judge" in info.value.line()


async def test_tool_call_validates_arguments(make_config: Any) -> None:
    model = scripted(
        rules((lambda r: True, ToolReply("close", {"outcome": "resolved"}))), make_config
    )
    result = await model.tool_call(USER, TOOLS)
    assert result.call.name == "close" and result.call.arguments == Close(outcome="resolved")
    assert result.record.kind == "tool_call"


async def test_tool_call_from_text_is_accepted(make_config: Any) -> None:
    text = json.dumps({"name": "ask", "arguments": {"question": "How are you?"}})
    model = scripted(rules((lambda r: True, text)), make_config)
    result = await model.tool_call(USER, TOOLS)
    assert result.call.arguments == Ask(question="How are you?")


@pytest.mark.parametrize(
    "bad",
    [ToolReply("fly", {}), ToolReply("close", {"outcome": "maybe"}), "no tool here"],
)
async def test_bad_tool_calls_are_reasked_then_fail(make_config: Any, bad: Any) -> None:
    backend = ScriptedBackend(rules((lambda r: True, bad)))
    model = ModelClient(backend, make_config(max_reasks=1), role="director")
    with pytest.raises(ModelOutputError):
        await model.tool_call(USER, TOOLS)
    assert len(backend.requests) == 2
    assert [t.name for t in backend.requests[0].tools] == ["ask", "close"]


async def test_auto_reply_answers_any_schema_validly(make_config: Any) -> None:
    model = build_model(make_config(), role="judge")
    assert (await model.structured(USER, Rating)).value.level == -1
    call = (await model.tool_call(USER, TOOLS)).call
    assert call.name == "ask" and isinstance(call.arguments, Ask)


async def test_faults_are_retried_then_typed(make_config: Any) -> None:
    seen: list[int] = []

    def handler(request: ChatRequest) -> str:
        seen.append(1)
        if len(seen) < 3:
            raise fault("rate_limit", "slow down", retry_after=0.0)
        return "done"

    model = scripted(handler, make_config, max_attempts=3)
    result = await model.chat(USER)
    assert result.text == "done" and result.record.retries == 2 and result.record.attempts == 3

    always = scripted(lambda r: (_ for _ in ()).throw(fault("rate_limit")), make_config)
    with pytest.raises(ModelRateLimitError) as info:
        await always.chat(USER)
    assert info.value.attempts == 3 and "after 3 attempt(s)" in info.value.line()


async def test_cost_from_prices(make_config: Any) -> None:
    model = scripted(
        rules((lambda r: True, "a b c d")),
        make_config,
        price_input_per_1k=2.0,
        price_output_per_1k=10.0,
    )
    rec = (await model.chat([{"role": "user", "content": "one two"}])).record
    assert rec.cost_usd == pytest.approx(2 / 1000 * 2.0 + 4 / 1000 * 10.0)


async def test_overrides_reach_the_backend_and_unknown_ones_fail(make_config: Any) -> None:
    backend = ScriptedBackend()
    model = ModelClient(backend, make_config(temperature=0.7, max_tokens=9), role="user")
    await model.chat(USER, temperature=0.1)
    assert backend.requests[0].params == {"temperature": 0.1, "max_tokens": 9}
    with pytest.raises(ValueError, match="unknown sampling"):
        await model.chat(USER, colour=1)


async def test_cache_hits_are_recorded_and_failures_not_cached(
    make_config: Any, tmp_path: Path
) -> None:
    cache = ResponseCache(tmp_path / "cache.sqlite")
    calls: list[int] = []

    def handler(request: ChatRequest) -> str:
        calls.append(1)
        if "fail" in request.messages[-1].content:
            return "not json"
        if request.schema_name == "Close":
            return '{"outcome": "stuck"}'
        return '{"level": 0, "reason": "r"}'

    model = scripted(handler, make_config, cache=True, max_reasks=0)
    model.cache = cache
    first = await model.structured(USER, Rating)
    second = await model.structured(USER, Rating)
    assert not first.record.cache_hit and second.record.cache_hit
    assert second.value == first.value and len(calls) == 1 and len(cache) == 1
    other = await model.structured(USER, Close)  # another schema is another key
    assert not other.record.cache_hit
    for _ in range(2):
        with pytest.raises(ModelOutputError):
            await model.structured([{"role": "user", "content": "fail"}], Rating)
    assert len(cache) == 2 and len(calls) == 4  # the failure was asked twice, never stored


async def test_cache_is_opt_in(make_config: Any, tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    model = build_model(make_config(cache=False), role="user", cache=cache)
    await model.chat(USER)
    await model.chat(USER)
    assert len(cache) == 0


async def test_cache_under_concurrency(make_config: Any, tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    model = build_model(make_config(cache=True), role="user", cache=cache)
    prompts = [[{"role": "user", "content": f"m{i % 20}"}] for i in range(200)]
    results = await asyncio.gather(*(model.chat(p) for p in prompts))
    threads = await asyncio.gather(*(asyncio.to_thread(cache.put, f"k{i}", "v") for i in range(50)))
    assert len(threads) == 50 and len(cache) == 20 + 50
    assert [r.text for r in results] == [f"(scripted) m{i % 20}" for i in range(200)]
    again = await model.chat(prompts[0])
    assert again.record.cache_hit


async def test_concurrency_limit_is_per_name(make_config: Any) -> None:
    state = {"now": 0, "max": 0}

    class Slow(ScriptedBackend):
        async def complete(self, request: ChatRequest) -> Any:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
            await asyncio.sleep(0.01)
            state["now"] -= 1
            return await super().complete(request)

    config = make_config(max_concurrency=3, name="shared")
    a = ModelClient(Slow(), config, role="user")
    b = ModelClient(Slow(), config, role="judge")
    await asyncio.gather(*(m.chat(USER) for m in [a, b] * 10))
    assert state["max"] == 3


def test_openai_config_needs_url_and_key_is_read_from_env(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ValueError, match="base_url"):
        EndpointConfig(kind="openai", model="m")
    with pytest.raises(ValueError, match="model is required when kind is 'openai'"):
        EndpointConfig(kind="openai", base_url="http://127.0.0.1:9/v1")
    monkeypatch.delenv("EMPATHOS_TEST_NO_SUCH_KEY", raising=False)
    config = EndpointConfig(
        base_url="http://127.0.0.1:9/v1", model="m", api_key_env="EMPATHOS_TEST_NO_SUCH_KEY"
    )
    with pytest.raises(ConfigError, match="EMPATHOS_TEST_NO_SUCH_KEY") as info:
        build_model(config, role="director")
    assert "roles.director.api_key_env" in info.value.line()


def test_damaged_cache_file_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    path.write_bytes(b"this is not an SQLite database, just bytes " * 50)
    with pytest.raises(InputError) as info:
        ResponseCache(path)
    assert info.value.file == str(path)
    assert "delete it" in info.value.line()
