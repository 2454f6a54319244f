"""Inspect's ``Model`` as a backend of our model client: one request, one ``Model.generate``.

A role's :class:`~empathos.llm.ModelClient` runs over an :class:`InspectBackend`, so the
sandbox's agents call the same ``chat`` / ``structured`` / ``tool_call`` as in ``empathos
run``: our client still validates structured output (repair, re-asks), checks tool calls
and writes a :class:`~empathos.llm.CallRecord` per call; Inspect only answers requests.

Retries are Inspect's: the client makes one attempt per request. A call that still fails
after Inspect's own retries (``--max-retries``, ``--timeout``: the provider's exception, or
Inspect's ``ModelGenerateError``) reaches our client as a failed attempt
(:class:`~empathos.llm.retry.BackendError`), as a failed HTTP call does in ``empathos run``:
the sandbox's agents then handle it as ``run`` does (a judge's failed call is an unscored
evaluation and the dialogue goes on, until ``judge_failures_limit`` ends it as ``error``; a
failed user or model-under-test call ends it as ``error``). A dialogue that ends as ``error``
is an error of its sample (:mod:`.solver`), which Inspect retries (``--retry-on-error``) or
counts (``--fail-on-error``). Inspect's limits (``LimitExceededError``), a refusal under
``fail_on_refusal`` and cancellation are not caught: they end the sample at once.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
    Model,
    ModelOutput,
    ModelRefusalError,
    ResponseSchema,
)
from inspect_ai.tool import ToolInfo, ToolParams
from inspect_ai.util import JSONSchema, LimitExceededError
from tenacity import RetryError

from empathos.llm import EndpointConfig, ModelClient, RetryConfig, redact_url
from empathos.llm.retry import BackendError
from empathos.llm.types import ChatRequest, Message, RawReply, RawToolCall, ToolDef

__all__ = [
    "InspectBackend",
    "failed_call",
    "inline_refs",
    "inspect_messages",
    "raw_reply",
    "role_client",
    "tool_infos",
]

# Inspect's stop reasons as the OpenAI finish_reason our records keep.
_FINISH = {
    "stop": "stop",
    "max_tokens": "length",
    "model_length": "length",
    "tool_calls": "tool_calls",
    "content_filter": "content_filter",
}
_SAMPLING = ("temperature", "top_p", "max_tokens", "seed", "presence_penalty", "frequency_penalty")


def inspect_messages(messages: Sequence[Message]) -> list[ChatMessage]:
    """Our messages as Inspect's chat messages (same roles, same text)."""
    out: list[ChatMessage] = []
    for m in messages:
        if m.role == "system":
            out.append(ChatMessageSystem(content=m.content))
        elif m.role == "user":
            out.append(ChatMessageUser(content=m.content))
        elif m.role == "assistant":
            out.append(ChatMessageAssistant(content=m.content))
        else:
            out.append(ChatMessageTool(content=m.content))
    return out


def inline_refs(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A JSON schema with every local ``$ref`` (``#/$defs/...``) replaced by its definition,
    as Inspect's :class:`JSONSchema` has no references. A recursive schema is refused."""
    defs: Mapping[str, Any] = schema.get("$defs", {})

    def walk(node: Any, seen: frozenset[str]) -> Any:
        if isinstance(node, list):
            return [walk(x, seen) for x in node]
        if not isinstance(node, dict):
            return node
        out = {k: walk(v, seen) for k, v in node.items() if k not in ("$ref", "$defs")}
        ref = node.get("$ref")
        if isinstance(ref, str):
            name = ref.removeprefix("#/$defs/")
            if name in seen or name not in defs:
                raise ValueError(f"cannot inline the JSON schema reference {ref!r}")
            out = {**walk(defs[name], seen | {name}), **out}
        return out

    inlined: dict[str, Any] = walk(schema, frozenset())
    return inlined


def tool_infos(tools: Sequence[ToolDef]) -> list[ToolInfo]:
    """Our tools (name, description, JSON schema of the arguments) as Inspect's."""
    infos = []
    for tool in tools:
        params = JSONSchema.model_validate(inline_refs(tool.parameters))
        infos.append(
            ToolInfo(
                name=tool.name,
                description=tool.description,
                parameters=ToolParams(
                    properties=params.properties or {},
                    required=params.required or [],
                    additionalProperties=False,
                ),
            )
        )
    return infos


def _config(request: ChatRequest) -> GenerateConfig:
    """The request's sampling parameters, stop sequences and output schema; what is left
    out comes from the Inspect model's own config (``--model-role``, ``--temperature``...)."""
    fields: dict[str, Any] = {k: request.params[k] for k in _SAMPLING if k in request.params}
    if request.stop:
        fields["stop_seqs"] = list(request.stop)
    if request.response_schema is not None:
        fields["response_schema"] = ResponseSchema(
            name=request.schema_name or "response",
            json_schema=JSONSchema.model_validate(inline_refs(request.response_schema)),
        )
    return GenerateConfig(**fields)


def raw_reply(output: ModelOutput) -> RawReply:
    """Inspect's output as our backend reply. A reply without text is ``None`` content
    (Inspect does not tell an empty text from a missing one)."""
    if not output.choices:  # nothing generated (e.g. an error Inspect reports as output)
        return RawReply(content=None, finish_reason=None)
    message = output.message
    calls = [
        RawToolCall(
            id=call.id,
            name=call.function,
            # a call whose arguments did not parse reaches our validation as bad JSON (re-ask)
            arguments="" if call.parse_error else json.dumps(call.arguments, ensure_ascii=False),
        )
        for call in message.tool_calls or []
    ]
    usage = output.usage
    prompt = cached = 0
    if usage is not None:
        cached = usage.input_tokens_cache_read or 0
        prompt = usage.input_tokens + cached + (usage.input_tokens_cache_write or 0)
    return RawReply(
        content=message.text or None,
        tool_calls=calls,
        input_tokens=prompt,
        cached_tokens=cached,
        output_tokens=usage.output_tokens if usage is not None else 0,
        finish_reason=_FINISH.get(output.choices[0].stop_reason),
    )


def failed_call(exc: Exception) -> BackendError:
    """An Inspect model's failure (after Inspect's retries) as a failed attempt of our client,
    in one line: the provider's message (``ModelGenerateError`` also carries the whole request,
    left out), after the exception's type; Inspect's retries give up with tenacity's
    ``RetryError``, named here by the failure of its last attempt."""
    if isinstance(exc, RetryError):
        last = exc.last_attempt.exception() if exc.last_attempt.failed else None
        exc = last if isinstance(last, Exception) else exc
    said = getattr(exc, "provider_message", None)  # Inspect's ModelGenerateError
    text = " ".join(str(said or exc).split()) or "no message"
    return BackendError("fatal", f"{type(exc).__name__}: {text[:300]} (after Inspect's retries)")


class InspectBackend:
    """A :class:`~empathos.llm.Backend` that answers through an Inspect ``Model``.

    It keeps the last request and output it saw: for the model under test, that is the
    sample's transcript (every turn, as the model saw it) and its final output."""

    kind = "inspect"

    def __init__(self, model: Model) -> None:
        self.model = model
        self.endpoint = redact_url(model.api.base_url)
        self.last_input: list[ChatMessage] = []
        self.last_output: ModelOutput | None = None

    async def complete(self, request: ChatRequest) -> RawReply:
        """One ``Model.generate``; a failed call is a :class:`BackendError` (see the module's
        doc)."""
        messages = inspect_messages(request.messages)
        tools, config = tool_infos(request.tools), _config(request)
        choice: Literal["any", "auto"] | None = None
        if request.tools:
            choice = "any" if request.tool_choice == "required" else "auto"
        try:
            output = await self.model.generate(
                messages, tools=tools, tool_choice=choice, config=config
            )
        except (LimitExceededError, ModelRefusalError):
            raise
        except Exception as exc:  # the provider's or Inspect's failure of this call
            raise failed_call(exc) from exc
        self.last_input, self.last_output = messages, output
        return raw_reply(output)


def role_client(model: Model, role: str) -> ModelClient:
    """Our model client for ``role`` over an Inspect model: one attempt per request (Inspect
    retries), no limit of ours (Inspect's ``--max-connections`` applies), full prompts."""
    name = str(model)
    config = EndpointConfig(
        # 'scripted' only means "no endpoint of ours": the backend is the Inspect model, and
        # every setting that matters is given here.
        kind="scripted",
        model=name,
        name=f"inspect:{role}:{name}",
        prompt_style="full",
        max_concurrency=4096,
        retry=RetryConfig(max_attempts=1),
    )
    return ModelClient(InspectBackend(model), config, role)
