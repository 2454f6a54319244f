"""The OpenAI-compatible client against a real loopback server that misbehaves on purpose."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

from empathos.errors import (
    ModelFatalError,
    ModelOutputError,
    ModelRateLimitError,
    ModelTransientError,
)
from empathos.llm import ResponseCache, ToolSpec, build_model, lean_schema, record_of
from empathos.llm.testing import FaultServer, Step

USER = [{"role": "user", "content": "hello"}]


class Verdict(BaseModel):
    label: Literal["yes", "no"] = Field(description="The verdict.")


class Ask(BaseModel):
    question: str = Field(description="A question.")


async def test_plain_success_records_usage(fault_server: FaultServer, make_config: Any) -> None:
    model = build_model(make_config(fault_server.url), role="user")
    result = await model.chat(USER, temperature=0.3)
    assert result.text == "ok"
    rec = result.record
    assert (rec.input_tokens, rec.output_tokens, rec.attempts, rec.endpoint) == (
        3,
        2,
        1,
        fault_server.url,
    )
    sent = fault_server.requests[0]
    assert sent["model"] == "test-model" and sent["temperature"] == 0.3
    assert sent["messages"] == USER
    await model.aclose()


@pytest.mark.parametrize(
    "faults",
    [
        [Step.status(500), Step.status(502)],
        [Step.status(503, headers={"Retry-After": "0"})],
        [Step.drop(), Step.drop()],
        [Step.truncated()],
        [Step.malformed()],
        [Step.status(429, headers={"Retry-After": "0"})],
    ],
    ids=["5xx", "503-retry-after", "dropped", "truncated", "malformed-body", "429"],
)
async def test_retryable_faults_then_success(
    fault_server: FaultServer, make_config: Any, faults: list[Step]
) -> None:
    fault_server.script(*faults, Step.ok("recovered"))
    model = build_model(make_config(fault_server.url, max_attempts=4), role="judge")
    result = await model.chat(USER)
    assert result.text == "recovered"
    assert result.record.attempts == len(faults) + 1
    assert result.record.retries == len(faults)
    assert len(fault_server.requests) == len(faults) + 1
    await model.aclose()


@pytest.mark.parametrize(
    ("step", "error"),
    [
        (Step.status(500), ModelTransientError),
        (Step.status(429, headers={"Retry-After": "0"}), ModelRateLimitError),
        (Step.drop(), ModelTransientError),
        (Step.malformed(), ModelTransientError),
    ],
    ids=["500", "429", "drop", "malformed"],
)
async def test_persistent_faults_fail_typed_after_the_configured_attempts(
    fault_server: FaultServer, make_config: Any, step: Step, error: type[Exception]
) -> None:
    fault_server.script(*[step] * 10)
    model = build_model(make_config(fault_server.url, max_attempts=3), role="judge")
    with pytest.raises(error) as info:
        await model.chat(USER)
    assert len(fault_server.requests) == 3
    record = record_of(info.value)
    assert record is not None and record.attempts == 3 and record.retries == 2
    assert record.error_type == error.__name__
    assert "after 3 attempt(s)" in str(info.value)
    await model.aclose()


@pytest.mark.parametrize(
    ("code", "words"),
    [(401, "authentication"), (403, "permission"), (404, "not found"), (400, "rejected")],
)
async def test_fatal_statuses_fail_at_once(
    fault_server: FaultServer, make_config: Any, code: int, words: str
) -> None:
    fault_server.script(Step.status(code), Step.ok())
    model = build_model(make_config(fault_server.url, max_attempts=5), role="director")
    with pytest.raises(ModelFatalError) as info:
        await model.chat(USER)
    assert len(fault_server.requests) == 1
    line = info.value.line()
    assert f"HTTP {code}" in line and words in line and "role=director" in line
    await model.aclose()


async def test_retry_after_is_honoured(fault_server: FaultServer, make_config: Any) -> None:
    fault_server.script(Step.status(429, headers={"Retry-After": "0.3"}), Step.ok())
    model = build_model(make_config(fault_server.url), role="user")
    t0 = time.perf_counter()
    result = await model.chat(USER)
    waited = time.perf_counter() - t0
    assert result.record.retries == 1
    assert 0.3 <= waited < 1.5  # the backoff alone would have waited ~0.01 s
    await model.aclose()


async def test_retry_after_is_capped(fault_server: FaultServer, make_config: Any) -> None:
    fault_server.script(Step.status(429, headers={"Retry-After": "3600"}), Step.ok())
    model = build_model(make_config(fault_server.url, retry_after_max_s=0.05), role="user")
    t0 = time.perf_counter()
    await model.chat(USER)
    assert time.perf_counter() - t0 < 1.0
    await model.aclose()


async def test_slow_replies_time_out_and_nothing_hangs(
    fault_server: FaultServer, make_config: Any
) -> None:
    fault_server.script(*[Step.slow(2.0)] * 3)
    model = build_model(make_config(fault_server.url, timeout_s=0.2), role="judge")
    t0 = time.perf_counter()
    with pytest.raises(ModelTransientError, match="timed out"):
        await model.chat(USER)
    assert time.perf_counter() - t0 < 1.5
    await model.aclose()


async def test_slow_reply_then_fast_reply_succeeds(
    fault_server: FaultServer, make_config: Any
) -> None:
    fault_server.script(Step.slow(1.0), Step.ok("fast"))
    model = build_model(make_config(fault_server.url, timeout_s=0.2), role="judge")
    assert (await model.chat(USER)).text == "fast"
    await model.aclose()


async def test_schema_violating_json_is_reasked_then_typed(
    fault_server: FaultServer, make_config: Any, tmp_path: Path
) -> None:
    cache = ResponseCache(tmp_path / "cache.sqlite")
    fault_server.script(*[Step.ok('{"label": "maybe"}')] * 4)
    model = build_model(
        make_config(fault_server.url, max_reasks=1, cache=True), role="judge", cache=cache
    )
    with pytest.raises(ModelOutputError, match="label") as info:
        await model.structured(USER, Verdict)
    assert len(fault_server.requests) == 2 and len(cache) == 0
    record = record_of(info.value)
    assert record is not None and record.reasks == 1 and not record.cache_hit
    first = fault_server.requests[0]["response_format"]
    assert first["type"] == "json_schema"
    assert first["json_schema"]["schema"] == lean_schema(Verdict.model_json_schema())
    # a good answer afterwards is cached and served from the cache the next time
    fault_server.script(Step.ok('{"label": "yes"}'))
    assert (await model.structured(USER, Verdict)).value.label == "yes"
    again = await model.structured(USER, Verdict)
    assert again.record.cache_hit and len(fault_server.requests) == 3
    await model.aclose()


async def test_truncated_json_content_is_repaired(
    fault_server: FaultServer, make_config: Any
) -> None:
    fault_server.script(Step.ok('{"label": "no"'))
    model = build_model(make_config(fault_server.url), role="judge")
    result = await model.structured(USER, Verdict)
    assert result.value.label == "no" and result.record.repaired
    await model.aclose()


async def test_schema_rejected_falls_back_to_json_mode(
    fault_server: FaultServer, make_config: Any
) -> None:
    fault_server.script(Step.status(400), Step.ok('{"label": "yes"}'), Step.ok('{"label": "no"}'))
    model = build_model(make_config(fault_server.url), role="judge")
    assert (await model.structured(USER, Verdict)).value.label == "yes"
    assert (await model.structured(USER, Verdict)).value.label == "no"
    formats = [r.get("response_format", {}).get("type") for r in fault_server.requests]
    assert formats == ["json_schema", "json_object", "json_object"]  # remembered
    # the schema the endpoint refused is then in the prompt (and only then)
    in_prompt = ["JSON schema" in r["messages"][0]["content"] for r in fault_server.requests]
    assert in_prompt == [False, True, True]
    await model.aclose()


async def test_tool_call_over_http(fault_server: FaultServer, make_config: Any) -> None:
    fault_server.script(Step.ok(None, tool=("ask", '{"question": "why?"}')))
    model = build_model(make_config(fault_server.url), role="director")
    result = await model.tool_call(USER, [ToolSpec("ask", "Ask.", Ask)])
    assert result.call.arguments == Ask(question="why?")
    sent = fault_server.requests[0]
    assert sent["tool_choice"] == "required"
    assert sent["tools"][0]["function"]["parameters"] == lean_schema(Ask.model_json_schema())
    # what changes from call to call (the messages) comes last in the body, for prefix caches
    keys = list(sent)
    assert keys[-1] == "messages" and keys.index("tools") < keys.index("messages")
    await model.aclose()


async def test_concurrency_limit_and_many_failures_do_not_crash(make_config: Any) -> None:
    steps = [Step.slow(0.02)] * 30 + [Step.status(500), Step.drop(), Step.malformed()] * 10
    with FaultServer() as server:  # its own server: no slow requests left over from others
        server.script(*steps)
        model = build_model(make_config(server.url, max_concurrency=4), role="user")
        calls = (model.chat(USER) for _ in range(60))
        results = await asyncio.gather(*calls, return_exceptions=True)
        await model.aclose()
    assert server.max_in_flight == 4
    assert all(
        isinstance(r, ModelTransientError) or not isinstance(r, BaseException) for r in results
    )


def test_server_saw_json_bodies(fault_server: FaultServer) -> None:
    import httpx

    response = httpx.post(fault_server.url + "/chat/completions", json={"x": 1})
    assert json.loads(response.text)["choices"][0]["message"]["content"] == "ok"
    assert fault_server.requests == [{"x": 1}]


async def test_rejected_tool_choice_is_dropped_once(
    fault_server: FaultServer, make_config: Any
) -> None:
    fault_server.script(
        Step.status(400),
        Step.ok(None, tool=("ask", '{"question": "a"}')),
        Step.ok(None, tool=("ask", '{"question": "b"}')),
    )
    model = build_model(make_config(fault_server.url), role="director")
    tools = [ToolSpec("ask", "Ask.", Ask)]
    assert (await model.tool_call(USER, tools)).call.arguments == Ask(question="a")
    assert (await model.tool_call(USER, tools)).call.arguments == Ask(question="b")
    sent = ["tool_choice" in r for r in fault_server.requests]
    assert sent == [True, False, False]
    await model.aclose()
