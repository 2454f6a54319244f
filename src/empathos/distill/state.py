"""A batch's bookkeeping: its options, each item's outcome, and the per-item stage cache.

``OUT/state/<item id>/`` holds one JSON record per finished stage (reused while the stage's
key, a hash of its inputs, model and prompt, still matches) and ``status.json``, the item's
current outcome. Writes are atomic.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from empathos.distill.checks import DUPLICATE_SIMILARITY

__all__ = [
    "DistillOptions",
    "DistillSummary",
    "ItemOutcome",
    "StageCache",
    "atomic_write",
    "dump_json",
    "stage_key",
]


@dataclass(frozen=True)
class DistillOptions:
    """How a batch runs."""

    out: Path
    keep_source: bool = False
    concurrency: int = 4
    id_prefix: str = "distilled-"
    duplicate_similarity: float = DUPLICATE_SIMILARITY
    use_presidio: bool | None = None


@dataclass
class ItemOutcome:
    """What became of one conversation (or one variant)."""

    source_id: str
    status: str  # written | skipped | failed | duplicate (valid while in progress)
    reason: str = ""
    scenario_id: str | None = None
    warnings: list[str] = field(default_factory=list)


@dataclass
class DistillSummary:
    """The outcome of a batch."""

    items: list[ItemOutcome]
    out: Path

    def count(self, status: str) -> int:
        """How many items ended with ``status``."""
        return sum(1 for i in self.items if i.status == status)


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix + ".part")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def dump_json(data: object) -> str:
    """Indented, key-sorted JSON with a final newline (the state's and manifest's format)."""
    return json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True) + "\n"


def stage_key(*parts: object) -> str:
    """The cache key of a stage: a hash of everything its output depends on."""
    text = json.dumps(parts, ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class StageCache:
    """One item's state directory: a JSON record per finished stage, reused when its key
    (a hash of the stage's inputs, model and prompt version) still matches."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory

    def get(self, stage: str, key: str) -> dict[str, Any] | None:
        """The stage's stored record, if present and made from the same inputs."""
        path = self.dir / f"{stage}.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):  # missing, cut short, not UTF-8: redo the stage
            return None
        return data if isinstance(data, dict) and data.get("key") == key else None

    def put(self, stage: str, record: dict[str, Any]) -> None:
        """Store a finished stage's record."""
        atomic_write(self.dir / f"{stage}.json", dump_json(record))

    def status(self, outcome: ItemOutcome) -> None:
        """Record the item's current status."""
        atomic_write(self.dir / "status.json", dump_json(outcome.__dict__))
