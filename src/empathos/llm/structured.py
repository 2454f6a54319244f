"""Structured output: instructions for the model, then parse, repair, validate, re-ask.

The flow for one structured call (driven by :mod:`empathos.llm.client`): ask with the JSON
schema (or JSON mode, or only the instruction below), parse the reply, repair malformed JSON
with ``json_repair``, validate with pydantic, and on failure re-ask with the validation error,
up to ``max_reasks`` times. The caller gets a validated instance or a ``ModelOutputError``;
never a made-up default.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, TypeVar

import json_repair
from pydantic import BaseModel, ValidationError

from empathos.llm.types import Message, RawReply, ToolCall, ToolDef, ToolSpec

__all__ = [
    "OutputInvalid",
    "parse_json",
    "reask_messages",
    "schema_instruction",
    "tools_instruction",
    "validate_structured",
    "validate_tool_call",
    "with_instruction",
]

T = TypeVar("T", bound=BaseModel)
_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


class OutputInvalid(Exception):
    """A reply that did not parse or validate; ``reason`` is shown to the model on re-ask."""

    def __init__(self, reason: str, raw: str) -> None:
        self.reason = reason
        self.raw = raw
        super().__init__(reason)


def schema_instruction(schema: dict[str, Any], *, with_schema: bool = True) -> str:
    """The instruction that asks for one JSON object following ``schema``.

    ``with_schema=False``: the sentence alone, for compact prompts that show the shape
    themselves (the JSON schema of a judge form is about 900 tokens)."""
    if not with_schema:
        return "Reply with one JSON object and nothing else."
    return (
        "Reply with one JSON object and nothing else. It must follow this JSON schema:\n"
        + json.dumps(schema, ensure_ascii=False)
    )


def tools_instruction(tools: Sequence[ToolDef], *, schemas: bool = True) -> str:
    """The instruction that asks for exactly one tool call as a JSON object (``schemas=False``:
    each tool's name and description only)."""
    lines = [
        "Call exactly one of these tools. Reply with one JSON object and nothing else: "
        '{"name": <tool name>, "arguments": <object following the tool\'s schema>}.',
    ]
    for tool in tools:
        schema = json.dumps(tool.parameters, ensure_ascii=False)
        lines.append(
            f"- {tool.name}"
            + (f": {tool.description}" if tool.description else "")
            + (f" arguments schema: {schema}" if schemas else "")
        )
    return "\n".join(lines)


def with_instruction(messages: Sequence[Message], instruction: str) -> list[Message]:
    """Append ``instruction`` to the system message (adding one when there is none)."""
    out = list(messages)
    if out and out[0].role == "system":
        out[0] = Message(role="system", content=f"{out[0].content}\n\n{instruction}")
    else:
        out.insert(0, Message(role="system", content=instruction))
    return out


def parse_json(text: str) -> tuple[Any, bool]:
    """Parse JSON text; fall back to ``json_repair``. Returns (value, repaired)."""
    match = _FENCE.match(text)
    body = match.group(1) if match else text.strip()
    try:
        return json.loads(body), False
    except ValueError:
        pass
    try:
        value = json_repair.repair_json(body, return_objects=True)
    except Exception as exc:  # json_repair has no documented exception type
        raise OutputInvalid(f"the reply is not JSON ({type(exc).__name__})", text) from exc
    if value in ("", None) or not isinstance(value, dict | list):
        raise OutputInvalid("the reply is not a JSON object", text)
    return value, True


def _validation_reason(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        where = ".".join(str(x) for x in err["loc"]) or "(root)"
        parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)


def validate_structured(text: str | None, schema: type[T]) -> tuple[T, bool]:
    """Parse and validate a reply against ``schema``; raises :class:`OutputInvalid`."""
    if not text or not text.strip():
        raise OutputInvalid("the reply is empty", text or "")
    value, repaired = parse_json(text)
    try:
        return schema.model_validate(value), repaired
    except ValidationError as exc:
        reason = f"the JSON does not follow the schema: {_validation_reason(exc)}"
        raise OutputInvalid(reason, text) from None


def _from_content(reply: RawReply) -> tuple[str, str]:
    """A tool call written as text: {"name": ..., "arguments": {...}} (small models do this)."""
    value, _ = parse_json(reply.content or "")
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        raise OutputInvalid('no tool call, and the text is not {"name", "arguments"}', "")
    return value["name"], json.dumps(value.get("arguments", {}), ensure_ascii=False)


def validate_tool_call(reply: RawReply, tools: Sequence[ToolSpec]) -> tuple[ToolCall, bool]:
    """The first tool call of ``reply`` with validated arguments; raises OutputInvalid."""
    by_name = {t.name: t for t in tools}
    if reply.tool_calls:
        first = reply.tool_calls[0]
        call_id, name, raw_args = first.id, first.name, first.arguments
    elif reply.content and reply.content.strip():
        call_id = "call_0"
        name, raw_args = _from_content(reply)
    else:
        raise OutputInvalid("the reply holds no tool call", reply.content or "")
    if name not in by_name:
        raise OutputInvalid(f"unknown tool {name!r}; the tools are: {', '.join(by_name)}", raw_args)
    args, repaired = validate_structured(raw_args or "{}", by_name[name].arguments)
    return ToolCall(id=call_id, name=name, arguments=args, raw_arguments=raw_args), repaired


def reask_messages(messages: Sequence[Message], bad: str, reason: str) -> list[Message]:
    """The conversation plus the invalid reply and a request to answer again, correctly."""
    return [
        *messages,
        Message(role="assistant", content=bad or "(empty)"),
        Message(
            role="user",
            content=f"That reply was invalid: {reason}. Answer again with only the valid JSON.",
        ),
    ]
