"""What `empathos run` shows around the run itself: its header, the bundled model's loading
as one status line, and an excerpt of one dialogue before the leaderboard; and what every
campaign on a run directory prints alike: the line when Ctrl-C or SIGTERM stops it
(``empathos.run.interrupt``) and the advice when a session failed."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console

from empathos.run.interrupt import Interrupted

if TYPE_CHECKING:
    from empathos.run.runner import RunOutcome
    from empathos.run.session import PreparedRun

__all__ = [
    "failed_guidance",
    "print_excerpt",
    "run_header",
    "stopped",
    "warm_offline_model",
]

_ROLES = ("user", "director", "judge", "model_under_test")
# The reason of a dialogue refused at its start (empathos.epm.start_problem).
_DEGENERATE = "degenerate starting point"


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


def run_header(prepared: PreparedRun, err: Console) -> None:
    """What ``empathos run`` says before it starts: the selection, the settings, warnings,
    a takeover, skipped scenarios, unreadable records, what a resume finds done."""
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
    warning = cfg.score_warning()
    if warning and not cfg.offline_default:
        err.print(
            f"warning: the scores of this run are NOT MEANINGFUL: {warning}.",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    previous = prepared.run_dir.lock.previous if prepared.run_dir.lock else None
    if previous is not None:
        err.print(
            f"taking over {cfg.out}: the run that held it ({previous.describe()}) was killed; "
            "its finished dialogues are kept",
            markup=False,
            highlight=False,
            soft_wrap=True,
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


def failed_guidance(
    out: Path | None, outcome: RunOutcome, err: Console, what: str = "run", done: str = "scored"
) -> None:
    """The advice a failed session prints (``what`` FAILED: why; nothing was ``done``)."""
    from empathos.run.runner import failure_reason

    err.print(
        f"{what} FAILED: {failure_reason(outcome)}; nothing was {done}.",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    if outcome.crashed:
        first = next(iter(outcome.crashed.values()))
        err.print(
            f"  a crash is a bug in empathos or its installation (first: {first}). If it names "
            "a missing module, reinstall: bash scripts/install.sh. Otherwise report it with "
            f"the error record ({out}/records/*.json: field 'error').",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    errors = [row.reason or "" for row in outcome.rows if row.status == "error"]
    degenerate = bool(errors) and not outcome.crashed and all(_DEGENERATE in r for r in errors)
    if degenerate:
        err.print(
            "  every dialogue was refused at its start: the judge's IEDR ratings gave a "
            "degenerate P_0 (no deficit for the dialogue to repair; the reasons are above). "
            "The judge is too weak to rate the scenarios (the bundled 135M model rates them "
            "all 0): point the judge at a capable model (--roles-model/--roles-base-url, or "
            "roles.judge in --config), or use scenarios with a stored P_0 (docs/epm.md).",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    elif len(outcome.crashed) < outcome.attempted:
        err.print(
            "  errors come from the model calls: check each role's base_url, model and key "
            f"(the reasons are above and in {out}/records).",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    if degenerate:  # the same judge would refuse them again
        return
    err.print(
        "  then run the same command again: failed dialogues are retried.",
        markup=False,
        highlight=False,
    )
