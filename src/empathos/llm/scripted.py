"""The scripted backend: deterministic, rule-based replies for tests (yours and ours).

A :class:`ScriptedBackend` answers each request by calling a *handler*, a plain function
``(ChatRequest) -> reply``. Build one from rules with :func:`rules` (first matching predicate
wins) or write the function yourself. A reply may be:

- a ``str``: the reply text (for structured calls, the JSON text: it is validated, repaired
  and re-asked like any model's output, so malformed text tests those paths);
- a pydantic model instance or a ``dict``: serialised to JSON text;
- a :class:`ToolReply`: a tool call (name + arguments);
- a :class:`~empathos.llm.types.RawReply`: used as is.

To simulate an endpoint failure, raise :func:`fault` from the handler. With no rule matching,
:func:`auto_reply` answers: an echo for chat, the first allowed value of every field for a
schema, a ``{"reply": ...}`` object for JSON mode without a schema, the first tool for tool
calls. Example::

    backend = ScriptedBackend(rules(
        (lambda r: r.tools != [], ToolReply("ask", {"question": "How are you?"})),
        (lambda r: "rate" in r.messages[-1].content, Judgement(level=2)),
    ))
    model = ModelClient(backend, EndpointConfig(kind="scripted"), role="director")
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from empathos.llm.offline.constrained import FirstChoiceDecoder, build_json, build_tool_call
from empathos.llm.retry import BackendError, ErrorKind
from empathos.llm.types import ChatRequest, RawReply, RawToolCall

__all__ = [
    "Handler",
    "Reply",
    "ScriptedBackend",
    "ToolReply",
    "auto_reply",
    "fault",
    "rules",
]


@dataclass(frozen=True)
class ToolReply:
    """A scripted tool call."""

    name: str
    arguments: BaseModel | dict[str, Any] | str = field(default_factory=dict)


Reply = str | BaseModel | dict[str, Any] | ToolReply | RawReply
Handler = Callable[[ChatRequest], Reply]


def fault(
    kind: ErrorKind, message: str = "scripted failure", retry_after: float | None = None
) -> BackendError:
    """An endpoint failure to raise from a handler (rate_limit, transient or fatal)."""
    return BackendError(kind, message, retry_after=retry_after)


def auto_reply(request: ChatRequest) -> Reply:
    """The default answer: echo for chat (as a JSON object in JSON mode); first allowed
    values for schemas and tools."""
    decoder = FirstChoiceDecoder()
    if request.tools:
        name, arguments = build_tool_call([(t.name, t.parameters) for t in request.tools], decoder)
        return ToolReply(name, arguments)
    if request.response_schema is not None:
        return build_json(request.response_schema, decoder)
    last = request.messages[-1].content if request.messages else ""
    if request.json_mode:  # JSON mode without a schema: one JSON object
        return {"reply": f"(scripted) {last[:200]}"}
    return f"(scripted) {last[:200]}"


def rules(*pairs: tuple[Callable[[ChatRequest], bool], Reply | Handler]) -> Handler:
    """A handler from ``(predicate, reply-or-handler)`` pairs; the first match answers."""

    def handler(request: ChatRequest) -> Reply:
        for predicate, reply in pairs:
            if predicate(request):
                return reply(request) if callable(reply) else reply
        return auto_reply(request)

    return handler


def _count(text: str) -> int:
    return len(text.split())


def _to_raw(reply: Reply, request: ChatRequest) -> RawReply:
    if isinstance(reply, RawReply):
        return reply
    prompt = sum(_count(m.content) for m in request.messages)
    if isinstance(reply, ToolReply):
        args = reply.arguments
        if isinstance(args, BaseModel):
            text = args.model_dump_json()
        elif isinstance(args, dict):
            text = json.dumps(args, ensure_ascii=False)
        else:
            text = args
        call = RawToolCall(id="call_0", name=reply.name, arguments=text)
        return RawReply(
            tool_calls=[call],
            input_tokens=prompt,
            output_tokens=_count(text),
            finish_reason="tool_calls",
        )
    if isinstance(reply, BaseModel):
        content = reply.model_dump_json()
    elif isinstance(reply, dict):
        content = json.dumps(reply, ensure_ascii=False)
    else:
        content = reply
    return RawReply(
        content=content, input_tokens=prompt, output_tokens=_count(content), finish_reason="stop"
    )


class ScriptedBackend:
    """A backend whose replies come from a handler; it records every request it saw."""

    kind = "scripted"
    endpoint: str | None = None

    def __init__(self, handler: Handler = auto_reply) -> None:
        self.handler = handler
        self.requests: list[ChatRequest] = []

    async def complete(self, request: ChatRequest) -> RawReply:
        """Answer from the handler (a raised BackendError simulates a failure)."""
        self.requests.append(request)
        return _to_raw(self.handler(request), request)
