"""`empathos scenarios check|list [PATH]`: validate and show scenario sets.

PATH is a scenario file (.yaml, .json, .jsonl), a directory of them, a directory in the
published EMPA layout, or ``builtin`` (the default) for the bundled set.
"""

from __future__ import annotations

from collections import Counter
from enum import Enum
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from empathos.scenarios import BUILTIN, DEFAULT_BUILTIN_IDS, LoadResult, Scenario, load_scenarios

__all__ = ["app", "check", "label_counts", "list_cmd"]

app = typer.Typer(help="Validate and list scenario sets.", no_args_is_help=True)

_PATH_HELP = "Scenario file or directory (ours or the published EMPA layout), or 'builtin'."
_LABELS = ("domain", "dominant_axis", "difficulty", "threshold", "language")


def _name(value: object) -> str:
    if value is None:
        return "unknown"
    return str(value.value) if isinstance(value, Enum) else str(value)


def label_counts(scenarios: list[Scenario]) -> dict[str, Counter[str]]:
    """Counts of each label's values over ``scenarios`` ('unknown' where a label is unset)."""
    counts: dict[str, Counter[str]] = {label: Counter() for label in _LABELS}
    for scenario in scenarios:
        resolved = scenario.resolved_labels()
        for label in _LABELS:
            counts[label][_name(getattr(resolved, label))] += 1
    return counts


def _load(path: str) -> LoadResult:
    return load_scenarios(path)


@app.command("check")
def check(path: str = typer.Argument(BUILTIN, help=_PATH_HELP)) -> None:
    """Validate every scenario; print counts by label, every error and the total read."""
    result = _load(path)
    for label, counter in label_counts(result.scenarios).items():
        parts = ", ".join(f"{key} {n}" for key, n in sorted(counter.items()))
        typer.echo(f"{label}: {parts or '-'}")
    official = sum(1 for s in result.scenarios if s.source.official)
    if official:
        typer.echo(f"official: {official}")
    for warning in result.warnings:
        typer.echo(f"warning: {warning.line()}")
    for error in result.errors:
        typer.echo(f"error: {error.line()}")
    warned = f", warnings: {len(result.warnings)}" if result.warnings else ""
    typer.echo(f"scenarios read: {len(result.scenarios)}, errors: {len(result.errors)}{warned}")
    if result.errors:
        raise typer.Exit(1)


@app.command("list")
def list_cmd(path: str = typer.Argument(BUILTIN, help=_PATH_HELP)) -> None:
    """Show the scenarios as a table (errors are summarised below it).

    In the bundled set, '*' marks the default pair the main job runs."""
    if path != BUILTIN and not Path(path).exists():
        typer.echo(f"error: {path}: no such file or directory (the path is missing)", err=True)
        raise typer.Exit(1)
    result = _load(path)
    table = Table(title=f"{len(result.scenarios)} scenarios")
    for column in ("id", "name", "lang", "domain", "axis", "threshold", "band", "||P0||"):
        table.add_column(column, no_wrap=column == "id")
    for s in result.scenarios:
        lab = s.resolved_labels()
        mark = " *" if path == BUILTIN and s.id in DEFAULT_BUILTIN_IDS else ""
        table.add_row(
            s.id + mark,
            s.persona.identity.name,
            lab.language,
            _name(lab.domain),
            _name(lab.dominant_axis),
            _name(lab.threshold),
            _name(lab.difficulty),
            f"{lab.p0_norm:.2f}" if lab.p0_norm is not None else "-",
        )
    Console(width=160).print(table)
    if result.errors:
        typer.echo(f"{len(result.errors)} error(s); run `empathos scenarios check` to see them")
        raise typer.Exit(1)
