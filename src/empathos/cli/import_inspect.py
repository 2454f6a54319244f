"""`empathos import-inspect`: Inspect logs of the `empa` task to record files (docs/inspect.md).

inspect-ai (the ``empathos[inspect]`` extra) is imported only when the command runs.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Annotated

import typer

from empathos.errors import MissingExtraError

__all__ = ["register"]

INSTALL = "pip install 'empathos[inspect]'"


def register(app: typer.Typer) -> None:
    """Mount ``import-inspect`` on the main app."""

    @app.command("import-inspect")
    def import_inspect(
        logs: Annotated[
            list[Path],
            typer.Argument(
                help="Inspect log files (.eval or .json) of empathos/empa.", show_default=False
            ),
        ],
        out: Annotated[
            Path, typer.Option("--out", help="Directory for the record files (one folder per log).")
        ],
        update: Annotated[
            bool,
            typer.Option(
                "--update", help="Replace record files whose log has changed since it was imported."
            ),
        ] = False,
    ) -> None:
        """Write one record file per sample and epoch of Inspect logs of the `empa` task;
        `empathos score/report/compare OUT` then read them like `empathos run`'s records.
        Run again on more logs, it writes only the samples not imported yet."""
        if importlib.util.find_spec("inspect_ai") is None:
            raise MissingExtraError(f"reading Inspect logs needs inspect-ai: {INSTALL}")
        from empathos.integrations.inspect.logs import import_logs

        summary = import_logs(logs, out, update=update)
        for line in summary.missing:
            typer.echo(f"warning: {line}", err=True)
        replaced = f", {len(summary.replaced)} of them replaced" if summary.replaced else ""
        typer.echo(
            f"wrote {len(summary.written)} record(s) to {out}{replaced} ({summary.errors} "
            f"ended as errors, not scored); {len(summary.kept)} imported before, kept; "
            f"{len(summary.missing)} sample(s) without a record",
        )
        typer.echo(f"score them: empathos score {out}")
        if not summary.written and not summary.kept:
            raise typer.Exit(1)
