"""Sampling of free text on the offline model: anti-repetition defaults and echo detection.

A 135M model decoded greedily loops one sentence, and given a long prompt it copies the
prompt back. Plain chats therefore run with a repetition penalty and n-gram blocking unless
the role's endpoint config says otherwise (``repetition_penalty``, ``no_repeat_ngram``;
both go through transformers' ``generate``, whose processors look at the prompt and the
reply together, so they also keep the reply off the prompt's own phrases). A reply that
still copies a span of :data:`ECHO_SPAN` tokens of its messages is sampled once more; if that
one copies too, it is kept and flagged ``echo``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from empathos.llm.types import Message

__all__ = [
    "DEFAULT_NO_REPEAT_NGRAM",
    "DEFAULT_REPETITION_PENALTY",
    "ECHO_SPAN",
    "RESAMPLE_TEMPERATURE",
    "batch_key",
    "copied_span",
    "echo_tokens",
    "generate_kwargs",
    "message_tokens",
    "resample_kwargs",
    "trim_to_sentence",
]

DEFAULT_REPETITION_PENALTY = 1.15
DEFAULT_NO_REPEAT_NGRAM = 3
ECHO_SPAN = 8
RESAMPLE_TEMPERATURE = 0.8
_SENTENCE_END = re.compile(r"[.!?。！？…](?:[\"'”’)）]*)(?=\s|$)|[。！？]")


def _penalty(params: Mapping[str, float | int]) -> float:
    return float(params.get("repetition_penalty", DEFAULT_REPETITION_PENALTY))


def _ngram(params: Mapping[str, float | int]) -> int:
    return int(params.get("no_repeat_ngram", DEFAULT_NO_REPEAT_NGRAM))


def batch_key(params: Mapping[str, float | int]) -> tuple[float, float, float, int]:
    """Plain chats with equal keys can share one ``generate`` call."""
    return (
        float(params.get("temperature", 0.0)),
        float(params.get("top_p", 1.0)),
        _penalty(params),
        _ngram(params),
    )


def generate_kwargs(params: Mapping[str, float | int]) -> dict[str, Any]:
    """``generate`` settings of a plain chat: greedy unless a temperature is set, with the
    repetition penalty and n-gram blocking (the defaults unless the request sets them)."""
    temperature = float(params.get("temperature", 0.0))
    kwargs: dict[str, Any] = {"do_sample": temperature > 0}
    if temperature > 0:
        kwargs["temperature"] = temperature
        kwargs["top_p"] = float(params.get("top_p", 1.0))
    if _penalty(params) != 1.0:
        kwargs["repetition_penalty"] = _penalty(params)
    if _ngram(params) > 0:
        kwargs["no_repeat_ngram_size"] = _ngram(params)
    return kwargs


def resample_kwargs(params: Mapping[str, float | int]) -> dict[str, Any]:
    """The settings of the second try after an echo: sampled (at least
    :data:`RESAMPLE_TEMPERATURE`), other settings unchanged."""
    kwargs = generate_kwargs(params)
    kwargs["do_sample"] = True
    kwargs["temperature"] = max(float(params.get("temperature", 0.0)), RESAMPLE_TEMPERATURE)
    kwargs["top_p"] = float(params.get("top_p", 1.0))
    return kwargs


def copied_span(
    reply: Sequence[int], sources: Sequence[Sequence[int]], span: int = ECHO_SPAN
) -> tuple[int, ...] | None:
    """The first run of ``span`` tokens of ``reply`` that also occurs in one of ``sources``
    (each message's tokens), or None. Pure."""
    if len(reply) < span:
        return None
    seen: set[tuple[int, ...]] = set()
    for source in sources:
        seen.update(tuple(source[i : i + span]) for i in range(len(source) - span + 1))
    for i in range(len(reply) - span + 1):
        window = tuple(reply[i : i + span])
        if window in seen:
            return window
    return None


def echo_tokens(tokenizer: Any, text: str) -> list[int]:
    """``text`` as tokens for echo detection: lower-cased, with a leading space, so that a
    copied phrase matches whatever its case and its place in the sentence."""
    return list(tokenizer.encode(" " + text.lower(), add_special_tokens=False))


def message_tokens(tokenizer: Any, messages: Sequence[Message]) -> list[list[int]]:
    """Each message's content as echo tokens (no chat template), the sources of an echo."""
    return [echo_tokens(tokenizer, m.content) for m in messages]


def trim_to_sentence(text: str) -> str:
    """``text`` cut after its last complete sentence (for a reply stopped by the token cap);
    unchanged when it holds no sentence end or the cut would drop more than half of it."""
    ends = [m.end() for m in _SENTENCE_END.finditer(text)]
    if not ends or ends[-1] < len(text) // 2:
        return text
    return text[: ends[-1]].rstrip()
