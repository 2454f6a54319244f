"""A loopback OpenAI-compatible server that misbehaves on purpose, for tests and benchmarks.

:class:`FaultServer` speaks just enough HTTP/1.1 (keep-alive, Content-Length) to answer
``POST .../chat/completions`` from its own thread and event loop. Queue what the next
requests get with :meth:`FaultServer.script`; once the queue is empty every request gets
:meth:`Step.ok` (a zero-latency reply, used by the benchmark). Steps: ``ok`` (text or a tool
call), ``status`` (any HTTP status, headers and body), ``slow`` (sleep, then reply),
``truncated`` (a body shorter than its Content-Length, then close), ``malformed`` (a body that
is not JSON), ``drop`` (close without answering). It records each request's body, headers
and target (path and query string)::

    with FaultServer() as server:
        server.script(Step.status(500), Step.status(429, headers={"Retry-After": "0"}))
        config = EndpointConfig(base_url=server.url, ...)
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

__all__ = ["FaultServer", "LoopbackServer", "Step", "completion_body", "read_request", "served"]


def completion_body(
    content: str | None = "ok", tool: tuple[str, str] | None = None, model: str = "fault"
) -> dict[str, Any]:
    """A minimal chat.completion JSON body."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool is not None:
        message["tool_calls"] = [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": tool[0], "arguments": tool[1]},
            }
        ]
    return {
        "id": "chatcmpl-fault",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
    }


@dataclass(frozen=True)
class Step:
    """What one request gets."""

    action: str
    code: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0

    @staticmethod
    def ok(content: str | None = "ok", tool: tuple[str, str] | None = None) -> Step:
        """A successful completion with ``content`` (or a tool call ``(name, arguments)``)."""
        return Step("reply", body=json.dumps(completion_body(content, tool)).encode())

    @staticmethod
    def status(code: int, body: str = "", headers: dict[str, str] | None = None) -> Step:
        """Any HTTP status; the body defaults to an OpenAI-style error object."""
        text = body or json.dumps({"error": {"message": f"fault {code}", "type": "fault"}})
        return Step("reply", code=code, body=text.encode(), headers=headers or {})

    @staticmethod
    def slow(delay_s: float, content: str = "late") -> Step:
        """Sleep ``delay_s`` and then reply."""
        body = json.dumps(completion_body(content)).encode()
        return Step("reply", body=body, delay_s=delay_s)

    @staticmethod
    def truncated() -> Step:
        """Half of a valid body under the full Content-Length, then the connection closes."""
        return Step("truncated", body=json.dumps(completion_body("cut")).encode())

    @staticmethod
    def malformed() -> Step:
        """HTTP 200 with a body that is not JSON."""
        return Step("reply", body=b'{"id": "x", "choices": [ {"message": ')

    @staticmethod
    def wire(data: bytes, close: bool = False) -> Step:
        """``data`` written as the whole reply, as is (any framing: chunked, no length, an
        interim 100 reply, garbage); the connection then closes if ``close``."""
        return Step("wire-close" if close else "wire", body=data)

    @staticmethod
    def drop() -> Step:
        """Close the connection without an answer."""
        return Step("drop")


async def read_request(reader: asyncio.StreamReader) -> tuple[str, dict[str, str], bytes]:
    """One HTTP/1.1 request from ``reader``: its target (path and query string), its headers
    (names in lower case) and its body (Content-Length bytes)."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    target = lines[0].split(" ")[1] if lines[0].count(" ") >= 2 else ""
    return target, headers, body


class LoopbackServer:
    """An asyncio server on its own thread and event loop; a context manager that starts it
    (on a free port of ``host``) and stops it. Subclasses answer a connection in
    :meth:`_handle`."""

    def __init__(self, name: str, host: str = "127.0.0.1") -> None:
        self.host = host
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    @property
    def url(self) -> str:
        """Base URL for an OpenAI-compatible client."""
        return f"http://{self.host}:{self.port}/v1"

    def __enter__(self) -> Self:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError(f"{self._thread.name.replace('-', ' ')} did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        loop = self._loop
        if loop is not None:
            loop.call_soon_threadsafe(loop.stop)
        self._thread.join(10)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raise NotImplementedError

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self._loop = loop
        server = loop.run_until_complete(
            asyncio.start_server(self._handle, self.host, 0, backlog=1024)
        )
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            server.close()
            tasks = asyncio.all_tasks(loop)
            for task in tasks:
                task.cancel()
            loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
            loop.run_until_complete(asyncio.sleep(0.01))  # let the transports close
            loop.close()


class FaultServer(LoopbackServer):
    """The server; a context manager that starts and stops its thread."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        super().__init__("fault-server", host)
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.targets: list[str] = []  # request targets: path and query string
        self.in_flight = 0
        self.max_in_flight = 0
        self.connections = 0  # connections accepted
        self._queue: deque[Step] = deque()
        self._lock = threading.Lock()

    def script(self, *steps: Step) -> None:
        """Queue the answers of the next requests (replacing what was queued)."""
        with self._lock:
            self._queue = deque(steps)

    def _next(self) -> Step:
        with self._lock:
            return self._queue.popleft() if self._queue else Step.ok()

    async def _read(self, reader: asyncio.StreamReader) -> None:
        target, headers, body = await read_request(reader)
        with self._lock:
            self.targets.append(target)
            self.headers.append(headers)
            try:
                self.requests.append(json.loads(body or b"{}"))
            except ValueError:
                self.requests.append({})

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                await self._read(reader)
                if not await self._answer(writer):
                    break
        except (
            asyncio.IncompleteReadError,
            asyncio.LimitOverrunError,
            asyncio.CancelledError,
            ConnectionError,
        ):
            pass
        finally:
            writer.close()

    async def _answer(self, writer: asyncio.StreamWriter) -> bool:
        step = self._next()
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if step.delay_s:
                await asyncio.sleep(step.delay_s)
            if step.action == "drop":
                return False
            if step.action.startswith("wire"):
                writer.write(step.body)
                await writer.drain()
                return step.action == "wire"
            extra = "".join(f"{k}: {v}\r\n" for k, v in step.headers.items())
            head = (
                f"HTTP/1.1 {step.code} X\r\ncontent-type: application/json\r\n"
                f"content-length: {len(step.body)}\r\n{extra}\r\n"
            ).encode()
            if step.action == "truncated":
                writer.write(head + step.body[: len(step.body) // 2])
                await writer.drain()
                return False
            writer.write(head + step.body)
            await writer.drain()
            return True
        finally:
            self.in_flight -= 1


@contextmanager
def served(
    *args: str,
    startup_s: float = 240.0,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> Iterator[str]:
    """``empathos serve --port 0 ARGS`` in a subprocess; yields its base URL (``.../v1``).

    For tests of the whole HTTP path: the server picks a free loopback port and prints
    ``serving <model> at <url>`` once it listens; its output is drained in a thread (so the
    pipe never fills) and it is stopped on exit. ``env`` replaces the environment.
    """
    proc = subprocess.Popen(
        [sys.executable, "-m", "empathos", "serve", "--port", "0", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**(os.environ if env is None else env), "PYTHONUNBUFFERED": "1"},
    )
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)

    pumper = threading.Thread(target=pump, daemon=True)
    pumper.start()
    try:
        seen: list[str] = []
        while True:
            try:
                line = lines.get(timeout=startup_s)
            except queue.Empty:
                raise AssertionError(f"empathos serve did not print its URL: {seen}") from None
            seen.append(line)
            if line.startswith("serving ") and " at http://" in line:
                break
            if proc.poll() is not None and lines.empty():
                raise AssertionError(f"empathos serve exited ({proc.returncode}): {seen}")
        yield line.split(" at ", 1)[1].strip()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        pumper.join(10)
        if proc.stdout is not None:
            proc.stdout.close()
