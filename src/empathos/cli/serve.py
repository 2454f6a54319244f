"""`empathos serve`: an OpenAI-compatible HTTP server over the offline model."""

from __future__ import annotations

import socket
from enum import StrEnum
from typing import Annotated

import typer

from empathos.errors import ConfigError

__all__ = ["ServeBackend", "register"]


class ServeBackend(StrEnum):
    """What answers the requests."""

    offline = "offline"
    scripted = "scripted"


def register(app: typer.Typer) -> None:
    """Mount the command on the main app."""

    @app.command("serve")
    def serve(
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
    ) -> None:
        """Serve /v1/chat/completions and /v1/models (OpenAI-compatible) until Ctrl-C."""
        import uvicorn

        from empathos.llm.client import Backend
        from empathos.llm.offline import OFFLINE_MODEL_ID, OfflineBackend, load_offline_model
        from empathos.llm.scripted import ScriptedBackend
        from empathos.llm.server import create_app

        chosen: Backend
        if backend is ServeBackend.offline:
            load_offline_model().token_sets()  # load before announcing the URL
            chosen, model_id = OfflineBackend(), OFFLINE_MODEL_ID
        else:
            chosen, model_id = ScriptedBackend(), "scripted"
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            sock.close()
            problem = f"cannot listen on {host}:{port}: {exc.strerror}"
            raise ConfigError(problem, field="port") from None
        sock.listen(2048)
        bound = sock.getsockname()[1]
        shown = f"[{host}]" if family == socket.AF_INET6 else host
        config = uvicorn.Config(
            create_app(chosen, model_id), log_level="warning", access_log=False, lifespan="off"
        )
        if host not in ("127.0.0.1", "::1", "localhost"):
            typer.echo(
                f"warning: {host} is not loopback; anyone who can reach it may use it", err=True
            )
        typer.echo(f"serving {model_id} at http://{shown}:{bound}/v1", color=False)
        uvicorn.Server(config).run(sockets=[sock])
