"""An OpenAI-compatible HTTP server over a backend (the offline model by default).

Serves ``POST /v1/chat/completions`` (messages, sampling parameters, ``response_format`` with
a JSON schema, ``tools``) and ``GET /v1/models``. With the offline backend a JSON schema or
tools turn on constrained decoding, so the reply is valid by construction.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from fastapi import FastAPI, HTTPException
from pydantic import BaseModel, ConfigDict, Field

from empathos.llm.client import Backend
from empathos.llm.retry import BackendError
from empathos.llm.types import ChatRequest, Message, RawReply, ToolDef

__all__ = ["CompletionRequest", "create_app"]

_STATUS = {"rate_limit": 429, "transient": 503, "fatal": 400}
_ROLES = {"developer": "system", "function": "tool"}


class _WireMessage(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: str = Field(description="system, developer, user, assistant or tool.")
    content: str | list[dict[str, Any]] | None = Field(None, description="Text or text parts.")

    def to_message(self) -> Message:
        content = self.content
        if isinstance(content, list):
            content = "".join(str(p.get("text", "")) for p in content if p.get("type") == "text")
        if content is None:
            extra = self.model_extra or {}
            content = str(extra.get("tool_calls", "")) if extra.get("tool_calls") else ""
        role: str = _ROLES.get(self.role) or self.role
        if role not in ("system", "user", "assistant", "tool"):
            raise HTTPException(400, f"unsupported message role {self.role!r}")
        return Message.model_validate({"role": role, "content": content})


class CompletionRequest(BaseModel):
    """The accepted subset of an OpenAI chat completion request."""

    model_config = ConfigDict(extra="ignore")

    model: str | None = Field(None, description="Model id (informational).")
    messages: list[_WireMessage] = Field(min_length=1, description="The conversation.")
    temperature: float | None = Field(None, ge=0.0, le=2.0, description="Sampling temperature.")
    top_p: float | None = Field(None, gt=0.0, le=1.0, description="Nucleus sampling mass.")
    max_tokens: int | None = Field(None, ge=1, description="Cap on generated tokens.")
    max_completion_tokens: int | None = Field(None, ge=1, description="Alias of max_tokens.")
    seed: int | None = Field(None, description="Sampling seed.")
    presence_penalty: float | None = Field(None, description="Accepted, not used offline.")
    frequency_penalty: float | None = Field(None, description="Accepted, not used offline.")
    response_format: dict[str, Any] | None = Field(None, description="text/json_object/schema.")
    tools: list[dict[str, Any]] | None = Field(None, description="Function tools.")
    tool_choice: str | dict[str, Any] | None = Field(None, description="none/auto/required/one.")
    stream: bool = Field(False, description="Streaming is not supported.")

    def to_request(self, model_id: str) -> ChatRequest:
        """The backend request."""
        if self.stream:
            raise HTTPException(400, "stream=true is not supported by this server")
        params: dict[str, float | int] = {}
        for key in ("temperature", "top_p", "seed", "presence_penalty", "frequency_penalty"):
            value = getattr(self, key)
            if value is not None:
                params[key] = value
        cap = self.max_completion_tokens or self.max_tokens
        if cap is not None:
            params["max_tokens"] = cap
        schema, name, json_mode = self._format()
        tools = self._tools()
        return ChatRequest(
            model=model_id,
            messages=[m.to_message() for m in self.messages],
            params=params,
            response_schema=schema if not tools else None,
            schema_name=name,
            json_mode=json_mode,
            tools=tools,
            tool_choice="required" if tools else None,
        )

    def _format(self) -> tuple[dict[str, Any] | None, str | None, bool]:
        fmt = self.response_format or {}
        kind = fmt.get("type", "text")
        if kind == "json_schema":
            spec = fmt.get("json_schema") or {}
            if not isinstance(spec.get("schema"), dict):
                raise HTTPException(400, "response_format.json_schema.schema must be an object")
            return spec["schema"], str(spec.get("name") or "response"), False
        if kind == "json_object":
            return None, None, True
        if kind != "text":
            raise HTTPException(400, f"unsupported response_format type {kind!r}")
        return None, None, False

    def _tools(self) -> list[ToolDef]:
        if not self.tools or self.tool_choice == "none":
            return []
        defs = []
        for tool in self.tools:
            fn = tool.get("function") or {}
            if tool.get("type") != "function" or not isinstance(fn.get("name"), str):
                raise HTTPException(400, "each tool must be {type: function, function: {name}}")
            params = fn.get("parameters") or {"type": "object", "properties": {}}
            defs.append(
                ToolDef(name=fn["name"], description=fn.get("description") or "", parameters=params)
            )
        if isinstance(self.tool_choice, dict):
            wanted = (self.tool_choice.get("function") or {}).get("name")
            defs = [d for d in defs if d.name == wanted]
            if not defs:
                raise HTTPException(400, f"tool_choice names an unknown tool {wanted!r}")
        return defs


def _completion(reply: RawReply, model_id: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments},
            }
            for c in reply.tool_calls
        ]
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model_id,
        "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason}],
        "usage": {
            "prompt_tokens": reply.input_tokens,
            "completion_tokens": reply.output_tokens,
            "total_tokens": reply.input_tokens + reply.output_tokens,
        },
    }


def create_app(backend: Backend, model_id: str) -> FastAPI:
    """The FastAPI app answering through ``backend`` under the name ``model_id``."""
    app = FastAPI(title="empathos model server", docs_url=None, redoc_url=None)

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        entry = {"id": model_id, "object": "model", "created": 0, "owned_by": "empathos"}
        return {"object": "list", "data": [entry]}

    @app.post("/v1/chat/completions")
    async def completions(body: CompletionRequest) -> dict[str, Any]:
        request = body.to_request(model_id)
        try:
            reply = await backend.complete(request)
        except BackendError as exc:
            raise HTTPException(_STATUS[exc.kind], exc.message) from None
        return _completion(reply, model_id)

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    return app
