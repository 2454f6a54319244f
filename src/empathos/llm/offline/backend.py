"""The offline backend: answers chat requests from the bundled model.

Structured output and tool calls are constrained (see :mod:`empathos.llm.offline.constrained`):
the model ranks the allowed values of each categorical field by likelihood and writes free-text
fields greedily under a token cap, so the result is valid by construction.
"""

from __future__ import annotations

import asyncio

from empathos.llm.offline.batcher import batcher_for
from empathos.llm.offline.model import (
    CONTEXT_TOKENS,
    ContextLengthExceeded,
    load_offline_model,
)
from empathos.llm.retry import BackendError
from empathos.llm.types import ChatRequest, RawReply

__all__ = ["OfflineBackend"]


class OfflineBackend:
    """A backend answering from the bundled offline model."""

    kind = "offline"
    endpoint: str | None = None
    context_tokens = CONTEXT_TOKENS  # prompt and reply together (the server reports clamps)

    def __init__(self, max_batch: int = 8) -> None:
        self.max_batch = max_batch

    async def complete(self, request: ChatRequest) -> RawReply:
        """Generate in a worker thread (plain chats batched) so the event loop stays free."""
        lm = await asyncio.to_thread(load_offline_model)
        try:
            return await batcher_for(lm, self.max_batch).submit(request)
        except ContextLengthExceeded as exc:
            raise BackendError(
                "fatal", str(exc), status=400, code="context_length_exceeded", param="messages"
            ) from None
        except (RuntimeError, ValueError, IndexError) as exc:
            raise BackendError("fatal", f"offline generation failed: {exc}", status=500) from exc
