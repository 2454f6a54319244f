"""EmoBench on the benchmark protocol (:mod:`empathos.bench.protocol`): the items of the
user's copy under the ``official`` or the ``paper`` protocol, played by
:func:`empathos.bench.play_emo.play_emobench`; accuracy per task (an item's value: 0/1 in %,
the paper protocol's the mean over choice orders) and per task and language with a
bootstrap interval; the known differences from the benchmark's script (docs/bench.md)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from empathos.bench.emobench import TASKS, Scored, accuracy_table
from empathos.bench.emobench_files import read_emobench
from empathos.bench.play import BenchCase
from empathos.bench.play_emo import play_emobench
from empathos.bench.protocol import (
    Benchmark,
    Command,
    Defaults,
    ProtocolFlag,
    TableData,
    Values,
    num,
)
from empathos.bench.record import BenchItemRecord
from empathos.canonical import canonical_digest

__all__ = ["EMOBENCH", "EmoBench"]


class EmoBench(Defaults):
    """EmoBench behind the benchmark protocol (registered in
    :data:`empathos.bench.registry.REGISTRY`)."""

    name = "emobench"
    roles: tuple[str, ...] = ("model_under_test",)
    protocols: tuple[str, ...] = ("official", "paper")
    measure_order: tuple[str, ...] = TASKS
    note = "EmoBench: accuracy (%) per task"
    about = "EmoBench: multiple-choice emotional understanding and application."
    data_help = "Your copy of Sahandfer/EmoBench (a clone or its data folder)."
    command = Command(
        protocol_flag=ProtocolFlag(
            "--protocol",
            "official: as EmoBench's own script asks and reads it (default); paper: as the "
            "2024 paper ran it (questions apart, majority of 5, 4 choice orders). "
            "docs/bench.md.",
        ),
    )
    differences: tuple[str, ...] = (
        "Templates are filled by their named slots, not str.format: none on the benchmark's "
        "templates.",
        "A reply whose JSON is not an object is counted wrong (the script fails on it).",
        "An endpoint failure is an error, left out and run again on resume (the script "
        "records an empty, wrong answer).",
        "Accuracy is reported per task and language with intervals, not per category.",
        "The reply length is the config's max_tokens (the script's API path has no cap).",
        "The paper protocol is our reading of the paper (its answer field's wording, "
        "temperature 0.6, seeds, tie rule and choice orders are ours, and recorded).",
    )

    def cases(self, data: Path, protocol: str) -> tuple[list[BenchCase], list[Path]]:
        """Every item of the copy (the paper protocol: its questions apart)."""
        emo = read_emobench(data, paper=protocol == "paper")
        cases = [
            BenchCase(
                i.id, canonical_digest((i, emo.prompts[i.language]), 16), "emobench",
                i.language, i.kind, play_emobench, i, emo.prompts[i.language], protocol,
            )
            for i in emo.items
        ]  # fmt: skip
        return cases, emo.files

    def values(self, records: Sequence[BenchItemRecord]) -> Values:
        """Per task, each item 0/1 in % (the paper protocol: the mean over choice orders)."""
        out: Values = {}
        for r in records:
            if r.status == "done":
                for task, v in r.scores.items():
                    out.setdefault(task, {})[r.item_id] = 100.0 * v
        return out

    def summary(self, records: Sequence[BenchItemRecord]) -> dict[str, Any]:
        """Accuracy per task and language, and the answers only a lenient reader could read."""
        rows = [
            Scored(r.task or "", r.language or "", r.scores if r.status == "done" else None,
                   r.unparseable)
            for r in records
        ]  # fmt: skip
        lenient = sum(
            int((r.detail or {}).get("lenient_only", 0)) for r in records if r.status == "done"
        )
        return {
            "emobench": [
                {"task": a.task, "language": a.language, "accuracy": a.accuracy, "n": a.n,
                 "correct": a.correct, "unparseable": a.unparseable, "errors": a.errors,
                 "low": a.low, "high": a.high}
                for a in accuracy_table(rows)
            ],
            "lenient_only": lenient,
        }  # fmt: skip

    def tables(self, parts: dict[str, Any]) -> tuple[str | None, list[TableData]]:
        """Accuracy (%) per task and language."""
        if not parts["emobench"]:
            return None, []
        table = TableData(
            "EmoBench accuracy (%) per task and language",
            ("task", "language", "accuracy", "95% interval", "correct/n", "unparseable",
             "errors"),
            caption=f"{parts['lenient_only']} answer(s) only a lenient reader could read "
            "(repaired JSON, any letter case, letter with text): counted as the benchmark "
            "counts them, wrong",
        )  # fmt: skip
        for a in parts["emobench"]:
            acc, low, high = (
                None if a[k] is None else 100 * a[k] for k in ("accuracy", "low", "high")
            )
            table.rows.append((a["task"], a["language"], num(acc), f"{num(low)} - {num(high)}",
                               f"{a['correct']:g}/{a['n']}", str(a["unparseable"]),
                               str(a["errors"])))  # fmt: skip
        return None, [table]


EMOBENCH = EmoBench()
_CHECKED: Benchmark = EMOBENCH  # EmoBench keeps to the protocol (mypy checks it)
