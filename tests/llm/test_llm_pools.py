"""A large max_concurrency is served at once: by one pool on the direct path, by
several SDK pools (of _POOL_SIZE connections each) where the SDK's own stack is kept."""

from __future__ import annotations

import asyncio
from typing import Any

from empathos.llm import build_model
from empathos.llm.testing import FaultServer, Step

USER = [{"role": "user", "content": "hello"}]


async def test_many_pools_serve_every_call_at_once(stack: str, make_config: Any) -> None:
    with FaultServer() as server:  # its own server: the in-flight count is this test's alone
        server.script(*[Step.slow(0.3, content=f"r{i}") for i in range(64)])
        model = build_model(make_config(server.url, max_concurrency=64), role="user")
        results = await asyncio.gather(*(model.chat(USER) for _ in range(64)))
        await model.aclose()
    # 64 slots (one pool, or 4 SDK pools): no call waited for a connection; each got its reply
    assert server.max_in_flight == 64
    assert sorted(r.text for r in results) == sorted(f"r{i}" for i in range(64))
    assert all(h["authorization"] == "Bearer EMPTY" for h in server.headers)


async def test_roles_on_one_endpoint_take_turns_on_one_connection(
    stack: str, make_config: Any
) -> None:
    # A dialogue's roles call one after another. On the direct path they share one
    # pool per origin: with a pool per role each connection sat idle through the others'
    # calls (past a server's keep-alive once calls take seconds) and was opened again. The
    # SDK's path keeps a client (and pool) per role.
    with FaultServer() as server:
        server.script(*[Step.ok(f"r{i}") for i in range(6)])
        models = [
            build_model(make_config(server.url, name=role), role=role)
            for role in ("user", "tested", "judge")
        ]
        try:
            for i in range(6):
                assert (await models[i % 3].chat(USER)).text == f"r{i}"
        finally:
            for model in models:
                await model.aclose()
    assert server.connections == (1 if stack == "direct" else 3)
