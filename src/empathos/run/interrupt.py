"""The one interrupt and termination path of every resumable command (run, rejudge, bench,
``compare --pairwise``): Ctrl-C and SIGTERM stop a session alike, what it finished is kept,
and one line says so; the exit code is 130 for Ctrl-C, 143 for SIGTERM."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["Interrupted", "interrupted_line", "interruptible", "sigterm_as_sigint"]


def interrupted_line(how: str, done: str, where: Path | None = None) -> str:
    """The line a command prints when stopped (``how``: Ctrl-C or SIGTERM): what this
    session finished (``done``, e.g. "3 dialogue(s) finished") is kept (in ``where``), and
    the same command resumes. Every resumable command prints it alike."""
    kept = f"kept in {where}" if where is not None else "kept"
    return f"interrupted ({how}): {done} in this session are {kept}; run the same command to resume"


class Interrupted(KeyboardInterrupt):
    """A session stopped by Ctrl-C or SIGTERM (``how``), having finished ``done`` (kept in
    ``where``): the command prints :meth:`line` and exits with :attr:`code`. A
    KeyboardInterrupt, so that no ``except Exception`` swallows it and a handler of Ctrl-C
    still sees it."""

    def __init__(self, how: str, done: str, where: Path | None = None) -> None:
        super().__init__(how)
        self.how = how
        self.done = done
        self.where = where

    @property
    def code(self) -> int:
        """The exit code: 143 for SIGTERM, 130 for Ctrl-C."""
        return 143 if self.how == "SIGTERM" else 130

    def line(self) -> str:
        """What the command prints (:func:`interrupted_line`)."""
        return interrupted_line(self.how, self.done, self.where)


@contextmanager
def sigterm_as_sigint() -> Iterator[list[bool]]:
    """While inside, SIGTERM does what Ctrl-C does (the run stops cleanly: finished dialogues
    kept, the session marked interrupted); the flag it yields says whether one came."""
    came = [False]

    def on_term(signum: int, frame: Any) -> None:
        came[0] = True
        handler = signal.getsignal(signal.SIGINT)  # asyncio's while a run is in flight
        if callable(handler):
            handler(signal.SIGINT, frame)
            return
        # SIGINT inherited as ignored (a background job): asyncio installed no handler of its
        # own. A KeyboardInterrupt raised here would end the task that happens to run with it
        # ("Task exception was never retrieved" and a traceback); instead every task is
        # cancelled: the dialogue running now ends at its next wait, the others never start,
        # and asyncio.run raises CancelledError, which the command treats as the interrupt.
        # The loop is woken as well: with only a hung request in flight it waits in its
        # selector, where the cancellations alone would never reach it.
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            raise KeyboardInterrupt from None
        for task in asyncio.all_tasks(loop):
            task.cancel()
        loop.call_soon_threadsafe(lambda: None)

    try:
        before = signal.signal(signal.SIGTERM, on_term)
    except ValueError:  # not the main thread: leave SIGTERM alone
        yield came
        return
    try:
        yield came
    finally:
        signal.signal(signal.SIGTERM, before)


@contextmanager
def interruptible(done: Callable[[], str], where: Path | None = None) -> Iterator[None]:
    """Run the inside with SIGTERM as Ctrl-C (:func:`sigterm_as_sigint`); either one (or the
    CancelledError a SIGTERM in a background job ends ``asyncio.run`` with) raises
    :class:`Interrupted`, naming what this session finished (``done()``, asked then)."""
    with sigterm_as_sigint() as terminated:
        try:
            yield
        except (KeyboardInterrupt, asyncio.CancelledError):
            how = "SIGTERM" if terminated[0] else "Ctrl-C"
            raise Interrupted(how, done(), where) from None
