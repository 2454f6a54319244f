"""`empathos run`: run a model under test against a scenario set (resumable, concurrent).

Exit codes: 0 every selected dialogue finished without error; 1 some dialogue ended as an
error (recorded apart), crashed, or an invalid scenario was skipped; 2 bad input (config,
keys, run directory); 130 Ctrl-C (the same command resumes). See docs/run.md.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from rich.console import Console

if TYPE_CHECKING:
    from empathos.run.session import PreparedRun

__all__ = ["register"]

_TABLE_WIDTH = 200


def _header(prepared: PreparedRun, err: Console) -> None:
    cfg = prepared.config
    ids = ", ".join(s.id for s in prepared.scenarios)
    if cfg.offline_default:
        err.print(
            "offline default: every role runs on the bundled SmolLM2-135M-Instruct "
            "(no API key, no network).",
            markup=False,
            highlight=False,
        )
    err.print(
        f"scenarios: {ids} | trials {cfg.trials} | turn cap {cfg.max_turns} "
        f"(min {cfg.min_turns}, K={cfg.eval_every}) | concurrency {cfg.concurrency}",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    if cfg.offline_default:
        err.print(
            "to test a real model: empathos run --model ID --base-url URL "
            "[--api-key-env VAR], or --config run.yaml (see docs/run.md)",
            markup=False,
            highlight=False,
        )
    for problem in prepared.invalid:
        err.print(f"skipped invalid scenario: {problem.line()}", markup=False, highlight=False)
    for bad in prepared.unreadable:
        err.print(f"unreadable record (will be redone): {bad.line()}", markup=False)
    plan = prepared.plan
    if plan.finished:
        err.print(
            f"resuming {cfg.out}: {len(plan.finished)} of {plan.total} dialogue(s) already "
            f"finished; running {len(plan.pending)}",
            markup=False,
            highlight=False,
        )


def _report(prepared: PreparedRun, crashed: int) -> int:
    from empathos.cli.run_console import print_excerpt
    from empathos.report import leaderboard_table
    from empathos.run.session import run_leaderboard

    err = Console(stderr=True)
    board, errors = run_leaderboard(prepared)
    print_excerpt(prepared, err)
    if board:
        Console(width=max(Console().width, _TABLE_WIDTH)).print(leaderboard_table(board))
    if errors:
        err.print(
            f"{len(errors)} dialogue(s) ended as errors (not scored, not counted as model "
            "failures; rerun to retry them):",
            markup=False,
            highlight=False,
        )
        for row in errors:
            err.print(f"  {row.dialogue_id}: {row.reason}", markup=False, highlight=False)
    out = prepared.config.out
    err.print(
        f"records: {out}/records (rescore with: empathos score {out})",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    return 1 if errors or crashed or prepared.invalid else 0


def _run(cli: dict[str, Any], config_path: Path | None, force: bool) -> int:
    from empathos.cli.run_console import warm_offline_model
    from empathos.run.config import load_run_config
    from empathos.run.progress import RunProgress
    from empathos.run.session import close_session, execute, prepare_run

    err = Console(stderr=True)
    config = load_run_config(config_path, cli)
    prepared = prepare_run(config, force=force)
    _header(prepared, err)
    outcome = None
    status: Literal["completed", "interrupted", "failed"] = "failed"
    try:
        warm_offline_model(prepared, err)
        plan = prepared.plan
        with RunProgress(err, plan.total, done_before=len(plan.finished)) as progress:
            outcome = asyncio.run(execute(prepared, progress))
        status = "completed"
    except KeyboardInterrupt:
        status = "interrupted"
        err.print(
            "interrupted: finished dialogues are kept; run the same command to resume",
            markup=False,
        )
        raise
    finally:
        code = _report(prepared, len(outcome.crashed) if outcome else 0) if outcome else 1
        close_session(prepared, outcome, status)
    return code


def register(app: typer.Typer) -> None:
    """Mount ``run`` on the main app."""

    @app.command("run")
    def run_cmd(
        config: Annotated[
            Path | None, typer.Option("--config", help="Run config YAML (see docs/run.md).")
        ] = None,
        model: Annotated[str | None, typer.Option(help="Model id of the model under test.")] = None,
        base_url: Annotated[
            str | None,
            typer.Option(help="OpenAI-compatible base URL of the model under test."),
        ] = None,
        api_key_env: Annotated[
            str | None,
            typer.Option(help="NAME of the env var holding the model under test's API key."),
        ] = None,
        scenarios: Annotated[
            str | None,
            typer.Option(help="'builtin' (default), a scenario file/dir, or a published layout."),
        ] = None,
        cases: Annotated[
            str | None,
            typer.Option(help="Ids (comma-separated), 'official' or 'all'."),
        ] = None,
        limit: Annotated[
            int | None, typer.Option(min=1, help="At most this many scenarios.")
        ] = None,
        trials: Annotated[int | None, typer.Option(min=1, help="Dialogues per scenario.")] = None,
        concurrency: Annotated[
            int | None, typer.Option(min=1, help="Dialogues in flight at once.")
        ] = None,
        max_turns: Annotated[int | None, typer.Option(min=1, help="Turn cap.")] = None,
        min_turns: Annotated[
            int | None, typer.Option(min=0, help="No success/failure before this turn.")
        ] = None,
        language: Annotated[
            str | None, typer.Option(help="Only scenarios in this language (en, zh).")
        ] = None,
        out: Annotated[Path | None, typer.Option(help="Run directory.")] = None,
        retry_errors: Annotated[
            bool,
            typer.Option(
                "--retry-errors/--no-retry-errors",
                help="On resume, run error dialogues again (default) or keep them.",
            ),
        ] = True,
        force: Annotated[
            bool,
            typer.Option(help="Start over a run directory made with a different config."),
        ] = False,
    ) -> None:
        """Run the benchmark; with no options, every role on the bundled offline model."""
        cli = {
            "model": model,
            "base_url": base_url,
            "api_key_env": api_key_env,
            "scenarios": scenarios,
            "cases": cases,
            "limit": limit,
            "trials": trials,
            "concurrency": concurrency,
            "max_turns": max_turns,
            "min_turns": min_turns,
            "language": language,
            "out": out,
            "retry_errors": None if retry_errors else False,
        }
        code = _run(cli, config, force)
        if code:
            raise typer.Exit(code)
