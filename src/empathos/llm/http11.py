"""A lean HTTP/1.1 transport for plain-HTTP endpoints (local vLLM, SGLang, llama.cpp, Ollama).

Why: with many calls in flight, the general machinery under the SDK's HTTP client (anyio
streams, h11, httpcore's connection-pool bookkeeping) was the largest share of the framework's
CPU per call. For an ``http://`` endpoint with no proxy configured, the SDK's client is given
this transport instead (see :mod:`empathos.llm.openai_backend`); TLS and proxies keep the
library's own transport.

What it does: asyncio streams, one request per connection at a time, keep-alive (idle
connections are reused newest first; one closed by the server or idle too long is dropped),
response bodies by Content-Length, chunked encoding, or up to the close. Failures are raised as
the HTTP library's own exceptions (``ConnectError``, ``ReadTimeout``, ``RemoteProtocolError``,
...), so the SDK maps them exactly as before. The timeouts are the request's: connect, write,
and read (a deadline for the response head, then one for the body). The number of
connections is not capped here: the client's per-endpoint semaphore bounds calls in flight.
"""

from __future__ import annotations

import asyncio
import time

try:  # the HTTP library under the openai SDK: httpx2 from SDK 3 on, httpx before
    import httpx2 as sdk_http
except ImportError:  # pragma: no cover
    import httpx as sdk_http  # type: ignore[no-redef]

__all__ = ["PlainHTTPTransport", "sdk_http"]

_NO_BODY = frozenset({204, 304})


class _Conn:
    """One open connection."""

    __slots__ = ("idle_since", "loop", "reader", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.loop = asyncio.get_running_loop()
        self.idle_since = 0.0

    def usable(self, now: float, expiry: float) -> bool:
        """Still open, not closed by the server, not idle past the keep-alive expiry, and of
        the running event loop (a client may outlive one ``asyncio.run``)."""
        return (
            self.loop is asyncio.get_running_loop()
            and not self.writer.is_closing()
            and not self.reader.at_eof()
            and now - self.idle_since < expiry
        )

    def close(self) -> None:
        if not self.loop.is_closed():
            self.writer.close()


class PlainHTTPTransport(sdk_http.AsyncBaseTransport):
    """HTTP/1.1 over plain TCP with a keep-alive pool per host and port."""

    def __init__(self, max_keepalive: int, keepalive_expiry: float = 5.0) -> None:
        self.max_keepalive = max_keepalive
        self.keepalive_expiry = keepalive_expiry
        self._idle: dict[tuple[str, int], list[_Conn]] = {}

    async def handle_async_request(self, request: sdk_http.Request) -> sdk_http.Response:
        """Send ``request`` and read the whole response."""
        url = request.url
        if url.scheme != "http":
            raise sdk_http.UnsupportedProtocol(f"plain HTTP only, not {url.scheme!r}")
        timeouts: dict[str, float | None] = request.extensions.get("timeout", {})
        body = await request.aread()
        key = (url.host, url.port or 80)
        conn = self._reuse(key) or await _connect(key, timeouts.get("connect"), request)
        try:
            await _send(conn, _head(request, len(body)) + body, timeouts.get("write"), request)
            status, reason, headers, content, keep = await _receive(
                conn.reader, timeouts.get("read"), request
            )
        except BaseException:  # failed or cancelled midway: the connection is in no known state
            conn.close()
            raise
        if keep and request.headers.get("connection", "").lower() != "close":
            self._release(key, conn)
        else:
            conn.close()
        return sdk_http.Response(
            status,
            headers=headers,
            stream=sdk_http.ByteStream(content),
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": reason},
        )

    async def aclose(self) -> None:
        """Close every idle connection."""
        for conns in self._idle.values():
            for conn in conns:
                conn.close()
        self._idle.clear()

    def _reuse(self, key: tuple[str, int]) -> _Conn | None:
        conns = self._idle.get(key)
        now = time.monotonic()
        while conns:
            conn = conns.pop()
            if conn.usable(now, self.keepalive_expiry):
                return conn
            conn.close()
        return None

    def _release(self, key: tuple[str, int], conn: _Conn) -> None:
        conns = self._idle.setdefault(key, [])
        if sum(len(c) for c in self._idle.values()) >= self.max_keepalive:
            conn.close()
            return
        conn.idle_since = time.monotonic()
        conns.append(conn)


def _head(request: sdk_http.Request, length: int) -> bytes:
    """Request line and headers; the body is sent whole, so with a Content-Length."""
    target = request.url.raw_path
    lines = [b"%s %s HTTP/1.1" % (request.method.encode("ascii"), target)]
    for name, value in request.headers.raw:
        if name.lower() not in (b"content-length", b"transfer-encoding"):
            lines.append(b"%s: %s" % (name, value))
    if length or request.method not in ("GET", "HEAD"):
        lines.append(b"Content-Length: %d" % length)
    return b"\r\n".join(lines) + b"\r\n\r\n"


async def _connect(key: tuple[str, int], limit_s: float | None, request: sdk_http.Request) -> _Conn:
    try:
        async with asyncio.timeout(limit_s):
            reader, writer = await asyncio.open_connection(*key)
    except TimeoutError:
        raise sdk_http.ConnectTimeout("connect timed out", request=request) from None
    except OSError as exc:
        raise sdk_http.ConnectError(str(exc), request=request) from None
    return _Conn(reader, writer)


async def _send(conn: _Conn, data: bytes, limit_s: float | None, req: sdk_http.Request) -> None:
    try:
        async with asyncio.timeout(limit_s):
            conn.writer.write(data)
            await conn.writer.drain()
    except TimeoutError:
        raise sdk_http.WriteTimeout("write timed out", request=req) from None
    except OSError as exc:
        raise sdk_http.WriteError(str(exc), request=req) from None


async def _receive(
    reader: asyncio.StreamReader, limit_s: float | None, req: sdk_http.Request
) -> tuple[int, bytes, list[tuple[bytes, bytes]], bytes, bool]:
    """(status, reason, headers, body, keep-alive) of one response."""
    try:
        async with asyncio.timeout(limit_s):
            head = await reader.readuntil(b"\r\n\r\n")
        status, reason, headers, version = _parse_head(head, req)
        fields = {k.lower(): v for k, v in headers}
        async with asyncio.timeout(limit_s):
            body, closed = await _body(reader, status, fields)
    except TimeoutError:
        raise sdk_http.ReadTimeout("read timed out", request=req) from None
    except asyncio.IncompleteReadError as exc:
        what = "a response" if not exc.partial else "the complete message body"
        raise sdk_http.RemoteProtocolError(
            f"server disconnected without sending {what}", request=req
        ) from None
    except (asyncio.LimitOverrunError, ValueError) as exc:
        raise sdk_http.RemoteProtocolError(f"malformed response ({exc})", request=req) from None
    except OSError as exc:
        raise sdk_http.ReadError(str(exc), request=req) from None
    connection = fields.get(b"connection", b"").lower()
    keep = not closed and (
        connection == b"keep-alive" if version == b"HTTP/1.0" else connection != b"close"
    )
    return status, reason, headers, body, keep


def _parse_head(
    head: bytes, req: sdk_http.Request
) -> tuple[int, bytes, list[tuple[bytes, bytes]], bytes]:
    lines = head[:-4].split(b"\r\n")
    parts = lines[0].split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
        raise sdk_http.RemoteProtocolError("malformed status line", request=req)
    headers: list[tuple[bytes, bytes]] = []
    for line in lines[1:]:
        name, sep, value = line.partition(b":")
        if not sep:
            raise sdk_http.RemoteProtocolError("malformed header line", request=req)
        headers.append((name.strip(), value.strip()))
    reason = parts[2] if len(parts) > 2 else b""
    return int(parts[1]), reason, headers, parts[0]


async def _body(
    reader: asyncio.StreamReader, status: int, fields: dict[bytes, bytes]
) -> tuple[bytes, bool]:
    """The body and whether the server closed the connection to end it."""
    if status in _NO_BODY or 100 <= status < 200:
        return b"", False
    if b"chunked" in fields.get(b"transfer-encoding", b"").lower():
        chunks: list[bytes] = []
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                while await reader.readuntil(b"\r\n") != b"\r\n":  # trailers, if any
                    pass
                return b"".join(chunks), False
            chunks.append((await reader.readexactly(size + 2))[:-2])
    if b"content-length" in fields:
        return await reader.readexactly(int(fields[b"content-length"])), False
    return await reader.read(), True
