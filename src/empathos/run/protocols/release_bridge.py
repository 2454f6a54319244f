"""The bridge: the release's ``LLMClient`` answered by empathos's model client of one role.

Each agent of the release gets an instance of a subclass of the release's ``LLMClient``
(:func:`bridge_class`) whose ``complete`` runs in the release's worker thread: it hands the
call to the event loop (endpoint per role, retries, cache, limits, token and cost
accounting) and waits for it, polling for a cancelled dialogue. Every call is recorded in the
dialogue's calls, a failed one too, whatever it raised; the first failure is kept as the
dialogue's (the dialogue ends as an error naming it, even if the release's loop went on).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from empathos.errors import ModelCallError
from empathos.llm import CallRecord, Message, ModelClient, RawReply, ToolDef, record_of
from empathos.llm.client import SAMPLING_KEYS
from empathos.llm.structured import OutputInvalid, parse_json
from empathos.records.model import ModelCallRecord
from empathos.run.protocols.release_package import PROTOCOL, Release

__all__ = [
    "RELEASE_PENALTY",
    "Cancelled",
    "DialogueCalls",
    "bridge_class",
    "bridge_client",
    "failure_text",
]

#: The release's own client sends these on every call; a role's config may override them.
RELEASE_PENALTY = 0.7
_MESSAGE_ROLES = {"system", "user", "assistant", "tool"}
_POLL_S = 0.2  # how often a waiting call looks at the dialogue's cancel flag


class Cancelled(BaseException):
    """Raised inside the release's thread when its dialogue was cancelled (Ctrl-C).

    A BaseException, so a release that catches ``Exception`` around a call still stops."""


def _message(m: Any) -> Message:
    role = m.get("role") if isinstance(m, Mapping) else getattr(m, "role", None)
    content = m.get("content") if isinstance(m, Mapping) else getattr(m, "content", None)
    role = str(role) if str(role) in _MESSAGE_ROLES else "system"
    return Message(role=role, content="" if content is None else str(content))


def _tool_def(tool: Any) -> ToolDef:
    spec = tool.get("function", tool) if isinstance(tool, Mapping) else tool
    if not isinstance(spec, Mapping) or "name" not in spec:
        raise ValueError(f"a tool must be an OpenAI function spec, got {tool!r:.80}")
    params = spec.get("parameters") or {"type": "object", "properties": {}}
    return ToolDef(name=str(spec["name"]), description=str(spec.get("description") or ""),
                   parameters=dict(params))  # fmt: skip


def _accept_json(reply: RawReply) -> tuple[RawReply, bool]:
    """JSON mode: the text must be one JSON object (repaired when it can be)."""
    value, repaired = parse_json(reply.content or "")
    if not isinstance(value, dict):
        raise OutputInvalid("the reply is not a JSON object", reply.content or "")
    if repaired:
        reply = reply.model_copy(update={"content": json.dumps(value, ensure_ascii=False)})
    return reply, repaired


def _accept_tools(reply: RawReply) -> tuple[RawReply, bool]:
    """Tools offered: each call's arguments must be a JSON object; text alone is allowed."""
    if not reply.tool_calls:
        if reply.content is None or not reply.content.strip():
            raise OutputInvalid("the reply holds neither text nor a tool call", "")
        return reply, False
    fixed, any_repaired = [], False
    for call in reply.tool_calls:
        value, repaired = parse_json(call.arguments or "{}")
        if not isinstance(value, dict):
            raise OutputInvalid(f"the arguments of {call.name} are not a JSON object", "")
        any_repaired |= repaired
        fixed.append(call.model_copy(update={"arguments": json.dumps(value, ensure_ascii=False)}))
    return reply.model_copy(update={"tool_calls": fixed}), any_repaired


def failure_text(exc: BaseException, agent: str) -> str:
    """What a failed call ended with, in one line: a model error's own line, else the
    exception's class and message."""
    if isinstance(exc, ModelCallError):
        return exc.line()
    return f"the {agent}'s model call raised {type(exc).__name__}: {exc}"[:500]


@dataclass
class DialogueCalls:
    """What the bridges of one dialogue share: the loop, the calls made (failed ones too),
    the first failure, the cancel flag."""

    loop: asyncio.AbstractEventLoop
    calls: list[ModelCallRecord] = field(default_factory=list)
    failure: str | None = None
    cancelled: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, record: CallRecord, agent: str) -> None:
        """Record a call (its ``error`` set if it failed)."""
        with self.lock:
            self.calls.append(
                ModelCallRecord(
                    role=record.role,
                    model=record.model,
                    latency_s=record.latency_s,
                    prompt_tokens=record.input_tokens,
                    cached_prompt_tokens=record.cached_input_tokens,
                    completion_tokens=record.output_tokens,
                    retries=record.retries,
                    cost_usd=record.cost_usd,
                    cache_hit=record.cache_hit,
                    template_id=f"{PROTOCOL}:{agent}",
                    error=record.error,
                    metadata={
                        "kind": record.kind,
                        "backend": record.backend,
                        "attempts": record.attempts,
                        "reasks": record.reasks,
                        "repaired": record.repaired,
                        "started_at": record.started_at,
                    },
                )
            )

    def add_failed(
        self,
        record: CallRecord | None,
        client: ModelClient,
        agent: str,
        exc: Exception,
        latency_s: float,
    ) -> None:
        """Record a failed call: its own record (a model error's, or one whose reply could
        not be handed back) or, when it raised before having one, a record of its own."""
        text = failure_text(exc, agent)
        if record is None:
            started = datetime.now(UTC).timestamp() - latency_s
            record = CallRecord(
                role=client.role,
                kind="chat",
                backend=client.backend.kind,
                endpoint=client.backend.endpoint,
                model=client.config.model,
                started_at=datetime.fromtimestamp(started, UTC).isoformat(),
                latency_s=latency_s,
            )
        if record.error is None:
            record = record.model_copy(update={"error": text, "error_type": type(exc).__name__})
        self.add(record, agent)
        with self.lock:
            self.failure = self.failure or text


class _Link:
    """One agent's way into empathos: its role's model client, the dialogue it belongs to."""

    def __init__(
        self, client: ModelClient, dialogue: DialogueCalls, agent: str, release: Release
    ) -> None:
        self.client = client
        self.dialogue = dialogue
        self.agent = agent
        self.response = release.attr("empa.llm.base", "LLMResponse")
        self.tool_call = release.attr("empa.llm.base", "ToolCall")

    def overrides(
        self, temperature: float, max_tokens: int | None, extra: Mapping[str, Any]
    ) -> tuple[dict[str, float | int], list[str]]:
        """The release's sampling for this call, less what the role's config sets itself."""
        asked: dict[str, float | int] = {
            "temperature": temperature,
            "frequency_penalty": RELEASE_PENALTY,
            "presence_penalty": RELEASE_PENALTY,
        }
        if max_tokens is not None:
            asked["max_tokens"] = max_tokens
        ignored: list[str] = []
        for key, value in extra.items():
            if key in SAMPLING_KEYS and isinstance(value, int | float):
                asked[key] = value
            elif key != "tool_choice":
                ignored.append(key)
        own = self.client.config.sampling()
        return {k: v for k, v in asked.items() if k not in own}, ignored

    def complete(
        self,
        messages: Sequence[Any],
        temperature: float,
        max_tokens: int | None,
        response_format: Mapping[str, Any] | None,
        tools: Sequence[Any] | None,
        extra_params: Mapping[str, Any] | None,
    ) -> Any:
        """Called in the release's thread: run the call on the event loop, wait for it."""

        def run() -> tuple[RawReply, CallRecord]:
            extra = dict(extra_params or {})
            overrides, ignored = self.overrides(temperature, max_tokens, extra)
            if ignored:
                print(f"[empathos bridge] {self.agent}: extra_params not sent: "
                      f"{', '.join(ignored)}")  # fmt: skip
            json_mode = (response_format or {}).get("type") in ("json_object", "json_schema")
            tool_defs = [_tool_def(t) for t in tools or ()]
            choice = extra.get("tool_choice")
            tool_choice: Literal["required", "auto"] | None = (
                choice if choice in ("required", "auto") else None
            )
            accept = _accept_tools if tool_defs else (_accept_json if json_mode else None)
            call = self.client.complete(
                [_message(m) for m in messages],
                json_mode=json_mode and not tool_defs,
                tools=tool_defs,
                tool_choice=tool_choice,
                accept=accept,
                **overrides,
            )
            return self._wait(asyncio.run_coroutine_threadsafe(call, self.dialogue.loop))

        return self._recorded(run)

    def _recorded(self, run: Callable[[], tuple[RawReply, CallRecord]]) -> Any:
        """The release's response to the call ``run`` makes; whatever it raises (before the
        call, in it, or handing its reply back) is recorded in the dialogue's calls first."""
        if self.dialogue.cancelled.is_set():
            raise Cancelled
        record: CallRecord | None = None
        t0 = time.perf_counter()
        try:
            reply, record = run()
            response = self._response(reply)
        except Exception as exc:
            failed = record or record_of(exc)
            latency = time.perf_counter() - t0
            self.dialogue.add_failed(failed, self.client, self.agent, exc, latency)
            raise
        self.dialogue.add(record, self.agent)
        return response

    def _wait(
        self, future: concurrent.futures.Future[tuple[RawReply, CallRecord]]
    ) -> tuple[RawReply, CallRecord]:
        """The call's result (or what it raised, a TimeoutError included), looking at the
        dialogue's cancel flag every _POLL_S while it runs."""
        while True:
            done, _ = concurrent.futures.wait([future], timeout=_POLL_S)
            if done:
                return future.result()
            if self.dialogue.cancelled.is_set():
                future.cancel()
                raise Cancelled

    def _response(self, reply: RawReply) -> Any:
        """The release's ``LLMResponse`` of a reply."""
        calls = [self.tool_call(name=c.name, arguments=json.loads(c.arguments or "{}"))
                 for c in reply.tool_calls]  # fmt: skip
        return self.response(
            content=reply.content,
            tool_calls=calls,
            finish_reason=reply.finish_reason or ("tool_calls" if calls else "stop"),
            raw=reply.model_dump(),
        )


def bridge_class(release: Release) -> type:
    """A subclass of the release's ``LLMClient`` whose calls go to one agent's link."""
    base: type = release.attr("empa.llm.base", "LLMClient")

    class EmpathosBridge(base):  # type: ignore[misc]
        """The release's LLMClient, answered by empathos's model client of one role."""

        def __init__(self, link: _Link) -> None:
            self._link = link

        @property
        def name(self) -> str:
            return self._link.client.config.model

        def complete(
            self,
            messages: Sequence[Any],
            *,
            temperature: float = 0.7,
            max_tokens: int | None = None,
            response_format: Mapping[str, Any] | None = None,
            tools: Sequence[Any] | None = None,
            extra_params: Mapping[str, Any] | None = None,
        ) -> Any:
            return self._link.complete(
                messages, temperature, max_tokens, response_format, tools, extra_params
            )

    return EmpathosBridge


def bridge_client(
    release: Release, client: ModelClient, agent: str, calls: DialogueCalls | None = None
) -> Any:
    """An instance of the release's ``LLMClient`` answered by ``client``, recording its calls
    in ``calls`` (a dialogue's; default: its own). For use from a thread other than the
    event loop's (the loop of ``calls``, default the running one), as the release's agents
    do."""
    shared = calls if calls is not None else DialogueCalls(loop=asyncio.get_running_loop())
    return bridge_class(release)(_Link(client, shared, agent, release))
