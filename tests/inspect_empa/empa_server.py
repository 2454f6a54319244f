"""A loopback OpenAI-compatible server with one scripted model per EMPA role, for the tests of
the Inspect task: ``http://127.0.0.1:PORT/<role>/v1`` answers as that role (our own server
app, :func:`empathos.llm.server.create_app`, over a scripted backend per role).

The replies are deterministic functions of the request, so two runs of a dialogue agree:

- tested: ``reply <n>``, n = the number of person lines it has seen;
- user: ``line <n>``; no text at all for a scenario listed in :data:`SILENT`;
- judge: the IEDR/MDEP forms, levels by scenario (see :data:`LEVELS`); the judge answers
  HTTP 503 (a server error Inspect retries) for a scenario listed in :data:`FAILING`;
- director: a tool call of ``continue``;
- sandbox: one model for user, director and judge (``-T roles=``), each request answered as
  the role it comes from (a tool call is the director's, a JSON schema the judge's).
"""

from __future__ import annotations

import threading
from typing import Any

import uvicorn
from fastapi import FastAPI

from empathos.llm.scripted import Reply, ScriptedBackend, ToolReply, auto_reply, fault
from empathos.llm.server import create_app, listen_socket
from empathos.llm.types import ChatRequest, RawReply

ROLES = ("tested", "user", "director", "judge")
ENDPOINTS = (*ROLES, "sandbox")
MODEL = "m"
#: MDEP levels per scenario (by the person's opening line, which every judge prompt quotes):
#: (progress level, negative level) of every axis.
LEVELS: dict[str, tuple[int, int]] = {
    "My sourdough starter died": (2, 0),  # en-01: success on turn 4
    "Do you ever laugh at a joke": (1, -1),  # en-10: slow, no success by turn 5
}
#: Scenarios (opening lines) whose judge calls fail with HTTP 503.
FAILING: set[str] = {"Got a letter today. The landlord"}  # en-03
#: Scenarios (opening lines) whose simulated user answers without text.
SILENT: set[str] = {"Silly question maybe, but is fifty-two"}  # en-05


def _text(request: ChatRequest) -> str:
    return "\n".join(m.content for m in request.messages)


def _judge(request: ChatRequest) -> Reply:
    text = _text(request)
    if any(line in text for line in FAILING):
        raise fault("transient", "judge unavailable")
    if request.response_schema is None:
        return auto_reply(request)
    prog, neg = next((lv for line, lv in LEVELS.items() if line in text), (1, 0))
    props = request.response_schema.get("properties", {})
    form: dict[str, Any] = {}
    for key in props:
        level = prog if key.endswith("Prog") else neg
        form[key] = {"level": level, "evidence": "0" if level == 0 else "quote", "reasoning": "r"}
    if not form or not all(k.endswith(("Prog", "Neg")) for k in form):
        return auto_reply(request)  # the IEDR form (scenarios without a stored P_0)
    return form


def _count_person_lines(request: ChatRequest) -> int:
    return sum(m.role == "user" for m in request.messages)


def _tested(request: ChatRequest) -> Reply:
    return f"reply {_count_person_lines(request)}"


def _user(request: ChatRequest) -> Reply:
    text = _text(request)
    if any(line in text for line in SILENT):
        return RawReply(content=None, finish_reason="stop")
    return f"line {len(text) % 97}"


def _director(request: ChatRequest) -> Reply:
    return ToolReply("continue", {"reason": "steady", "focus": ""})


def _sandbox(request: ChatRequest) -> Reply:
    if request.tools:
        return _director(request)
    if request.response_schema is not None:
        return _judge(request)
    return _user(request)


HANDLERS = {
    "tested": _tested,
    "user": _user,
    "judge": _judge,
    "director": _director,
    "sandbox": _sandbox,
}


class CloseConnections:
    """ASGI wrapper: every response ends its connection. Inspect does not close the HTTP
    clients of the models it drops after an eval, so a kept-alive socket would be collected
    later, unclosed, in another test."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        async def sending(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = [*message.get("headers", []), (b"connection", b"close")]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, sending if scope["type"] == "http" else send)


class RoleServer:
    """The four role apps under one FastAPI app, served by uvicorn in a thread."""

    def __init__(self) -> None:
        self.backends = {name: ScriptedBackend(HANDLERS[name]) for name in ENDPOINTS}
        app = FastAPI()
        for role, backend in self.backends.items():
            app.mount(f"/{role}", create_app(backend, MODEL))
        self._sock = listen_socket("127.0.0.1", 0)
        self.port = self._sock.getsockname()[1]
        config = uvicorn.Config(
            CloseConnections(app), log_level="warning", access_log=False, lifespan="off"
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True
        )

    def url(self, role: str) -> str:
        """The base URL of a role's endpoint."""
        return f"http://127.0.0.1:{self.port}/{role}/v1"

    def env(self) -> dict[str, str]:
        """What Inspect's ``openai-api/<role>/m`` models read: base URL and key per role."""
        out: dict[str, str] = {}
        for name in ENDPOINTS:
            out[f"{name.upper()}_BASE_URL"] = self.url(name)
            out[f"{name.upper()}_API_KEY"] = "unused"
        return out

    def requests(self, name: str) -> list[ChatRequest]:
        """The requests an endpoint has answered (failed ones included)."""
        return self.backends[name].requests

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


def model_name(role: str) -> str:
    """Inspect's name of a role's model on the server."""
    return f"openai-api/{role}/{MODEL}"
