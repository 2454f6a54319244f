"""Endpoints that keep the SDK's own HTTP stack spread a large max_concurrency over pools."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from empathos.llm import build_model
from empathos.llm.testing import FaultServer, Step

USER = [{"role": "user", "content": "hello"}]


async def test_many_pools_serve_every_call_at_once(
    make_config: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Any proxy variable keeps the SDK's default stack (not the aiohttp client); NO_PROXY
    # then lets the SDK's client reach the loopback server directly.
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with FaultServer() as server:  # its own server: the in-flight count is this test's alone
        server.script(*[Step.slow(0.3, content=f"r{i}") for i in range(64)])
        model = build_model(make_config(server.url, max_concurrency=64), role="user")
        results = await asyncio.gather(*(model.chat(USER) for _ in range(64)))
        await model.aclose()
    # 64 slots over 4 pools: no call waited for a connection, and each got its own reply.
    assert server.max_in_flight == 64
    assert sorted(r.text for r in results) == sorted(f"r{i}" for i in range(64))
    assert all(h["authorization"] == "Bearer EMPTY" for h in server.headers)
