"""Route what worker threads print to one log file per thread.

``contextlib.redirect_stdout`` swaps ``sys.stdout`` for the whole process, so with several
dialogues in threads each would write into whichever file was swapped in last. Here
``sys.stdout`` and ``sys.stderr`` are replaced, while any dialogue runs, by a proxy that writes
to the log file of the calling thread, and to the real stream for every other thread (the
event loop's progress bar among them).
"""

from __future__ import annotations

import io
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

__all__ = ["ThreadLogRouter"]


class _Proxy(io.TextIOBase):
    """A text stream that writes to the calling thread's log, or to ``fallback``."""

    def __init__(self, router: ThreadLogRouter, fallback: TextIO) -> None:
        super().__init__()
        self._router = router
        self._fallback = fallback

    def _target(self) -> TextIO:
        return self._router.file_of_thread() or self._fallback

    def write(self, text: str) -> int:
        self._target().write(text)
        return len(text)

    def flush(self) -> None:
        self._target().flush()

    def isatty(self) -> bool:
        return self._router.file_of_thread() is None and self._fallback.isatty()

    def fileno(self) -> int:
        return self._fallback.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self._fallback, "encoding", None) or "utf-8"

    def __getattr__(self, name: str) -> Any:
        return getattr(self._fallback, name)


class ThreadLogRouter:
    """Install with :meth:`installed` (in the event loop's thread, nestable); inside a worker
    thread, :meth:`capture` sends that thread's output to a file."""

    def __init__(self) -> None:
        self._files: dict[int, TextIO] = {}
        self._users = 0
        self._saved: tuple[TextIO, TextIO] | None = None

    def file_of_thread(self) -> TextIO | None:
        """The log file of the calling thread, if it captures."""
        return self._files.get(threading.get_ident())

    @contextmanager
    def installed(self) -> Iterator[None]:
        """Swap the proxies in for the time any user is inside (counted, not nested swaps)."""
        if self._users == 0:
            self._saved = (sys.stdout, sys.stderr)
            sys.stdout = _Proxy(self, sys.stdout)
            sys.stderr = _Proxy(self, sys.stderr)
        self._users += 1
        try:
            yield
        finally:
            self._users -= 1
            if self._users == 0 and self._saved is not None:
                sys.stdout, sys.stderr = self._saved
                self._saved = None

    @contextmanager
    def capture(self, path: Path) -> Iterator[None]:
        """Send the calling thread's stdout and stderr to ``path`` (overwritten)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        ident = threading.get_ident()
        with path.open("w", encoding="utf-8", buffering=1) as fh:
            self._files[ident] = fh
            try:
                yield
            finally:
                del self._files[ident]
