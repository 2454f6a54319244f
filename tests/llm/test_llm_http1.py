"""The direct path's own HTTP/1.1 client (empathos.llm.http1) reads what real servers write:
chunked and close-delimited bodies, ``Connection: close``, an interim 100 reply; it names
garbage, spends a connection whose call was cancelled, never reuses one idle past the
keep-alive, and times the server's silence rather than the whole reply. Every test runs
against a real loopback socket."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest
from llm_helpers import USER, chat_error

from empathos.errors import ConfigError, ModelFatalError, ModelTransientError
from empathos.llm import build_model, http1, openai_backend, resolve_api_key
from empathos.llm.openai_backend import _plain_http
from empathos.llm.testing import FaultServer, Step, completion_body


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FaultServer]:
    """A fresh fault server (its connection count is this test's), on the direct path."""
    for name in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    with FaultServer() as fault_server:
        assert _plain_http(fault_server.url)
        yield fault_server


def _body(text: str) -> bytes:
    return json.dumps(completion_body(text)).encode()


def _chunked(body: bytes, size: int = 7) -> bytes:
    parts = [body[i : i + size] for i in range(0, len(body), size)]
    chunks = b"".join(b"%x\r\n%b\r\n" % (len(p), p) for p in parts)
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
    return head + b"\r\n" + chunks + b"0\r\n\r\n"


async def _read_request(reader: asyncio.StreamReader) -> bytes:
    """Read one request (head and Content-Length body) from a loopback client; its head."""
    head = await reader.readuntil(b"\r\n\r\n")
    size = next(
        int(line.split(b":")[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length")
    )
    await reader.readexactly(size)
    return head


async def _texts(model: Any, n: int) -> list[str]:
    return [(await model.chat(USER)).text for _ in range(n)]


async def test_chunked_close_delimited_and_interim_replies_are_read_whole(
    server: FaultServer, make_config: Any
) -> None:
    length = b"Content-Length: %d\r\n"
    server.script(
        Step.wire(_chunked(_body("chunked, kept alive"))),
        Step.wire(
            b"HTTP/1.1 100 Continue\r\n\r\n"
            + b"HTTP/1.1 200 OK\r\n"
            + length % len(_body("after 100"))
            + b"\r\n"
            + _body("after 100")
        ),
        Step.wire(
            b"HTTP/1.1 200 OK\r\n"
            + length % len(_body("closes"))
            + b"Connection: close\r\n\r\n"
            + _body("closes"),
            close=True,
        ),
        Step.wire(
            b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n" + _body("ends at EOF"),
            close=True,
        ),
        Step.ok("fresh"),
    )
    model = build_model(make_config(server.url, max_attempts=1), role="judge")
    try:
        texts = await _texts(model, 5)
    finally:
        await model.aclose()
    assert texts == ["chunked, kept alive", "after 100", "closes", "ends at EOF", "fresh"]
    # the first three share a connection; the server closed it after the third and the
    # fourth; nothing was retried (max_attempts=1)
    assert server.connections == 3


async def test_garbage_is_a_transient_error_naming_the_server(
    server: FaultServer, make_config: Any
) -> None:
    server.script(Step.wire(b"SSH-2.0-OpenSSH_9.6\r\n", close=True), Step.wire(b"\x00\xff", True))
    message = await chat_error(make_config(server.url, max_attempts=2), ModelTransientError)
    assert "not an HTTP/1.x reply" in message and f"127.0.0.1:{server.port}" in message
    assert "after 2 attempt(s)" in message


async def test_a_redirect_is_not_followed_but_named(server: FaultServer, make_config: Any) -> None:
    head = b"HTTP/1.1 307 Temporary Redirect\r\nLocation: http://other:9000/v1/chat/completions"
    server.script(Step.wire(head + b"?key=secret\r\nContent-Length: 0\r\n\r\n"))
    message = await chat_error(make_config(server.url), ModelFatalError)
    assert "HTTP 307: redirected to http://other:9000/v1/chat/completions" in message
    assert "secret" not in message  # a query string may hold a key
    assert len(server.requests) == 1  # fatal: asked once


async def test_a_cancelled_call_spends_its_connection_and_the_next_call_works(
    server: FaultServer, make_config: Any
) -> None:
    server.script(Step.slow(1.0, content="too late"), Step.ok("next"))
    model = build_model(make_config(server.url, max_attempts=1), role="judge")
    try:
        call = asyncio.create_task(model.chat(USER))
        await asyncio.sleep(0.2)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        # the late reply to the cancelled call must not be read as this call's reply
        assert (await model.chat(USER)).text == "next"
    finally:
        await model.aclose()
    assert server.connections == 2


async def test_an_idle_connection_past_the_keep_alive_is_not_reused(
    server: FaultServer, make_config: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(openai_backend, "_KEEPALIVE_S", 0.1)
    model = build_model(make_config(server.url), role="judge")
    try:
        await _texts(model, 2)  # back to back: one connection
        assert server.connections == 1
        await asyncio.sleep(0.3)
        await _texts(model, 1)
    finally:
        await model.aclose()
    assert server.connections == 2


async def test_the_timeout_measures_the_servers_silence_not_the_whole_reply(
    make_config: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A reply that trickles in over 1.2 s, never silent for more than 0.2 s, read with a
    # 0.5 s timeout; then one that stalls for 0.8 s in the middle of its body.
    for name in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    body = _body("slow but steady")
    stall = iter([0.2, 0.8])
    writers: list[asyncio.StreamWriter] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writers.append(writer)
        try:
            while True:
                await _read_request(reader)
                pause = next(stall)
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body))
                for i in range(0, len(body), len(body) // 6 + 1):
                    await asyncio.sleep(pause if i == len(body) // 6 + 1 else 0.2)
                    writer.write(body[i : i + len(body) // 6 + 1])
                    await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, StopIteration):
            writer.close()

    listener = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    model = build_model(
        make_config(f"http://127.0.0.1:{port}/v1", timeout_s=0.5, max_attempts=1), role="judge"
    )
    try:
        assert (await model.chat(USER)).text == "slow but steady"
        with pytest.raises(ModelTransientError, match="timed out"):
            await model.chat(USER)
    finally:
        await model.aclose()
        for writer in writers:
            writer.close()
        listener.close()
        await listener.wait_closed()


def test_an_api_key_with_a_line_break_is_refused_without_echoing_it(
    make_config: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A key pasted with its newline would end the Authorization header early (and let the
    # rest of the variable forge headers); the key itself never appears in the error.
    monkeypatch.setenv("EMPATHOS_TEST_KEY", "sk-secret-123\r\nX-Forged: 1")
    config = make_config("http://127.0.0.1:1/v1", api_key_env="EMPATHOS_TEST_KEY")
    with pytest.raises(ConfigError) as caught:
        resolve_api_key(config, "judge")
    assert "EMPATHOS_TEST_KEY" in str(caught.value) and "line break" in str(caught.value)
    assert "sk-secret" not in str(caught.value)


def _request(port: int) -> bytes:
    body = json.dumps({"model": "m", "messages": USER}).encode()
    head = b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % port
    return head + b"Content-Length: %d\r\n\r\n%b" % (len(body), body)


async def test_bytes_beyond_the_reply_close_the_connection_and_the_reply_stays_its_own(
    server: FaultServer, make_config: Any
) -> None:
    # One segment holds the reply and, after it, a second response nobody asked for.
    first = _body("asked for")
    stray = b"HTTP/1.1 429 Too Many\r\nRetry-After: 999\r\nContent-Length: 0\r\n\r\n"
    reply = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%b" % (len(first), first)
    server.script(Step.wire(reply + stray), Step.ok("next"))
    pool = http1.Pool("127.0.0.1", server.port, keepalive_s=4.0)
    try:
        got = await pool.request(_request(server.port), 5.0, 10.0)
        assert got.status == 200 and got.body == first
        assert "retry-after" not in got.headers  # the stray response's headers stay out
        assert got.headers["content-length"] == str(len(first))
        again = await pool.request(_request(server.port), 5.0, 10.0)
    finally:
        await pool.aclose()
    assert json.loads(again.body)["choices"][0]["message"]["content"] == "next"
    assert server.connections == 2  # the connection with stray bytes was not reused

    # the same through the model client: the right text, a fresh connection for the next call
    server.script(Step.wire(reply + stray), Step.ok("next"))
    model = build_model(make_config(server.url, max_attempts=1), role="judge")
    try:
        assert await _texts(model, 2) == ["asked for", "next"]
    finally:
        await model.aclose()
    assert server.connections == 4


async def _trickle(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, every_s: float = 0.1
) -> None:
    """Answer one request with a head, then a body byte every ``every_s``, for minutes."""
    try:
        await _read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
        for _ in range(100_000):
            writer.write(b" ")
            await writer.drain()
            await asyncio.sleep(every_s)
    except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


async def test_a_server_that_trickles_bytes_meets_the_calls_deadline(
    stack: str, make_config: Any
) -> None:
    listener = await asyncio.start_server(_trickle, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    config = make_config(
        f"http://127.0.0.1:{port}/v1", timeout_s=0.5, deadline_s=1.5, max_attempts=1
    )
    t0 = time.monotonic()
    try:
        message = await chat_error(config, ModelTransientError)
    finally:
        listener.close()
    took = time.monotonic() - t0
    assert "deadline_s" in message and "1.5 s" in message, message
    assert 1.4 <= took < 10, took  # never silent for 0.5 s, yet cut at the deadline


async def test_a_head_or_a_body_over_the_caps_is_refused_naming_the_cap(
    server: FaultServer, make_config: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    huge_head = b"HTTP/1.1 200 OK\r\nX-Pad: " + b"a" * (http1.MAX_HEAD_BYTES + 10) + b"\r\n"
    declared = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n{" % (http1.MAX_BODY_BYTES + 1)
    server.script(Step.wire(huge_head, close=True), Step.wire(declared, close=True))
    head = await chat_error(make_config(server.url), ModelFatalError)
    assert f"the reply's head is over {http1.MAX_HEAD_BYTES} bytes" in head
    assert f"127.0.0.1:{server.port}" in head
    body = await chat_error(make_config(server.url), ModelFatalError)
    assert f"the reply's body is over {http1.MAX_BODY_BYTES} bytes" in body
    assert len(server.requests) == 2  # fatal: neither was asked again
    # a chunked body declares no length: it is counted as it arrives
    monkeypatch.setattr(http1, "MAX_BODY_BYTES", 1000)
    server.script(Step.wire(_chunked(b"x" * 5000, size=100), close=True))
    streamed = await chat_error(make_config(server.url), ModelFatalError)
    assert "the reply's body is over 1000 bytes" in streamed


async def test_a_chunked_body_cut_short_is_a_dropped_connection(
    server: FaultServer, make_config: Any
) -> None:
    whole = _chunked(_body("never finished"))
    server.script(Step.wire(whole[: len(whole) - 20], close=True))
    message = await chat_error(make_config(server.url, max_attempts=1), ModelTransientError)
    assert f"connection dropped by 127.0.0.1:{server.port} before a complete reply" in message


def _loopback_v6() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as sock:
            sock.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.skipif(not _loopback_v6(), reason="no IPv6 loopback on this machine")
async def test_an_ipv6_literal_with_a_zone_by_interface_name(
    make_config: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    lo = socket.if_indextoname(1)  # the loopback interface (index 1 on Linux)
    hosts: list[bytes] = []

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await _read_request(reader)
        hosts.extend(x for x in head.split(b"\r\n") if x.lower().startswith(b"host:"))
        body = _body("over v6")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%b" % (len(body), body))
        await writer.drain()
        writer.close()

    listener = await asyncio.start_server(answer, "::1", 0)
    port = listener.sockets[0].getsockname()[1]
    url = f"http://[::1%25{lo}]:{port}/v1"
    assert _plain_http(url)
    model = build_model(make_config(url, max_attempts=1), role="judge")
    try:
        result = await model.chat(USER)
        missing = await chat_error(
            make_config(f"http://[::1%25nosuchif9]:{port}/v1"), ModelFatalError
        )
    finally:
        await model.aclose()
        listener.close()
    assert result.text == "over v6"
    assert result.record.endpoint == f"http://[::1%25{lo}]:{port}/v1"
    assert hosts == [f"Host: [::1]:{port}".encode()]  # the zone stays off the wire
    assert "no network interface 'nosuchif9' (the zone of ::1%nosuchif9) in base_url" in missing
