"""Overload slows calls down, it does not fail them: an endpoint never has more than its
``max_concurrency`` connections busy, and the time a call waits in our own queue (the
client's limit, the HTTP pool) never counts against ``timeout_s``, which measures the server.
"""

from __future__ import annotations

import asyncio
from typing import Any

from empathos.llm import ChatRequest, Message, build_model
from empathos.llm.openai_backend import OpenAIBackend
from empathos.llm.testing import FaultServer, Step

USER = [{"role": "user", "content": "hello"}]
REQUEST = ChatRequest(model="test-model", messages=[Message(role="user", content="hi")])


async def test_the_http_pool_queues_beyond_the_limit_without_timing_the_wait(
    stack: str, make_config: Any
) -> None:
    with FaultServer() as server:
        server.script(*[Step.slow(0.3, content=f"r{i}") for i in range(6)])
        # the backend alone (no client-side limit): 6 calls, room for 2 on the wire; the
        # last two wait 0.6 s for a connection, longer than the 0.5 s timeout
        config = make_config(server.url, max_concurrency=2, timeout_s=0.5, max_attempts=1)
        backend = OpenAIBackend(config, None)
        try:
            replies = await asyncio.gather(*(backend.complete(REQUEST) for _ in range(6)))
        finally:
            await backend.aclose()
    assert server.max_in_flight == 2  # backpressure: the server never sees more
    assert sorted(r.content or "" for r in replies) == [f"r{i}" for i in range(6)]


async def test_waiting_for_the_endpoint_limit_is_not_timed(make_config: Any) -> None:
    with FaultServer() as server:
        server.script(*[Step.slow(0.3, content=f"r{i}") for i in range(4)])
        config = make_config(server.url, max_concurrency=1, timeout_s=0.5, max_attempts=1)
        model = build_model(config, role="user")
        try:
            results = await asyncio.gather(*(model.chat(USER) for _ in range(4)))
        finally:
            await model.aclose()
    assert server.max_in_flight == 1
    assert sorted(r.text for r in results) == [f"r{i}" for i in range(4)]
    assert all(r.record.attempts == 1 for r in results)  # no timeout, no retry
