"""`empathos verl prepare`: scenarios to verl's RL dataset (the ``empathos[verl]`` extra).

Needs only ``pyarrow`` (installed with verl); nothing of verl is imported here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from empathos.errors import ConfigError
from empathos.scenarios import BUILTIN, load_scenarios, select

__all__ = ["app", "prepare"]

app = typer.Typer(help="MAPO through verl: prepare data (see docs/verl.md).", no_args_is_help=True)


@app.command("prepare")
def prepare(
    out: Annotated[Path, typer.Option("--out", help="Directory for train/val parquet files.")],
    scenarios: Annotated[
        str, typer.Argument(help="Scenario file or directory (ours or published), or 'builtin'.")
    ] = BUILTIN,
    val_fraction: Annotated[
        float, typer.Option(help="Share of scenarios held out for validation.")
    ] = 0.2,
    seed: Annotated[int, typer.Option(help="Seed of the train/validation split.")] = 0,
    language: Annotated[
        str | None, typer.Option(help="Keep only scenarios in this language.")
    ] = None,
    system_prompt: Annotated[
        str, typer.Option(help="System prompt of the policy: 'default', 'none' or a text file.")
    ] = "default",
) -> None:
    """Write verl's parquet dataset, split by scenario; print the counts."""
    from empathos.integrations.verl.prepare import verl_overrides, write_dataset

    loaded = load_scenarios(scenarios, kind="builtin" if scenarios == BUILTIN else "own")
    for error in loaded.errors:
        typer.echo(f"warning: skipped: {error.line()}", err=True)
    chosen = select(loaded.scenarios, language=language)
    if not chosen:
        raise ConfigError(f"no valid scenario in {scenarios}", field="scenarios")
    split = write_dataset(
        chosen, out, val_fraction=val_fraction, seed=seed, system_prompt=system_prompt
    )
    typer.echo(f"train: {len(split.train_ids)} scenarios -> {split.train}")
    typer.echo(f"val: {len(split.val_ids)} scenarios -> {split.val}")
    typer.echo(
        "verl overrides (verl's own gamma default is 1.0): " + " ".join(verl_overrides(split))
    )
