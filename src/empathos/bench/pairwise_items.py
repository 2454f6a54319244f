"""EQ-Bench 3 run directories as the pairwise engine's items (its Elo pass, docs/pairwise.md).

An ``empathos bench eqbench3`` directory holds one record per scenario and trial
(``records/<id>__t<trial>.json``, :mod:`empathos.bench.record`). Each finished record is one
:class:`~empathos.pairwise.Item`: ``item_id`` the scenario, ``model`` the label, the trial
from the file name; ``messages`` split into the conversation and, for role-plays and drafting
tasks, the debrief (the last two messages: the debrief prompt and the model's answer), which
the benchmark's pairwise prompt shows apart. A role-play's or drafting task's replies are
marked ``sectioned``: the benchmark parses them, and its judge sees them rebuilt from their
sections. Records that ended as errors are left out and counted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from empathos.bench.campaign import read_item
from empathos.bench.record import BenchItemRecord
from empathos.errors import ConfigError, RecordError
from empathos.pairwise import Item, TranscriptMessage
from empathos.run.manifest import read_manifest

__all__ = ["BenchItems", "bench_items", "item_of_bench_record"]


@dataclass
class BenchItems:
    """What the bench directories gave: items, records skipped as errors, unreadable files."""

    items: list[Item] = field(default_factory=list)
    errors: int = 0
    problems: list[RecordError] = field(default_factory=list)


def item_of_bench_record(record: BenchItemRecord, trial: int) -> Item | None:
    """The record's transcript as an item (None: it ended in an error or holds no reply)."""
    if record.status == "error":
        return None
    messages = [TranscriptMessage(role=m.role, content=m.content) for m in record.messages]
    debrief = ""
    has_debrief = record.task != "analysis" and len(messages) >= 4
    if has_debrief and messages[-1].role == "assistant" and messages[-2].role == "user":
        debrief, messages = messages[-1].content, messages[:-2]
    if not any(m.role == "assistant" for m in messages):
        return None
    return Item(
        scenario_id=record.item_id, trial=trial, model=record.model, transcript=tuple(messages),
        debrief=debrief, sectioned=record.task != "analysis",
    )  # fmt: skip


def _trial(file: Path) -> int:
    _, sep, trial = file.stem.rpartition("__t")
    return int(trial) if sep and trial.isdigit() else 0


def bench_items(paths: list[Path]) -> BenchItems:
    """The items of ``empathos bench eqbench3`` directories (ConfigError: another benchmark's)."""
    out = BenchItems()
    for path in paths:
        manifest = read_manifest(path)
        name = manifest.bench.name if manifest and manifest.bench else None
        if name != "eqbench3":
            raise ConfigError(
                f"is an `empathos bench {name}` run; pairwise judging reads eqbench3 runs",
                file=path,
            )
        for file in sorted((path / "records").glob("*.json")):
            try:
                record = read_item(file)
            except RecordError as exc:
                out.problems.append(exc)
                continue
            item = item_of_bench_record(record, _trial(file))
            if item is None:
                out.errors += 1
            else:
                out.items.append(item)
    return out
