"""The flags every `empathos bench <name>` command shares (the commands are made from the
benchmark protocol in :mod:`empathos.cli.bench`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = [
    "BaseUrlOpt",
    "ConcOpt",
    "ConfigOpt",
    "ForceOpt",
    "KeyOpt",
    "LimitOpt",
    "ModelOpt",
    "OutOpt",
    "RetryOpt",
]

ModelOpt = Annotated[str | None, typer.Option(help="Model id of the model under test.")]
BaseUrlOpt = Annotated[
    str | None, typer.Option(help="OpenAI-compatible base URL of the model under test.")
]
KeyOpt = Annotated[
    str | None, typer.Option(help="NAME of the variable holding the model's API key.")
]
ConfigOpt = Annotated[
    Path | None, typer.Option("--config", help="YAML run config (roles, prices, cache).")
]
OutOpt = Annotated[
    Path | None, typer.Option(help="Run directory (resumable). Default: runs/bench-<name>-<model>.")
]
ConcOpt = Annotated[int | None, typer.Option(min=1, help="Items in flight at once.")]
LimitOpt = Annotated[int | None, typer.Option(min=1, help="Only the first N items.")]
ForceOpt = Annotated[bool, typer.Option("--force", help="Start --out over if made otherwise.")]
RetryOpt = Annotated[
    bool, typer.Option("--no-retry-errors", help="On resume, keep items that ended as errors.")
]
