"""What `empathos run` shows around the run itself: the bundled model's loading as one status
line, and an excerpt of one dialogue before the leaderboard; and the line every resumable
command prints when Ctrl-C or SIGTERM stops it (``empathos.run.interrupt``)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import typer
from rich.console import Console

from empathos.run.interrupt import Interrupted, interrupted_line

if TYPE_CHECKING:
    from empathos.run.session import PreparedRun

__all__ = ["interrupted_line", "print_excerpt", "stopped", "warm_offline_model"]

_ROLES = ("user", "director", "judge", "model_under_test")


def stopped(stop: Interrupted, err: Console) -> typer.Exit:
    """Print the one line of a session stopped by Ctrl-C or SIGTERM; the exit to raise (130
    or 143). Every resumable command stops through it."""
    err.print(stop.line(), markup=False)
    return typer.Exit(stop.code)


def warm_offline_model(prepared: PreparedRun, console: Console) -> None:
    """Load the bundled model before the progress bar starts, when a role runs on it and a
    dialogue is pending: a spinner while it loads (the first run converts the GGUF file
    once), then one line."""
    config = prepared.config
    roles = [r for r in _ROLES if config.role(r).kind == "offline"]
    if config.director_mode == "rules":
        roles = [r for r in roles if r != "director"]
    if not roles or not prepared.plan.pending:
        return
    from empathos.llm.offline import load_offline_model

    t0 = time.perf_counter()
    with console.status(
        "loading the bundled model (the first run converts it from GGUF once, ~20 s)..."
    ):
        lm = load_offline_model()
    how = "converted from GGUF and cached" if lm.source == "gguf" else "loaded"
    console.print(
        f"bundled model SmolLM2-135M-Instruct {how} in {time.perf_counter() - t0:.1f} s",
        markup=False,
        highlight=False,
    )


def print_excerpt(prepared: PreparedRun, console: Console) -> None:
    """A few turns of one finished dialogue of the run's selection, naming its record file."""
    from empathos.records import load_records
    from empathos.report import dialogue_excerpt, pick_dialogue

    trials = prepared.config.trials
    wanted = [f"{s.id}__t{t}" for s in prepared.scenarios for t in range(trials)]
    records, _ = load_records([prepared.run_dir.records])
    chosen = pick_dialogue(records, wanted)
    if chosen is None:
        return
    for line in dialogue_excerpt(chosen.record, chosen.path, width=max(60, console.width - 12)):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
