"""`empathos serve` as a subprocess on a free loopback port, used through our own client."""

from __future__ import annotations

import os
import queue
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Literal

import httpx
import pytest
from pydantic import BaseModel, Field

from empathos.errors import ModelFatalError
from empathos.llm import EndpointConfig, ToolSpec, build_model


class Rating(BaseModel):
    level: Literal["low", "medium", "high"] = Field(description="How empathic the reply is.")
    direction: Literal[-1, 0, 1] = Field(description="Did the user feel better?")
    reason: str = Field(max_length=100, description="One short sentence.")


class Ask(BaseModel):
    question: str = Field(description="The question to ask.")


class Close(BaseModel):
    outcome: Literal["resolved", "stuck"] = Field(description="How the dialogue ended.")


PROMPT = [{"role": "user", "content": "My dog died last week and I can't focus."}]
_PUMPS: dict[int, threading.Thread] = {}


def _start(*args: str, timeout_s: float = 240.0) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "empathos", "serve", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)

    pumper = threading.Thread(target=pump, daemon=True)
    pumper.start()
    _PUMPS[proc.pid] = pumper
    seen = []
    while True:
        try:
            line = lines.get(timeout=timeout_s)
        except queue.Empty:
            _stop(proc)
            raise AssertionError(f"serve did not print its URL: {seen}") from None
        seen.append(line)
        if line.startswith("serving ") and " at http://" in line:
            return proc, line.split(" at ", 1)[1].strip()


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    _PUMPS.pop(proc.pid).join(10)
    assert proc.stdout is not None
    proc.stdout.close()


@pytest.fixture(scope="module")
def offline_server() -> Iterator[str]:
    proc, url = _start()
    yield url
    _stop(proc)


@pytest.mark.slow
async def test_serve_offline_plain_schema_and_tools(offline_server: str) -> None:
    assert offline_server.startswith("http://127.0.0.1:")
    config = EndpointConfig(base_url=offline_server, max_tokens=24, timeout_s=120)
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
    proc, url = _start("--backend", "scripted", timeout_s=60)
    try:
        model = build_model(EndpointConfig(base_url=url, model="scripted"), role="user")
        assert (await model.chat(PROMPT)).text.startswith("(scripted) My dog died")
        assert (await model.structured(PROMPT, Rating)).value.level == "low"
        bad = build_model(EndpointConfig(base_url=url + "/nowhere"), role="user")
        with pytest.raises(ModelFatalError, match="HTTP 404"):
            await bad.chat(PROMPT)
        await model.aclose()
        await bad.aclose()
    finally:
        _stop(proc)


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
