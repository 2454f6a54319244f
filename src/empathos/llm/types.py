"""The data that crosses the model boundary: messages, requests, replies, call records.

Every backend (OpenAI-compatible HTTP, offline model, scripted) answers one
:class:`ChatRequest` with one :class:`RawReply`; the client above turns replies into
validated results, each carrying a :class:`CallRecord` for the dialogue record.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "CallKind",
    "CallRecord",
    "ChatModel",
    "ChatRequest",
    "ChatResult",
    "Message",
    "MessageLike",
    "RawReply",
    "RawToolCall",
    "StructuredResult",
    "ToolCall",
    "ToolCallResult",
    "ToolDef",
    "ToolSpec",
    "as_messages",
    "json_schema_of",
    "lean_schema",
]

T = TypeVar("T", bound=BaseModel)
CallKind = Literal["chat", "structured", "tool_call"]


class Message(BaseModel):
    """One chat message."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    role: Literal["system", "user", "assistant", "tool"] = Field(description="Speaker.")
    content: str = Field(description="Text of the message.")


MessageLike = Message | Mapping[str, str]


def as_messages(messages: Sequence[MessageLike]) -> list[Message]:
    """Normalise messages given as :class:`Message` or ``{"role": ..., "content": ...}``."""
    return [m if isinstance(m, Message) else Message.model_validate(dict(m)) for m in messages]


class ToolDef(BaseModel):
    """A tool as sent on the wire: name, description and the JSON schema of its arguments."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="Tool (function) name.")
    description: str = Field("", description="What the tool does, for the model.")
    parameters: dict[str, Any] = Field(description="JSON schema of the arguments object.")


@dataclass(frozen=True)
class ToolSpec:
    """A tool offered to the model; its arguments are described by a pydantic model."""

    name: str
    description: str
    arguments: type[BaseModel]

    def to_def(self) -> ToolDef:
        """The wire form of this tool (computed once per tool)."""
        return _tool_def(self.name, self.description, self.arguments)


@functools.cache
def json_schema_of(model: type[BaseModel]) -> dict[str, Any]:
    """``model.model_json_schema()``, computed once per class (it costs ~0.1-1 ms).

    Treat the result as read-only: it is shared."""
    return model.model_json_schema()


_NAMED = ("properties", "$defs", "definitions", "patternProperties")


def lean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` as sent on the wire: without titles, descriptions and defaults (the prompts
    say what each field means; titles only repeat the names; a default is filled in when the
    reply is validated), without properties that have a constant value and a default (a
    tool's ``action``: its name says it), an optional property that defaults to None as its
    non-null type (leaving it out says None) and without ``"additionalProperties": false`` (the
    constrained decoders of llama.cpp, vLLM and SGLang (xgrammar) emit only the listed
    properties unless told otherwise; providers that do not constrain ignore it; the reply
    is validated against the model, which refuses an extra key, and re-asked). The shape,
    types, enums, bounds and required fields are unchanged."""

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(x) for x in node]
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in ("title", "description", "default"):
                continue
            if key == "additionalProperties" and value is False:
                continue
            if key in _NAMED and isinstance(value, dict):
                out[key] = {
                    name: walk(_not_null(sub))
                    for name, sub in value.items()
                    if not (isinstance(sub, dict) and "const" in sub and "default" in sub)
                }
            else:
                out[key] = walk(value)
        return out

    result: dict[str, Any] = walk(schema)
    return result


def _not_null(prop: Any) -> Any:
    """An optional property that defaults to None (``anyOf: [X, null]``) as X: leaving it
    out says None, so the server need not be told that null is allowed too."""
    if not isinstance(prop, dict) or "default" not in prop or prop["default"] is not None:
        return prop
    branches = prop.get("anyOf")
    if not isinstance(branches, list) or {"type": "null"} not in branches or len(branches) != 2:
        return prop
    (other,) = [b for b in branches if b != {"type": "null"}]
    return {**{k: v for k, v in prop.items() if k not in ("anyOf", "default")}, **other}


@functools.cache
def _tool_def(name: str, description: str, arguments: type[BaseModel]) -> ToolDef:
    return ToolDef(
        name=name, description=description, parameters=lean_schema(json_schema_of(arguments))
    )


class ChatRequest(BaseModel):
    """What a backend is asked: messages, sampling parameters, and an optional output shape."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = Field(description="Model id.")
    messages: list[Message] = Field(description="The conversation so far.")
    params: dict[str, float | int] = Field(
        default_factory=dict, description="Sampling parameters (temperature, max_tokens, ...)."
    )
    response_schema: dict[str, Any] | None = Field(
        None, description="JSON schema the reply must follow (structured output), if any."
    )
    schema_name: str | None = Field(None, description="Name of the response schema.")
    json_mode: bool = Field(False, description="Ask for a JSON object without a schema.")
    stop: list[str] = Field(
        default_factory=list, description="Stop sequences: the reply ends before the first one."
    )
    tools: list[ToolDef] = Field(default_factory=list, description="Tools the model may call.")
    tool_choice: Literal["required", "auto"] | None = Field(
        None, description="Whether a tool call is required."
    )


class RawToolCall(BaseModel):
    """A tool call as the backend returned it, arguments still a JSON string."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field("call_0", description="Call id.")
    name: str = Field(description="Tool name.")
    arguments: str = Field(description="Arguments as JSON text (possibly malformed).")


class RawReply(BaseModel):
    """A backend's answer before validation."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    content: str | None = Field(None, description="Text of the reply.")
    tool_calls: list[RawToolCall] = Field(default_factory=list, description="Tool calls made.")
    input_tokens: int = Field(0, ge=0, description="Prompt tokens counted by the backend.")
    output_tokens: int = Field(0, ge=0, description="Completion tokens counted by the backend.")
    cached_tokens: int = Field(
        0,
        ge=0,
        description="Prompt tokens the server served from its prefix cache, as its usage "
        "reported them (0: none reported).",
    )
    finish_reason: str | None = Field(None, description="Why generation stopped.")
    flags: list[str] = Field(
        default_factory=list,
        description="Notes from the backend, e.g. 'echo_resampled' (the first reply copied its "
        "prompt and was sampled again), 'echo' (the kept reply still copies its prompt).",
    )


class CallRecord(BaseModel):
    """What one logical call cost and how it went; stored in the dialogue record.

    Never holds an API key: only the endpoint's URL and model id."""

    model_config = ConfigDict(extra="forbid")

    role: str = Field(description="Role that made the call (user, director, judge, ...).")
    kind: CallKind = Field(description="chat, structured or tool_call.")
    backend: str = Field(description="openai, offline or scripted.")
    endpoint: str | None = Field(None, description="Base URL of the endpoint (no credentials).")
    model: str = Field(description="Model id.")
    started_at: str = Field(description="UTC start time, ISO 8601.")
    latency_s: float = Field(0.0, ge=0.0, description="Wall time of the whole call, seconds.")
    input_tokens: int = Field(0, ge=0, description="Prompt tokens over all attempts.")
    output_tokens: int = Field(0, ge=0, description="Completion tokens over all attempts.")
    cached_input_tokens: int = Field(
        0,
        ge=0,
        description="Of the prompt tokens, those the server served from its prefix cache, over "
        "all attempts (as reported: usage.prompt_tokens_details.cached_tokens or its "
        "equivalents).",
    )
    attempts: int = Field(0, ge=0, description="HTTP/backend attempts made, retries included.")
    retries: int = Field(0, ge=0, description="Attempts that failed and were retried.")
    reasks: int = Field(0, ge=0, description="Re-asks after invalid output.")
    repaired: bool = Field(False, description="The accepted output needed JSON repair.")
    cost_usd: float | None = Field(None, description="Cost from configured prices, if any.")
    cache_hit: bool = Field(False, description="Served from the response cache.")
    error: str | None = Field(None, description="Why the call failed; None on success.")
    error_type: str | None = Field(None, description="Class name of the error, if failed.")
    flags: list[str] = Field(
        default_factory=list, description="The backend's notes on the accepted reply."
    )


@dataclass(frozen=True)
class ChatResult:
    """A plain chat reply (``text`` is '' for an accepted empty reply, see ``allow_empty``)."""

    text: str
    record: CallRecord
    finish_reason: str | None = None


@dataclass(frozen=True)
class StructuredResult(Generic[T]):
    """A validated instance of the requested model."""

    value: T
    raw: str
    record: CallRecord


@dataclass(frozen=True)
class ToolCall:
    """A validated tool call: the tool's name and its parsed arguments."""

    id: str
    name: str
    arguments: BaseModel
    raw_arguments: str


@dataclass(frozen=True)
class ToolCallResult:
    """The tool the model chose, with validated arguments."""

    call: ToolCall
    record: CallRecord


class ChatModel(Protocol):
    """One async interface for every backend; each method fails with a ModelCallError."""

    role: str

    async def chat(
        self,
        messages: Sequence[MessageLike],
        *,
        allow_empty: bool = False,
        **overrides: float | int,
    ) -> ChatResult:
        """A free-text reply; with ``allow_empty`` a reply without text (null content) is
        accepted as '' instead of failing."""
        ...

    async def structured(
        self, messages: Sequence[MessageLike], schema: type[T], **overrides: float | int
    ) -> StructuredResult[T]:
        """A reply validated against ``schema``."""
        ...

    async def tool_call(
        self, messages: Sequence[MessageLike], tools: Sequence[ToolSpec], **overrides: float | int
    ) -> ToolCallResult:
        """Exactly one call of one of ``tools`` with validated arguments."""
        ...
