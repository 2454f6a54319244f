"""The OpenAI wire format of the model server: the accepted request, the errors, the reply.

:class:`CompletionRequest` is the accepted subset of a chat completion request (non-finite
numbers and unsupported shapes refused with a 400 naming the parameter);
:class:`WireError` is an error in OpenAI's shape (``{"error": {"message", "type", "param",
"code"}}``); :func:`completion_body` the ``chat.completion`` reply.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Sequence
from typing import Any

from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException

from empathos.llm.types import ChatRequest, Message, RawReply, ToolDef

__all__ = [
    "MAX_N",
    "MAX_STOP",
    "CompletionRequest",
    "WireError",
    "completion_body",
    "cut_at_stop",
    "param_path",
    "stream_events",
]

MAX_N = 8  # most choices per request
MAX_STOP = 4  # most stop sequences (as OpenAI)
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
    stream: bool | None = Field(
        None, description="Server-sent events: the whole reply as one delta per choice."
    )
    stream_options: dict[str, Any] | None = Field(None, description="include_usage.")

    def refuse_unsupported(self) -> None:
        """400 naming the first parameter that would change the answer's shape unhonoured."""
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


def cut_at_stop(reply: RawReply, stops: Sequence[str]) -> RawReply:
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


def completion_body(
    replies: list[RawReply], model_id: str, requested: int | None, window: int | None
) -> dict[str, Any]:
    prompt = replies[0].input_tokens
    completion = sum(r.output_tokens for r in replies)
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        # of the prompt, the tokens the prefix cache served (OpenAI's spelling)
        "prompt_tokens_details": {"cached_tokens": replies[0].cached_tokens},
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


def stream_events(body: dict[str, Any], include_usage: bool) -> bytes:
    """A completion body (:func:`completion_body`) as OpenAI's server-sent events: per choice
    one chunk with the whole message as its delta, then one with its ``finish_reason``; the
    usage chunk when asked for (``stream_options.include_usage``); ``[DONE]``. The reply is
    generated whole before it is sent: clients that always stream (verifiers' harnesses) get
    the same answer as a plain request."""
    head = {k: body[k] for k in ("id", "created", "model")}
    head["object"] = "chat.completion.chunk"
    chunks: list[dict[str, Any]] = []
    for choice in body["choices"]:
        delta = dict(choice["message"])
        for i, call in enumerate(delta.get("tool_calls") or []):
            call["index"] = i
        first = {"index": choice["index"], "delta": delta, "finish_reason": None}
        last = {"index": choice["index"], "delta": {}, "finish_reason": choice["finish_reason"]}
        chunks += [{**head, "choices": [first]}, {**head, "choices": [last]}]
    if include_usage:
        chunks.append({**head, "choices": [], "usage": body["usage"]})
    lines = [f"data: {json.dumps(c, ensure_ascii=False)}\n\n" for c in chunks]
    return ("".join(lines) + "data: [DONE]\n\n").encode()


def param_path(loc: Sequence[Any]) -> str | None:
    """A validation error's location as a parameter path (``messages[0].content``)."""
    out = ""
    for part in loc[1:] if loc and loc[0] == "body" else loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or None
