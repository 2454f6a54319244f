"""EQ-Bench 3's rubric pass on the benchmark protocol (:mod:`empathos.bench.protocol`): the
scenarios of the user's copy, played by :func:`empathos.bench.play.play_eqbench3` against
the model under test and the judge; the rubric score (an item's value: its task score x 5,
shown as the benchmark rounds it) and each criterion's mean; the known differences from the
benchmark's code (docs/bench.md)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from empathos.bench.eqbench3_files import read_eqbench3
from empathos.bench.play import BenchCase, play_eqbench3
from empathos.bench.protocol import (
    Benchmark,
    Defaults,
    TableData,
    Values,
    num,
    per_item,
)
from empathos.bench.record import BenchItemRecord
from empathos.canonical import canonical_digest

__all__ = ["EQBENCH3", "EqBench3"]


class EqBench3(Defaults):
    """EQ-Bench 3 behind the benchmark protocol (registered in
    :data:`empathos.bench.registry.REGISTRY`)."""

    name = "eqbench3"
    roles: tuple[str, ...] = ("model_under_test", "judge")
    warn_offline: tuple[str, ...] = ("judge",)
    note = "EQ-Bench 3: the rubric score (0-100)"
    about = "EQ-Bench 3's rubric pass: scripted role-plays and a debrief, rated by the judge."
    data_help = "Your copy of EQ-bench/eqbench3 (a clone or its data folder)."
    differences: tuple[str, ...] = (
        "The wording of the output format's reasoning request is ours (its shape, key order "
        "and 0-20 values are the benchmark's); effect on a judge not measured.",
        "The master prompt is filled by plain replacement, not str.format: no effect on the "
        "current files (no doubled braces).",
        "NO_RP scenarios are not handled apart (none in the current file).",
        "The judge runs at the judge endpoint's config (the benchmark: temperature 0, "
        "8,000 tokens).",
        "Sections are parsed from each reply when judged (the same rule on the same text).",
        "The pairwise (Elo) pass is a separate command (empathos compare --pairwise --eqbench3).",
    )

    def cases(self, data: Path, protocol: str) -> tuple[list[BenchCase], list[Path]]:
        """Every scenario of the copy, with its kind's prompts and the debrief."""
        eq3 = read_eqbench3(data)
        return [
            BenchCase(
                s.id, canonical_digest((s, eq3.kinds[s.kind], eq3.debrief), 16), "eqbench3",
                "en", s.kind, play_eqbench3, s, (eq3.kinds[s.kind], eq3.debrief),
            )
            for s in eq3.scenarios
        ], eq3.files  # fmt: skip

    def values(self, records: Sequence[BenchItemRecord]) -> Values:
        """The task score (0-20) x 5."""
        return per_item(records, "rubric", "task", 5.0)

    def shown(self, measure: str, value: float) -> float:
        """The rubric score as the benchmark shows it: its 0-20 mean rounded to 2 decimals,
        times 5."""
        if measure != "rubric":
            return value
        mean = round(value / 5.0, 9)  # float noise of how the mean was summed: not a digit
        return round(round(mean, 2) * 5.0, 2)

    def summary(self, records: Sequence[BenchItemRecord]) -> dict[str, Any]:
        """Each criterion's mean over the finished items (the judge's 0-20)."""
        rated: dict[str, list[float]] = {}
        for r in records:
            for c, v in r.judge.criteria.items() if r.status == "done" and r.judge else ():
                rated.setdefault(c, []).append(v)
        return {"criteria": {c: sum(v) / len(v) for c, v in sorted(rated.items())}}

    def tables(self, parts: dict[str, Any]) -> tuple[str | None, list[TableData]]:
        """The criteria's means."""
        if not parts["criteria"]:
            return None, []
        table = TableData("EQ-Bench 3 criteria (judge's mean, 0-20)", ("criterion", "mean"))
        table.rows = [(c, num(v)) for c, v in parts["criteria"].items()]
        return None, [table]


EQBENCH3 = EqBench3()
_CHECKED: Benchmark = EQBENCH3  # EqBench3 keeps to the protocol (mypy checks it)
