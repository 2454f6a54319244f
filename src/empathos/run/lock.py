"""One run directory, one writer: an exclusive lock on ``<out>/run.lock``.

The lock is the kernel's (``fcntl.flock`` on the lock file), so it is released when its
process ends for any reason, a ``kill -9`` or a crash included: a lock left by a dead process
is simply free, and the next run takes it over. The file itself holds who holds it (pid,
host, start time), written once the lock is taken and cleared when it is released, so

- a second run on the same directory is refused with one line naming the holder, and
- a run that finds the file still naming a holder while the lock is free knows that holder
  was killed (:attr:`RunLock.previous`).

Two runs on different machines sharing a network file system are only kept apart where that
file system supports ``flock`` (NFSv4 and most local file systems do).
"""

from __future__ import annotations

import json
import os
import socket
from dataclasses import dataclass
from pathlib import Path

from empathos.errors import ConfigError

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]

__all__ = ["LOCK_NAME", "Holder", "RunLock"]

LOCK_NAME = "run.lock"


@dataclass(frozen=True)
class Holder:
    """Who holds (or held) a run directory's lock."""

    pid: int
    host: str
    started_at: str

    def describe(self) -> str:
        """``pid 123 on host box, started 2026-01-01T10:00:00+00:00``."""
        return f"pid {self.pid} on host {self.host}, started {self.started_at}"


def _read_holder(text: str) -> Holder | None:
    try:
        data = json.loads(text)
        return Holder(int(data["pid"]), str(data["host"]), str(data["started_at"]))
    except (ValueError, KeyError, TypeError):
        return None


class RunLock:
    """The exclusive lock of one run directory, held until :meth:`release` (or process end)."""

    def __init__(self, path: Path, holder: Holder, fd: int, previous: Holder | None) -> None:
        self.path = path
        self.holder = holder
        self._fd: int | None = fd
        self.previous = previous
        """The holder named in the file when we took it: a run that was killed, else None."""

    @classmethod
    def acquire(cls, run_dir: Path, started_at: str) -> RunLock:
        """Take the lock of ``run_dir`` without waiting; a ConfigError naming the holder if
        another process has it."""
        path = run_dir / LOCK_NAME
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            problem = f"cannot open the run lock ({exc.strerror or type(exc).__name__})"
            raise ConfigError(problem, file=path, field="--out") from None
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            text = _read_all(fd)
            os.close(fd)
            holder = _read_holder(text)
            who = holder.describe() if holder else "a process that has not yet said who it is"
            raise ConfigError(
                f"is in use by another empathos run ({who}); wait for it to finish, stop it, "
                "or choose another --out",
                file=run_dir,
                field="--out",
            ) from None
        previous = _read_holder(_read_all(fd))
        holder = Holder(os.getpid(), socket.gethostname(), started_at)
        _write_all(fd, json.dumps(holder.__dict__))
        return cls(path, holder, fd, previous)

    def release(self) -> None:
        """Clear the holder from the file and release the lock (idempotent)."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            os.ftruncate(fd, 0)
        finally:
            os.close(fd)  # closing the descriptor releases the flock


def _read_all(fd: int) -> str:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks: list[bytes] = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", errors="replace")


def _write_all(fd: int, text: str) -> None:
    os.ftruncate(fd, 0)
    os.lseek(fd, 0, os.SEEK_SET)
    data = text.encode("utf-8")
    while data:
        data = data[os.write(fd, data) :]
