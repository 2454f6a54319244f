"""Turn pydantic validation errors into ScenarioErrors that name the file and the field."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from empathos.errors import ScenarioError

__all__ = ["errors_from_validation"]


def errors_from_validation(exc: ValidationError, file: str | Path) -> list[ScenarioError]:
    """One ScenarioError per problem: the dotted field path and pydantic's message."""
    out: list[ScenarioError] = []
    for err in exc.errors(include_url=False):
        field = ".".join(str(part) for part in err["loc"]) or "(top level)"
        message = err["msg"].removeprefix("Value error, ")  # our validators' own messages
        if err["type"] == "missing":
            message = "required field is missing"
        elif err["type"] in ("enum", "literal_error"):
            message = f"{message}; got {err.get('input')!r}"
        out.append(ScenarioError(message, file=file, field=field))
    return out
