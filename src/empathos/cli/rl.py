"""`empathos rl ...`: MAPO tools. `compare` pits advantage estimators against each other on
the simulated environment (a SIMULATION, labelled as such in every output)."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from empathos.errors import ConfigError

if TYPE_CHECKING:
    from empathos.rl.sim_training import TrainConfig

__all__ = ["app", "compare"]

app = typer.Typer(
    help="MAPO: advantage estimators and the simulated comparison", no_args_is_help=True
)

_DEFAULT = "mapo_dialogue,grpo,turn_only,batch_only,reinforce_pp,mapo_turnwise"


def _cell(summary: dict[str, float], scale: float = 1.0, digits: int = 1) -> str:
    mean = summary["mean"] * scale
    if math.isnan(summary["low"]):
        return f"{mean:.{digits}f}"
    low, high = summary["low"] * scale, summary["high"] * scale
    return f"{mean:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def _table(rows: list[dict[str, Any]], label: str) -> Table:
    title = f"{label}\n95% intervals over seeds: rates bootstrap percentile, others t"
    table = Table(title=title, title_style="bold")
    for col in (
        "estimator",
        "success %",
        "seed sd",
        "EPM-Q-like",
        "final distance",
        "AUC success %",
        "success - grpo (paired)",
    ):
        table.add_column(col, justify="left" if col == "estimator" else "right")
    for row in rows:
        diff = row.get("success_minus_grpo")
        sd = row["success"]["std"]
        table.add_row(
            row["estimator"],
            _cell(row["success"], 100.0),
            "n/a" if math.isnan(sd) else f"{100 * sd:.1f}",
            _cell(row["epmq"]),
            _cell(row["final_distance"], digits=2),
            _cell(row["auc_success"], 100.0),
            _cell(diff, 100.0) if diff else "-",
        )
    return table


def _length_table(rows: list[dict[str, Any]], label: str, best: int) -> Table:
    title = f"{label}\nlength choice, best length {best} turns; 95% intervals over seeds"
    table = Table(title=title, title_style="bold")
    columns = ("estimator", "best-turn %", "return", "length", "length - best", "length drift")
    for col in (*columns, "best-turn - grpo (paired)"):
        table.add_column(col, justify="left" if col == "estimator" else "right")
    for row in rows:
        diff = row.get("success_minus_grpo")
        table.add_row(
            row["estimator"],
            _cell(row["success"], 100.0),
            _cell(row["return"], digits=2),
            _cell(row["length"], digits=2),
            _cell(row["length_gap"], digits=2),
            _cell(row["length_drift"], digits=2),
            _cell(diff, 100.0) if diff else "-",
        )
    return table


def _result_table(rows: list[dict[str, Any]], cfg: TrainConfig) -> Table:
    from empathos.rl.sim import SIMULATION_LABEL
    from empathos.rl.sim_length import optimal_length

    if cfg.env == "length":
        best = optimal_length(cfg.length, 1.0)  # as the rollouts score success
        return _length_table(rows, SIMULATION_LABEL, best)
    return _table(rows, SIMULATION_LABEL)


def _estimator_names(estimators: str) -> list[str]:
    """The comma-separated names, checked against the registry before any training."""
    from empathos.rl.advantages import get_estimator

    names = [n.strip() for n in estimators.split(",") if n.strip()]
    if not names:
        raise ConfigError("no estimator given", field="--estimators")
    if len(set(names)) != len(names):
        raise ConfigError(f"an estimator is listed twice: {estimators}", field="--estimators")
    for name in names:
        get_estimator(name)  # fail fast, listing the valid names, before any training
    return names


@app.command("compare")
def compare(
    estimators: Annotated[str, typer.Option(help="Comma-separated estimator names")] = _DEFAULT,
    seeds: Annotated[int | None, typer.Option(min=1, help="Seeds per estimator")] = None,
    steps: Annotated[int | None, typer.Option(min=1, help="Policy updates per run")] = None,
    out: Annotated[Path, typer.Option(help="Output folder (JSON + PNG)")] = Path("rl-compare"),
    quick: Annotated[bool, typer.Option(help="Small budget: about a minute on 2 cores")] = False,
    env: Annotated[
        str, typer.Option(help="Simulation: 'epm' (EPM dynamics) or 'length' (length choice)")
    ] = "epm",
) -> None:
    """Train a policy per estimator and seed on the SIMULATION; print and save the comparison."""
    names = _estimator_names(estimators)
    if env not in ("epm", "length"):
        raise ConfigError(f"unknown simulation {env!r}; valid: epm, length", field="--env")
    try:  # fail before training, not after it: the outputs are written at the end
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        problem = f"cannot create the output folder ({exc.strerror or exc.__class__.__name__})"
        raise ConfigError(problem, file=out, field="--out") from None
    from empathos.rl import compare as rl_compare
    from empathos.rl.sim import SIMULATION_LABEL
    from empathos.rl.sim_training import TrainConfig

    n_seeds = seeds if seeds is not None else (4 if quick else 10)
    n_steps = steps if steps is not None else (40 if quick else 150)
    train_cfg = TrainConfig(
        steps=n_steps,
        eval_every=max(1, n_steps // 8),
        eval_personas=64 if quick else 128,
        env="length" if env == "length" else "epm",
    )
    cfg = rl_compare.CompareConfig(estimators=names, seeds=n_seeds, train=train_cfg)
    import torch

    torch.set_num_threads(1)  # tiny networks: one thread is faster and shares the machine
    console = Console() if sys.stdout.isatty() else Console(width=150)
    console.print(f"[bold]{SIMULATION_LABEL}[/bold]")
    total = len(names) * n_seeds * n_steps
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console) as progress:
        task = progress.add_task("training", total=total)

        def on_step(name: str, seed: int, step: int) -> None:
            progress.update(task, advance=1, description=f"{name} seed {seed}")

        runs = rl_compare.run_compare(cfg, on_step)
    rows = rl_compare.aggregate(runs, metrics=rl_compare.metrics_for(env))
    console.print(_result_table(rows, train_cfg))
    for path in rl_compare.write_outputs(cfg, runs, rows, out):
        console.print(f"wrote {path}")
