"""Inspect logs of the ``empa`` task back to our record files (``empathos import-inspect``).

Every sample of the task keeps its dialogue's record in its store (:mod:`.transcript`),
errors included, so a log converts without loss: each (sample, epoch) becomes one record
file ``<out>/<log name>/<scenario>__t<trial>.json``, which ``empathos score``, ``report``
and ``compare`` read like the records of ``empathos run``. The numbers ``empathos score``
prints for them are the task's metrics (docs/inspect.md).
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from inspect_ai.log import read_eval_log

from empathos.epm import TerminationKind
from empathos.errors import RecordError
from empathos.integrations.inspect.transcript import stored_record
from empathos.records import DialogueRecord, read_record, write_record

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
    kept: list[Path] = field(default_factory=list)
    replaced: list[Path] = field(default_factory=list)
    errors: int = 0
    missing: list[str] = field(default_factory=list)


def _not_a_log(path: Path) -> str | None:
    """What is wrong with a path that cannot be an Inspect log, in a few words (None: it
    may be one; Inspect's reader decides)."""
    if path.is_dir():
        return f"is a directory; name its log files ({path}/*.eval)"
    if not path.is_file():
        return "no such file"
    if path.stat().st_size == 0:
        return "is empty, not an Inspect log"
    if path.suffix == ".eval":
        return None if zipfile.is_zipfile(path) else "not an Inspect .eval log (not a zip archive)"
    try:
        data = json.loads(path.read_bytes())
    except (ValueError, UnicodeDecodeError):
        return "not an Inspect log (neither a .eval archive nor JSON)"
    if not isinstance(data, dict) or not isinstance(data.get("eval"), dict):
        return "JSON, but not an Inspect log (no 'eval' section)"
    return None


def _first_line(exc: Exception) -> str:
    """An exception of Inspect's reader in one line: its first line, whole words only."""
    lines = [x.strip() for x in str(exc).splitlines() if x.strip()]
    text = lines[0] if lines else type(exc).__name__
    if len(text) > 160:
        text = text[:160].rsplit(" ", 1)[0] + " ..."
    more = f" (and {len(lines) - 1} more line(s))" if len(lines) > 1 else ""
    return f"{type(exc).__name__}: {text}{more}"


def read_log(path: Path) -> LogRecords:
    """The records of one Inspect log (``.eval`` or ``.json``) of the ``empa`` task."""
    problem = _not_a_log(path)
    if problem is not None:
        raise RecordError(problem, file=path)
    try:
        log = read_eval_log(str(path))
    except Exception as exc:  # Inspect raises many kinds for a file that is not its log
        raise RecordError(f"not a readable Inspect log ({_first_line(exc)})", file=path) from None
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


def _check_out(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise RecordError("is a file; --out names the directory the records go to", file=out,
                          field="--out")  # fmt: skip


def _keep(record: DialogueRecord, target: Path, update: bool, summary: ImportSummary) -> None:
    """Write ``record`` to ``target``: a file holding the same record is kept (imported by an
    earlier run of the command); one holding another is refused unless ``update``."""
    if target.exists():
        try:
            same = read_record(target) == record
        except RecordError:
            same = False
        if same:
            summary.kept.append(target)
            return
        if not update:
            raise RecordError(
                "exists already and holds another record (the log was imported before and "
                "has changed since); pass --update to replace it, or choose another --out",
                file=target,
            )
        summary.replaced.append(target)
    try:
        summary.written.append(write_record(record, target))
    except OSError as exc:
        raise RecordError(f"cannot write ({exc.strerror or exc})", file=target) from None
    summary.errors += record.termination.kind is TerminationKind.ERROR


def import_logs(paths: Sequence[Path], out: Path, *, update: bool = False) -> ImportSummary:
    """Write the records of every log under ``out/<log name>/``; refuse two logs of the same
    name (their records would mix). Importing again keeps what was imported already (only new
    samples are written); a record file that holds another record is refused, or replaced
    with ``update``."""
    _check_out(out)
    summary = ImportSummary()
    seen: dict[str, Path] = {}
    logs = [read_log(p) for p in paths]  # every log is checked before anything is written
    for log in logs:
        name = log.path.stem
        if name in seen:
            raise RecordError(f"two logs of the same name ({seen[name]})", file=log.path)
        seen[name] = log.path
    for log in logs:
        for record in log.records:
            _keep(record, out / log.path.stem / f"{_stem(record)}.json", update, summary)
        summary.missing.extend(log.missing)
    return summary
