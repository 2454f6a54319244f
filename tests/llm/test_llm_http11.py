"""The lean plain-HTTP transport against a real loopback server answering in various HTTP/1.x
framings (chunked, close-delimited, HTTP/1.0), closing idle connections, or breaking off."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from empathos.errors import ModelTransientError
from empathos.llm import build_model
from empathos.llm.http11 import PlainHTTPTransport, sdk_http
from empathos.llm.testing import completion_body

USER = [{"role": "user", "content": "hello"}]
Answer = Callable[[bytes], bytes]  # request body -> the raw bytes written back


class RawServer:
    """Answers each request with ``answer(body)``; counts connections; may close after each."""

    def __init__(self, answer: Answer, close_after: bool = False) -> None:
        self.answer = answer
        self.close_after = close_after
        self.connections = 0
        self.bodies: list[dict[str, Any]] = []
        self.url = ""

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                body = await reader.readexactly(length)
                self.bodies.append(json.loads(body))
                writer.write(self.answer(body))
                await writer.drain()
                if self.close_after:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()


@pytest.fixture
async def serve() -> AsyncIterator[Callable[..., Any]]:
    servers: list[asyncio.Server] = []

    async def start(answer: Answer, close_after: bool = False) -> RawServer:
        raw = RawServer(answer, close_after)
        server = await asyncio.start_server(raw.handle, "127.0.0.1", 0)
        servers.append(server)
        raw.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1"
        return raw

    yield start
    for server in servers:
        server.close()


def _json(text: str) -> bytes:
    return json.dumps(completion_body(text)).encode()


def content_length(text: str, extra: bytes = b"") -> bytes:
    body = _json(text)
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + extra
    return head + b"Content-Length: %d\r\n\r\n" % len(body) + body


def chunked(text: str) -> bytes:
    body = _json(text)
    half = len(body) // 2
    parts = b"".join(b"%x;ext=1\r\n%s\r\n" % (len(p), p) for p in (body[:half], body[half:]))
    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    return head + parts + b"0\r\nX-Trailer: t\r\n\r\n"


async def test_keep_alive_reuses_one_connection(serve: Any, make_config: Any) -> None:
    server = await serve(lambda body: content_length(json.loads(body)["messages"][0]["content"]))
    model = build_model(make_config(server.url), role="user")
    texts = [(await model.chat([{"role": "user", "content": f"m{i}"}])).text for i in range(5)]
    await model.aclose()
    assert texts == [f"m{i}" for i in range(5)]
    assert server.connections == 1


async def test_chunked_body_with_extensions_and_trailers(serve: Any, make_config: Any) -> None:
    server = await serve(lambda body: chunked("in two chunks"))
    model = build_model(make_config(server.url), role="user")
    assert (await model.chat(USER)).text == "in two chunks"
    assert (await model.chat(USER)).text == "in two chunks"
    await model.aclose()
    assert server.connections == 1  # the chunked framing left the connection reusable


@pytest.mark.parametrize(
    "answer",
    [
        lambda body: b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + _json("till close"),
        lambda body: b"HTTP/1.0 200 OK\r\n\r\n" + _json("till close"),
    ],
    ids=["connection-close", "http-1.0"],
)
async def test_close_delimited_body(serve: Any, make_config: Any, answer: Answer) -> None:
    server = await serve(answer, close_after=True)
    model = build_model(make_config(server.url), role="user")
    assert (await model.chat(USER)).text == "till close"
    assert (await model.chat(USER)).text == "till close"
    await model.aclose()
    assert server.connections == 2  # never reused a connection the server ended


async def test_server_closing_idle_connections_is_not_an_error(
    serve: Any, make_config: Any
) -> None:
    server = await serve(lambda body: content_length("fresh"), close_after=True)
    model = build_model(make_config(server.url, max_attempts=1), role="user")
    for _ in range(3):
        await asyncio.sleep(0.05)  # the server's close reaches us while the connection idles
        assert (await model.chat(USER)).text == "fresh"
    await model.aclose()
    assert server.connections == 3


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (lambda body: b"HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n{}", "RemoteProtocolError"),
        (lambda body: b"NONSENSE\r\n\r\n", "RemoteProtocolError"),
        (lambda body: b"HTTP/1.1 200 OK\r\nbroken header\r\n\r\n", "RemoteProtocolError"),
        (lambda body: b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "Remote"),
    ],
    ids=["truncated", "status-line", "header-line", "chunk-size"],
)
async def test_broken_responses_are_transient(
    serve: Any, make_config: Any, answer: Answer, reason: str
) -> None:
    server = await serve(answer, close_after=True)
    model = build_model(make_config(server.url, max_attempts=2), role="user")
    with pytest.raises(ModelTransientError, match=f"connection failed \\({reason}"):
        await model.chat(USER)
    await model.aclose()
    assert len(server.bodies) == 2  # retried once, as any transient failure


async def test_refused_connection_is_a_connect_error() -> None:
    probe = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = probe.sockets[0].getsockname()[1]
    probe.close()
    await probe.wait_closed()
    transport = PlainHTTPTransport(max_keepalive=4)
    request = sdk_http.Request("POST", f"http://127.0.0.1:{port}/v1/x", json={})
    with pytest.raises(sdk_http.ConnectError):
        await transport.handle_async_request(request)
    with pytest.raises(sdk_http.UnsupportedProtocol):
        await transport.handle_async_request(sdk_http.Request("GET", "https://127.0.0.1/"))
    await transport.aclose()
