"""Reading and writing records: atomic writes, per-file format detection, directory walks."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from empathos.errors import RecordError
from empathos.records.model import SUPPORTED_SCHEMA_VERSIONS, DialogueRecord
from empathos.records.published import import_published, is_published

__all__ = [
    "RUN_MANIFEST_NAME",
    "RUN_RECORDS_DIR",
    "LoadedRecord",
    "RecordFormat",
    "detect_format",
    "find_record_files",
    "load_records",
    "read_record",
    "record_from_data",
    "write_record",
    "write_text_atomic",
]

#: The layout of a run directory (written by ``empathos.scoring``; read here by ``score``).
RUN_MANIFEST_NAME = "manifest.json"
RUN_RECORDS_DIR = "records"

RecordFormat = Literal["empathos", "empa-published"]


@dataclass(frozen=True, slots=True)
class LoadedRecord:
    """A record with where it came from; ``group`` is the name of its directory."""

    path: Path
    group: str
    record: DialogueRecord

    @property
    def model_name(self) -> str:
        """The tested model's name, or the directory name when the record has none; a
        re-judged record's says which judge rated it (so that it never merges with the
        original's row, nor counts as its duplicate)."""
        name = self.record.model or self.group
        rejudged = self.record.rejudged
        return f"{name} (re-judged: {rejudged.judge})" if rejudged is not None else name


def detect_format(data: object) -> RecordFormat | None:
    """Which format a parsed JSON document is in (None: neither)."""
    if isinstance(data, dict) and "schema_version" in data:
        return "empathos"
    if is_published(data):
        return "empa-published"
    return None


def _pydantic_error(exc: ValidationError, file: Path) -> RecordError:
    first = exc.errors()[0]
    field = ".".join(str(x) for x in first["loc"]) or None
    msg = first["msg"]
    msg = msg.removeprefix("Value error, ")  # our own validators' messages stand alone
    return RecordError(msg, file=file, field=field)


def record_from_data(data: Any, *, file: Path) -> DialogueRecord:
    """Build a record from a parsed document of either format."""
    fmt = detect_format(data)
    try:
        if fmt == "empathos":
            if data.get("schema_version") not in SUPPORTED_SCHEMA_VERSIONS:
                supported = ", ".join(map(str, SUPPORTED_SCHEMA_VERSIONS))
                raise RecordError(
                    f"unsupported schema_version {data.get('schema_version')!r} "
                    f"(supported: {supported})",
                    file=file,
                    field="schema_version",
                )
            return DialogueRecord.model_validate(data)
        if fmt == "empa-published":
            return import_published(data, file=file)
    except ValidationError as exc:
        raise _pydantic_error(exc, file) from None
    except (TypeError, ValueError, KeyError, AttributeError, IndexError) as exc:
        # Last resort for shapes the importer does not check field by field.
        raise RecordError(
            f"malformed content ({exc.__class__.__name__}: {str(exc)[:80]})", file=file
        ) from None
    raise RecordError(
        "not a dialogue record (neither empathos 'schema_version' nor published 'epj')",
        file=file,
        field="(top level)",
    )


def _not_json(p: Path, byte: int, where: str = "") -> RecordError:
    """The one message of a file that is not a JSON document: cut short (by a full disk, a
    killed copy), cut inside a UTF-8 sequence, or not JSON at all."""
    return RecordError(f"not valid JSON/UTF-8 at byte {byte}{where}", file=p, field="(file)")


def read_record(path: str | Path) -> DialogueRecord:
    """Read one ``.json`` record file of either format."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise RecordError(
            f"cannot read: {exc.strerror or exc.__class__.__name__}", file=p
        ) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _not_json(p, exc.start) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        byte = len(text[: exc.pos].encode("utf-8"))
        raise _not_json(p, byte, f" (line {exc.lineno}, column {exc.colno})") from None
    return record_from_data(data, file=p)


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Write ``text`` atomically: a temporary file in the same folder, fsync, then
    ``os.replace``, so readers (and a crash) see the old file or the new one, never half."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        Path(tmp).chmod(0o644)  # mkstemp creates 0600; outputs are meant to be shared
        Path(tmp).replace(p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return p


def write_record(record: DialogueRecord, path: str | Path) -> Path:
    """Write one record atomically (see :func:`write_text_atomic`)."""
    return write_text_atomic(path, record.model_dump_json(indent=1))


def find_record_files(paths: Iterable[str | Path]) -> Iterator[tuple[Path, str]]:
    """Expand paths into ``(file, group)`` pairs, sorted within each directory.

    A file stands for itself (group: its directory's name); a directory holds record files
    (one directory = one model) and/or directories of them. Hidden files are skipped. A run
    directory written by ``empathos run`` (``manifest.json`` beside ``records/``) stands for
    the records in its ``records/`` folder.
    """
    for raw in paths:
        p = Path(raw)
        if p.is_dir() and (p / RUN_MANIFEST_NAME).is_file() and (p / RUN_RECORDS_DIR).is_dir():
            # a run directory of `empathos run`: its records, grouped under the run's name
            for f in sorted((p / RUN_RECORDS_DIR).glob("*.json")):
                if not f.name.startswith("."):
                    yield f, p.resolve().name
        elif p.is_dir():
            entries = sorted(x for x in p.iterdir() if not x.name.startswith("."))
            for f in entries:
                if f.is_file() and f.suffix == ".json":
                    yield f, p.resolve().name
            for d in entries:
                if d.is_dir():
                    yield from find_record_files([d])
        else:
            yield p, p.resolve().parent.name


def load_records(paths: Iterable[str | Path]) -> tuple[list[LoadedRecord], list[RecordError]]:
    """Load every record under ``paths``; a bad file becomes an error, the rest still load."""
    good: list[LoadedRecord] = []
    bad: list[RecordError] = []
    for path, group in find_record_files(paths):
        if not path.exists():
            bad.append(RecordError("no such file or directory", file=path))
            continue
        try:
            good.append(LoadedRecord(path, group, read_record(path)))
        except RecordError as exc:
            bad.append(exc)
    return good, bad
