"""`empathos serve` through the `openai` SDK (sync and async): OpenAI's wire format, errors
included. The scripted backend here (fast); the offline model in test_llm_serve.py."""

from __future__ import annotations

import json
import socket
import time
import urllib.parse
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from empathos.llm.testing import served

MESSAGES: list[Any] = [{"role": "user", "content": "my cat is ill"}]
LIMIT = 64 * 1024
TOOL = {
    "type": "function",
    "function": {
        "name": "ask",
        "parameters": {
            "type": "object",
            "properties": {"question": {"type": "string"}},
            "required": ["question"],
        },
    },
}


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    args = ("--backend", "scripted", "--served-model-name", "gpt-4o-mini")
    with served(*args, "--max-request-bytes", str(LIMIT), startup_s=60) as base:
        yield base


@pytest.fixture(scope="module")
def client(url: str) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=url, api_key="unused", max_retries=0, timeout=30) as sdk:
        yield sdk


def test_plain_n_stop_and_the_sampling_parameters_clients_send(client: openai.OpenAI) -> None:
    reply = client.chat.completions.create(
        model="gpt-4o-mini",  # a name written into a client's code, served by the flag
        messages=MESSAGES,
        n=3,
        stop=["ill"],
        temperature=0.7,
        top_p=0.9,
        seed=7,
        frequency_penalty=0.7,
        presence_penalty=0.7,
        max_tokens=64,
        user="someone",  # unknown to the server: ignored
    )
    assert reply.model == "gpt-4o-mini" and reply.object == "chat.completion"
    assert [c.index for c in reply.choices] == [0, 1, 2]
    for choice in reply.choices:  # the echo "(scripted) my cat is ill", cut before "ill"
        assert choice.message.content == "(scripted) my cat is "
        assert choice.finish_reason == "stop"
    assert reply.usage is not None
    assert reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens


def test_json_object_json_schema_and_tools(client: openai.OpenAI) -> None:
    obj = client.chat.completions.create(
        model="scripted", messages=MESSAGES, response_format={"type": "json_object"}
    )
    assert isinstance(json.loads(obj.choices[0].message.content or ""), dict)
    schema = {
        "type": "object",
        "properties": {"level": {"enum": ["low", "high"]}},
        "required": ["level"],
    }
    fmt: Any = {"type": "json_schema", "json_schema": {"name": "rating", "schema": schema}}
    rated = client.chat.completions.create(model="scripted", messages=MESSAGES, response_format=fmt)
    assert json.loads(rated.choices[0].message.content or "") == {"level": "low"}
    called = client.chat.completions.create(model="scripted", messages=MESSAGES, tools=[TOOL])
    calls = called.choices[0].message.tool_calls or []
    assert called.choices[0].finish_reason == "tool_calls"
    assert calls[0].function.name == "ask"  # type: ignore[union-attr]
    assert "question" in json.loads(calls[0].function.arguments)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("extra", "param", "code"),
    [
        ({"logprobs": True}, "logprobs", "unsupported_parameter"),
        ({"top_logprobs": 2}, "top_logprobs", "unsupported_parameter"),
        ({"logit_bias": {"50256": -100}}, "logit_bias", "unsupported_parameter"),
        ({"n": 9}, "n", "invalid_value"),
        ({"temperature": 3.0}, "temperature", "invalid_value"),
        ({"frequency_penalty": -2.5}, "frequency_penalty", "invalid_value"),
        ({"stop": ["a", "b", "c", "d", "e"]}, "stop", "invalid_value"),
        ({"max_tokens": 0}, "max_tokens", "invalid_value"),
        ({"response_format": {"type": "yaml"}}, "response_format", "invalid_value"),
        (
            {"messages": [{"role": "user", "content": [{"type": "image_url"}]}]},
            "messages[0].content",
            "unsupported_value",
        ),
        ({"messages": [{"role": "wizard", "content": "x"}]}, "messages[0].role", "invalid_value"),
    ],
)
def test_invalid_requests_are_400_with_param_and_code(
    client: openai.OpenAI, extra: dict[str, Any], param: str, code: str
) -> None:
    body: dict[str, Any] = {"model": "scripted", "messages": MESSAGES, **extra}
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(**body)
    assert caught.value.status_code == 400
    assert (caught.value.param, caught.value.code) == (param, code)


def test_missing_messages_are_refused(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client.post("/chat/completions", cast_to=object, body={"model": "scripted"})
    assert (caught.value.param, caught.value.code) == ("messages", "missing_required_parameter")


def test_a_streamed_request_gets_the_plain_answer_as_events(client: openai.OpenAI) -> None:
    """stream=true (verifiers' harnesses always stream): the SDK reassembles the same reply,
    tool calls included, and the usage chunk when asked for."""
    plain = client.chat.completions.create(model="scripted", messages=MESSAGES)
    chunks = list(
        client.chat.completions.create(
            model="scripted", messages=MESSAGES, stream=True,
            stream_options={"include_usage": True},
        )
    )  # fmt: skip
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == plain.choices[0].message.content and text
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens > 0
    tools = [
        {
            "type": "function",
            "function": {
                "name": "close",
                "parameters": {
                    "type": "object",
                    "properties": {"why": {"type": "string"}},
                    "required": ["why"],
                },
            },
        }
    ]
    streamed = list(
        client.chat.completions.create(
            model="scripted", messages=MESSAGES, tools=tools, stream=True
        )
    )  # type: ignore[arg-type]
    [call] = next(c.choices[0].delta.tool_calls for c in streamed if c.choices[0].delta.tool_calls)
    assert call.function is not None and call.function.name == "close" and call.index == 0


@pytest.mark.parametrize("number", [b"NaN", b"Infinity", b"-Infinity"])
def test_non_finite_numbers_are_400_not_500(url: str, number: bytes) -> None:
    # The SDK refuses to send NaN itself; other clients do (Python's json writes it).
    body = b'{"model": "scripted", "messages": [{"role": "user", "content": "x"}], '
    body += b'"temperature": ' + number + b"}"
    answer = httpx.post(
        url + "/chat/completions", content=body, headers={"content-type": "application/json"}
    )
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["param"] == "temperature" and error["type"] == "invalid_request_error"
    assert set(error) == {"message", "type", "param", "code"}


def test_unparsable_body_is_400(url: str) -> None:
    answer = httpx.post(
        url + "/chat/completions", content=b"{oops", headers={"content-type": "application/json"}
    )
    assert answer.status_code == 400 and answer.json()["error"]["code"] == "invalid_json"


def test_unknown_model_and_url_are_404(client: openai.OpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as caught:
        client.chat.completions.create(model="gpt-5-imaginary", messages=MESSAGES)
    assert (caught.value.code, caught.value.param) == ("model_not_found", "model")
    with pytest.raises(openai.NotFoundError) as caught:
        client.post("/nowhere", cast_to=object, body={})
    assert caught.value.code == "unknown_url"
    listed = [m.id for m in client.models.list()]
    assert listed == ["scripted", "gpt-4o-mini"]


def test_a_body_over_the_limit_is_413(client: openai.OpenAI) -> None:
    big = [{"role": "user", "content": "x" * (LIMIT + 1)}]
    with pytest.raises(openai.APIStatusError) as caught:
        client.chat.completions.create(model="scripted", messages=big)
    assert caught.value.status_code == 413 and caught.value.code == "request_too_large"
    assert str(LIMIT) in caught.value.message


async def test_the_async_sdk_gets_the_same_answers_and_errors(url: str) -> None:
    async with openai.AsyncOpenAI(base_url=url, api_key="unused", max_retries=0) as sdk:
        reply = await sdk.chat.completions.create(
            model="scripted", messages=MESSAGES, n=2, stop="cat"
        )
        assert [c.message.content for c in reply.choices] == ["(scripted) my "] * 2
        obj = await sdk.chat.completions.create(
            model="scripted", messages=MESSAGES, response_format={"type": "json_object"}
        )
        assert isinstance(json.loads(obj.choices[0].message.content or ""), dict)
        with pytest.raises(openai.NotFoundError) as missing:
            await sdk.chat.completions.create(model="nope", messages=MESSAGES)
        assert missing.value.code == "model_not_found"
        with pytest.raises(openai.BadRequestError) as bad:
            await sdk.chat.completions.create(model="scripted", messages=MESSAGES, logprobs=True)
        assert bad.value.param == "logprobs"


def test_a_reply_is_not_held_back_on_a_kept_alive_connection(url: str) -> None:
    # A client that sends its next request as soon as a reply is complete (one connection,
    # kept alive). With Nagle's algorithm on the server's connections, the reply's body waited
    # for the client to acknowledge its head, which the client's delayed-ACK timer holds
    # back 40 ms: the body came ~40 ms after the head, on every request after the first.
    parts = urllib.parse.urlsplit(url)
    body = json.dumps({"model": "gpt-4o-mini", "messages": MESSAGES}).encode()
    head = (
        f"POST {parts.path}/chat/completions HTTP/1.1\r\nHost: {parts.netloc}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    gaps = []
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as conn:
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for _ in range(8):
            conn.sendall(head + body)
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            got_head = time.perf_counter()
            reply_head, rest = data.split(b"\r\n\r\n", 1)
            assert reply_head.startswith(b"HTTP/1.1 200")
            length = int(
                next(
                    line.split(b":", 1)[1]
                    for line in reply_head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
            )
            while len(rest) < length:
                rest += conn.recv(65536)
            gaps.append(time.perf_counter() - got_head)
            assert json.loads(rest)["object"] == "chat.completion"
    # the delayed ACK is 40 ms; a body sent at once follows its head within a millisecond
    assert sorted(gaps)[len(gaps) // 2] < 0.02, [round(g * 1000, 1) for g in gaps]
