"""A lean HTTP/1.1 client for plain-HTTP endpoints: POST a body, read the whole reply.

What a run's calls to a local server (vLLM, SGLang, Ollama, llama.cpp, ``empathos serve``)
need and nothing more: keep-alive connections shared by every backend of one origin in one
event loop (:class:`Pool`), a timeout on connecting and on each wait for the server (never on
a wait in our own queue), and the reply parsed by ``httptools`` (the C parser under uvicorn:
``Content-Length``, chunked and close-delimited bodies, keep-alive rules).

Why not aiohttp, which this replaces: its client stack (request and response objects, timers
rescheduled on every read, cookie jar, header merging) cost ~0.43 ms of CPU per call on the
sandbox benchmark's machine; this costs ~0.15 ms, most of it asyncio's own (a run makes ~3.6
calls per turn). No TLS, proxies, redirects, compression or cookies: those endpoints keep the
``openai`` SDK's own stack (:mod:`empathos.llm.openai_backend` decides).
"""

from __future__ import annotations

import asyncio
import collections
import socket
from dataclasses import dataclass
from typing import Any

import httptools

__all__ = ["HTTPReplyError", "Pool", "Reply", "ServerDisconnectedError"]


class ServerDisconnectedError(ConnectionError):
    """The server closed the connection before a complete reply."""


class HTTPReplyError(Exception):
    """The server's bytes are not an HTTP/1.x reply."""


@dataclass(frozen=True, slots=True)
class Reply:
    """A complete reply: its status, its headers (lower-case names), its body."""

    status: int
    headers: dict[str, str]
    body: bytes


class _Connection(asyncio.Protocol):
    """One keep-alive connection: one exchange (request out, reply in) at a time."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.idle_since = 0.0
        self._waiter: asyncio.Future[Reply] | None = None
        self._parser: Any = None
        self._status = 0
        self._headers: dict[str, str] = {}
        self._chunks: list[bytes] = []
        self._keep_alive = False
        self._head_done = False
        self._timeout_s = 0.0
        self._last_read = 0.0
        self._timer: asyncio.TimerHandle | None = None

    # -- asyncio.Protocol ------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        if self._waiter is None:  # bytes nobody asked for: the connection cannot be trusted
            self.abort()
            return
        self._last_read = self._loop.time()
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._fail(HTTPReplyError("the server switched protocols"))
        except httptools.HttpParserError as exc:
            self._fail(HTTPReplyError(f"not an HTTP/1.x reply ({exc})"))

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self._waiter is None:
            return
        if self._head_done and not (
            self._keep_alive or {"content-length", "transfer-encoding"} & self._headers.keys()
        ):  # a body that ends when the connection does (no length, not chunked)
            self._finish()
            return
        error = ServerDisconnectedError("the server closed the connection before a complete reply")
        error.__cause__ = exc
        self._fail(error)

    # -- httptools callbacks ---------------------------------------------------------------
    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers[name.decode("latin-1").lower()] = value.decode("latin-1")

    def on_headers_complete(self) -> None:
        self._status = self._parser.get_status_code()
        self._keep_alive = self._parser.should_keep_alive()
        self._head_done = True

    def on_body(self, body: bytes) -> None:
        self._chunks.append(body)

    def on_message_complete(self) -> None:
        if 100 <= self._status < 200:  # an interim reply (100 Continue): the real one follows
            self._status, self._headers, self._head_done = 0, {}, False
            return
        self._finish()

    # -- the exchange ---------------------------------------------------------------------
    async def exchange(self, data: bytes, timeout_s: float) -> tuple[Reply, bool]:
        """Send ``data`` (a whole request); the reply, and whether the connection may serve
        another. A TimeoutError when the server is silent for ``timeout_s``."""
        assert self.transport is not None and self._waiter is None
        self._waiter = waiter = self._loop.create_future()
        self._parser = httptools.HttpResponseParser(self)
        self._status, self._headers, self._chunks, self._head_done = 0, {}, [], False
        self._timeout_s, self._last_read = timeout_s, self._loop.time()
        self._timer = self._loop.call_at(self._last_read + timeout_s, self._check_silence)
        self.transport.write(data)
        try:
            reply = await waiter
        finally:
            self._waiter = None
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        return reply, self._keep_alive and not self.closed

    def _check_silence(self) -> None:
        """The read timeout: re-armed from the last bytes read, so it measures the server's
        silence, not the whole reply (as aiohttp's ``sock_read``)."""
        silent_since = self._last_read
        if self._loop.time() - silent_since >= self._timeout_s:
            self._timer = None
            self._fail(TimeoutError(f"no reply within {self._timeout_s:g} s"))  # and abort
        else:
            self._timer = self._loop.call_at(silent_since + self._timeout_s, self._check_silence)

    def _finish(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            body = b"".join(self._chunks)
            waiter.set_result(Reply(self._status, self._headers, body))

    def _fail(self, exc: BaseException) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_exception(exc)
        self.abort()

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()

    def abort(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.abort()


class Pool:
    """Keep-alive connections to one ``host:port`` in one event loop, any number at once.

    A call takes the most recently used idle connection (warm, and the least likely to have
    been closed by the server) or opens one; idle connections older than ``keepalive_s`` are
    closed instead of used (keep it under the server's own idle timeout: a request sent on a
    connection the server is closing fails without the server having seen it)."""

    def __init__(self, host: str, port: int, keepalive_s: float) -> None:
        self.host, self.port = host, port
        self.keepalive_s = keepalive_s
        self.closed = False
        self._idle: collections.deque[_Connection] = collections.deque()  # oldest first

    async def request(self, data: bytes, timeout_s: float) -> Reply:
        """Send ``data`` (a whole HTTP/1.1 request) and read the reply. ``timeout_s`` bounds
        connecting and each wait for the server. Raises OSError (refused, DNS, dropped:
        :class:`ServerDisconnectedError`), TimeoutError or :class:`HTTPReplyError`."""
        loop = asyncio.get_running_loop()
        conn = self._take(loop.time())
        if conn is None:
            conn = await self._connect(loop, timeout_s)
        try:
            reply, reusable = await conn.exchange(data, timeout_s)
        except BaseException:  # cancelled or failed mid-exchange: the connection is spent
            conn.abort()
            raise
        if reusable and not self.closed:
            conn.idle_since = loop.time()
            self._idle.append(conn)
        else:
            conn.close()
        return reply

    def _take(self, now: float) -> _Connection | None:
        idle = self._idle
        while idle and (idle[0].closed or now - idle[0].idle_since > self.keepalive_s):
            idle.popleft().close()
        while idle:
            conn = idle.pop()
            if not conn.closed:
                return conn
        return None

    async def _connect(self, loop: asyncio.AbstractEventLoop, timeout_s: float) -> _Connection:
        """A new connection: each address of the host in turn; the first one's error if none
        answers (asyncio would merge several into one OSError that names none of them)."""
        async with asyncio.timeout(timeout_s):
            infos = await loop.getaddrinfo(self.host, self.port, type=socket.SOCK_STREAM)
            first: OSError | None = None
            for family, _, proto, _, address in infos:
                try:
                    _, conn = await loop.create_connection(
                        lambda: _Connection(loop),
                        host=str(address[0]),
                        port=int(address[1]),
                        family=family,
                        proto=proto,
                    )
                except OSError as exc:
                    first = first or exc
                    continue
                return conn
        raise first or OSError(f"no address for {self.host}")

    async def aclose(self) -> None:
        """Close the idle connections; those in use close when their call ends."""
        self.closed = True
        while self._idle:
            self._idle.pop().close()
        await asyncio.sleep(0)  # let the transports close
