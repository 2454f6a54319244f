"""The OpenAI-compatible HTTP backend (vLLM, SGLang, Ollama, llama.cpp, OpenRouter, OpenAI).

Built on the ``openai`` SDK's ``AsyncOpenAI`` with its own retries off (``max_retries=0``):
every failure is classified by :mod:`empathos.llm.retry` and retried there. With
``structured.json_schema="auto"`` a server that rejects ``response_format=json_schema``
(HTTP 400) is asked again at once with JSON mode, then with the plain instruction, and the
backend remembers what the endpoint accepts.
"""

from __future__ import annotations

from typing import Any

import openai

from empathos.llm.config import EndpointConfig, redact_url
from empathos.llm.retry import BackendError, classify_openai_error
from empathos.llm.types import ChatRequest, RawReply, RawToolCall

__all__ = ["OpenAIBackend"]

_NO_KEY = "EMPTY"  # local servers need some bearer token; this one is not a secret


def _schema_name(name: str | None) -> str:
    cleaned = "".join(ch if ch.isalnum() or ch in "_-" else "_" for ch in name or "")
    return cleaned[:64] or "response"


class OpenAIBackend:
    """One endpoint's HTTP client."""

    kind = "openai"

    def __init__(self, config: EndpointConfig, api_key: str | None) -> None:
        assert config.base_url is not None
        self.endpoint: str | None = redact_url(config.base_url)  # records never hold credentials
        self._secret = api_key
        # The SDK's own Limits type (httpx or httpx2, depending on the SDK version).
        limits = type(openai.DEFAULT_CONNECTION_LIMITS)(
            max_connections=config.max_concurrency,
            max_keepalive_connections=config.max_concurrency,
        )
        self.client = openai.AsyncOpenAI(
            base_url=config.base_url,
            api_key=api_key or _NO_KEY,
            max_retries=0,
            timeout=config.timeout_s,
            http_client=openai.DefaultAsyncHttpxClient(limits=limits, timeout=config.timeout_s),
        )
        mode = config.structured.json_schema
        # What the endpoint accepts for structured output, best first; "auto" may fall back.
        self._formats: list[str] = (
            ["json_schema"] if mode == "on" else (["json_schema"] if mode == "auto" else [])
        )
        if mode != "on":
            if config.structured.json_mode:
                self._formats.append("json_object")
            self._formats.append("none")
        self._adaptive = mode == "auto"
        self._tool_choice_ok = True  # False once the endpoint rejected tool_choice

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self.client.close()

    def _redact(self, text: str) -> str:
        return text.replace(self._secret, "***") if self._secret else text

    def _kwargs(self, request: ChatRequest, fmt: str) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": request.model,
            "messages": [m.model_dump() for m in request.messages],
            **request.params,
        }
        if request.tools:
            kwargs["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.parameters,
                    },
                }
                for t in request.tools
            ]
            if request.tool_choice and self._tool_choice_ok:
                kwargs["tool_choice"] = request.tool_choice
        elif request.response_schema is not None and fmt == "json_schema":
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": _schema_name(request.schema_name),
                    "schema": request.response_schema,
                },
            }
        elif (request.response_schema is not None or request.json_mode) and fmt == "json_object":
            kwargs["response_format"] = {"type": "json_object"}
        return kwargs

    def _structured(self, request: ChatRequest) -> bool:
        return not request.tools and (request.response_schema is not None or request.json_mode)

    def _downgrade(self, request: ChatRequest, err: BackendError) -> bool:
        """After a 400/422, drop what the endpoint may not support; True: ask again."""
        if err.status not in (400, 422):
            return False
        if request.tools and request.tool_choice and self._tool_choice_ok:
            self._tool_choice_ok = False  # e.g. servers without tool_choice="required"
            return True
        if self._adaptive and self._structured(request) and len(self._formats) > 1:
            self._formats.pop(0)
            return True
        return False

    async def complete(self, request: ChatRequest) -> RawReply:
        """One HTTP attempt; on HTTP 400/422 falls back (schema -> JSON mode -> prompt; no
        tool_choice) once per feature and remembers it."""
        while True:
            fmt = self._formats[0] if self._formats else "none"
            try:
                response = await self.client.chat.completions.create(**self._kwargs(request, fmt))
            except (openai.OpenAIError, OSError, ValueError) as exc:
                err = classify_openai_error(exc)
                err.message = self._redact(err.message)
                if self._downgrade(request, err):
                    continue
                raise err from None
            return self._reply(response)

    def _reply(self, response: Any) -> RawReply:
        try:
            message = response.choices[0].message
            calls = [
                RawToolCall(
                    id=str(c.id or f"call_{i}"),
                    name=str(c.function.name),
                    arguments=str(c.function.arguments or ""),
                )
                for i, c in enumerate(message.tool_calls or [])
            ]
            usage = response.usage
            return RawReply(
                content=message.content,
                tool_calls=calls,
                input_tokens=int(usage.prompt_tokens or 0) if usage else 0,
                output_tokens=int(usage.completion_tokens or 0) if usage else 0,
                finish_reason=response.choices[0].finish_reason,
            )
        except (AttributeError, IndexError, TypeError, ValueError) as exc:
            raise BackendError(
                "transient", f"malformed completion ({type(exc).__name__})"
            ) from None
