"""An OpenAI-compatible HTTP server over a backend (the offline model by default).

Serves ``POST /v1/chat/completions`` and ``GET /v1/models`` in OpenAI's wire format, errors
included: every failure is ``{"error": {"message", "type", "param", "code"}}`` with OpenAI's
status (400 invalid request, 404 unknown model or URL, 413 body over the limit, 429/503 from
the backend, 500 a bug), so the ``openai`` SDK raises its matching exception with ``.code``
set. Parameters that change the answer's shape are honoured (``n``, ``stop``) or refused with
a 400 naming them (``stream``, ``logprobs``, ``top_logprobs``, ``logit_bias``, non-text
content parts); unknown fields are ignored, as OpenAI-compatible servers do. A prompt longer
than the backend's context is a 400 ``context_length_exceeded``; a ``max_tokens`` larger than
the room the prompt leaves is clamped to it and the clamp reported in ``usage``. A client
that disconnects cancels its generation.
"""

from __future__ import annotations

import asyncio
import socket
import time
import uuid
from collections.abc import Awaitable, Sequence
from typing import Any, TypeVar

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.types import Message as AsgiMessage

from empathos.llm.client import Backend
from empathos.llm.retry import BackendError
from empathos.llm.types import ChatRequest, Message, RawReply, ToolDef

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
MAX_N = 8  # most choices per request
MAX_STOP = 4  # most stop sequences (as OpenAI)
_DRAIN_BYTES = 64 * 1024 * 1024  # an oversized body is read (and dropped) up to this much
_POLL_S = 0.2  # how often a running request checks whether its client is still there
_STATUS = {"rate_limit": 429, "transient": 503, "fatal": 400}
_ROLES = {"developer": "system", "function": "tool"}
_SEED_RANGE = (-(2**63), 2**64 - 1)  # what torch.manual_seed takes
_UNSUPPORTED = "unsupported_parameter"
_DEFAULT_CODES = {
    400: "invalid_value",
    404: "not_found",
    405: "method_not_allowed",
    413: "request_too_large",
    429: "rate_limit_exceeded",
    503: "service_unavailable",
}


class WireError(HTTPException):
    """An error answered in OpenAI's shape."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        param: str | None = None,
        code: str | None = None,
        kind: str | None = None,
    ) -> None:
        super().__init__(status, message)
        self.message = message
        self.param = param
        self.code = code or _DEFAULT_CODES.get(status, "server_error")
        self.kind = kind or _error_type(status)

    def body(self) -> dict[str, Any]:
        """The JSON body."""
        return {
            "error": {
                "message": self.message,
                "type": self.kind,
                "param": self.param,
                "code": self.code,
            }
        }

    def response(self) -> JSONResponse:
        """The HTTP response."""
        return JSONResponse(self.body(), status_code=self.status_code)


def _error_type(status: int) -> str:
    if status == 429:
        return "rate_limit_error"
    if status >= 500:
        return "server_error"
    return "invalid_request_error"


class _WireMessage(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: str = Field(description="system, developer, user, assistant or tool.")
    content: str | list[dict[str, Any]] | None = Field(None, description="Text or text parts.")

    def to_message(self, index: int) -> Message:
        content = self.content
        if isinstance(content, list):
            kinds = {str(p.get("type")) for p in content} - {"text"}
            if kinds:
                raise WireError(
                    400,
                    f"only text content parts are supported (got {', '.join(sorted(kinds))})",
                    param=f"messages[{index}].content",
                    code="unsupported_value",
                )
            content = "".join(str(p.get("text", "")) for p in content)
        if content is None:
            extra = self.model_extra or {}
            content = str(extra.get("tool_calls", "")) if extra.get("tool_calls") else ""
        role: str = _ROLES.get(self.role) or self.role
        if role not in ("system", "user", "assistant", "tool"):
            raise WireError(
                400, f"unsupported message role {self.role!r}", param=f"messages[{index}].role"
            )
        return Message.model_validate({"role": role, "content": content})


class CompletionRequest(BaseModel):
    """The accepted subset of an OpenAI chat completion request (non-finite numbers refused)."""

    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)

    model: str | None = Field(None, description="Model id: the served id or an alias.")
    messages: list[_WireMessage] = Field(min_length=1, description="The conversation.")
    temperature: float | None = Field(None, ge=0.0, le=2.0, description="Sampling temperature.")
    top_p: float | None = Field(None, gt=0.0, le=1.0, description="Nucleus sampling mass.")
    max_tokens: int | None = Field(None, ge=1, description="Cap on generated tokens.")
    max_completion_tokens: int | None = Field(None, ge=1, description="Alias of max_tokens.")
    seed: int | None = Field(
        None, ge=_SEED_RANGE[0], le=_SEED_RANGE[1], description="Sampling seed."
    )
    presence_penalty: float | None = Field(None, ge=-2.0, le=2.0, description="OpenAI's.")
    frequency_penalty: float | None = Field(None, ge=-2.0, le=2.0, description="OpenAI's.")
    n: int = Field(1, ge=1, le=MAX_N, description="Number of choices.")
    stop: str | list[str] | None = Field(None, description="Up to 4 stop sequences.")
    logprobs: bool | None = Field(None, description="Refused when true.")
    top_logprobs: int | None = Field(None, description="Refused when set.")
    logit_bias: dict[str, float] | None = Field(None, description="Refused when not empty.")
    response_format: dict[str, Any] | None = Field(None, description="text/json_object/schema.")
    tools: list[dict[str, Any]] | None = Field(None, description="Function tools.")
    tool_choice: str | dict[str, Any] | None = Field(None, description="none/auto/required/one.")
    stream: bool | None = Field(None, description="Streaming is not supported.")

    def refuse_unsupported(self) -> None:
        """400 naming the first parameter that would change the answer's shape unhonoured."""
        if self.stream:
            raise WireError(
                400,
                "stream=true is not supported by this server",
                param="stream",
                code=_UNSUPPORTED,
            )
        if self.logprobs:
            raise WireError(
                400,
                "logprobs are not supported by this server",
                param="logprobs",
                code=_UNSUPPORTED,
            )
        if self.top_logprobs is not None:
            raise WireError(
                400,
                "top_logprobs is not supported by this server",
                param="top_logprobs",
                code=_UNSUPPORTED,
            )
        if self.logit_bias:
            raise WireError(
                400,
                "logit_bias is not supported by this server",
                param="logit_bias",
                code=_UNSUPPORTED,
            )

    def stops(self) -> list[str]:
        """The stop sequences (400 if there are too many or one is empty)."""
        stops = [self.stop] if isinstance(self.stop, str) else list(self.stop or [])
        if len(stops) > MAX_STOP:
            raise WireError(400, f"at most {MAX_STOP} stop sequences", param="stop")
        if any(not s for s in stops):
            raise WireError(400, "a stop sequence may not be empty", param="stop")
        return stops

    def to_request(self, model_id: str) -> ChatRequest:
        """The backend request (one choice)."""
        self.refuse_unsupported()
        params: dict[str, float | int] = {}
        for key in ("temperature", "top_p", "seed", "presence_penalty", "frequency_penalty"):
            value = getattr(self, key)
            if value is not None:
                params[key] = value
        cap = self.requested_max_tokens()
        if cap is not None:
            params["max_tokens"] = cap
        schema, name, json_mode = self._format()
        tools = self._tools()
        return ChatRequest(
            model=model_id,
            messages=[m.to_message(i) for i, m in enumerate(self.messages)],
            params=params,
            response_schema=schema if not tools else None,
            schema_name=name,
            json_mode=json_mode and not tools,
            tools=tools,
            tool_choice="required" if tools else None,
            stop=self.stops(),
        )

    def requested_max_tokens(self) -> int | None:
        """``max_completion_tokens``, else ``max_tokens``."""
        return self.max_completion_tokens or self.max_tokens

    def _format(self) -> tuple[dict[str, Any] | None, str | None, bool]:
        fmt = self.response_format or {}
        kind = fmt.get("type", "text")
        if kind == "json_schema":
            spec = fmt.get("json_schema") or {}
            if not isinstance(spec.get("schema"), dict):
                raise WireError(
                    400,
                    "response_format.json_schema.schema must be an object",
                    param="response_format",
                )
            return spec["schema"], str(spec.get("name") or "response"), False
        if kind == "json_object":
            return None, None, True
        if kind != "text":
            raise WireError(
                400, f"unsupported response_format type {kind!r}", param="response_format"
            )
        return None, None, False

    def _tools(self) -> list[ToolDef]:
        if not self.tools or self.tool_choice == "none":
            return []
        defs = []
        for tool in self.tools:
            fn = tool.get("function") or {}
            if tool.get("type") != "function" or not isinstance(fn.get("name"), str):
                raise WireError(
                    400, "each tool must be {type: function, function: {name}}", param="tools"
                )
            params = fn.get("parameters") or {"type": "object", "properties": {}}
            defs.append(
                ToolDef(name=fn["name"], description=fn.get("description") or "", parameters=params)
            )
        if isinstance(self.tool_choice, dict):
            wanted = (self.tool_choice.get("function") or {}).get("name")
            defs = [d for d in defs if d.name == wanted]
            if not defs:
                raise WireError(
                    400, f"tool_choice names an unknown tool {wanted!r}", param="tool_choice"
                )
        return defs


def _cut_at_stop(reply: RawReply, stops: Sequence[str]) -> RawReply:
    """The reply ending before the first stop sequence (which is not returned)."""
    if not stops or reply.content is None:
        return reply
    cuts = [i for i in (reply.content.find(s) for s in stops) if i >= 0]
    if not cuts:
        return reply
    return reply.model_copy(update={"content": reply.content[: min(cuts)], "finish_reason": "stop"})


def _choice(index: int, reply: RawReply) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments},
            }
            for c in reply.tool_calls
        ]
    return {
        "index": index,
        "message": message,
        "logprobs": None,
        "finish_reason": reply.finish_reason,
    }


def _completion(
    replies: list[RawReply], model_id: str, requested: int | None, window: int | None
) -> dict[str, Any]:
    prompt = replies[0].input_tokens
    completion = sum(r.output_tokens for r in replies)
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if requested is not None and window is not None and requested > window - prompt:
        usage["max_tokens_clamped_to"] = window - prompt  # what the context left for the reply
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model_id,
        "choices": [_choice(i, r) for i, r in enumerate(replies)],
        "usage": usage,
    }


def _param(loc: Sequence[Any]) -> str | None:
    out = ""
    for part in loc[1:] if loc and loc[0] == "body" else loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or None


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
    ids = list(dict.fromkeys([model_id, *aliases]))
    window: int | None = getattr(backend, "context_tokens", None)

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
        param = _param(first.get("loc", ()))
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
        answers = [_cut_at_stop(r, request.stop) for r in replies]
        served_as = body.model or model_id
        return _completion(answers, served_as, body.requested_max_tokens(), window)

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    return app
