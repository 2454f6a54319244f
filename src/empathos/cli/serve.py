"""`empathos serve`: an OpenAI-compatible HTTP server over the offline model.

It says what it does: a line while the bundled model is converted on first use (~20 s), the
URL once it listens, and a line when it stops. SIGTERM or Ctrl-C stops it within a few
seconds: requests still running after ``_GRACE_S`` are cancelled, and a cancelled generation
stops at its next token.
"""

from __future__ import annotations

import signal
import socket
import time
from enum import StrEnum
from types import FrameType
from typing import TYPE_CHECKING, Annotated, Any

import typer

from empathos.errors import ConfigError

if TYPE_CHECKING:
    from empathos.llm.client import Backend

__all__ = ["OFFLINE_ALIASES", "ServeBackend", "register", "serve"]

# Other ids the offline model answers to (its Hugging Face name, with and without the owner).
OFFLINE_ALIASES = ("HuggingFaceTB/SmolLM2-135M-Instruct", "SmolLM2-135M-Instruct")
_GRACE_S = 2  # seconds running requests get to finish on SIGTERM before they are cancelled
_LOOPBACK = ("127.0.0.1", "::1", "localhost")


class ServeBackend(StrEnum):
    """What answers the requests."""

    offline = "offline"
    scripted = "scripted"


def _say(line: str) -> None:
    typer.echo(line, color=False)


def _offline_backend() -> tuple[Backend, str, list[str]]:
    """The offline backend, its model loaded (converted first, on first use: said so)."""
    from empathos.llm.offline import OFFLINE_MODEL_ID, OfflineBackend, load_offline_model
    from empathos.llm.offline.model import converted_dir

    if not (converted_dir() / "model.safetensors").is_file():
        _say(
            "converting the bundled model on first use (GGUF to float32, about 20 s, once; "
            f"cached in {converted_dir()})..."
        )
    t0 = time.perf_counter()
    lm = load_offline_model()
    lm.token_sets()  # ready before the URL is announced
    if lm.source == "gguf":
        _say(f"bundled model converted in {time.perf_counter() - t0:.1f} s")
    return OfflineBackend(), OFFLINE_MODEL_ID, list(OFFLINE_ALIASES)


def _listen(host: str, port: int) -> tuple[socket.socket, str]:
    """The listening socket and the URL it serves."""
    from empathos.llm.server import listen_socket

    try:
        sock = listen_socket(host, port)
    except OSError as exc:
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror}", field="port") from None
    shown = f"[{host}]" if sock.family == socket.AF_INET6 else host
    return sock, f"http://{shown}:{sock.getsockname()[1]}/v1"


def _server(app: Any) -> Any:
    """A uvicorn server for ``app`` that says which signal stopped it, once it has."""
    import uvicorn

    class Server(uvicorn.Server):
        stopped_by = "shut down"

        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            if not self.should_exit:
                self.stopped_by = signal.Signals(sig).name
            super().handle_exit(sig, frame)

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            await super().shutdown(sockets)
            _say(f"stopped ({self.stopped_by})")

    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=_GRACE_S,
    )
    return Server(config)


def serve(
    host: str, port: int, backend: ServeBackend, names: list[str], max_request_bytes: int
) -> None:
    """Load the backend, listen on ``host:port``, say where, serve until a signal."""
    from empathos.llm.scripted import ScriptedBackend
    from empathos.llm.server import create_app

    if backend is ServeBackend.offline:
        chosen, model_id, aliases = _offline_backend()
    else:
        chosen, model_id, aliases = ScriptedBackend(), "scripted", []
    extra = [name for name in names if name.strip()]
    sock, url = _listen(host, port)
    app = create_app(
        chosen, model_id, aliases=[*extra, *aliases], max_request_bytes=max_request_bytes
    )
    if host not in _LOOPBACK:
        typer.echo(f"warning: {host} is not loopback; anyone who can reach it may use it", err=True)
    if extra:
        _say(f"also answering to: {', '.join(extra)}")
    _say(f"serving {model_id} at {url}")
    _server(app).run(sockets=[sock])


def register(app: typer.Typer) -> None:
    """Mount the command on the main app."""

    @app.command("serve")
    def serve_cmd(
        host: Annotated[
            str, typer.Option(help="Address to listen on (loopback by default).")
        ] = "127.0.0.1",
        port: Annotated[
            int, typer.Option(min=0, max=65535, help="Port to listen on; 0 picks a free one.")
        ] = 8000,
        backend: Annotated[
            ServeBackend,
            typer.Option(help="offline: the bundled model; scripted: canned replies (tests)."),
        ] = ServeBackend.offline,
        served_model_name: Annotated[
            list[str] | None,
            typer.Option(
                "--served-model-name",
                help="Another model id to answer to (repeatable), for clients whose model "
                "name is written into their code.",
            ),
        ] = None,
        max_request_bytes: Annotated[
            int,
            typer.Option(min=1024, help="Largest request body accepted; larger ones get 413."),
        ] = 4 * 1024 * 1024,
    ) -> None:
        """Serve /v1/chat/completions and /v1/models (OpenAI-compatible) until Ctrl-C."""
        serve(host, port, backend, served_model_name or [], max_request_bytes)
