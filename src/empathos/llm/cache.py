"""An SQLite response cache: successful replies keyed by a hash of the whole request.

The key covers the endpoint's base URL, the model id, the messages, the sampling parameters
and the requested output shape (schema or tools), so any change misses. Only replies that
passed validation are stored; failures never are. No credentials are part of the key or the
value. One connection guarded by a lock makes it safe from threads and from many asyncio
tasks at once; WAL lets several processes read while one writes.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from empathos.canonical import canonical_digest
from empathos.errors import InputError

__all__ = ["ResponseCache", "cache_key"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL,
  created_at REAL NOT NULL
)
"""


def cache_key(parts: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON of ``parts``."""
    return canonical_digest(parts, compact=True)


class ResponseCache:
    """A persistent key -> JSON text store in one SQLite file."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, check_same_thread=False, timeout=30.0)
        try:
            with self._lock:
                self._conn.execute("PRAGMA journal_mode=WAL")
                self._conn.execute("PRAGMA synchronous=NORMAL")
                self._conn.execute(_SCHEMA)
                self._conn.commit()
        except sqlite3.DatabaseError as exc:
            self._conn.close()
            raise InputError(
                f"not a usable response cache ({exc}); delete it to start a fresh one",
                file=self.path,
            ) from None
        self.hits = 0
        self.misses = 0

    def get(self, key: str) -> str | None:
        """The stored value, or None (counted as a miss)."""
        with self._lock:
            row = self._conn.execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        return str(row[0])

    def put(self, key: str, value: str) -> None:
        """Store (or replace) a value."""
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO responses (key, value, created_at) VALUES (?, ?, ?)",
                (key, value, time.time()),
            )
            self._conn.commit()

    def __len__(self) -> int:
        with self._lock:
            row = self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()
        return int(row[0])

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._conn.close()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
