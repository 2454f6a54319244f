"""A benchmark of the tests' own, written as docs/architecture.md's "How to add a benchmark"
says: this one module, and one registry line (added by the test that uses it). Each item is
a sum ("a b" a line of ``sums.txt``); the model under test answers it; right or wrong."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from empathos.bench.play import BenchCase, Conversation, Roles, failed_item, record_of_item
from empathos.bench.protocol import (
    Benchmark,
    Defaults,
    PublishedFiles,
    PublishedRow,
    Values,
    per_item,
)
from empathos.bench.record import BenchItemRecord
from empathos.errors import InputError, ModelCallError


async def play_sum(case: BenchCase, roles: Roles) -> BenchItemRecord:
    a, b = (int(x) for x in case.item.split())
    talk = Conversation()
    try:
        reply = await talk.ask(roles.tested, f"What is {a} + {b}?")
    except ModelCallError as exc:
        return failed_item(case, roles, talk, exc)
    return record_of_item(case, roles, talk, scores={"right": float(reply.strip() == str(a + b))})


class Toy(Defaults):
    name = "toy"
    roles: tuple[str, ...] = ("model_under_test",)
    note = "Toy: sums right (%)"
    differences: tuple[str, ...] = ("None: the benchmark is the tests' own.",)
    about = "Toy: sums, answered by the model under test."
    data_help = "A folder with sums.txt."
    published: PublishedFiles | None = PublishedFiles(
        help="Toy result files: one 0/1 a line.",
        paths="Toy result files.",
        title="Toy result files",
        columns=("file", "right"),
        fields=("file", "right"),
    )

    def cases(self, data: Path, protocol: str) -> tuple[list[BenchCase], list[Path]]:
        path = data / "sums.txt"
        if not path.is_file():
            raise InputError("no sums.txt here", file=data, field="--data")
        lines = path.read_text().split("\n")
        return [
            BenchCase(f"s{n}", line.replace(" ", "-"), "toy", None, None, play_sum, line)
            for n, line in enumerate(lines)
            if line
        ], [path]

    def values(self, records: Sequence[BenchItemRecord]) -> Values:
        return per_item(records, "right", "right", 100.0)

    def summary(self, records: Sequence[BenchItemRecord]) -> dict[str, Any]:
        return {}

    def read_published(self, path: Path, data: Path | None = None) -> list[PublishedRow]:
        marks = [int(x) for x in path.read_text().split()]
        right = 100.0 * sum(marks) / len(marks)
        return [PublishedRow({"file": str(path), "right": right}, (str(path), f"{right:.1f}"))]


TOY = Toy()
_CHECKED: Benchmark = TOY
