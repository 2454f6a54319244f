"""`empathos serve` as a subprocess on a free loopback port, used through our own client."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from typing import Literal

import httpx
import pytest
from pydantic import BaseModel, Field

from empathos.errors import ModelFatalError
from empathos.llm import EndpointConfig, ToolSpec, build_model
from empathos.llm.testing import served


class Rating(BaseModel):
    level: Literal["low", "medium", "high"] = Field(description="How empathic the reply is.")
    direction: Literal[-1, 0, 1] = Field(description="Did the user feel better?")
    reason: str = Field(max_length=100, description="One short sentence.")


class Ask(BaseModel):
    question: str = Field(description="The question to ask.")


class Close(BaseModel):
    outcome: Literal["resolved", "stuck"] = Field(description="How the dialogue ended.")


PROMPT = [{"role": "user", "content": "My dog died last week and I can't focus."}]


@pytest.fixture(scope="module")
def offline_server() -> Iterator[str]:
    with served() as url:
        yield url


@pytest.mark.slow
async def test_serve_offline_plain_schema_and_tools(offline_server: str) -> None:
    assert offline_server.startswith("http://127.0.0.1:")
    config = EndpointConfig(
        base_url=offline_server, model="smollm2-135m-instruct", max_tokens=24, timeout_s=120
    )
    model = build_model(config, role="judge")
    try:
        chat = await model.chat(PROMPT)
        assert chat.text.strip() and chat.record.output_tokens > 0

        rated = await model.structured(PROMPT, Rating)
        assert isinstance(rated.value, Rating) and rated.record.reasks == 0

        tools = [ToolSpec("ask", "Ask a question.", Ask), ToolSpec("close", "End.", Close)]
        called = await model.tool_call(PROMPT, tools)
        assert called.call.name in ("ask", "close") and called.record.reasks == 0
    finally:
        await model.aclose()


@pytest.mark.slow
def test_serve_answers_openai_wire_format(offline_server: str) -> None:
    models = httpx.get(offline_server + "/models").json()
    assert [m["id"] for m in models["data"]] == ["smollm2-135m-instruct"]
    body = {
        "messages": [{"role": "developer", "content": "Be brief."}, *PROMPT],
        "max_tokens": 8,
        "tools": [
            {
                "type": "function",
                "function": {"name": "close", "parameters": Close.model_json_schema()},
            }
        ],
        "tool_choice": {"type": "function", "function": {"name": "close"}},
    }
    reply = httpx.post(offline_server + "/chat/completions", json=body, timeout=120).json()
    call = reply["choices"][0]["message"]["tool_calls"][0]
    assert reply["choices"][0]["finish_reason"] == "tool_calls"
    assert call["function"]["name"] == "close"
    Close.model_validate_json(call["function"]["arguments"])
    usage = reply["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    bad = httpx.post(offline_server + "/chat/completions", json={**body, "stream": True})
    assert bad.status_code == 400


async def test_serve_scripted_backend_and_fatal_errors() -> None:
    with served("--backend", "scripted", startup_s=60) as url:
        model = build_model(EndpointConfig(base_url=url, model="scripted"), role="user")
        assert (await model.chat(PROMPT)).text.startswith("(scripted) My dog died")
        assert (await model.structured(PROMPT, Rating)).value.level == "low"
        bad = build_model(EndpointConfig(base_url=url + "/nowhere", model="scripted"), role="user")
        with pytest.raises(ModelFatalError, match="HTTP 404"):
            await bad.chat(PROMPT)
        await model.aclose()
        await bad.aclose()


def test_serve_on_a_busy_port_fails_with_one_line() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        cmd = [sys.executable, "-m", "empathos", "serve", "--backend", "scripted"]
        out = subprocess.run(
            [*cmd, "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert out.returncode == 2
    assert out.stderr.startswith(
        "error: port: cannot listen on 127.0.0.1:"
    ) and "Traceback" not in (out.stderr)
