"""`empathos bench <name>`: run a registered benchmark on an endpoint, then print its numbers;
`empathos bench score` and `empathos bench compare` read bench run directories. The flags
every benchmark's command shares are here; the commands are made in :mod:`empathos.cli.bench`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from empathos.bench.protocol import ROLE_NAMES, TableData, benchmark, num
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
    "drawn",
    "is_bench_dir",
    "print_bench_dirs",
    "print_compare",
    "run_bench",
    "summary_json",
    "summary_tables",
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
                f"warning: the {ROLE_NAMES[role]} is the bundled 135M offline model; give "
                "--roles-model "
                f"and --roles-base-url (or roles.{role} in --config) for meaningful scores",
                markup=False,
            )
    return config


def run_bench(name: BenchName, data: Path, limit: int | None, force: bool, **opts: Any) -> int:
    """Run one benchmark; print its numbers; the exit code (1: some items are errors, 3: all).
    Ctrl-C or SIGTERM, while it prepares too, stops it as every campaign stops
    (``empathos.run.interrupt``). What finished is also written in the benchmark's own
    layout where it has one, stopped or not."""
    config = _config(name, opts)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    try:
        code = _session(name, data, limit, force, config, opts.get("protocol") or "", err)
    except typer.Exit:
        _own_layout(name, Path(config.out), err)
        raise
    _own_layout(name, Path(config.out), err)
    return code


def _own_layout(name: BenchName, out: Path, err: Console) -> None:
    path = benchmark(name).own_layout(out)
    if path is not None:
        err.print(f"written in the benchmark's own layout too: {path}", markup=False)


def _session(
    name: BenchName, data: Path, limit: int | None, force: bool, config: Any, protocol: str,
    err: Console,
) -> int:  # fmt: skip
    from empathos.bench.campaign import PreparedBench, bench_usage, execute_bench, prepare_bench
    from empathos.report.tables import usage_line
    from empathos.run.drive import drive_session

    prepared: PreparedBench | None = None
    bench: BenchDir | None = None

    def usage() -> None:
        nonlocal bench
        bench = load_bench_dir(Path(config.out), [])  # unreadable ones: reported before
        if bench is not None and prepared is not None:
            prepared.usage = bench_usage([(f"{r.item_id}__t0", r) for r in bench.records])

    def kept() -> str:
        return f"{len(prepared.outcome.rows) if prepared else 0} item(s) finished"

    try:
        with interruptible(kept, config.out):  # from the start: preparing is stopped alike
            prepared = prepare_bench(
                name, data, config, limit=limit, force=force, protocol=protocol
            )
            _header(name, prepared, err)
            outcome = drive_session(
                prepared, partial(execute_bench, prepared), err, prepared.plan,
                before_close=usage, unit="items",
            )  # fmt: skip
    except Interrupted as stop:
        raise stopped(stop, err) from None
    assert prepared is not None
    done = sum(r.status == "done" for r in outcome.rows)
    err.print(  # one line for the session's items (each is not named, errors aside)
        f"{name}: {done} item(s) finished in this session, {outcome.errors} ended as errors"
        f"{f', {len(outcome.crashed)} crashed' if outcome.crashed else ''}",
        markup=False,
    )
    if prepared.usage is not None:
        err.print(usage_line(prepared.usage, "item"), markup=False)
    if bench is not None:
        for table in summary_tables(summarise(bench)):
            Console(width=160).print(table)
    if outcome.failed:
        failed_guidance(config.out, outcome, err, what=name)
        return 3
    return 1 if outcome.errors or outcome.crashed else 0


def _header(name: BenchName, prepared: Any, err: Console) -> None:
    for problem in prepared.unreadable:
        err.print(f"warning: {problem.line()} (that item runs again)", markup=False)
    plan = prepared.plan
    protocol = prepared.cases[0].protocol
    err.print(
        f"{name}{f' ({protocol} protocol)' if protocol else ''}: "
        f"{len(plan.pending)} of {plan.total} item(s) to run into {prepared.config.out} "
        f"({len(plan.finished)} done before)",
        markup=False,
    )


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
    return [main, *(drawn(t) for t in more)]


def drawn(data: TableData) -> Table:
    """A benchmark's table, drawn."""
    table = Table(title=data.title, caption=data.caption)
    for col in data.columns:
        table.add_column(col)
    for row in data.rows:
        table.add_row(*row)
    return table


def compare_table(base: Path, trained: Path, problems: list[RecordError] | None = None) -> Table:
    """``bench compare``'s table (:func:`empathos.bench.views.compared`). Unreadable records
    are added to ``problems`` and left out (raised when it is None)."""
    return drawn(compared(base, trained, problems))


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
