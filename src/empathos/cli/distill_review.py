"""`empathos distill review export|import|report`: check Real-to-Sim's stage 1 by hand
(docs/distill.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = ["review_app", "review_export", "review_import", "review_report"]

review_app = typer.Typer(help="Check stage 1 by hand: export a sample, import verdicts, report.")


@review_app.command("export")
def review_export(
    out: Annotated[Path, typer.Argument(help="The distill output directory.")],
    conversations: Annotated[
        list[Path] | None,
        typer.Argument(help="The conversation files (not needed after --keep-source)."),
    ] = None,
    n: Annotated[int, typer.Option("-n", min=1, help="Sample size.")] = 200,
    seed: Annotated[int, typer.Option(help="Sampling seed.")] = 0,
    to: Annotated[Path | None, typer.Option("--to", help="Where to write. OUT/review.")] = None,
) -> None:
    """Export a sample of stage-1 results (CSV to fill in, HTML to read)."""
    from empathos.distill import read_conversations
    from empathos.distill.review import export_review

    convs = read_conversations(conversations) if conversations else []
    csv_path, html_path, count = export_review(out, to or out / "review", convs, n, seed)
    typer.echo(f"{count} item(s): fill the verdict column of {csv_path} (read {html_path})")


@review_app.command("import")
def review_import(
    out: Annotated[Path, typer.Argument(help="The distill output directory.")],
    csv_file: Annotated[Path, typer.Argument(help="The filled review.csv.")],
) -> None:
    """Import the verdicts of a filled review CSV."""
    from empathos.distill.review import import_verdicts

    verdicts = import_verdicts(out, csv_file)
    typer.echo(f"imported {len(verdicts)} verdict(s)")


@review_app.command("report")
def review_report(
    out: Annotated[Path, typer.Argument(help="The distill output directory.")],
) -> None:
    """Stage-1 accuracy over the imported verdicts, with a 95% Wilson interval."""
    from empathos.distill.review import accuracy_report

    typer.echo(accuracy_report(out).line())
