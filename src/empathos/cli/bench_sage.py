"""`empathos bench sage`: SAGE's dialogues on an endpoint (without a sub-command), `score`
(Sentient numbers of result files) and `ranks` (EMPA beside SAGE); docs/bench.md, "SAGE"."""

from __future__ import annotations

import csv
import io
import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from empathos.cli.bench_run import (
    BaseUrlOpt,
    ConcOpt,
    ConfigOpt,
    ForceOpt,
    KeyOpt,
    LimitOpt,
    ModelOpt,
    OutOpt,
    RetryOpt,
    run_bench,
)
from empathos.errors import ConfigError

__all__ = ["Fmt", "sage_app", "sage_cmd", "sage_ranks_cmd", "sage_score_cmd"]


class Fmt(StrEnum):
    """Output formats."""

    table = "table"
    json = "json"
    csv = "csv"


sage_app = typer.Typer(
    help="SAGE (Sentient Agent as a Judge): a simulated user whose emotion the model moves. "
    "Without a sub-command: run it (the options below); `score`: the Sentient numbers of "
    "result files; `ranks`: EMPA and SAGE ranks side by side."
)
SimModelOpt = Annotated[
    str | None, typer.Option("--roles-model", help="The simulated user's model id.")
]
SimUrlOpt = Annotated[
    str | None, typer.Option("--roles-base-url", help="The simulated user's base URL.")
]
SimKeyOpt = Annotated[
    str | None,
    typer.Option("--roles-api-key-env", help="NAME of the simulated user's key variable."),
]


def _write_results(opts: dict[str, Any]) -> None:
    """Write the run's finished dialogues in SAGE's own layout (``<out>/sage/``)."""
    from empathos.bench.sage_bench import write_results
    from empathos.bench.summary import load_bench_dir
    from empathos.cli.bench_run import _config
    from empathos.run.manifest import read_manifest

    out = Path(_config("sage", opts).out)
    bench = load_bench_dir(out) if (out / "records").is_dir() else None
    manifest = read_manifest(out) if bench is not None else None
    if bench is not None and manifest is not None:
        path = write_results(out, bench.records, [s.id for s in manifest.scenarios])
        if path is not None:
            Console(stderr=True).print(f"SAGE's layout: {path}", markup=False, soft_wrap=True)


@sage_app.callback(invoke_without_command=True)
def sage_cmd(
    ctx: typer.Context,
    data: Annotated[Path | None, typer.Option(
        help="Your copy: a clone of Tencent/digitalhuman or its SAGE folder.")] = None,
    model: ModelOpt = None, base_url: BaseUrlOpt = None, api_key_env: KeyOpt = None,
    roles_model: SimModelOpt = None, roles_base_url: SimUrlOpt = None,
    roles_api_key_env: SimKeyOpt = None,
    config: ConfigOpt = None, out: OutOpt = None, concurrency: ConcOpt = None,
    limit: LimitOpt = None, force: ForceOpt = False, no_retry_errors: RetryOpt = False,
) -> None:  # fmt: skip
    """SAGE: run it on an endpoint (or `score` result files, `ranks` beside EMPA)."""
    if ctx.invoked_subcommand is not None:
        return
    if data is None:
        raise ConfigError("needed to run the benchmark (your copy of it)", field="--data")
    opts: dict[str, Any] = dict(
        model=model, base_url=base_url, api_key_env=api_key_env, roles_model=roles_model,
        roles_base_url=roles_base_url, roles_api_key_env=roles_api_key_env, config=config,
        out=out, concurrency=concurrency, no_retry_errors=no_retry_errors,
    )  # fmt: skip
    if roles_model is None and config is None:
        Console(stderr=True).print(
            "warning: the simulated user is the bundled 135M offline model; give --roles-model "
            "and --roles-base-url (or roles.user in --config) for meaningful scores",
            markup=False,
        )
    try:
        code = run_bench("sage", data, limit, force, **opts)
    except typer.Exit:  # stopped by Ctrl-C or SIGTERM: what finished is written out too
        _write_results(opts)
        raise
    _write_results(opts)
    if code:
        raise typer.Exit(code)


_COLUMNS = ("model", "score", "successes", "failures", "dialogues", "mean", "file")


@sage_app.command("score")
def sage_score_cmd(
    paths: Annotated[list[Path], typer.Argument(
        help="SAGE result files (*_result.jsonl), folders of them, or `bench sage` runs.")],
    fmt: Annotated[Fmt, typer.Option("--format", help="table, json or csv")] = Fmt.table,
) -> None:  # fmt: skip
    """Each model's Sentient numbers: score (mean final emotion, half up to 0.1), successes
    (Emotion-S dialogues) and failures (Emotion-F dialogues)."""
    from empathos.bench.sage_bench import SAGE

    rows = [row for path in paths for row in SAGE.read_published(path)]
    if fmt is Fmt.json:
        typer.echo(json.dumps(rows, indent=1, ensure_ascii=False))
        return
    if fmt is Fmt.csv:
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        typer.echo(buf.getvalue(), nl=False)
        return
    table = Table(title="SAGE: Sentient numbers of result files")
    for col in _COLUMNS[:-1]:
        table.add_column(col)
    for r in rows:
        score = "-" if r["score"] is None else f"{r['score']:.1f}"
        mean = "-" if r["mean"] is None else f"{r['mean']:.3f}"
        table.add_row(r["model"], score, str(r["successes"]), str(r["failures"]),
                      str(r["dialogues"]), mean)  # fmt: skip
    Console(width=160).print(table)


@sage_app.command("ranks")
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
