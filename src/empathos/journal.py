"""Append-only JSON-lines journals that survive a torn last line.

A journal (``judgements.jsonl`` of a pairwise results directory, ``metrics.jsonl`` of a
training run) gets one line per event, appended and flushed to disk as it happens. A kill -9
or a full disk can leave its last line cut short. Every journal goes through
:func:`mend` before it is read for a resume and before each append: a last line without its
newline that is a whole JSON value gets its newline (nothing was lost); one that is not is
moved, byte for byte, to the side file ``<name>.torn`` beside the journal (appended there, so
several crashes keep every fragment) and cut from the journal, and :func:`mend` says so in a
:class:`TornLine` that its caller reports as a warning naming the side file. So the next line
always starts on a line of its own, a partial line is never read as a record (nor glued to
the next one) and nothing written is thrown away.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["TORN_SUFFIX", "TornLine", "append_line", "mend", "read_lines"]

TORN_SUFFIX = ".torn"


@dataclass(frozen=True)
class TornLine:
    """A partial last line, set aside."""

    journal: Path
    side: Path
    size: int

    def message(self) -> str:
        """One line for a warning."""
        return (
            f"{self.journal}: its last line was cut short (a crash or a full disk); the "
            f"partial line ({self.size} bytes) is set aside in {self.side} and not counted"
        )


def _whole(tail: bytes) -> bool:
    try:
        json.loads(tail.decode("utf-8"))
    except ValueError:
        return False
    return True


def mend(path: Path) -> TornLine | None:
    """Make ``path`` end on a whole line; the partial last line set aside, if any."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return None
    if size == 0:
        return None
    with path.open("rb+") as fh:
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return None
        start = size - 1
        while start > 0:  # back to the previous newline, a block at a time
            step = min(65536, start)
            fh.seek(start - step)
            block = fh.read(step)
            cut = block.rfind(b"\n")
            if cut >= 0:
                start = start - step + cut + 1
                break
            start -= step
        fh.seek(start)
        tail = fh.read()
        if _whole(tail):  # the line is all there; only its newline is missing
            fh.seek(size)
            fh.write(b"\n")
            _sync(fh.fileno())
            return None
        side = path.with_name(path.name + TORN_SUFFIX)
        with side.open("ab") as out:
            out.write(tail + b"\n")
            out.flush()
            _sync(out.fileno())
        fh.truncate(start)
        _sync(fh.fileno())
    return TornLine(path, side, len(tail))


def _sync(fd: int) -> None:
    os.fsync(fd)


def append_line(path: Path, line: str) -> TornLine | None:
    """Append ``line`` (one JSON value, no newline inside) and flush it to disk; a torn last
    line found first is set aside (and returned)."""
    if "\n" in line:
        raise ValueError("a journal line holds no newline")
    torn = mend(path)
    with path.open("ab") as fh:
        fh.write(line.encode("utf-8") + b"\n")
        fh.flush()
        _sync(fh.fileno())
    return torn


def read_lines(path: Path) -> tuple[Iterator[tuple[int, str]], TornLine | None]:
    """Mend ``path``, then its non-blank lines with their numbers (from 1)."""
    torn = mend(path)

    def lines() -> Iterator[tuple[int, str]]:
        if not path.is_file():
            return
        with path.open(encoding="utf-8", errors="replace") as fh:
            for n, text in enumerate(fh, 1):
                if text.strip():
                    yield n, text

    return lines(), torn
