"""Driving a prepared session to its end: a progress bar, and the session closed whatever
happens (``empathos bench`` and ``empathos rejudge`` run through it)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Literal

from rich.console import Console

from empathos.run.prepared import PreparedSession
from empathos.run.progress import RunProgress
from empathos.run.runner import Plan, RunOutcome
from empathos.run.session import close_session

__all__ = ["drive_session"]


def drive_session(
    prepared: PreparedSession,
    execute: Callable[[RunProgress], Coroutine[object, object, RunOutcome]],
    console: Console,
    plan: Plan,
    *,
    before_close: Callable[[], None] | None = None,
    unit: str = "dialogues",
) -> RunOutcome:
    """Run ``execute`` under a progress bar and close the session whatever happens: completed,
    interrupted (Ctrl-C or SIGTERM, re-raised) or failed; ``before_close`` runs just before
    the close (e.g. to set the usage of records that are not dialogues)."""
    status: Literal["completed", "interrupted", "failed"] = "failed"
    try:
        with RunProgress(
            console, plan.total, done_before=len(plan.finished), unit=unit
        ) as progress:
            outcome: RunOutcome = asyncio.run(execute(progress))
        status = "completed"
    except (KeyboardInterrupt, asyncio.CancelledError):  # the latter: SIGTERM, SIGINT ignored
        status = "interrupted"
        raise
    finally:
        if before_close is not None:
            before_close()
        close_session(prepared, prepared.outcome, status)
    return outcome
