"""`empathos run`: run a model under test against a scenario set (resumable, concurrent).

Exit codes: 0 every selected dialogue finished without error; 1 some dialogue ended as an
error (recorded apart), crashed, or an invalid scenario the selection could include was
skipped (not one of named cases, nor past a filled --limit); 2 bad input (config, keys, run
directory, or a directory another run holds); 3 the run failed: it ran dialogues and not one
finished without error (every one crashed or ended as an error); 130 Ctrl-C, 143 SIGTERM
(both stop the run cleanly; the same command resumes). See docs/run.md.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from rich.console import Console

from empathos.run.interrupt import Interrupted, interruptible, sigterm_as_sigint

if TYPE_CHECKING:
    from empathos.run.runner import RunOutcome
    from empathos.run.session import PreparedRun

__all__ = ["register", "run_cmd"]

_TABLE_WIDTH = 200


def _report(prepared: PreparedRun, outcome: RunOutcome) -> int:
    from empathos.cli.run_console import failed_guidance, print_excerpt
    from empathos.report import leaderboard_table, usage_line
    from empathos.run.leaderboard import run_leaderboard
    from empathos.run.session import usage_of

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
    err.print(usage_line(usage_of(prepared)), markup=False, highlight=False, soft_wrap=True)
    err.print(
        f"records: {out}/records (rescore with: empathos score {out})",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    warning = prepared.config.score_warning()
    if board and warning and not prepared.config.offline_default:
        err.print(f"NOT MEANINGFUL: {warning}.", markup=False, highlight=False, soft_wrap=True)
    if outcome.failed:
        failed_guidance(out, outcome, err)
        return 3
    err.print(f"pictures: empathos report {out} --out {out}/report", markup=False, soft_wrap=True)
    return 1 if errors or outcome.crashed or prepared.invalid_selected else 0


def _run(cli: dict[str, Any], config_path: Path | None, force: bool) -> int:
    from empathos.cli.run_console import run_header, stopped, warm_offline_model
    from empathos.run.config import load_run_config
    from empathos.run.progress import RunProgress
    from empathos.run.session import close_session, execute, prepare_run

    err = Console(stderr=True)
    config = load_run_config(config_path, cli)
    with sigterm_as_sigint():  # SIGTERM while preparing stops the command as Ctrl-C does
        prepared = prepare_run(config, force=force)
        run_header(prepared, err)
        outcome = None
        status: Literal["completed", "interrupted", "failed"] = "failed"
        done = lambda: f"{len(prepared.outcome.rows)} dialogue(s) finished"  # noqa: E731
        try:
            with interruptible(done, prepared.run_dir.path):
                warm_offline_model(prepared, err)
                plan = prepared.plan
                with RunProgress(err, plan.total, done_before=len(plan.finished)) as progress:
                    outcome = asyncio.run(execute(prepared, progress))
            status = "completed"
        except Interrupted as stop:
            status = "interrupted"
            raise stopped(stop, err) from None
        finally:
            code = _report(prepared, outcome) if outcome else 1
            close_session(prepared, prepared.outcome, status)
    return code


Str = str | None
Int = int | None
ConfigPath = Annotated[
    Path | None, typer.Option("--config", help="Run config YAML (see docs/run.md).")
]
Model = Annotated[Str, typer.Option(help="Model id of the model under test.")]
BaseUrl = Annotated[Str, typer.Option(help="OpenAI-compatible base URL of the model under test.")]
ApiKeyEnv = Annotated[
    Str, typer.Option(help="NAME of the env var holding the model under test's API key.")
]
Policy = Annotated[
    Str,
    typer.Option(
        help="A local Hugging Face causal LM directory (or LoRA adapter) as the model under "
        "test, in-process (kind: local); 'smollm2-135m-instruct': the bundled one."
    ),
]
RolesModel = Annotated[
    Str, typer.Option(help="Model id of the user, director and judge (with --roles-base-url).")
]
RolesBaseUrl = Annotated[
    Str, typer.Option(help="OpenAI-compatible base URL of the user, director and judge.")
]
RolesApiKeyEnv = Annotated[Str, typer.Option(help="NAME of the env var holding their API key.")]
Protocol = Annotated[
    Str,
    typer.Option(
        help="'empathos' (default: our prompts and loop) or 'empa-release' (the published "
        "release's own agents and loop, from your installed 'empa')."
    ),
]
Scenarios = Annotated[
    Str, typer.Option(help="'builtin' (default), a scenario file/dir, or a published layout.")
]
Cases = Annotated[Str, typer.Option(help="Ids (comma-separated), 'official' or 'all'.")]
Limit = Annotated[Int, typer.Option(min=1, help="At most this many scenarios.")]
Trials = Annotated[Int, typer.Option(min=1, help="Dialogues per scenario.")]
Concurrency = Annotated[Int, typer.Option(min=1, help="Dialogues in flight at once.")]
MaxTurns = Annotated[Int, typer.Option(min=1, help="Turn cap.")]
MinTurns = Annotated[Int, typer.Option(min=0, help="No success/failure before this turn.")]
Language = Annotated[Str, typer.Option(help="Only scenarios in this language (en, zh).")]
Out = Annotated[Path | None, typer.Option(help="Run directory.")]
RetryErrors = Annotated[
    bool,
    typer.Option(
        "--retry-errors/--no-retry-errors",
        help="On resume, run error dialogues again (default) or keep them.",
    ),
]
Force = Annotated[
    bool, typer.Option(help="Start over a run directory made with a different config.")
]


def run_cmd(
    config: ConfigPath = None,
    model: Model = None,
    base_url: BaseUrl = None,
    api_key_env: ApiKeyEnv = None,
    policy: Policy = None,
    roles_model: RolesModel = None,
    roles_base_url: RolesBaseUrl = None,
    roles_api_key_env: RolesApiKeyEnv = None,
    protocol: Protocol = None,
    scenarios: Scenarios = None,
    cases: Cases = None,
    limit: Limit = None,
    trials: Trials = None,
    concurrency: Concurrency = None,
    max_turns: MaxTurns = None,
    min_turns: MinTurns = None,
    language: Language = None,
    out: Out = None,
    retry_errors: RetryErrors = True,
    force: Force = False,
) -> None:
    """Run the benchmark; with no options, every role on the bundled offline model."""
    cli = {
        "model": model,
        "base_url": base_url,
        "api_key_env": api_key_env,
        "policy": policy,
        "roles_model": roles_model,
        "roles_base_url": roles_base_url,
        "roles_api_key_env": roles_api_key_env,
        "protocol": protocol,
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


def register(app: typer.Typer) -> None:
    """Mount ``run`` on the main app."""
    app.command("run")(run_cmd)
