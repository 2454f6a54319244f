"""Model access for every role: one async interface over three backends.

- ``kind="openai"``: any OpenAI-compatible endpoint (``AsyncOpenAI``, our own retries).
- ``kind="offline"``: the bundled SmolLM2-135M-Instruct on CPU, constrained structured output.
- ``kind="scripted"``: rule-based replies for deterministic tests.

Build a role's model with :func:`build_model` from its :class:`EndpointConfig`; call
``chat``, ``structured`` or ``tool_call``; store each result's ``record`` (a
:class:`CallRecord`). Failures raise ``empathos.errors.ModelCallError`` subclasses whose
``record`` attribute holds the failed call's record. See ``docs/models.md``.
"""

from empathos.llm.cache import ResponseCache, cache_key
from empathos.llm.client import Backend, ModelClient, concurrency_limit
from empathos.llm.config import (
    EndpointConfig,
    RetryConfig,
    StructuredConfig,
    prompt_style_of,
    redact_url,
    resolve_api_key,
)
from empathos.llm.factory import build_model
from empathos.llm.retry import BackendError, ErrorKind
from empathos.llm.scripted import ScriptedBackend, ToolReply, auto_reply, fault, rules
from empathos.llm.types import (
    CallRecord,
    ChatModel,
    ChatRequest,
    ChatResult,
    Message,
    MessageLike,
    RawReply,
    RawToolCall,
    StructuredResult,
    ToolCall,
    ToolCallResult,
    ToolDef,
    ToolSpec,
    as_messages,
    json_schema_of,
    lean_schema,
)

__all__ = [
    "Backend",
    "BackendError",
    "CallRecord",
    "ChatModel",
    "ChatRequest",
    "ChatResult",
    "EndpointConfig",
    "ErrorKind",
    "Message",
    "MessageLike",
    "ModelClient",
    "RawReply",
    "RawToolCall",
    "ResponseCache",
    "RetryConfig",
    "ScriptedBackend",
    "StructuredConfig",
    "StructuredResult",
    "ToolCall",
    "ToolCallResult",
    "ToolDef",
    "ToolReply",
    "ToolSpec",
    "as_messages",
    "auto_reply",
    "build_model",
    "cache_key",
    "concurrency_limit",
    "fault",
    "json_schema_of",
    "lean_schema",
    "prompt_style_of",
    "record_of",
    "redact_url",
    "resolve_api_key",
    "rules",
]


def record_of(exc: BaseException) -> CallRecord | None:
    """The :class:`CallRecord` attached to a failed call's error, if any."""
    record = getattr(exc, "record", None)
    return record if isinstance(record, CallRecord) else None
