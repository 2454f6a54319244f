"""Entry point of the ``empathos`` command. It only mounts the sub-command groups."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from empathos import __version__
from empathos.cli import (
    bench,
    compare,
    distill,
    import_inspect,
    rejudge,
    report,
    rl,
    run,
    scenarios,
    score,
    serve,
    train,
    validate,
    verl,
)
from empathos.errors import EmpathosError

__all__ = ["app", "main", "version_cmd"]

app = typer.Typer(
    name="empathos",
    help="Evaluate empathic support as a process (EMPA) and train policies for it (MAPO).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

score.register(app)
report.register(app)
compare.register(app)
run.register(app)
serve.register(app)
train.register(app)
validate.register(app)
import_inspect.register(app)
rejudge.register(app)
app.add_typer(scenarios.app, name="scenarios")
app.add_typer(rl.app, name="rl")
app.add_typer(verl.app, name="verl")
app.add_typer(distill.app, name="distill")
app.add_typer(bench.app, name="bench")


@app.command("version")
def version_cmd() -> None:
    """Print the installed version."""
    typer.echo(__version__)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(__version__)
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_print_version,
            is_eager=True,
            help="Print the installed version and exit.",
        ),
    ] = False,
) -> None:
    """Evaluate empathic support as a process (EMPA) and train policies for it (MAPO)."""


def main() -> None:
    """Run the CLI: expected errors print one line (exit 2), Ctrl-C exits 130."""
    try:
        result = app(standalone_mode=False)
    except (KeyboardInterrupt, typer.Abort):
        typer.echo("interrupted", err=True)
        sys.exit(130)
    except EmpathosError as exc:
        typer.echo(f"error: {exc.line()}", err=True)
        sys.exit(2)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.TyperException as exc:
        # click's usage errors (typer vendors click): they know how to show themselves.
        show = getattr(exc, "show", None)
        if callable(show):
            show()
        sys.exit(int(getattr(exc, "exit_code", 2)))
    sys.exit(result if isinstance(result, int) else 0)
