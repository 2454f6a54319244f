"""`empathos bench`: every registered benchmark on any endpoint (docs/bench.md), its commands
made from the benchmark protocol (:mod:`empathos.bench.protocol`), so a new benchmark needs
no change here; `bench score` and `bench compare` read bench run directories."""

from __future__ import annotations

import csv
import inspect
import io
import json
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from empathos.bench.protocol import ROLE_NAMES, Benchmark, PublishedRow, TableData, registered
from empathos.cli.bench_flags import (
    BaseUrlOpt,
    ConcOpt,
    ConfigOpt,
    ForceOpt,
    KeyOpt,
    LimitOpt,
    ModelOpt,
    OutOpt,
    RetryOpt,
)
from empathos.cli.bench_run import drawn, print_bench_dirs, print_compare, run_bench
from empathos.cli.bench_sage import sage_ranks_cmd
from empathos.errors import ConfigError, EmpathosError

__all__ = [
    "EXTRA_COMMANDS",
    "OutFormat",
    "PublishedFormat",
    "app",
    "bench_compare_cmd",
    "bench_score_cmd",
]


class OutFormat(StrEnum):
    """Output formats of bench run directories' numbers."""

    table = "table"
    json = "json"


class PublishedFormat(StrEnum):
    """Output formats of published result files' numbers."""

    table = "table"
    json = "json"
    csv = "csv"


app = typer.Typer(
    help="Other emotional-intelligence benchmarks on the same endpoints (docs/bench.md).",
    no_args_is_help=True,
)

#: Commands only one benchmark has (``bench <name> <command>``), beside the ones every
#: benchmark gets from the protocol. Optional: a new benchmark needs none.
EXTRA_COMMANDS: dict[str, dict[str, Callable[..., None]]] = {"sage": {"ranks": sage_ranks_cmd}}


def _option(name: str, annotation: Any, default: Any = inspect.Parameter.empty) -> Any:
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation,
                             default=default)  # fmt: skip


def _made(fn: Callable[..., None], params: list[inspect.Parameter], doc: str) -> Any:
    """``fn`` with the flags ``params`` (what typer reads) and the help ``doc``."""
    fn.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    fn.__annotations__ = {}
    fn.__doc__ = doc
    return fn


def _run_params(bench: Benchmark, group: bool) -> list[inspect.Parameter]:
    """The flags of ``bench <name>``: --data, the model under test's, ``--roles-*`` for the
    second role, the run's, and the protocol flag."""
    help_ = bench.data_help
    params = [_option("ctx", typer.Context)] if group else []
    params.append(
        _option("data", Annotated[Path | None, typer.Option(help=help_)], None)
        if group  # a sub-command needs no --data
        else _option("data", Annotated[Path, typer.Option(help=help_)])
    )
    params += [_option("model", ModelOpt, None), _option("base_url", BaseUrlOpt, None),
               _option("api_key_env", KeyOpt, None)]  # fmt: skip
    if len(bench.roles) > 1:  # the role besides the model under test (a judge, a user)
        who = ROLE_NAMES[bench.roles[1]]
        params += [
            _option("roles_model", Annotated[str | None, typer.Option(
                "--roles-model", help=f"The {who}'s model id.")], None),
            _option("roles_base_url", Annotated[str | None, typer.Option(
                "--roles-base-url", help=f"The {who}'s base URL.")], None),
            _option("roles_api_key_env", Annotated[str | None, typer.Option(
                "--roles-api-key-env", help=f"NAME of the {who}'s key variable.")], None),
        ]  # fmt: skip
    params += [
        _option("config", ConfigOpt, None), _option("out", OutOpt, None),
        _option("concurrency", ConcOpt, None), _option("limit", LimitOpt, None),
        _option("force", ForceOpt, False), _option("no_retry_errors", RetryOpt, False),
    ]  # fmt: skip
    if (flag := bench.command.protocol_flag) is not None:
        kind: Any = bool if flag.switch else str
        default = False if flag.switch else bench.protocols[0]
        params.append(
            _option("protocol", Annotated[kind, typer.Option(flag.flag, help=flag.help)], default)
        )
    return params


def _protocol(bench: Benchmark, value: str | bool | None) -> str:
    """The protocol the flag picked ('' for a benchmark of one protocol)."""
    flag = bench.command.protocol_flag
    if flag is None:
        return ""
    if flag.switch:
        return bench.protocols[1 if value else 0]
    if value not in (known := bench.protocols):
        raise ConfigError(f"must be {' or '.join(known)}", field=flag.flag)
    return str(value)


def _run_command(bench: Benchmark, group: bool) -> Any:
    def run(**opts: Any) -> None:
        ctx = opts.pop("ctx", None)
        if ctx is not None and ctx.invoked_subcommand is not None:
            return
        data, limit, force = opts.pop("data"), opts.pop("limit"), opts.pop("force")
        if data is None:
            raise ConfigError("needed to run the benchmark (your copy of it)", field="--data")
        protocol = _protocol(bench, opts.pop("protocol", None))
        code = run_bench(bench.name, data, limit, force, protocol=protocol, **opts)
        if code:
            raise typer.Exit(code)

    return _made(run, _run_params(bench, group), bench.about)


def _print_published(rows: list[PublishedRow], bench: Benchmark, fmt: PublishedFormat) -> None:
    spec = bench.published
    assert spec is not None
    if fmt is PublishedFormat.json:
        typer.echo(json.dumps([r.values for r in rows], indent=1, ensure_ascii=False))
    elif fmt is PublishedFormat.csv:
        fields = spec.fields or (tuple(rows[0].values) if rows else ())
        if not fields:
            return
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        writer.writerows(r.values for r in rows)
        typer.echo(buf.getvalue(), nl=False)
    elif rows:
        table = TableData(spec.title, spec.columns, [r.cells for r in rows])
        Console(width=160).print(drawn(table))


def _score_command(bench: Benchmark) -> Any:
    spec = bench.published
    assert spec is not None

    def score(paths: list[Path], fmt: PublishedFormat, data: Path | None = None) -> None:
        rows: list[PublishedRow] = []
        err = Console(stderr=True)
        skipped = 0
        for path in paths:  # a file that cannot be read is named and skipped, as `score` does
            try:
                rows += bench.read_published(path, data)
            except EmpathosError as exc:
                skipped += 1
                err.print(f"error: {exc.line()} (skipped)", markup=False, highlight=False,
                          soft_wrap=True)  # fmt: skip
        _print_published(rows, bench, fmt)
        if skipped:
            raise typer.Exit(1)

    params = [_option("paths", Annotated[list[Path], typer.Argument(help=spec.paths)])]
    if spec.data is not None:
        params.append(_option("data", Annotated[Path | None, typer.Option(help=spec.data)], None))
    params.append(_option("fmt", Annotated[PublishedFormat, typer.Option(
        "--format", help="table, json or csv")], PublishedFormat.table))  # fmt: skip
    return _made(score, params, spec.help)


def _mount(bench: Benchmark) -> None:
    """``bench <name>``: a command, or a group whose own call runs the benchmark when it has
    sub-commands (``score`` for published files, any extra)."""
    extra = EXTRA_COMMANDS.get(bench.name, {})
    if bench.published is None and not extra:
        app.command(bench.name)(_run_command(bench, group=False))
        return
    group = typer.Typer(help=bench.command.group_help or bench.about)
    group.callback(invoke_without_command=True)(_run_command(bench, group=True))
    if bench.published is not None:
        group.command("score")(_score_command(bench))
    for name, command in extra.items():
        group.command(name)(command)
    app.add_typer(group, name=bench.name)


for _bench in registered():
    _mount(_bench)


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
