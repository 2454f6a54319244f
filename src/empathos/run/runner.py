"""The concurrent runner: plan the dialogues of a run, skip the finished ones, run the rest.

Dialogues run as asyncio tasks, at most ``concurrency`` at once (each endpoint also keeps its
own named limit in the model client). Each finished dialogue is written atomically and then
indexed, as soon as it ends, so Ctrl-C or a crash loses only the dialogues in flight, which
the same command runs again. The runner knows nothing of models: it is given a function
that produces one dialogue's record (see :mod:`empathos.run.session` for the sandbox one,
:mod:`empathos.run.protocols.empa_release` for the published release's loop).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import traceback
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from empathos.errors import ConfigError
from empathos.records import DialogueRecord
from empathos.records.io import write_text_atomic
from empathos.run.rundir import DialogueKey, IndexRow, RunDir, row_for

__all__ = [
    "Case",
    "CrashFn",
    "DialogueFn",
    "IndexedRecord",
    "Job",
    "Plan",
    "ProgressSink",
    "RunOutcome",
    "StoredRecord",
    "failure_reason",
    "plan_jobs",
    "run_jobs",
]


class Case(Protocol):
    """What the runner needs of a case: an id and a hash of its content (a Scenario, or a
    case of another protocol)."""

    @property
    def id(self) -> str:
        """The case id."""
        ...

    def scenario_hash(self) -> str:
        """A hash of the case's content (a changed case is not resumed)."""
        ...


@dataclass(frozen=True)
class Job:
    """One dialogue to produce: a scenario and a trial (the trial is also the seed)."""

    key: DialogueKey
    scenario: Case


@dataclass(frozen=True)
class StoredRecord:
    """A dialogue's record with the exact text its file holds (a format other than ours,
    e.g. the published one); ``record`` is that text read back, for the index."""

    record: DialogueRecord
    text: str


@dataclass(frozen=True)
class Plan:
    """The dialogues a run selects, split into those already finished and those to run."""

    pending: list[Job]
    finished: list[IndexRow]

    @property
    def total(self) -> int:
        """All selected dialogues."""
        return len(self.pending) + len(self.finished)


class ProgressSink(Protocol):
    """What the runner reports while it works (the CLI shows it as a progress bar)."""

    def dialogue_started(self, key: DialogueKey) -> None:
        """A dialogue began."""

    def dialogue_finished(self, key: DialogueKey, row: IndexRow) -> None:
        """A dialogue ended and its record is on disk."""

    def dialogue_crashed(self, key: DialogueKey, reason: str, *, recorded: bool) -> None:
        """A dialogue raised an unexpected exception (a bug); ``recorded``: its error record
        was written (else nothing was)."""


class IndexedRecord(Protocol):
    """A record of another kind than a dialogue's (``empathos bench``'s items): it writes
    itself as JSON and gives its own index row."""

    def model_dump_json(self, *, indent: int | None = None) -> str:
        """The record file's text."""
        ...

    def index_row(self, key: DialogueKey, file: str) -> IndexRow:
        """The index row of this record, stored at ``file`` (relative to the run directory)."""
        ...


Result = DialogueRecord | StoredRecord | IndexedRecord
DialogueFn = Callable[[Job], Awaitable[Result]]
CrashFn = Callable[[Job, Exception], DialogueRecord | IndexedRecord]


@dataclass
class RunOutcome:
    """What one session produced."""

    rows: list[IndexRow] = field(default_factory=list)
    crashed: dict[str, str] = field(default_factory=dict)

    @property
    def errors(self) -> int:
        """Dialogues of this session recorded as errors (crashes included)."""
        return sum(r.status == "error" for r in self.rows)

    @property
    def attempted(self) -> int:
        """Dialogues this session ran to an outcome: finished, errors and crashes."""
        return len({r.dialogue_id for r in self.rows} | set(self.crashed))

    @property
    def failed(self) -> bool:
        """True when the session ran dialogues and not one of them finished without error."""
        return self.attempted > 0 and not any(r.status == "done" for r in self.rows)


def plan_jobs(
    scenarios: Sequence[Case],
    trials: int,
    run_dir: RunDir,
    *,
    retry_errors: bool,
    same_source: bool = False,
) -> Plan:
    """Every (scenario, trial) of the selection; finished ones (errors too, unless
    ``retry_errors``) are skipped. A finished dialogue whose scenario has changed since is
    refused: the directory would mix two versions of a case; unless ``same_source`` (the
    files the cases were read from are byte for byte those the run was made from: only the
    way a case's hash is made changed, so its records are kept)."""
    rows = run_dir.rows()
    pending: list[Job] = []
    finished: list[IndexRow] = []
    changed: list[str] = []
    for scenario in scenarios:
        digest = scenario.scenario_hash()
        for trial in range(trials):
            key = DialogueKey(scenario.id, trial)
            row = rows.get(key.id)
            if row is not None and row.scenario_hash not in (None, digest) and not same_source:
                changed.append(key.id)
            elif row is not None and (row.status == "done" or not retry_errors):
                finished.append(row)
            else:
                pending.append(Job(key, scenario))
    if changed:
        raise ConfigError(
            f"scenario content changed since these dialogues were recorded: "
            f"{', '.join(changed[:5])}{' ...' if len(changed) > 5 else ''}; their records are "
            "kept: choose another --out to run the changed scenarios (--force would delete "
            "this run's records and start over)",
            file=run_dir.path,
            field="--out",
        )
    return Plan(pending=pending, finished=finished)


async def run_jobs(
    jobs: Sequence[Job],
    run_dir: RunDir,
    dialogue: DialogueFn,
    *,
    concurrency: int,
    progress: ProgressSink,
    crash_record: CrashFn | None = None,
    outcome: RunOutcome | None = None,
) -> RunOutcome:
    """Run ``jobs`` with at most ``concurrency`` in flight; write and index each as it ends.

    ``outcome`` (a new one if not given) is filled as dialogues end, so a caller that is
    interrupted still knows what this session finished.

    An unexpected exception in one dialogue (a bug, never a model failure: those come back
    as ``error`` records) is reported and, with ``crash_record``, recorded as that function's
    ``error`` record (the exception's type and message); the others go on. On cancellation
    (Ctrl-C) the dialogues in flight are dropped and the finished ones stay. ``outcome``
    (default: a new one) is filled as dialogues end, so a caller interrupted mid-run can
    still count what finished."""
    outcome = RunOutcome() if outcome is None else outcome
    gate = asyncio.Semaphore(concurrency)

    def keep(job: Job, result: Result) -> IndexRow:
        row = _write_and_index(run_dir, job, result)
        outcome.rows.append(row)
        return row

    async def one(job: Job) -> None:
        async with gate:
            progress.dialogue_started(job.key)
            try:
                result = await dialogue(job)
            except Exception as exc:
                reason = "".join(traceback.format_exception_only(exc)).strip()
                outcome.crashed[job.key.id] = reason
                if crash_record is not None:
                    keep(job, crash_record(job, exc))
                progress.dialogue_crashed(job.key, reason, recorded=crash_record is not None)
                return
            progress.dialogue_finished(job.key, keep(job, result))

    with _fewer_collections():
        tasks = [asyncio.create_task(one(job), name=job.key.id) for job in jobs]
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
    return outcome


def _write_and_index(run_dir: RunDir, job: Job, result: Result) -> IndexRow:
    """Write a finished job's record atomically, then index it."""
    # Written and indexed with no await in between: a cancellation (Ctrl-C) cannot
    # fall between the two. One small file with fsync holds the loop for milliseconds.
    text = result.text if isinstance(result, StoredRecord) else result.model_dump_json(indent=1)
    path = write_text_atomic(run_dir.record_path(job.key), text)
    file = str(path.relative_to(run_dir.path))
    if isinstance(result, StoredRecord):
        row = row_for(job.key, result.record, file)
    elif isinstance(result, DialogueRecord):
        row = row_for(job.key, result, file)
    else:
        row = result.index_row(job.key, file)
    run_dir.index(row)
    return row


@contextlib.contextmanager
def _fewer_collections() -> Iterator[None]:
    """While dialogues run: what exists before (modules, scenarios, clients) is moved out of
    the cyclic garbage collector's reach (``gc.freeze``) and its youngest generation is
    collected every 10,000 allocations instead of the default 700. A run allocates many
    short-lived, acyclic objects (requests, replies, records); with the defaults the
    collector took ~15% of a 1,000-dialogue run's CPU, traversing the same long-lived objects
    again and again. Both settings are put back afterwards; if the caller had frozen objects
    itself, they stay frozen (``gc.unfreeze`` cannot release only ours)."""
    before = gc.get_threshold()
    frozen_by_caller = gc.get_freeze_count() > 0
    gc.freeze()
    gc.set_threshold(10_000, 20, 20)
    try:
        yield
    finally:
        gc.set_threshold(*before)
        if not frozen_by_caller:
            gc.unfreeze()


def failure_reason(outcome: RunOutcome) -> str | None:
    """Why a session that ran dialogues failed (not one finished without error), else None."""
    if not outcome.failed:
        return None
    n, crashed = outcome.attempted, len(outcome.crashed)
    if crashed == n:
        return f"every dialogue crashed ({crashed} of {n})"
    if crashed:
        return f"no dialogue finished: {crashed} of {n} crashed, {n - crashed} ended as errors"
    return f"every dialogue ended as an error ({n} of {n})"
