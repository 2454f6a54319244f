"""`empathos bench`: EmoBench, EQ-Bench (v2), EQ-Bench 3 and SAGE on any endpoint
(docs/bench.md)."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from empathos.bench.eqbench_bench import published_row, questions_for
from empathos.bench.eqbench_files import (
    EqQuestion,
    PublishedCheck,
    check_published,
    read_questions,
)
from empathos.bench.protocol import benchmark
from empathos.bench.record import BenchName
from empathos.cli.bench_run import (
    BaseUrlOpt,
    ConcOpt,
    ConfigOpt,
    DataOpt,
    ForceOpt,
    JudgeKeyOpt,
    JudgeModelOpt,
    JudgeUrlOpt,
    KeyOpt,
    LimitOpt,
    ModelOpt,
    OutOpt,
    ProtocolOpt,
    RetryOpt,
    RevisionOpt,
    print_bench_dirs,
    print_compare,
    run_bench,
)
from empathos.cli.bench_sage import sage_app
from empathos.errors import ConfigError, EmpathosError

__all__ = [
    "OutFormat",
    "app",
    "bench_compare_cmd",
    "bench_score_cmd",
    "emobench_cmd",
    "eqbench3_cmd",
    "eqbench_app",
    "eqbench_cmd",
    "score_cmd",
]


class OutFormat(StrEnum):
    """Output formats."""

    table = "table"
    json = "json"


app = typer.Typer(
    help="Other emotional-intelligence benchmarks on the same endpoints (docs/bench.md).",
    no_args_is_help=True,
)
eqbench_app = typer.Typer(
    help="EQ-Bench (v2): emotion-intensity ratings scored against references. Without a "
    "sub-command: run it (the options below); `score`: recompute published result files."
)


def _run(name: BenchName, data: Path, limit: int | None, force: bool, **opts: Any) -> None:
    code = run_bench(name, data, limit, force, **opts)
    if code:
        raise typer.Exit(code)


@app.command("emobench")
def emobench_cmd(
    data: DataOpt, model: ModelOpt = None, base_url: BaseUrlOpt = None, api_key_env: KeyOpt = None,
    config: ConfigOpt = None, out: OutOpt = None, concurrency: ConcOpt = None,
    limit: LimitOpt = None, force: ForceOpt = False, no_retry_errors: RetryOpt = False,
    protocol: ProtocolOpt = "official",
) -> None:  # fmt: skip
    """EmoBench: multiple-choice emotional understanding (EU) and application (EA)."""
    if protocol not in (known := benchmark("emobench").protocols):
        raise ConfigError(f"must be {' or '.join(known)}", field="--protocol")
    _run("emobench", data, limit, force, model=model, base_url=base_url,
         api_key_env=api_key_env, config=config, out=out, concurrency=concurrency,
         no_retry_errors=no_retry_errors, protocol=protocol)  # fmt: skip


@eqbench_app.callback(invoke_without_command=True)
def eqbench_cmd(
    ctx: typer.Context,
    data: Annotated[Path | None, typer.Option(
        help="Your copy: a clone of EQ-bench/EQ-Bench or its data folder.")] = None,
    model: ModelOpt = None, base_url: BaseUrlOpt = None, api_key_env: KeyOpt = None,
    config: ConfigOpt = None, out: OutOpt = None, concurrency: ConcOpt = None,
    limit: LimitOpt = None, force: ForceOpt = False, no_retry_errors: RetryOpt = False,
    revision: RevisionOpt = False,
) -> None:  # fmt: skip
    """EQ-Bench (v2): run it on an endpoint (or `score` published result files)."""
    if ctx.invoked_subcommand is not None:
        return
    if data is None:
        raise ConfigError("needed to run the benchmark (your copy of it)", field="--data")
    _run("eqbench", data, limit, force, model=model, base_url=base_url,
         api_key_env=api_key_env, config=config, out=out, concurrency=concurrency,
         no_retry_errors=no_retry_errors,
         protocol="revise" if revision else "v2.1")  # fmt: skip


app.add_typer(eqbench_app, name="eqbench")
app.add_typer(sage_app, name="sage")


@app.command("eqbench3")
def eqbench3_cmd(
    data: DataOpt, model: ModelOpt = None, base_url: BaseUrlOpt = None, api_key_env: KeyOpt = None,
    roles_model: JudgeModelOpt = None, roles_base_url: JudgeUrlOpt = None,
    roles_api_key_env: JudgeKeyOpt = None,
    config: ConfigOpt = None, out: OutOpt = None, concurrency: ConcOpt = None,
    limit: LimitOpt = None, force: ForceOpt = False, no_retry_errors: RetryOpt = False,
) -> None:  # fmt: skip
    """EQ-Bench 3's rubric pass: scripted role-plays, a debrief, a judge's rubric scores."""
    _run("eqbench3", data, limit, force, model=model, base_url=base_url,
         api_key_env=api_key_env, roles_model=roles_model, roles_base_url=roles_base_url,
         roles_api_key_env=roles_api_key_env, config=config, out=out,
         concurrency=concurrency, no_retry_errors=no_retry_errors)  # fmt: skip


@app.command("score")
def bench_score_cmd(
    paths: Annotated[list[Path], typer.Argument(help="Bench run directories.")],
    fmt: Annotated[OutFormat, typer.Option("--format", help="table or json")] = OutFormat.table,
) -> None:
    """The numbers of bench run directories (as printed at the end of a run); one that cannot
    be read, or a record in it, is named and skipped (exit 1)."""
    code = print_bench_dirs(paths, as_json=fmt is OutFormat.json)
    if code:
        raise typer.Exit(code)


@app.command("compare")
def bench_compare_cmd(
    base: Annotated[Path, typer.Argument(help="The base model's bench run directory.")],
    trained: Annotated[Path, typer.Argument(help="The trained model's, same benchmark.")],
) -> None:
    """Trained - base per measure, paired over items: difference, interval, p-value."""
    code = print_compare(base, trained)
    if code:
        raise typer.Exit(code)


def _verdict(check: PublishedCheck) -> str:
    if check.published is None:
        return "no published score"
    if check.reproduced:
        return "reproduced"
    return "differs (the score depends on a rule not visible in the file)"


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _table(checks: list[PublishedCheck]) -> Table:
    table = Table(
        title="EQ-Bench v2 result files, recomputed from the raw replies by the benchmark's "
        "final-score rule"
    )
    for col in ("model", "published", "recomputed", "diff", "first pass", "revised", "final from",
                "parsed", "verdict"):  # fmt: skip
        table.add_column(col)
    for c in checks:
        s = c.recomputed
        table.add_row(
            c.model,
            _fmt(c.published),
            _fmt(s.score),
            "-" if c.difference is None else f"{c.difference:+.3f}",
            _fmt(s.first_pass),
            _fmt(s.revised_score),
            "revised" if s.uses_revised else "first pass",
            f"{s.parseable:g}/{s.total}" + (" (failed: under 83%)" if s.failed else ""),
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
    err = Console(stderr=True)
    skipped = 0
    for path in paths:  # a file that cannot be scored is named and skipped, as `score` does
        try:
            qfile = questions_for(path, data)
            if qfile not in cache:
                cache[qfile] = read_questions(qfile)
            checks.append(check_published(path, cache[qfile]))
        except EmpathosError as exc:
            skipped += 1
            err.print(
                f"error: {exc.line()} (skipped)", markup=False, highlight=False, soft_wrap=True
            )
    if fmt is OutFormat.json:
        typer.echo(json.dumps([published_row(c) for c in checks], indent=1))
    elif checks:
        Console(width=160).print(_table(checks))
    if skipped:
        raise typer.Exit(1)
