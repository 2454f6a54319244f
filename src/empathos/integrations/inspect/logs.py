"""Inspect logs of the ``empa`` task back to our record files (``empathos import-inspect``).

Every sample of the task keeps its dialogue's record in its store (:mod:`.transcript`),
errors included, so a log converts without loss: each (sample, epoch) becomes one record
file ``<out>/<log name>/<scenario>__t<trial>.json``, which ``empathos score``, ``report``
and ``compare`` read like the records of ``empathos run``. The numbers ``empathos score``
prints for them are the task's metrics (docs/inspect.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from inspect_ai.log import read_eval_log

from empathos.epm import TerminationKind
from empathos.errors import RecordError
from empathos.integrations.inspect.transcript import stored_record
from empathos.records import DialogueRecord, write_record

__all__ = ["TASK_NAMES", "ImportSummary", "LogRecords", "import_logs", "read_log"]

#: The task's names in a log: registered through the entry point, or loaded from its file.
TASK_NAMES = frozenset({"empathos/empa", "empa"})


@dataclass
class LogRecords:
    """The records of one log, and the samples that hold none (with the reason)."""

    path: Path
    records: list[DialogueRecord]
    missing: list[str] = field(default_factory=list)


@dataclass
class ImportSummary:
    """What :func:`import_logs` wrote."""

    written: list[Path] = field(default_factory=list)
    errors: int = 0
    missing: list[str] = field(default_factory=list)


def read_log(path: Path) -> LogRecords:
    """The records of one Inspect log (``.eval`` or ``.json``) of the ``empa`` task."""
    if not path.is_file():
        raise RecordError("no such file", file=path)
    try:
        log = read_eval_log(str(path))
    except Exception as exc:  # Inspect raises many kinds for a file that is not its log
        raise RecordError(
            f"not a readable Inspect log ({type(exc).__name__}: {str(exc)[:120]})", file=path
        ) from None
    if log.eval.task not in TASK_NAMES:
        raise RecordError(
            f"a log of the task {log.eval.task!r}, not of empathos/empa", file=path,
            field="eval.task",
        )  # fmt: skip
    if not log.samples:
        raise RecordError("the log holds no samples (run without --no-log-samples)", file=path)
    out = LogRecords(path, [])
    for sample in log.samples:
        where = f"{path}: sample {sample.id} epoch {sample.epoch}"
        record = stored_record(sample.store, where)
        if record is None:
            why = sample.error.message if sample.error else "no error recorded"
            out.missing.append(f"{where}: no dialogue record ({why.strip()[:200]})")
        else:
            out.records.append(record)
    return out


def _stem(record: DialogueRecord) -> str:
    dialogue_id = record.metadata.get("dialogue_id")
    return str(dialogue_id) if dialogue_id else f"{record.scenario_id}__t0"


def import_logs(paths: Sequence[Path], out: Path) -> ImportSummary:
    """Write the records of every log under ``out/<log name>/``; refuse two logs of the same
    name (their records would mix) and a record file that exists already."""
    summary = ImportSummary()
    seen: dict[str, Path] = {}
    logs = [read_log(p) for p in paths]  # every log is checked before anything is written
    for log in logs:
        name = log.path.stem
        if name in seen:
            raise RecordError(f"two logs of the same name ({seen[name]})", file=log.path)
        seen[name] = log.path
        for record in log.records:
            target = out / name / f"{_stem(record)}.json"
            if target.exists():
                raise RecordError("exists already (choose another --out)", file=target)
            summary.written.append(write_record(record, target))
            summary.errors += record.termination.kind is TerminationKind.ERROR
        summary.missing.extend(log.missing)
    return summary
