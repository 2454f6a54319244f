"""The run's progress display: one rich bar of dialogues, with turns, tokens, cost, errors.

It is both the runner's :class:`~empathos.run.runner.ProgressSink` and, per dialogue, the
sandbox's observer (:meth:`RunProgress.observer`), which reports every finished turn.
"""

from __future__ import annotations

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from empathos.run.rundir import DialogueKey, IndexRow
from empathos.sandbox.events import DialogueObserver, TurnEvent

__all__ = ["RunProgress"]


class RunProgress:
    """Counts and shows: dialogues done / total, turns, tokens in and out, cost, errors."""

    def __init__(
        self, console: Console, total: int, *, done_before: int = 0, unit: str = "dialogues"
    ) -> None:
        """``unit``: what the bar counts; a unit other than dialogues (``empathos bench``'s
        items: many, and quick) gets no ``finished`` line each (errors are still named),
        and its tokens and cost are counted from each finished item's row."""
        self.console = console
        self.unit = unit
        self.finished = 0
        self._observed: set[DialogueKey] = set()
        self.turns = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self.cost_usd = 0.0
        self.errors = 0
        self.crashes = 0
        self._bar = Progress(
            TextColumn(f"[bold]{unit}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.fields[stats]}"),
            console=console,
            transient=False,
            # rich's default 10 redraws a second cost ~22 ms of CPU a second (5% of a
            # 1,000-dialogue run's; 1.4 ms at 2); dialogues take seconds: two a second is enough
            refresh_per_second=2,
            # Not a terminal (a log file, a pipe): nothing is drawn until the end, so no
            # thread rebuilds the bar twice a second for nobody.
            auto_refresh=console.is_terminal,
        )
        self._task: TaskID = self._bar.add_task(
            "run", total=total, completed=done_before, stats=self._stats()
        )

    def __enter__(self) -> RunProgress:
        self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._refresh()
        self._bar.stop()

    def _stats(self) -> str:
        cost = f" · ${self.cost_usd:.4f}" if self.cost_usd else ""
        turns = f"turns {self.turns} · " if self.unit == "dialogues" else ""
        return (
            f"{turns}tokens {self.input_tokens:,} in / {self.output_tokens:,} out"
            f"{cost} · errors {self.errors + self.crashes}"
        )

    def _refresh(self) -> None:
        self._bar.update(self._task, stats=self._stats())

    # -- the sandbox's observer ----------------------------------------------------------
    def observer(self, key: DialogueKey) -> DialogueObserver:
        """The observer of one dialogue's turn events."""

        seen = [0]
        self._observed.add(key)

        def observe(event: TurnEvent) -> None:
            self.turns += max(0, event.turn - seen[0])
            seen[0] = max(seen[0], event.turn)
            self.input_tokens += event.input_tokens
            self.output_tokens += event.output_tokens
            self.cost_usd += event.cost_usd
            self._refresh()

        return observe

    # -- the runner's sink ---------------------------------------------------------------
    def dialogue_started(self, key: DialogueKey) -> None:
        """Nothing to show until the first turn ends."""

    def dialogue_finished(self, key: DialogueKey, row: IndexRow) -> None:
        """Advance the bar; print one line per dialogue (errors with their reason; for
        another unit, errors only). Tokens and cost no observer reported come from the row."""
        if key not in self._observed:  # no turn events (a bench item): the row's counts
            self.input_tokens += row.input_tokens
            self.output_tokens += row.output_tokens
            self.cost_usd += row.cost_usd or 0.0
        if row.status == "error":
            self.errors += 1
            self._line(f"error    {key.id}: {row.reason}")
        else:
            self.finished += 1
            if self.unit == "dialogues":
                self._line(f"finished {key.id}: {row.termination} after {row.turns} turn(s)")
        self._bar.advance(self._task)
        self._refresh()

    def _line(self, line: str) -> None:
        """``line`` above the bar on a terminal; as is, flushed, to a log file or a pipe
        (rich's rendering of a plain line there cost ~0.5 ms a dialogue)."""
        if self.console.is_terminal:
            self.console.print(line, markup=False, highlight=False, emoji=False, soft_wrap=True)
        else:
            out = self.console.file
            out.write(line + "\n")
            out.flush()

    def dialogue_crashed(self, key: DialogueKey, reason: str, *, recorded: bool) -> None:
        """A bug: say so; the dialogue runs again on resume (its error record, if written,
        holds the exception)."""
        self.crashes += 1
        where = "recorded as an error" if recorded else "not recorded"
        self._line(f"crashed  {key.id} ({where}; a bug, please report): {reason}")
        self._bar.advance(self._task)
        self._refresh()
