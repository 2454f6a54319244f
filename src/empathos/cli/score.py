"""`empathos score`: placeholder until its issue lands."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Mount the command on the main app."""
