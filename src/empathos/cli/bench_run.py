"""`empathos bench emobench|eqbench|eqbench3`: run a benchmark on an endpoint, then print its
numbers; `empathos bench score` and `empathos bench compare` read bench run directories."""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from empathos.bench.protocol import TableData, benchmark, num
from empathos.bench.record import BenchName
from empathos.bench.summary import (
    BenchDir,
    BenchSummary,
    load_bench_dir,
    summarise,
)
from empathos.bench.views import compared, is_bench_dir, section_html, summary_json
from empathos.cli.run_console import failed_guidance, stopped
from empathos.errors import ConfigError, EmpathosError, RecordError
from empathos.run.interrupt import Interrupted, interruptible

__all__ = [
    "bench_section_html",
    "compare_table",
    "is_bench_dir",
    "print_bench_dirs",
    "print_compare",
    "run_bench",
    "summary_json",
    "summary_tables",
]


DataOpt = Annotated[
    Path,
    typer.Option(help="Your copy of the benchmark: a clone of its repository or its data folder."),
]
ModelOpt = Annotated[str | None, typer.Option(help="Model id of the model under test.")]
BaseUrlOpt = Annotated[
    str | None, typer.Option(help="OpenAI-compatible base URL of the model under test.")
]
KeyOpt = Annotated[
    str | None, typer.Option(help="NAME of the variable holding the model's API key.")
]
JudgeModelOpt = Annotated[
    str | None, typer.Option("--roles-model", help="eqbench3: the judge's model id.")
]
JudgeUrlOpt = Annotated[
    str | None, typer.Option("--roles-base-url", help="eqbench3: the judge's base URL.")
]
JudgeKeyOpt = Annotated[
    str | None,
    typer.Option("--roles-api-key-env", help="eqbench3: NAME of the judge's key variable."),
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
ProtocolOpt = Annotated[
    str,
    typer.Option(
        help="official: as EmoBench's own script asks and reads it (default); paper: as the "
        "2024 paper ran it (questions apart, majority of 5, 4 choice orders). docs/bench.md."
    ),
]
RevisionOpt = Annotated[
    bool,
    typer.Option(
        "--revision",
        help="Send the prompt with its critique-and-revise block (EQ-Bench v2's -revise); "
        "default: without it, as the benchmark has since v2.1.",
    ),
]


def _config(name: BenchName, opts: dict[str, Any]) -> Any:
    from empathos.run.config import load_run_config

    cli = {k: v for k, v in opts.items() if k not in ("config", "no_retry_errors", "protocol")}
    if opts.get("no_retry_errors"):
        cli["retry_errors"] = False
    config = load_run_config(opts.get("config"), cli)
    if opts.get("out") is None:
        slug = "".join(
            c if c.isalnum() or c in "-_." else "-" for c in config.role("model_under_test").model
        )
        config = config.model_copy(
            update={"out": Path("runs") / f"bench-{name}-{slug.strip('-.')}"}
        )
    for role in benchmark(name).warn_offline:
        if config.role(role).kind == "offline" and not opts.get("roles_model"):
            Console(stderr=True).print(
                f"warning: the {role} is the bundled 135M offline model; give --roles-model "
                f"and --roles-base-url (or roles.{role} in --config) for meaningful scores",
                markup=False,
            )
    return config


def run_bench(name: BenchName, data: Path, limit: int | None, force: bool, **opts: Any) -> int:
    """Run one benchmark; print its numbers; the exit code (1: some items are errors, 3: all).
    Ctrl-C or SIGTERM stops it as every campaign stops (``empathos.run.interrupt``)."""
    from empathos.bench.campaign import bench_usage, execute_bench, prepare_bench
    from empathos.report.tables import usage_line
    from empathos.run.drive import drive_session

    config = _config(name, opts)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    prepared = prepare_bench(
        name, data, config, limit=limit, force=force, protocol=opts.get("protocol") or ""
    )
    for problem in prepared.unreadable:
        err.print(f"warning: {problem.line()} (that item runs again)", markup=False)
    plan = prepared.plan
    protocol = prepared.cases[0].protocol
    err.print(
        f"{name}{f' ({protocol} protocol)' if protocol else ''}: "
        f"{len(plan.pending)} of {plan.total} item(s) to run into {config.out} "
        f"({len(plan.finished)} done before)",
        markup=False,
    )
    bench: BenchDir | None = None

    def usage() -> None:
        nonlocal bench
        bench = load_bench_dir(Path(config.out), [])  # unreadable ones: reported above
        if bench is not None:
            prepared.usage = bench_usage([(f"{r.item_id}__t0", r) for r in bench.records])

    kept = lambda: f"{len(prepared.outcome.rows)} item(s) finished"  # noqa: E731
    try:
        with interruptible(kept, config.out):
            outcome = drive_session(
                prepared, partial(execute_bench, prepared), err, plan, before_close=usage,
                unit="items",
            )  # fmt: skip
    except Interrupted as stop:
        raise stopped(stop, err) from None
    done = sum(r.status == "done" for r in outcome.rows)
    err.print(  # one line for the session's items (each is not named, errors aside)
        f"{name}: {done} item(s) finished in this session, {outcome.errors} ended as errors"
        f"{f', {len(outcome.crashed)} crashed' if outcome.crashed else ''}",
        markup=False,
    )
    if prepared.usage is not None:
        err.print(usage_line(prepared.usage), markup=False)
    if bench is not None:
        for table in summary_tables(summarise(bench)):
            Console(width=160).print(table)
    if outcome.failed:
        failed_guidance(config.out, outcome, err, what=name)
        return 3
    return 1 if outcome.errors or outcome.crashed else 0


def summary_tables(s: BenchSummary) -> list[Table]:
    """The tables of one bench directory's summary."""
    proto = f" ({s.protocol} protocol)" if s.protocol else ""
    title = (
        f"{s.name}{proto}: {s.model} ({s.items} items, {s.errors} errors, "
        f"{s.unparseable} unparseable)"
    )
    main = Table(title=title)
    for col in ("measure", "value", "95% interval", "items"):
        main.add_column(col)
    for m in s.measures:
        main.add_row(m.name, num(m.value), f"{num(m.low)} - {num(m.high)}", str(m.n))
    caption, more = benchmark(s.name).tables(s.own or {})
    main.caption = caption
    return [main, *(_drawn(t) for t in more)]


def _drawn(data: TableData) -> Table:
    table = Table(title=data.title, caption=data.caption)
    for col in data.columns:
        table.add_column(col)
    for row in data.rows:
        table.add_row(*row)
    return table


def compare_table(base: Path, trained: Path, problems: list[RecordError] | None = None) -> Table:
    """``bench compare``'s table (:func:`empathos.bench.views.compared`). Unreadable records
    are added to ``problems`` and left out (raised when it is None)."""
    return _drawn(compared(base, trained, problems))


def print_compare(base: Path, trained: Path) -> int:
    """``bench compare``: the table; an unreadable record named and skipped (exit 1)."""
    problems: list[RecordError] = []
    table = compare_table(base, trained, problems)
    _skipped(problems)
    Console(width=160).print(table)
    return 1 if problems else 0


def _skipped(problems: Sequence[EmpathosError]) -> None:
    err = Console(stderr=True)
    for problem in problems:
        err.print(
            f"error: {problem.line()} (skipped)", markup=False, highlight=False, soft_wrap=True
        )


def print_bench_dirs(paths: list[Path], *, as_json: bool) -> int:
    """The summaries of bench directories, as ``empathos bench score`` prints them; a
    directory or record that cannot be read is named on stderr and skipped, the rest
    printed (as ``empathos score`` does). The exit code: 1 when something was skipped."""
    summaries = []
    problems: list[EmpathosError] = []
    for path in paths:
        found: list[RecordError] = []
        try:
            bench = load_bench_dir(path, found)
        except EmpathosError as exc:
            problems.append(exc)
            continue
        problems += found
        if bench is None:
            problems.append(ConfigError("is not a bench run directory", file=path))
            continue
        summaries.append(summarise(bench))
    _skipped(problems)
    if as_json:
        typer.echo(json.dumps([summary_json(s) for s in summaries], indent=1))
    else:
        console = Console(width=160)
        for summary in summaries:
            for table in summary_tables(summary):
                console.print(table)
    return 1 if problems else 0


#: The report's bench section (:func:`empathos.bench.views.section_html`).
bench_section_html = section_html
