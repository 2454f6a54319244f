"""The pairwise results directory: judgements as JSON lines, the ratings, the cache.

``<out>/judgements.jsonl`` holds one :class:`~empathos.pairwise.model.Judgement` per line,
appended (and flushed to disk) as each call ends, so an interrupted session loses only the
calls in flight and a rerun judges only what is missing; a failed call's line is kept (it
was paid for) and the order is judged again on the next run. ``<out>/ratings.json`` is what
``empathos compare --pairwise`` computed last (read by ``empathos report --pairwise``);
``<out>/cache.sqlite`` the judge's response cache; ``<out>/judges.json`` what shaped each
judge's verdicts (:meth:`JudgementStore.claim`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from empathos.errors import ConfigError, RecordError
from empathos.journal import TornLine, append_line, read_lines
from empathos.pairwise.model import Judgement

__all__ = ["CACHE", "JUDGEMENTS", "JUDGES", "RATINGS", "JudgementStore", "read_ratings"]

JUDGEMENTS = "judgements.jsonl"
RATINGS = "ratings.json"
JUDGES = "judges.json"
CACHE = "cache.sqlite"


class JudgementStore:
    """The judgements of one results directory (created on first use)."""

    def __init__(self, folder: Path) -> None:
        if folder.exists() and not folder.is_dir():
            raise ConfigError("is not a directory", file=folder, field="--out")
        # created on the first write: a command that fails before it leaves no folder behind
        self.folder = folder
        self.path = folder / JUDGEMENTS

    def read(self) -> tuple[list[Judgement], list[RecordError]]:
        """Every readable line, and a problem per unreadable one; a last line cut short by a
        crash is set aside first (:func:`empathos.journal.mend`: kept in a side file that the
        problem names), so its order is judged again and the next verdict gets a line of its
        own."""
        lines, torn = read_lines(self.path)
        out, problems = [], []
        if torn is not None:
            problems.append(_torn(torn))
        for n, line in lines:
            try:
                out.append(Judgement.model_validate_json(line))
            except ValidationError as exc:
                why = exc.errors()[0]["msg"]
                problems.append(RecordError(why, file=self.path, field=f"line {n}"))
        return out, problems

    def append(self, judgement: Judgement) -> None:
        """Add one line and flush it to disk (on a line of its own, whatever came before)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        append_line(self.path, judgement.model_dump_json())

    def claim(self, judge: str, fingerprint: str) -> None:
        """Record what shapes ``judge``'s verdicts here (``judges.json``); refuse a judge of
        the same name whose prompt or truncation changed: its stored verdicts would mix with
        the new ones."""
        path = self.folder / JUDGES
        try:
            known = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        except ValueError:
            known = {}
        before = known.get(judge)
        if before is not None and before != fingerprint:
            raise ConfigError(
                f"holds verdicts of {judge} made with {before}, not {fingerprint}; choose "
                "another --out",
                file=self.folder,
                field="--out",
            )
        known[judge] = fingerprint
        self.folder.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(known, indent=1), encoding="utf-8")

    def write_ratings(self, data: dict[str, Any]) -> Path:
        """Write ``ratings.json`` atomically."""
        path = self.folder / RATINGS
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")
        tmp.replace(path)
        return path


def _torn(torn: TornLine) -> RecordError:
    return RecordError(
        f"last line cut short (a crash or a full disk): set aside in {torn.side} "
        f"({torn.size} bytes), its order is judged again",
        file=torn.journal,
    )


def read_ratings(folder: Path) -> dict[str, Any]:
    """The ``ratings.json`` of a results directory."""
    path = folder / RATINGS if folder.is_dir() else folder
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(
            f"no pairwise ratings here ({exc})", file=path, field="--pairwise"
        ) from None
    if not isinstance(data, dict) or "models" not in data:
        raise ConfigError("not a pairwise ratings file", file=path, field="--pairwise")
    return data
