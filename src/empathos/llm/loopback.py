"""A deterministic loopback OpenAI-compatible server with a simulated prefix cache.

For tests of the cost accounting and for the prompt-cost benchmark
(``benchmarks/bench_prompts.py``): :class:`CachingServer` answers ``POST .../chat/completions``
from its own thread with a fixed line per model (free text), the first valid instance of the
request's JSON schema (structured output) or one tool call (tools), and reports ``usage`` the
way a server with a prefix cache does, ``prompt_tokens_details.cached_tokens`` included.

What it counts: every request body's bytes as they arrived. A request's cached part is its
longest common prefix, in bytes of the body as sent, with the previous request of the same
model (one model per role in the benchmark); empathos's client sends the messages last, after
the tools, the response schema and the sampling parameters, which a prefix cache (vLLM,
SGLang, OpenAI) also puts before the messages. Tokens are bytes / 4, rounded down for the
cached part and up for the whole. Only for plain HTTP/1.1 on loopback.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from empathos.llm.offline.constrained import FirstChoiceDecoder, build_json, build_tool_call
from empathos.llm.testing import LoopbackServer, completion_body, read_request

__all__ = ["BYTES_PER_TOKEN", "CachingServer", "Exchange", "ToolChooser", "common_prefix"]

BYTES_PER_TOKEN = 4
#: Chooses the director's tool call: (the request's tools, how many tool requests the model
#: got before) -> (tool name, arguments as JSON text).
ToolChooser = Callable[[list[dict[str, Any]], int], tuple[str, str]]


def common_prefix(a: bytes, b: bytes) -> int:
    """The length of the longest common prefix of two byte strings."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n  # a[:lo] == b[:lo], a[:hi] != b[:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid
    return lo


@dataclass(frozen=True)
class Exchange:
    """One request as the server saw it."""

    model: str
    body_bytes: int
    cached_bytes: int
    body: dict[str, Any]


def _first_tool(tools: list[dict[str, Any]], _: int) -> tuple[str, str]:
    pairs = [(t["function"]["name"], t["function"]["parameters"]) for t in tools]
    return build_tool_call(pairs, FirstChoiceDecoder())


class CachingServer(LoopbackServer):
    """The server; a context manager that starts and stops its thread.

    ``lines`` maps a model id to its free-text answer (``default_line`` for the others);
    ``forms`` maps a response schema's name (``json_schema.name``) to a fixed answer, JSON
    text (the other schemas get their first valid instance, free strings ``text``); ``tool``
    chooses tool calls (default: the first tool, first allowed values)."""

    def __init__(
        self,
        lines: Mapping[str, str] | None = None,
        *,
        default_line: str = "ok",
        tool: ToolChooser | None = None,
        text: str = "ok",
        forms: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__("caching-server")
        self.lines = dict(lines or {})
        self.forms = dict(forms or {})
        self.default_line = default_line
        self.tool = tool or _first_tool
        self.text = text  # the free strings of a structured answer
        self.exchanges: list[Exchange] = []
        self._last: dict[str, bytes] = {}
        self._tool_calls: dict[str, int] = {}
        self._lock = threading.Lock()

    def reset(self) -> None:
        """Forget the exchanges and the cache (between measured dialogues)."""
        with self._lock:
            self.exchanges.clear()
            self._last.clear()
            self._tool_calls.clear()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                _, _, raw = await read_request(reader)
                data = orjson.dumps(self.answer(raw))
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                    b"content-length: %d\r\n\r\n%b" % (len(data), data)
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            pass
        finally:
            writer.close()

    def answer(self, raw: bytes) -> dict[str, Any]:
        """The completion for one request body (and the exchange recorded)."""
        body = json.loads(raw)
        model = str(body.get("model", ""))
        with self._lock:
            cached = common_prefix(self._last.get(model, b""), raw)
            self._last[model] = raw
            self.exchanges.append(Exchange(model, len(raw), cached, body))
            calls = self._tool_calls.get(model, 0)
            if body.get("tools"):
                self._tool_calls[model] = calls + 1
        fmt = body.get("response_format") or {}
        tool: tuple[str, str] | None = None
        if body.get("tools"):
            tool = self.tool(body["tools"], calls)
            content, out = None, tool[1]
        elif fmt.get("type") == "json_schema":
            spec = fmt["json_schema"]
            out = self.forms.get(str(spec.get("name", "")), "")
            out = out or build_json(spec["schema"], FirstChoiceDecoder(self.text))
            content = out
        else:
            out = self.lines.get(model, self.default_line)
            content = out
        prompt_tokens = -(-len(raw) // BYTES_PER_TOKEN)
        completion_tokens = -(-len(out.encode()) // BYTES_PER_TOKEN)
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": cached // BYTES_PER_TOKEN},
        }
        return {**completion_body(content, tool, model), "id": "chatcmpl-loopback", "usage": usage}
