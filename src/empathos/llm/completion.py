"""A chat.completion reply body (OpenAI's shape, as every compatible server writes it) read
into our :class:`~empathos.llm.types.RawReply`, usage and prefix-cache hits included."""

from __future__ import annotations

from typing import Any

from empathos.llm.retry import BackendError
from empathos.llm.types import RawReply, RawToolCall

__all__ = ["cached_tokens", "parse_completion"]


def cached_tokens(usage: Any) -> int:
    """Prompt tokens served from the server's prefix cache, as its usage reports them:
    ``prompt_tokens_details.cached_tokens`` (OpenAI, vLLM, SGLang, Gemini and Anthropic's
    OpenAI-compatible APIs), ``prompt_cache_hit_tokens`` (DeepSeek) or
    ``cache_read_input_tokens`` (Anthropic's own usage shape); 0 when none is reported."""
    if not isinstance(usage, dict):
        return 0
    details = usage.get("prompt_tokens_details")
    found = details.get("cached_tokens") if isinstance(details, dict) else None
    for key in ("prompt_cache_hit_tokens", "cache_read_input_tokens"):
        if found is None:
            found = usage.get(key)
    try:
        return max(0, int(found or 0))
    except (TypeError, ValueError):
        return 0


def parse_completion(body: Any) -> RawReply:
    """The RawReply of a chat.completion JSON body; a body of another shape is transient."""
    try:
        choice = body["choices"][0]
        message = choice["message"]
        calls = [
            RawToolCall(
                id=str(c.get("id") or f"call_{i}"),
                name=str(c["function"].get("name")),
                arguments=str(c["function"].get("arguments") or ""),
            )
            for i, c in enumerate(message.get("tool_calls") or [])
        ]
        usage = body.get("usage") or {}
        return RawReply(
            content=message.get("content"),
            tool_calls=calls,
            input_tokens=int(usage.get("prompt_tokens") or 0),
            output_tokens=int(usage.get("completion_tokens") or 0),
            cached_tokens=cached_tokens(usage),
            finish_reason=choice.get("finish_reason"),
        )
    except (AttributeError, IndexError, KeyError, TypeError, ValueError) as exc:
        raise BackendError("transient", f"malformed completion ({type(exc).__name__})") from None
