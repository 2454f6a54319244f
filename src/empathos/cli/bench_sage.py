"""`empathos bench sage ranks`: EMPA beside SAGE, the one command only SAGE has (the run and
`score` are every benchmark's: :mod:`empathos.cli.bench`); docs/bench.md, "SAGE"."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from empathos.errors import ConfigError

__all__ = ["Fmt", "sage_ranks_cmd"]


class Fmt(StrEnum):
    """Output formats."""

    table = "table"
    json = "json"


def sage_ranks_cmd(
    empa: Annotated[list[Path], typer.Option(
        "--empa", help="EMPA runs or record files (repeat the option).")],
    sage: Annotated[list[Path], typer.Option(
        "--sage", help="SAGE result files, folders of them or `bench sage` runs (repeat).")],
    preset: Annotated[str, typer.Option(help="EPM preset: reference or paper.")] = "reference",
    fmt: Annotated[Fmt, typer.Option("--format", help="table or json")] = Fmt.table,
) -> None:  # fmt: skip
    """EMPA beside SAGE: the models run on both, ranked by EMPA's EPM-Q and by SAGE's score,
    with Spearman's rank correlation."""
    from empathos.bench.sage_ranks import empa_scores, sage_scores, side_by_side

    if preset not in ("reference", "paper"):
        raise ConfigError("is reference or paper", field="--preset")
    view = side_by_side(empa_scores(empa, preset), sage_scores(sage))
    if fmt is not Fmt.table:
        keys = ("model", "epmq", "empa_rank", "sage_score", "sage_rank")
        typer.echo(json.dumps({
            "models": [dict(zip(keys, r, strict=True)) for r in view.rows], "spearman": view.rho,
            "only_empa": view.only_empa, "only_sage": view.only_sage,
        }, indent=1))  # fmt: skip
        return
    rho = "-" if view.rho is None else f"{view.rho:+.3f}"
    caption = f"Spearman's rank correlation: {rho} over {len(view.rows)} models"
    table = Table(title="EMPA beside SAGE (models run on both)", caption=caption)
    for col in ("model", "EPM-Q", "EMPA rank", "SAGE score", "SAGE rank"):
        table.add_column(col)
    for model, epmq, er, score, sr in view.rows:
        table.add_row(model, f"{epmq:.2f}", f"{er:g}", f"{score:.1f}", f"{sr:g}")
    Console(width=160).print(table)
    for side, names in (("EMPA", view.only_empa), ("SAGE", view.only_sage)):
        if names:
            Console(stderr=True).print(f"only on {side}: {', '.join(names)}", markup=False)
