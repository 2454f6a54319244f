"""`empathos bench`: EmoBench, EQ-Bench (v2) and EQ-Bench 3 on any endpoint (docs/bench.md)."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from empathos.bench.eqbench_files import (
    EqQuestion,
    PublishedCheck,
    check_published,
    find_questions,
    read_questions,
)
from empathos.errors import InputError

__all__ = ["OutFormat", "app", "eqbench_app"]

app = typer.Typer(
    help="Other emotional-intelligence benchmarks on the same endpoints (docs/bench.md).",
    no_args_is_help=True,
)
eqbench_app = typer.Typer(
    help="EQ-Bench (v2): emotion-intensity ratings scored against references."
)
app.add_typer(eqbench_app, name="eqbench")


class OutFormat(StrEnum):
    """Output formats."""

    table = "table"
    json = "json"


def _questions_for(result: Path, data: Path | None) -> Path:
    if data is not None:
        return find_questions(data)
    # A result file inside a clone: <clone>/results/eq-bench/<file>.json.
    for parent in list(result.resolve().parents)[:3]:
        try:
            return find_questions(parent)
        except InputError:
            continue
    raise InputError(
        "no questions file beside this result file; pass --data (a clone of "
        "EQ-bench/EQ-Bench or its data folder)",
        file=result,
        field="--data",
    )


def _row(check: PublishedCheck) -> dict[str, object]:
    score = check.recomputed
    return {
        "file": str(check.file),
        "model": check.model,
        "published": check.published,
        "recomputed": None if score.score is None else round(score.score, 4),
        "revised": None if score.revised_score is None else round(score.revised_score, 4),
        "difference": None if check.difference is None else round(check.difference, 4),
        "parseable": score.parseable,
        "total": score.total,
        "parse_rate": round(score.parse_rate, 4),
        "revise_format": check.revise,
        "reproduced": check.reproduced,
    }


def _verdict(check: PublishedCheck) -> str:
    if check.published is None:
        return "no published score"
    if check.reproduced:
        return "reproduced"
    return "differs (the score depends on a rule not visible in the file)"


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _table(checks: list[PublishedCheck]) -> Table:
    table = Table(title="EQ-Bench v2 result files, recomputed from the raw replies")
    for col in ("model", "published", "recomputed", "diff", "revised", "parsed", "verdict"):
        table.add_column(col)
    for c in checks:
        s = c.recomputed
        table.add_row(
            c.model,
            _fmt(c.published),
            _fmt(s.score),
            "-" if c.difference is None else f"{c.difference:+.3f}",
            _fmt(s.revised_score),
            f"{s.parseable}/{s.total}",
            _verdict(c),
        )
    return table


@eqbench_app.command("score")
def score_cmd(
    paths: Annotated[
        list[Path],
        typer.Argument(help="EQ-Bench v2 result files (results/eq-bench/*_results.json)."),
    ],
    data: Annotated[
        Path | None,
        typer.Option(
            help="A clone of EQ-bench/EQ-Bench or its data folder (the questions). Default: "
            "the clone the result file sits in."
        ),
    ] = None,
    fmt: Annotated[OutFormat, typer.Option("--format", help="table or json")] = OutFormat.table,
) -> None:
    """Recompute published EQ-Bench v2 scores from each file's raw model replies."""
    checks: list[PublishedCheck] = []
    cache: dict[Path, list[EqQuestion]] = {}
    for path in paths:
        qfile = _questions_for(path, data)
        if qfile not in cache:
            cache[qfile] = read_questions(qfile)
        checks.append(check_published(path, cache[qfile]))
    if fmt is OutFormat.json:
        typer.echo(json.dumps([_row(c) for c in checks], indent=1))
        return
    Console(width=160).print(_table(checks))
