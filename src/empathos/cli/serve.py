"""`empathos serve`: an OpenAI-compatible HTTP server over the offline model.

SIGTERM or Ctrl-C stops it within a few seconds: requests still running after
``_GRACE_S`` are cancelled, and a cancelled generation stops at its next token.
"""

from __future__ import annotations

import socket
from enum import StrEnum
from typing import Annotated

import typer

from empathos.errors import ConfigError

__all__ = ["OFFLINE_ALIASES", "ServeBackend", "register"]

# Other ids the offline model answers to (its Hugging Face name, with and without the owner).
OFFLINE_ALIASES = ("HuggingFaceTB/SmolLM2-135M-Instruct", "SmolLM2-135M-Instruct")
_GRACE_S = 2  # seconds running requests get to finish on SIGTERM before they are cancelled


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
        import uvicorn

        from empathos.llm.client import Backend
        from empathos.llm.offline import OFFLINE_MODEL_ID, OfflineBackend, load_offline_model
        from empathos.llm.scripted import ScriptedBackend
        from empathos.llm.server import create_app, listen_socket

        chosen: Backend
        aliases: list[str] = []
        if backend is ServeBackend.offline:
            load_offline_model().token_sets()  # load before announcing the URL
            chosen, model_id = OfflineBackend(), OFFLINE_MODEL_ID
            aliases.extend(OFFLINE_ALIASES)
        else:
            chosen, model_id = ScriptedBackend(), "scripted"
        extra = [name for name in served_model_name or [] if name.strip()]
        aliases = [*extra, *aliases]
        try:
            sock = listen_socket(host, port)
        except OSError as exc:
            problem = f"cannot listen on {host}:{port}: {exc.strerror}"
            raise ConfigError(problem, field="port") from None
        bound = sock.getsockname()[1]
        shown = f"[{host}]" if sock.family == socket.AF_INET6 else host
        app = create_app(chosen, model_id, aliases=aliases, max_request_bytes=max_request_bytes)
        config = uvicorn.Config(
            app,
            log_level="warning",
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=_GRACE_S,
        )
        if host not in ("127.0.0.1", "::1", "localhost"):
            typer.echo(
                f"warning: {host} is not loopback; anyone who can reach it may use it", err=True
            )
        if extra:
            typer.echo(f"also answering to: {', '.join(extra)}", color=False)
        typer.echo(f"serving {model_id} at http://{shown}:{bound}/v1", color=False)
        uvicorn.Server(config).run(sockets=[sock])
