"""Items from run directories: dialogue records, or a transcript run directory.

Anything ``empathos score`` reads (our run directories, Inspect imports, re-judged runs,
published EMPA result folders, record files) gives one item per finished dialogue, named
as its records name their model. A **transcript run directory** (any tool's EQ-Bench 3
transcripts; ``empathos bench eqbench3`` directories are read by the command, through
``empathos.bench.pairwise_items``) holds ``transcripts.jsonl``: one JSON object per line
with ``scenario_id``, ``model``, ``transcript`` (a list of ``{"role", "content"}``
messages), and optionally ``trial`` (default 0) and ``debrief``; see docs/pairwise.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic import ValidationError

from empathos.errors import RecordError
from empathos.pairwise.model import Item
from empathos.pairwise.transcript import item_of_record
from empathos.records import LoadedRecord, load_records
from empathos.scenarios import Scenario, load_scenarios

__all__ = ["TRANSCRIPTS", "load_items", "read_transcripts", "scenarios_of"]

TRANSCRIPTS = "transcripts.jsonl"


def read_transcripts(path: Path) -> tuple[list[Item], list[RecordError]]:
    """The items of a ``transcripts.jsonl`` (a bad line is a problem; the rest still load)."""
    items, problems = [], []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        return [], [RecordError(f"unreadable ({exc.strerror})", file=path)]
    for n, line in enumerate(lines, 1):
        if line.strip():
            try:
                items.append(Item.model_validate_json(line))
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(map(str, first["loc"])) or f"line {n}"
                problems.append(RecordError(first["msg"], file=path, field=f"line {n}: {where}"))
    return items, problems


def _trial(x: LoadedRecord) -> int:
    _, sep, trial = x.path.stem.rpartition("__t")
    if sep and trial.isdigit():
        return int(trial)
    meta = x.record.metadata.get("trial")
    return int(meta) if isinstance(meta, int) else 0


def load_items(
    paths: Sequence[Path], name: Callable[[LoadedRecord], str] | None = None
) -> tuple[list[Item], list[RecordError]]:
    """Every dialogue under ``paths`` as an item (errors and reply-less dialogues left out),
    a record's model named by ``name`` (default: as its records name it; ``score`` passes
    its ``--label`` rule)."""
    items: list[Item] = []
    problems: list[RecordError] = []
    for path in paths:
        if (path / TRANSCRIPTS).is_file():
            got, bad = read_transcripts(path / TRANSCRIPTS)
        elif path.suffix == ".jsonl" and path.is_file():
            got, bad = read_transcripts(path)
        else:
            loaded, bad = load_records([path])
            label = name or (lambda x: x.model_name)
            got = [i for x in loaded if (i := item_of_record(x.record, label(x), _trial(x)))]
        items += got
        problems += bad
    return items, problems


def scenarios_of(sources: Sequence[str | Path], ids: set[str]) -> dict[str, Scenario]:
    """The scenarios with ``ids`` found in ``sources`` (the first of each id)."""
    found: dict[str, Scenario] = {}
    for src in sources:
        for scenario in load_scenarios(src).scenarios:
            if scenario.id in ids:
                found.setdefault(scenario.id, scenario)
    return found
