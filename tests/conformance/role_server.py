"""A loopback OpenAI-compatible server answering as the conformance roles: one scripted model
per path (``http://127.0.0.1:PORT/<role>/v1``), our own server app
(:func:`empathos.llm.server.create_app`) over the handlers of conformance_roles.py, served
by uvicorn in a thread. The Inspect door's models and the verifiers door's policy use it."""

from __future__ import annotations

import threading
from typing import Any

import uvicorn
from conformance_roles import director, judge, policy, user
from fastapi import FastAPI

from empathos.llm import ChatRequest
from empathos.llm.scripted import Reply, ScriptedBackend, fault
from empathos.llm.server import create_app, listen_socket

MODEL = "m"


def broken(request: ChatRequest) -> Reply:
    """A policy endpoint that refuses every request (HTTP 400)."""
    raise fault("fatal", "this policy endpoint refuses every request")


HANDLERS = {"policy": policy, "user": user, "judge": judge, "director": director,
            "broken": broken}  # fmt: skip


class _Close:
    """Every response ends its connection (no kept-alive socket outlives a test)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        async def sending(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []),
                                                  (b"connection", b"close")]}  # fmt: skip
            await send(message)

        await self.app(scope, receive, sending if scope["type"] == "http" else send)


class RoleServer:
    """See the module docstring; a context manager."""

    def __init__(self) -> None:
        self.backends = {name: ScriptedBackend(fn) for name, fn in HANDLERS.items()}
        app = FastAPI()
        for name, backend in self.backends.items():
            app.mount(f"/{name}", create_app(backend, MODEL))
        self._sock = listen_socket("127.0.0.1", 0)
        self.port = self._sock.getsockname()[1]
        config = uvicorn.Config(_Close(app), log_level="warning", access_log=False,
                                lifespan="off")  # fmt: skip
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run,
                                        kwargs={"sockets": [self._sock]}, daemon=True)  # fmt: skip

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.port}/{name}/v1"

    def __enter__(self) -> RoleServer:
        self._thread.start()
        while not self._server.started:
            if not self._thread.is_alive():
                raise RuntimeError("the role server did not start")
            threading.Event().wait(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(10)
