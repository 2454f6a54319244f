"""The model client: one :class:`ChatModel` over any backend.

It owns what every backend shares: the per-endpoint named concurrency limit, the retry policy,
the response cache, structured-output validation with repair and re-asks, tool-call
validation, and the :class:`CallRecord` of every call (also attached to a failure as
``exc.record``).
"""

from __future__ import annotations

import asyncio
import functools
import time
import weakref
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, Literal, Protocol, TypeVar

from pydantic import BaseModel

from empathos.errors import ModelCallError, ModelOutputError
from empathos.llm.cache import ResponseCache, cache_key
from empathos.llm.config import EndpointConfig
from empathos.llm.retry import AttemptStats, BackendError, run_with_retries, to_model_error
from empathos.llm.structured import (
    OutputInvalid,
    reask_messages,
    schema_instruction,
    validate_structured,
    validate_tool_call,
    with_instruction,
)
from empathos.llm.types import (
    CallKind,
    CallRecord,
    ChatRequest,
    ChatResult,
    Message,
    MessageLike,
    RawReply,
    StructuredResult,
    ToolCallResult,
    ToolDef,
    ToolSpec,
    as_messages,
    json_schema_of,
    lean_schema,
)

__all__ = ["SAMPLING_KEYS", "Backend", "ModelClient", "concurrency_limit"]

T = TypeVar("T", bound=BaseModel)
A = TypeVar("A")
SAMPLING_KEYS = frozenset(
    {
        "temperature",
        "top_p",
        "max_tokens",
        "presence_penalty",
        "frequency_penalty",
        "seed",
        "repetition_penalty",
        "no_repeat_ngram",
    }
)

_LIMITS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Semaphore]] = (
    weakref.WeakKeyDictionary()
)


def concurrency_limit(name: str, size: int) -> asyncio.Semaphore:
    """The named semaphore of an endpoint in the running event loop (created on first use)."""
    per_loop = _LIMITS.setdefault(asyncio.get_running_loop(), {})
    if name not in per_loop:
        per_loop[name] = asyncio.Semaphore(size)
    return per_loop[name]


class Backend(Protocol):
    """What a backend does: answer one request, raising BackendError on failure."""

    kind: str
    endpoint: str | None

    async def complete(self, request: ChatRequest) -> RawReply:
        """One attempt; classified failures raise :class:`BackendError`."""
        ...


@functools.cache
def _instruction_for(schema: type[BaseModel], with_schema: bool) -> str:
    """The schema instruction of a reply class, rendered once (its JSON schema is ~8 KB)."""
    return schema_instruction(json_schema_of(schema), with_schema=with_schema)


@functools.cache
def _wire_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of a reply class as sent (:func:`lean_schema`), built once."""
    return lean_schema(json_schema_of(schema))


class _Call:
    """Mutable bookkeeping of one logical call."""

    def __init__(self, client: ModelClient, kind: CallKind) -> None:
        self.t0 = time.perf_counter()
        self.stats = AttemptStats()
        self.record = CallRecord(
            role=client.role,
            kind=kind,
            backend=client.backend.kind,
            endpoint=client.backend.endpoint,
            model=client.config.model,
            started_at=datetime.now(UTC).isoformat(),
        )

    def finish(self, config: EndpointConfig) -> CallRecord:
        rec = self.record
        rec.latency_s = time.perf_counter() - self.t0
        rec.attempts = self.stats.attempts
        rec.retries = self.stats.retries
        if config.price is not None:
            rec.cost_usd = config.price.cost(
                rec.input_tokens, rec.cached_input_tokens, rec.output_tokens
            )
        elif config.price_input_per_1k is not None or config.price_output_per_1k is not None:
            rec.cost_usd = rec.input_tokens / 1000.0 * (
                config.price_input_per_1k or 0.0
            ) + rec.output_tokens / 1000.0 * (config.price_output_per_1k or 0.0)
        return rec


class ModelClient:
    """A :class:`~empathos.llm.types.ChatModel` for one role over one backend."""

    def __init__(
        self,
        backend: Backend,
        config: EndpointConfig,
        role: str,
        cache: ResponseCache | None = None,
    ) -> None:
        self.backend = backend
        self.config = config
        self.role = role
        self.cache = cache if config.cache else None

    # -- public API -------------------------------------------------------------------
    async def chat(
        self,
        messages: Sequence[MessageLike],
        *,
        allow_empty: bool = False,
        **overrides: float | int,
    ) -> ChatResult:
        """A free-text reply. A reply without text (null content, e.g. a reasoning model that
        ran out of tokens) fails with ModelOutputError, or is '' with ``allow_empty``; the
        result carries the endpoint's ``finish_reason`` either way."""
        request = self._request(as_messages(messages), overrides)

        def accept(reply: RawReply) -> tuple[str, bool]:
            if reply.content is None and not allow_empty:
                finish = f" (finish_reason: {reply.finish_reason})" if reply.finish_reason else ""
                raise OutputInvalid(f"the reply holds no text{finish}", "")
            return reply.content or "", False

        text, record, reply = await self._run("chat", request, accept, reask=False)
        return ChatResult(text=text, record=record, finish_reason=reply.finish_reason)

    async def structured(
        self, messages: Sequence[MessageLike], schema: type[T], **overrides: float | int
    ) -> StructuredResult[T]:
        """A reply validated against ``schema`` (repair, then re-ask, then ModelOutputError)."""
        json_schema = _wire_schema(schema)
        opts = self.config.structured
        msgs = as_messages(messages)
        if opts.json_schema == "off":  # else the schema goes with the request (or, if the
            # endpoint refuses it, into the prompt: the backend's fallback)
            full = self.config.resolved_prompt_style() == "full"
            msgs = with_instruction(msgs, _instruction_for(schema, full))
        request = self._request(
            msgs,
            overrides,
            response_schema=json_schema if opts.json_schema != "off" else None,
            schema_name=schema.__name__,
            json_mode=opts.json_mode,
        )
        value, record, reply = await self._run(
            "structured", request, lambda r: validate_structured(r.content, schema), reask=True
        )
        return StructuredResult(value=value, raw=reply.content or "", record=record)

    async def tool_call(
        self, messages: Sequence[MessageLike], tools: Sequence[ToolSpec], **overrides: float | int
    ) -> ToolCallResult:
        """Exactly one call of one of ``tools``, its arguments validated."""
        if not tools:
            raise ValueError("tool_call needs at least one tool")
        request = self._request(
            as_messages(messages),
            overrides,
            tools=[t.to_def() for t in tools],
            tool_choice=self.config.structured.tool_choice,
        )
        value, record, _ = await self._run(
            "tool_call", request, lambda r: validate_tool_call(r, tools), reask=True
        )
        return ToolCallResult(call=value, record=record)

    async def complete(
        self,
        messages: Sequence[MessageLike],
        *,
        json_mode: bool = False,
        tools: Sequence[ToolDef] = (),
        tool_choice: Literal["required", "auto"] | None = None,
        accept: Callable[[RawReply], tuple[RawReply, bool]] | None = None,
        **overrides: float | int,
    ) -> tuple[RawReply, CallRecord]:
        """One call in wire shapes, for adapters that parse replies themselves.

        ``json_mode`` asks for a JSON object (``response_format=json_object``), ``tools`` are
        offered as they are (``tool_choice`` None: the endpoint's default). The reply comes
        back unparsed with the call's record; retries, the limit, the cache and the record
        work as for the other calls. ``accept`` may check a reply (raise
        :class:`~empathos.llm.structured.OutputInvalid` to re-ask, as structured calls do)."""
        kind: CallKind = "tool_call" if tools else ("structured" if json_mode else "chat")
        request = self._request(
            as_messages(messages),
            overrides,
            json_mode=json_mode,
            tools=list(tools),
            tool_choice=tool_choice if tools else None,
        )
        check = accept or (lambda reply: (reply, False))
        reply, record, _ = await self._run(kind, request, check, reask=accept is not None)
        return reply, record

    async def aclose(self) -> None:
        """Release the backend's connections (if it holds any)."""
        close = getattr(self.backend, "aclose", None)
        if close is not None:
            await close()

    # -- internals --------------------------------------------------------------------
    def _request(
        self, messages: list[Message], overrides: dict[str, float | int], **shape: Any
    ) -> ChatRequest:
        unknown = set(overrides) - SAMPLING_KEYS
        if unknown:
            raise ValueError(f"unknown sampling parameter(s): {', '.join(sorted(unknown))}")
        params = {**self.config.sampling(), **overrides}
        return ChatRequest(model=self.config.model, messages=messages, params=params, **shape)

    def _key(self, kind: CallKind, request: ChatRequest) -> str:
        return cache_key(
            {
                "kind": kind,
                "backend": self.backend.kind,
                "endpoint": self.backend.endpoint,
                "request": request.model_dump(mode="json"),
            }
        )

    async def _attempt(self, request: ChatRequest, call: _Call) -> RawReply:
        limit = concurrency_limit(self.config.limit_name(), self.config.max_concurrency)

        async def once() -> RawReply:
            async with limit:
                reply = await self.backend.complete(request)
            call.record.input_tokens += reply.input_tokens
            call.record.output_tokens += reply.output_tokens
            call.record.cached_input_tokens += reply.cached_tokens
            return reply

        return await run_with_retries(once, self.config.retry, call.stats)

    def _from_cache(
        self, key: str | None, accept: Callable[[RawReply], tuple[A, bool]], call: _Call
    ) -> tuple[A, RawReply] | None:
        if self.cache is None or key is None:
            return None
        stored = self.cache.get(key)
        if stored is None:
            return None
        reply = RawReply.model_validate_json(stored)
        try:
            value, _ = accept(reply)
        except OutputInvalid:
            return None
        call.record.cache_hit = True
        return value, reply

    async def _run(
        self,
        kind: CallKind,
        request: ChatRequest,
        accept: Callable[[RawReply], tuple[A, bool]],
        *,
        reask: bool,
    ) -> tuple[A, CallRecord, RawReply]:
        call = _Call(self, kind)
        key = self._key(kind, request) if self.cache is not None else None
        hit = self._from_cache(key, accept, call)
        if hit is not None:
            call.record.flags = list(hit[1].flags)
            return hit[0], call.finish(self.config), hit[1]
        try:
            value, reply = await self._ask(request, accept, call, reask=reask)
        except ModelCallError as exc:
            record = call.finish(self.config)
            record.error = exc.line()
            record.error_type = type(exc).__name__
            exc.record = record
            raise
        if self.cache is not None and key is not None:
            self.cache.put(key, reply.model_dump_json())
        call.record.flags = list(reply.flags)
        return value, call.finish(self.config), reply

    async def _ask(
        self,
        request: ChatRequest,
        accept: Callable[[RawReply], tuple[A, bool]],
        call: _Call,
        *,
        reask: bool,
    ) -> tuple[A, RawReply]:
        endpoint = self.backend.endpoint or self.backend.kind
        max_reasks = self.config.structured.max_reasks if reask else 0
        current = request
        while True:
            try:
                reply = await self._attempt(current, call)
            except BackendError as exc:
                raise to_model_error(
                    exc, role=self.role, endpoint=endpoint, attempts=call.stats.attempts
                ) from None
            try:
                value = accept(reply)
            except OutputInvalid as bad:
                bad_text = reply.content or "".join(c.arguments for c in reply.tool_calls[:1])
                if call.record.reasks >= max_reasks:
                    error = ModelOutputError(
                        f"invalid output after {call.record.reasks} re-ask(s): {bad.reason}",
                        role=self.role,
                        endpoint=endpoint,
                        attempts=call.stats.attempts,
                    )
                    error.output = bad_text
                    raise error from None
                call.record.reasks += 1
                current = current.model_copy(
                    update={"messages": reask_messages(current.messages, bad_text, bad.reason)}
                )
                continue
            call.record.repaired = value[1]
            return value[0], reply
