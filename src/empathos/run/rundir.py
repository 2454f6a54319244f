"""The run directory: manifest, one JSON record per finished dialogue, an SQLite index.

Layout::

    <out>/manifest.json            what the run was made with (see empathos.run.manifest)
    <out>/index.sqlite             one row per finished dialogue (done or error)
    <out>/records/<case>__t<k>.json one record per finished dialogue (written atomically)
    <out>/cache.sqlite             the response cache, when a role has cache: true
    <out>/run.lock                 the one-writer lock (see empathos.run.lock)

A record file is written first (temporary file + rename), then indexed; on open the index is
reconciled with the files (every record is parsed: a record written just before a crash is
indexed, a row whose file is gone or cannot be read is dropped so that dialogue runs again,
stale temporary files are removed), so a crash loses at most the dialogues in flight.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from empathos.epm import TerminationKind
from empathos.errors import ConfigError, RecordError
from empathos.records import DialogueRecord, read_record, write_record
from empathos.records.io import RUN_RECORDS_DIR
from empathos.run.lock import LOCK_NAME, RunLock
from empathos.run.manifest import MANIFEST_NAME, read_manifest, utc_now

__all__ = [
    "INDEX_NAME",
    "RECORDS_DIR",
    "DialogueKey",
    "IndexRow",
    "RowReader",
    "RunDir",
    "dialogue_row",
    "open_run_dir",
    "row_for",
]

INDEX_NAME = "index.sqlite"
RECORDS_DIR = RUN_RECORDS_DIR
# What a run writes; a directory holding only these (say, after a failed start) is ours.
_OURS = frozenset(
    {
        MANIFEST_NAME,
        *(
            f"{db}{suffix}"
            for db in ("index.sqlite", "cache.sqlite")
            for suffix in ("", "-wal", "-shm")
        ),
        "records",
        "logs",  # per-dialogue logs of the empa-release protocol
        LOCK_NAME,
    }
)
_KEY = re.compile(r"^(?P<case>.+)__t(?P<trial>\d+)$")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS dialogues (
  dialogue_id TEXT PRIMARY KEY,
  scenario_id TEXT NOT NULL,
  trial INTEGER NOT NULL,
  scenario_hash TEXT,
  status TEXT NOT NULL CHECK (status IN ('done', 'error')),
  termination TEXT NOT NULL,
  reason TEXT NOT NULL,
  turns INTEGER NOT NULL,
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  cost_usd REAL,
  file TEXT NOT NULL,
  finished_at TEXT NOT NULL
)
"""
_COLUMNS = (
    "dialogue_id, scenario_id, trial, scenario_hash, status, termination, reason, turns, "
    "input_tokens, output_tokens, cost_usd, file, finished_at"
)


@dataclass(frozen=True, order=True)
class DialogueKey:
    """One dialogue of a run: a scenario and a trial number (also its seed)."""

    scenario_id: str
    trial: int

    @property
    def id(self) -> str:
        """``<scenario id>__t<trial>``, also the record file's stem."""
        return f"{self.scenario_id}__t{self.trial}"


@dataclass(frozen=True)
class IndexRow:
    """One finished dialogue as the index holds it."""

    dialogue_id: str
    scenario_id: str
    trial: int
    scenario_hash: str | None
    status: Literal["done", "error"]
    termination: str
    reason: str
    turns: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    file: str
    finished_at: str


def row_for(key: DialogueKey, record: DialogueRecord, file: str) -> IndexRow:
    """The index row of a finished dialogue's record."""
    calls = record.model_calls
    costs = [c.cost_usd for c in calls if c.cost_usd is not None]
    is_error = record.termination.kind is TerminationKind.ERROR
    return IndexRow(
        dialogue_id=key.id,
        scenario_id=key.scenario_id,
        trial=key.trial,
        scenario_hash=record.scenario_hash,
        status="error" if is_error else "done",
        termination=record.termination.kind.value,
        reason=record.termination.reason or "",
        turns=record.total_turns,
        input_tokens=sum(c.prompt_tokens or 0 for c in calls),
        output_tokens=sum(c.completion_tokens or 0 for c in calls),
        cost_usd=sum(costs) if costs else None,
        file=file,
        finished_at=record.created_at or utc_now(),
    )


#: Reads one record file (its path, key and path relative to the run directory) into its index
#: row; a RecordError when the file cannot be read. Dialogue records by default; other record
#: kinds (``empathos bench``'s items) bring their own.
RowReader = Callable[[Path, DialogueKey, str], IndexRow]


def dialogue_row(file: Path, key: DialogueKey, relative: str) -> IndexRow:
    """The index row of a dialogue record file."""
    return row_for(key, read_record(file), relative)


class RunDir:
    """An opened run directory (see the module docstring for its layout), held by this
    process alone while ``lock`` is held (:func:`open_run_dir` takes it)."""

    def __init__(
        self, path: Path, lock: RunLock | None = None, read_row: RowReader = dialogue_row
    ) -> None:
        self.path = path
        self.lock = lock
        self._read_row = read_row
        self.records = path / RECORDS_DIR
        self.records.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path / INDEX_NAME)
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(_SCHEMA)
            self._db.commit()
        except sqlite3.DatabaseError as exc:
            self._db.close()
            if lock is not None:
                lock.release()
            raise ConfigError(
                f"damaged run index ({exc}); delete it and rerun: the records are indexed again "
                "from their files",
                file=path / INDEX_NAME,
            ) from None

    def record_path(self, key: DialogueKey) -> Path:
        """Where the record of ``key`` lives."""
        return self.records / f"{key.id}.json"

    def rows(self) -> dict[str, IndexRow]:
        """Every indexed dialogue, by id."""
        cur = self._db.execute(f"SELECT {_COLUMNS} FROM dialogues ORDER BY dialogue_id")
        return {r[0]: IndexRow(*r) for r in cur.fetchall()}

    def save(self, key: DialogueKey, record: DialogueRecord) -> IndexRow:
        """Write the record atomically, then index it (replacing an earlier error row)."""
        path = write_record(record, self.record_path(key))
        row = row_for(key, record, str(path.relative_to(self.path)))
        self.index(row)
        return row

    def index(self, row: IndexRow, *, commit: bool = True) -> None:
        """Add (or replace) the row of a dialogue whose record is already on disk."""
        marks = ", ".join("?" * len(_COLUMNS.split(", ")))
        values = tuple(getattr(row, c.strip()) for c in _COLUMNS.split(","))
        self._db.execute(f"INSERT OR REPLACE INTO dialogues ({_COLUMNS}) VALUES ({marks})", values)
        if commit:
            self._db.commit()

    def reconcile(self) -> list[RecordError]:
        """Make the index agree with the files; return the record files that cannot be read.

        Every record file is parsed, indexed or not: one that cannot be read (cut short by a
        full disk, damaged by hand or by a copy) loses its row, so its dialogue runs again
        (the new record replaces the file), and it is returned to be reported by name."""
        for stale in self.records.glob(".*.tmp"):
            stale.unlink(missing_ok=True)
        rows = self.rows()
        for dialogue_id, row in rows.items():
            if not (self.path / row.file).is_file():
                self._db.execute("DELETE FROM dialogues WHERE dialogue_id = ?", (dialogue_id,))
        problems: list[RecordError] = []
        for file in sorted(self.records.glob("*.json")):
            match = _KEY.match(file.stem)
            if match is None:
                continue
            key = DialogueKey(match["case"], int(match["trial"]))
            try:
                row = self._read_row(file, key, str(file.relative_to(self.path)))
            except RecordError as exc:
                problems.append(exc)
                self._db.execute("DELETE FROM dialogues WHERE dialogue_id = ?", (file.stem,))
                continue
            if file.stem not in rows:
                self.index(row, commit=False)
        self._db.commit()
        return problems

    def close(self) -> None:
        """Close the index and release the directory's lock."""
        self._db.close()
        if self.lock is not None:
            self.lock.release()


def _differences(old: dict[str, str], new: dict[str, str]) -> list[str]:
    return sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))


def _start_over(path: Path) -> None:
    """Remove what a run wrote (only that): manifest, index, records, cache."""
    for name in (MANIFEST_NAME, INDEX_NAME, f"{INDEX_NAME}-wal", f"{INDEX_NAME}-shm"):
        (path / name).unlink(missing_ok=True)
    shutil.rmtree(path / RECORDS_DIR, ignore_errors=True)


def open_run_dir(
    path: Path, fingerprint: dict[str, str], *, force: bool, read_row: RowReader = dialogue_row
) -> RunDir:
    """Open (or create) ``path`` for a run with ``fingerprint``, holding its lock.

    A directory another live run holds is refused (one line naming the holder); a lock left
    by a killed run is taken over (``RunDir.lock.previous`` names it). A directory made with a
    different config is refused (one line naming the parts that differ) unless ``force``,
    which starts it over. A non-empty directory that is not a run directory is always
    refused."""
    if path.exists() and not path.is_dir():
        raise ConfigError("exists and is not a directory", file=path, field="--out")
    if path.is_dir() and read_manifest(path) is None:
        foreign = [p for p in path.iterdir() if p.name not in _OURS]
        if foreign:
            raise ConfigError(
                "exists, is not empty and is not a run directory (no manifest.json); "
                "choose another --out",
                file=path,
                field="--out",
            )
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        problem = f"cannot create the run directory ({exc.strerror or exc.__class__.__name__})"
        raise ConfigError(problem, file=path, field="--out") from None
    lock = RunLock.acquire(path, utc_now())
    try:
        old = read_manifest(path)  # read again: only now is no other run writing it
        if old is not None:
            diff = _differences(old.fingerprint, fingerprint)
            if diff and not force:
                raise ConfigError(
                    f"was made with a different config (differs in: {', '.join(diff)}); its "
                    "records are kept: resume it with the config it was made with, or choose "
                    "another --out for this one (--force would delete them and start over)",
                    file=path,
                    field="--out",
                )
            if diff:
                _start_over(path)
        return RunDir(path, lock, read_row)
    except BaseException:
        lock.release()
        raise
