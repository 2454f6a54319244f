"""A lean HTTP/1.1 client for plain-HTTP endpoints: POST a body, read the whole reply.

What a run's calls to a local server (vLLM, SGLang, Ollama, llama.cpp, ``empathos serve``)
need and nothing more: keep-alive connections shared by every backend of one origin in one
event loop (:class:`Pool`), the reply parsed by ``httptools`` (the C parser under uvicorn:
``Content-Length``, chunked and close-delimited bodies, keep-alive rules), and these bounds
on each call:

- ``timeout_s``: connecting, and each silence of the server (re-armed on every read, so a
  long reply that streams in steadily is not cut off);
- ``deadline_s``: the whole call, connecting included (a server that trickles a byte now and
  then cannot hold a call forever); :class:`DeadlineError`;
- the reply's head (:data:`MAX_HEAD_BYTES`) and body (:data:`MAX_BODY_BYTES`):
  :class:`ReplyTooLargeError`.

A connection is used for one exchange at a time and only while it can be trusted: bytes
beyond the awaited reply (a stray second response, garbage) close it, and the reply returned
is the one asked for. An IPv6 literal may carry a zone (``fe80::1%eth0``, by interface name
or index); the zone reaches the socket.

No TLS, proxies, redirects, compression or cookies: those endpoints keep the ``openai`` SDK's
own stack (:mod:`empathos.llm.openai_backend` decides). Why a client of our own, and what it
costs per call: docs/models.md ("Retries", the direct path).
"""

from __future__ import annotations

import asyncio
import collections
import socket
from dataclasses import dataclass
from typing import Any

import httptools

__all__ = [
    "MAX_BODY_BYTES",
    "MAX_HEAD_BYTES",
    "DeadlineError",
    "HTTPReplyError",
    "Pool",
    "Reply",
    "ReplyTooLargeError",
    "ServerDisconnectedError",
    "ZoneError",
    "resolve_zone",
]

MAX_HEAD_BYTES = 64 * 1024  # status line and headers (uvicorn's h11 caps a request's at 64 KiB)
MAX_BODY_BYTES = 64 * 1024 * 1024  # a chat completion is kilobytes; this is a broken server


class ServerDisconnectedError(ConnectionError):
    """The server closed the connection before a complete reply."""


class HTTPReplyError(Exception):
    """The server's bytes are not an HTTP/1.x reply."""


class ReplyTooLargeError(HTTPReplyError):
    """The reply's head or body is over the client's cap."""


class DeadlineError(TimeoutError):
    """The whole call (connecting, sending, the whole reply) took longer than its deadline."""


class ZoneError(OSError):
    """An IPv6 zone names no network interface of this machine."""


class _Stop(Exception):
    """Raised in a parser callback to stop reading (the reason is on the connection)."""


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
        self._done = False  # the awaited reply is complete: nothing more may arrive
        self._head_bytes = 0
        self._body_bytes = 0
        self._error: BaseException | None = None  # why a callback stopped the parser
        self._timeout_s = 0.0
        self._deadline = 0.0
        self._last_read = 0.0
        self._timer: asyncio.TimerHandle | None = None

    # -- asyncio.Protocol ------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        if self._waiter is None or self._done:  # bytes nobody asked for: never trust it again
            self.abort()
            return
        self._last_read = self._loop.time()
        if not self._head_done:
            self._head_bytes += len(data)
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._fail(HTTPReplyError("the server switched protocols"))
        except httptools.HttpParserCallbackError as exc:
            if self._done:  # a second message after the reply: the reply stands, the
                self.abort()  # connection goes
            else:
                self._fail(self._error or HTTPReplyError(f"not an HTTP/1.x reply ({exc})"))
        except httptools.HttpParserError as exc:
            self._fail(HTTPReplyError(f"not an HTTP/1.x reply ({exc})"))
        else:
            if not self._head_done and self._head_bytes > MAX_HEAD_BYTES:
                self._fail(ReplyTooLargeError(f"the reply's head is over {MAX_HEAD_BYTES} bytes"))

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self._waiter is None or self._done:
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
    def on_message_begin(self) -> None:
        if self._done:  # a second response in the bytes of the first: not ours to read
            raise _Stop

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers[name.decode("latin-1").lower()] = value.decode("latin-1")

    def on_headers_complete(self) -> None:
        self._status = self._parser.get_status_code()
        self._keep_alive = self._parser.should_keep_alive()
        self._head_done = True
        declared = self._headers.get("content-length", "")
        if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
            self._stop(ReplyTooLargeError(self._too_large(int(declared))))

    def on_body(self, body: bytes) -> None:
        self._body_bytes += len(body)
        if self._body_bytes > MAX_BODY_BYTES:
            self._stop(ReplyTooLargeError(self._too_large(None)))
        self._chunks.append(body)

    def on_message_complete(self) -> None:
        if 100 <= self._status < 200:  # an interim reply (100 Continue): the real one follows
            self._status, self._headers, self._head_done = 0, {}, False
            return
        self._finish()

    def _stop(self, error: BaseException) -> None:
        self._error = error
        raise _Stop

    @staticmethod
    def _too_large(declared: int | None) -> str:
        size = f" ({declared} bytes declared)" if declared is not None else ""
        return f"the reply's body is over {MAX_BODY_BYTES} bytes{size}"

    # -- the exchange ---------------------------------------------------------------------
    async def exchange(self, data: bytes, timeout_s: float, deadline: float) -> tuple[Reply, bool]:
        """Send ``data`` (a whole request); the reply, and whether the connection may serve
        another. A TimeoutError when the server is silent for ``timeout_s``, a
        :class:`DeadlineError` when the reply is not complete at ``deadline`` (loop time)."""
        assert self.transport is not None and self._waiter is None
        self._waiter = waiter = self._loop.create_future()
        self._parser = httptools.HttpResponseParser(self)
        self._status, self._headers, self._chunks, self._head_done = 0, {}, [], False
        self._done, self._head_bytes, self._body_bytes, self._error = False, 0, 0, None
        self._timeout_s, self._deadline, self._last_read = timeout_s, deadline, self._loop.time()
        self._arm()
        self.transport.write(data)
        try:
            reply = await waiter
        finally:
            self._waiter = None
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        return reply, self._keep_alive and not self.closed

    def _arm(self) -> None:
        self._timer = self._loop.call_at(
            min(self._last_read + self._timeout_s, self._deadline), self._check_time
        )

    def _check_time(self) -> None:
        """The silence timeout (measured from the last bytes read, as aiohttp's
        ``sock_read``) and the call's deadline (fixed)."""
        self._timer = None
        now = self._loop.time()
        if now >= self._deadline:
            self._fail(DeadlineError("no complete reply before the call's deadline"))
        elif now - self._last_read >= self._timeout_s:
            self._fail(TimeoutError(f"no reply within {self._timeout_s:g} s"))  # and abort
        else:
            self._arm()

    def _finish(self) -> None:
        self._done = True
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            body = b"".join(self._chunks)
            waiter.set_result(Reply(self._status, dict(self._headers), body))

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


def resolve_zone(host: str) -> str:
    """``host`` with an IPv6 zone given by interface name turned into its index
    (``fe80::1%eth0`` -> ``fe80::1%2``): getaddrinfo takes names only for some addresses.
    :class:`ZoneError` naming the zone if no such interface exists."""
    address, sep, zone = host.partition("%")
    if not sep or zone.isdigit():
        return host
    try:
        return f"{address}%{socket.if_nametoindex(zone)}"
    except OSError:
        raise ZoneError(f"no network interface {zone!r} (the zone of {host})") from None


class Pool:
    """Keep-alive connections to one ``host:port`` in one event loop, any number at once.

    A call takes the most recently used idle connection (warm, and the least likely to have
    been closed by the server) or opens one; idle connections older than ``keepalive_s`` are
    closed instead of used (keep it under the server's own idle timeout: a request sent on a
    connection the server is closing fails without the server having seen it). ``host`` is a
    name or an address (an IPv6 one without brackets, with its zone if any)."""

    def __init__(self, host: str, port: int, keepalive_s: float) -> None:
        self.host, self.port = host, port
        self.keepalive_s = keepalive_s
        self.closed = False
        self._idle: collections.deque[_Connection] = collections.deque()  # oldest first

    async def request(self, data: bytes, timeout_s: float, deadline_s: float) -> Reply:
        """Send ``data`` (a whole HTTP/1.1 request) and read the reply. ``timeout_s`` bounds
        connecting and each wait for the server, ``deadline_s`` the whole call. Raises
        OSError (refused, DNS, dropped: :class:`ServerDisconnectedError`), TimeoutError
        (:class:`DeadlineError` past the deadline) or :class:`HTTPReplyError`."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + deadline_s
        conn = self._take(loop.time())
        if conn is None:
            conn = await self._connect(loop, min(timeout_s, deadline_s), deadline_s)
        try:
            reply, reusable = await conn.exchange(data, timeout_s, deadline)
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

    async def _connect(
        self, loop: asyncio.AbstractEventLoop, timeout_s: float, deadline_s: float
    ) -> _Connection:
        """A new connection: each address of the host in turn; the first one's error if none
        answers (asyncio would merge several into one OSError that names none of them). The
        socket is connected to the full address getaddrinfo gives (an IPv6 zone included)."""
        try:
            async with asyncio.timeout(timeout_s):
                return await self._first_answering(loop)
        except TimeoutError:
            if timeout_s >= deadline_s:
                raise DeadlineError("no connection before the call's deadline") from None
            raise

    async def _first_answering(self, loop: asyncio.AbstractEventLoop) -> _Connection:
        host = resolve_zone(self.host)
        infos = await loop.getaddrinfo(host, self.port, type=socket.SOCK_STREAM)
        first: OSError | None = None
        for family, kind, proto, _, address in infos:
            sock = socket.socket(family, kind, proto)
            try:
                sock.setblocking(False)
                await loop.sock_connect(sock, address)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                _, conn = await loop.create_connection(lambda: _Connection(loop), sock=sock)
            except OSError as exc:
                sock.close()
                first = first or exc
                continue
            except BaseException:
                sock.close()
                raise
            return conn
        raise first or OSError(f"no address for {self.host}")

    async def aclose(self) -> None:
        """Close the idle connections; those in use close when their call ends."""
        self.closed = True
        while self._idle:
            self._idle.pop().close()
        await asyncio.sleep(0)  # let the transports close
