"""An OpenAI-compatible HTTP server over a backend (the offline model by default).

Serves ``POST /v1/chat/completions`` and ``GET /v1/models`` in OpenAI's wire format, errors
included: every failure is ``{"error": {"message", "type", "param", "code"}}`` with OpenAI's
status (400 invalid request, 404 unknown model or URL, 413 body over the limit, 429/503 from
the backend, 500 a bug), so the ``openai`` SDK raises its matching exception with ``.code``
set. Parameters that change the answer's shape are honoured (``n``, ``stop``, ``stream``: the
whole reply as server-sent events) or refused with a 400 naming them (``logprobs``,
``top_logprobs``, ``logit_bias``, non-text content parts); unknown fields are ignored, as
OpenAI-compatible servers do. A prompt longer than the backend's context is a 400
``context_length_exceeded``; a ``max_tokens`` larger than the room the prompt leaves is clamped
to it and the clamp reported in ``usage``. A client that disconnects cancels its generation.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Sequence
from typing import Any, TypeVar

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.types import Message as AsgiMessage

from empathos.llm.client import Backend
from empathos.llm.retry import BackendError
from empathos.llm.server_wire import (
    MAX_N,
    MAX_STOP,
    CompletionRequest,
    WireError,
    completion_body,
    cut_at_stop,
    param_path,
    stream_events,
)

__all__ = [
    "MAX_N",
    "MAX_REQUEST_BYTES",
    "MAX_STOP",
    "BodyLimit",
    "CompletionRequest",
    "WireError",
    "create_app",
    "listen_socket",
]

T = TypeVar("T")
MAX_REQUEST_BYTES = 4 * 1024 * 1024  # default body limit (413 above it)
_DRAIN_BYTES = 64 * 1024 * 1024  # an oversized body is read (and dropped) up to this much
_POLL_S = 0.2  # how often a running request checks whether its client is still there
_STATUS = {"rate_limit": 429, "transient": 503, "fatal": 400}


async def _unless_disconnected(http: Request, work: Awaitable[T]) -> tuple[bool, T | None]:
    """Await ``work`` while the client is connected; cancel it if the client goes away."""
    task = asyncio.ensure_future(work)
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=_POLL_S)
            if done:
                return True, task.result()
            if await http.is_disconnected():
                task.cancel()
                return False, None
    finally:
        if not task.done():  # cancelled from outside (server shutdown): stop the work too
            task.cancel()


class BodyLimit:
    """ASGI middleware: a request body over ``limit`` bytes gets a 413 in OpenAI's shape."""

    def __init__(self, app: ASGIApp, limit: int = MAX_REQUEST_BYTES) -> None:
        self.app = app
        self.limit = limit

    def _error(self) -> WireError:
        return WireError(
            413,
            f"the request body is over this server's limit of {self.limit} bytes",
            code="request_too_large",
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > self.limit:
            await self._drain(receive)  # read it (bounded), so the client sees the answer
            await self._error().response()(scope, receive, send)
            return
        seen = 0

        async def counted() -> AsgiMessage:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise self._error()
            return message

        await self.app(scope, counted, send)

    @staticmethod
    async def _drain(receive: Receive) -> None:
        read = 0
        while read < _DRAIN_BYTES:
            message = await receive()
            if message["type"] != "http.request":
                return
            read += len(message.get("body", b""))
            if not message.get("more_body"):
                return


def listen_socket(host: str, port: int, backlog: int = 2048) -> socket.socket:
    """A listening TCP socket for uvicorn (``Server.run(sockets=[...])``) whose connections
    send small writes at once (TCP_NODELAY).

    asyncio turns Nagle's algorithm off only on sockets whose protocol is IPPROTO_TCP, and a
    socket made as ``socket(family, SOCK_STREAM)`` has protocol 0, as do the connections it
    accepts. Uvicorn writes a reply's head and body separately; with Nagle on, the body waited
    for the client to acknowledge the head, which a client that sends its next request right
    away delays by its delayed-ACK timer: 40 ms on every back-to-back request on a kept-alive
    connection. OSError if the address cannot be bound."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # inherited where supported
        sock.bind((host, port))
        sock.listen(backlog)
    except OSError:
        sock.close()
        raise
    return sock


def create_app(
    backend: Backend,
    model_id: str,
    *,
    aliases: Sequence[str] = (),
    max_request_bytes: int = MAX_REQUEST_BYTES,
) -> FastAPI:
    """The FastAPI app answering through ``backend`` under the name ``model_id`` (and any of
    ``aliases``; another model id is a 404 ``model_not_found``)."""
    app = FastAPI(title="empathos model server", docs_url=None, redoc_url=None, openapi_url=None)
    app.add_middleware(BodyLimit, limit=max_request_bytes)
    _add_error_handlers(app)
    ids = list(dict.fromkeys([model_id, *aliases]))
    window: int | None = getattr(backend, "context_tokens", None)

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        data = [{"id": i, "object": "model", "created": 0, "owned_by": "empathos"} for i in ids]
        return {"object": "list", "data": data}

    @app.post("/v1/chat/completions", response_model=None)
    async def completions(body: CompletionRequest, http: Request) -> dict[str, Any] | Response:
        if body.model is not None and body.model not in ids:
            raise WireError(
                404,
                f"The model {body.model!r} does not exist on this server "
                f"(served: {', '.join(ids)})",
                param="model",
                code="model_not_found",
            )
        return await _answer(backend, body, http, model_id, window)

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    return app


async def _answer(
    backend: Backend, body: CompletionRequest, http: Request, model_id: str, window: int | None
) -> dict[str, Any] | Response:
    """The completion of ``body``: its ``n`` choices, generated while the client waits."""
    request = body.to_request(model_id)
    requests = [request] * body.n
    if "seed" in request.params and body.n > 1:  # distinct choices, still reproducible
        seed = int(request.params["seed"])
        requests = [
            request.model_copy(update={"params": {**request.params, "seed": seed + i}})
            for i in range(body.n)
        ]
    try:
        connected, replies = await _unless_disconnected(
            http, asyncio.gather(*(backend.complete(r) for r in requests))
        )
    except BackendError as exc:
        status = exc.status or _STATUS[exc.kind]
        raise WireError(status, exc.message, param=exc.param, code=exc.code) from None
    if not connected or replies is None:
        return Response(status_code=499)  # nginx's "client closed request"; never read
    answers = [cut_at_stop(r, request.stop) for r in replies]
    served_as = body.model or model_id
    out = completion_body(answers, served_as, body.requested_max_tokens(), window)
    if body.stream:
        usage = bool((body.stream_options or {}).get("include_usage"))
        return Response(stream_events(out, usage), media_type="text/event-stream")
    return out


def _add_error_handlers(app: FastAPI) -> None:
    """Every error answered in OpenAI's shape."""

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        if isinstance(exc, WireError):
            return exc.response()
        if exc.status_code == 404:
            message = f"Invalid URL ({request.method} {request.url.path})"
            return WireError(404, message, code="unknown_url").response()
        return WireError(exc.status_code, str(exc.detail)).response()

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        errors = exc.errors()
        first = errors[0] if errors else {}
        kind = str(first.get("type", ""))
        if kind == "json_invalid":
            return WireError(
                400, "the request body is not valid JSON", code="invalid_json"
            ).response()
        param = param_path(first.get("loc", ()))
        if param is None:
            message = "the request body must be a JSON object (sent as application/json)"
            return WireError(400, message, code="invalid_json").response()
        message = str(first.get("msg", "invalid request"))  # never the input (it may be NaN)
        code = "missing_required_parameter" if kind == "missing" else "invalid_value"
        return WireError(400, f"{param}: {message}", param=param, code=code).response()

    @app.exception_handler(Exception)
    async def crashed(request: Request, exc: Exception) -> Response:
        return WireError(
            500, f"internal error ({type(exc).__name__})", code="internal_error"
        ).response()
