"""Build a JSON value field by field from a JSON schema, so it is valid by construction.

The walker below visits the schema in property order and asks a :class:`Decoder` for each
piece: categorical values (enums, literals, booleans, small integer ranges) are *chosen* among
the allowed options (the offline model ranks them by likelihood), free-text strings and
numbers are *generated* under a token cap and clamped to their bounds, and the punctuation
between them is *emitted*. Any decoder therefore yields JSON that parses and follows the
schema's types, enums and bounds. Not enforced: string ``pattern``/``format``, ``uniqueItems``.
"""

from __future__ import annotations

import json
from typing import Any, Protocol

__all__ = ["Decoder", "FirstChoiceDecoder", "build_json", "build_tool_call"]

_MAX_CHOICES = 32  # an integer range up to this size is chosen among, not generated
_DEFAULT_ARRAY_ITEMS = 1
_DEFAULT_STRING_TOKENS = 48


class Decoder(Protocol):
    """The four moves a constrained generator makes."""

    def emit(self, text: str) -> None:
        """Append fixed text (punctuation, keys)."""
        ...

    def choose(self, options: list[str]) -> int:
        """Pick one of ``options`` (JSON texts), append it, return its index."""
        ...

    def free_string(self, max_tokens: int) -> str:
        """Generate a string, append it as a JSON string literal and return the literal."""
        ...

    def number(self, low: float | None, high: float | None, integer: bool) -> str:
        """Generate a number within [low, high], append it and return its JSON text."""
        ...


class FirstChoiceDecoder:
    """A model-free decoder: the first option, a fixed string, the smallest number.

    Used by the scripted backend to answer any schema without a rule."""

    def __init__(self, text: str = "scripted") -> None:
        self.text = text

    def emit(self, text: str) -> None:
        """Nothing to do: the walker keeps the text."""

    def choose(self, options: list[str]) -> int:
        """Always the first option."""
        return 0

    def free_string(self, max_tokens: int) -> str:
        """The fixed text."""
        return json.dumps(self.text, ensure_ascii=False)

    def number(self, low: float | None, high: float | None, integer: bool) -> str:
        """The lower bound, or 0 clamped to the bounds."""
        value = low if low is not None else (min(0.0, high) if high is not None else 0.0)
        return str(int(value)) if integer else json.dumps(float(value))


class _Walker:
    def __init__(self, root: dict[str, Any], decoder: Decoder) -> None:
        self.defs: dict[str, Any] = {**root.get("$defs", {}), **root.get("definitions", {})}
        self.d = decoder

    def emit(self, text: str) -> str:
        self.d.emit(text)
        return text

    def resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        seen = 0
        while "$ref" in schema and seen < 32:
            name = str(schema["$ref"]).rsplit("/", 1)[-1]
            schema = {**self.defs.get(name, {}), **{k: v for k, v in schema.items() if k != "$ref"}}
            seen += 1
        return schema

    def value(self, schema: dict[str, Any]) -> str:
        schema = self.resolve(schema)
        if "const" in schema:
            return self.emit(json.dumps(schema["const"], ensure_ascii=False))
        if "enum" in schema:
            options = [json.dumps(v, ensure_ascii=False) for v in schema["enum"]]
            return options[self.d.choose(options)]
        for key in ("anyOf", "oneOf", "allOf"):
            if key in schema:
                branches = [self.resolve(b) for b in schema[key]]
                real = [b for b in branches if b.get("type") != "null"] or branches
                return self.value(real[0])
        kind = schema.get("type", "string")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "null")
        method = getattr(self, f"_{kind}", self._string)
        text: str = method(schema)
        return text

    def _object(self, schema: dict[str, Any]) -> str:
        parts = [self.emit("{")]
        for i, (name, sub) in enumerate(schema.get("properties", {}).items()):
            parts.append(self.emit(("" if i == 0 else ", ") + json.dumps(name) + ": "))
            parts.append(self.value(sub))
        parts.append(self.emit("}"))
        return "".join(parts)

    def _array(self, schema: dict[str, Any]) -> str:
        low = int(schema.get("minItems", 0))
        high = schema.get("maxItems")
        count = max(low, _DEFAULT_ARRAY_ITEMS)
        if high is not None:
            count = min(count, int(high))
        items = schema.get("items", {})
        parts = [self.emit("[")]
        for i in range(count):
            if i:
                parts.append(self.emit(", "))
            parts.append(self.value(items if isinstance(items, dict) else {}))
        parts.append(self.emit("]"))
        return "".join(parts)

    def _string(self, schema: dict[str, Any]) -> str:
        cap = _DEFAULT_STRING_TOKENS
        if "maxLength" in schema:
            cap = max(1, min(cap, int(schema["maxLength"]) // 2 + 1))
        literal = self.d.free_string(cap)
        text = json.loads(literal)
        low, high = int(schema.get("minLength", 0)), schema.get("maxLength")
        fixed = text + "." * max(0, low - len(text))
        if high is not None:
            fixed = fixed[: int(high)]
        if fixed != text:  # only the walker's copy changes; decoders see the model's literal
            literal = json.dumps(fixed, ensure_ascii=False)
        return literal

    def _bounds(self, schema: dict[str, Any], integer: bool) -> tuple[float | None, float | None]:
        low = schema.get("minimum")
        high = schema.get("maximum")
        step = 1 if integer else 1e-9
        if "exclusiveMinimum" in schema:
            low = float(schema["exclusiveMinimum"]) + step
        if "exclusiveMaximum" in schema:
            high = float(schema["exclusiveMaximum"]) - step
        return low, high

    def _integer(self, schema: dict[str, Any]) -> str:
        low, high = self._bounds(schema, integer=True)
        if low is not None and high is not None and 0 <= high - low < _MAX_CHOICES:
            options = [str(v) for v in range(int(low), int(high) + 1)]
            return options[self.d.choose(options)]
        return self.d.number(low, high, integer=True)

    def _number(self, schema: dict[str, Any]) -> str:
        low, high = self._bounds(schema, integer=False)
        return self.d.number(low, high, integer=False)

    def _boolean(self, schema: dict[str, Any]) -> str:
        options = ["true", "false"]
        return options[self.d.choose(options)]

    def _null(self, schema: dict[str, Any]) -> str:
        return self.emit("null")


def build_json(schema: dict[str, Any], decoder: Decoder) -> str:
    """The JSON text of one value following ``schema``, built through ``decoder``."""
    return _Walker(schema, decoder).value(schema)


def build_tool_call(tools: list[tuple[str, dict[str, Any]]], decoder: Decoder) -> tuple[str, str]:
    """Choose a tool by name and build its arguments: returns (name, arguments JSON)."""
    decoder.emit('{"name": ')
    names = [json.dumps(name, ensure_ascii=False) for name, _ in tools]
    index = decoder.choose(names)
    decoder.emit(', "arguments": ')
    arguments = build_json(tools[index][1], decoder)
    decoder.emit("}")
    return tools[index][0], arguments
