"""The benchmark protocol: what one benchmark module gives ``empathos bench``, and the registry
that finds it by name.

A benchmark is one module implementing :class:`Benchmark`: read the user's copy and name the
files it read (:meth:`~Benchmark.cases`, under one of its :attr:`~Benchmark.protocols`), play
one item against the role models (``BenchCase.play``), the items' values (:meth:`~Benchmark.
values`: what the score averages, per measure) and how they are shown (:meth:`~Benchmark.
shown`), the benchmark's own numbers over a run (:meth:`~Benchmark.summary`, with their
tables: :meth:`~Benchmark.tables`), the published result files recomputed
(:meth:`~Benchmark.read_published`), its own result layout (:meth:`~Benchmark.own_layout`), its
report section beside EMPA (:meth:`~Benchmark.beside_empa`), its known differences from the
benchmark's own code (:attr:`~Benchmark.differences`), and what its command shows
(:attr:`~Benchmark.command`, :attr:`~Benchmark.published`: ``empathos bench <name>`` is made
from them). The campaign, the summaries, the commands, the report and
the Inspect tasks ask the registry (:func:`benchmark`, :func:`registered`) instead of
branching by name. Adding a benchmark adds its module and one line to the registry
(:data:`empathos.bench.registry.REGISTRY`; docs/architecture.md, "How to add a benchmark").
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from empathos.bench.registry import REGISTRY
from empathos.errors import ConfigError

if TYPE_CHECKING:
    from empathos.bench.play import BenchCase
    from empathos.bench.record import BenchItemRecord

__all__ = [
    "REGISTRY",
    "ROLE_NAMES",
    "Benchmark",
    "Command",
    "Defaults",
    "ProtocolFlag",
    "PublishedFiles",
    "PublishedRow",
    "TableData",
    "Values",
    "benchmark",
    "num",
    "per_item",
    "registered",
]

#: Measure -> item id -> the item's value.
Values = dict[str, dict[str, float]]


@dataclass
class TableData:
    """A table a benchmark shows beside its measures (plain text cells; the command draws it)."""

    title: str
    columns: tuple[str, ...]
    rows: list[tuple[str, ...]] = field(default_factory=list)
    caption: str | None = None


@dataclass(frozen=True)
class ProtocolFlag:
    """How ``empathos bench <name>`` picks one of the benchmark's protocols: a choice among
    them (``--protocol``, the default the first), or a switch (``switch``: off is the first
    protocol, on the second)."""

    flag: str
    help: str
    switch: bool = False


@dataclass(frozen=True)
class Command:
    """What ``empathos bench <name>`` has beyond every benchmark's flags (``--data``, the
    model flags, ``--roles-*`` for its second role, the run flags; its help is
    :attr:`Benchmark.about`, ``--data``'s :attr:`Benchmark.data_help`): its protocol flag,
    where it has more than one protocol, and its help as a group with sub-commands."""

    protocol_flag: ProtocolFlag | None = None
    group_help: str | None = None
    """The help of ``bench <name>`` when it has sub-commands (``score`` and any extra)."""


@dataclass(frozen=True)
class PublishedFiles:
    """The benchmark's published result files, recomputed by ``empathos bench <name> score``
    (:meth:`Benchmark.read_published`)."""

    help: str
    paths: str
    """What the command's paths are."""
    title: str
    columns: tuple[str, ...]
    """The table's columns (each row's :attr:`PublishedRow.cells`)."""
    data: str | None = None
    """What ``--data`` is, where the files need the user's copy (None: no ``--data``)."""
    fields: tuple[str, ...] | None = None
    """The order ``--format csv`` writes the rows' keys in (None: the rows' own order, and
    no header without a row)."""


@dataclass(frozen=True)
class PublishedRow:
    """One recomputed result: its plain JSON values and its cells in the table."""

    values: dict[str, Any]
    cells: tuple[str, ...]


#: How a command names the role behind ``--roles-*``.
ROLE_NAMES = {"judge": "judge", "user": "simulated user"}


def num(x: float | None, pattern: str = "{:.2f}") -> str:
    """A number as the bench tables show it ("-": none or NaN)."""
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else pattern.format(x)


class Benchmark(Protocol):
    """One benchmark behind ``empathos bench`` (see the module)."""

    name: str
    about: str
    """What it asks of the model, in one line (``bench <name>``'s help, its Inspect task's
    description)."""
    data_help: str
    """What ``--data`` (its Inspect task's ``-T data``) is: the user's copy, and of what."""
    roles: tuple[str, ...]
    """The run config's roles it calls, the model under test first."""
    protocols: tuple[str, ...]
    """How it can be run, the default first (``("",)``: one way only)."""
    measure_order: tuple[str, ...]
    """The order its measures are shown in (others after them; ``()``: as found)."""
    warn_offline: tuple[str, ...]
    """Roles (beyond the model under test) whose bundled offline model earns a warning."""
    note: str
    """What its measures are, in one clause (the report's bench section)."""
    differences: tuple[str, ...]
    """Each known difference from the benchmark's own code, with its effect."""
    command: Command
    """What ``empathos bench <name>`` has beyond every benchmark's flags (the command is
    made from it, :attr:`about` and :attr:`data_help`)."""
    published: PublishedFiles | None
    """Its published result files (``bench <name> score``); None: none we recompute."""

    def cases(self, data: Path, protocol: str) -> tuple[list[BenchCase], list[Path]]:
        """Every item of the user's copy at ``data`` as a case, and the files read."""
        ...

    def values(self, records: Sequence[BenchItemRecord]) -> Values:
        """Measure -> item id -> the finished item's value (what the benchmark's score
        averages), over one run's records."""
        ...

    def shown(self, measure: str, value: float) -> float:
        """``value`` of ``measure`` rounded as the benchmark shows it."""
        ...

    def summary(self, records: Sequence[BenchItemRecord]) -> dict[str, Any]:
        """The benchmark's own numbers over a run's items: part name -> plain JSON values
        (added to ``bench score --format json`` after the measures)."""
        ...

    def tables(self, parts: dict[str, Any]) -> tuple[str | None, list[TableData]]:
        """The caption of the measures' table and the further tables, from :meth:`summary`."""
        ...

    def metrics(self, records: Sequence[BenchItemRecord]) -> dict[str, float]:
        """Further numbers an Inspect task reports beside the measures."""
        ...

    def read_published(self, path: Path, data: Path | None = None) -> list[PublishedRow]:
        """The benchmark's numbers recomputed from published result files at ``path``
        (``data``: the user's copy, where the files need it)."""
        ...

    def own_layout(self, out: Path) -> Path | None:
        """Write a run's finished items in the benchmark's own result layout, where it has
        one (after every run, stopped or not); the path written, else None."""
        ...

    def beside_empa(self, empa: Sequence[Path], runs: Sequence[Path], preset: str) -> str:
        """The report's section putting this benchmark's runs (``runs``) beside the EMPA runs
        (``empa``) given with them ('' for none)."""
        ...


class Defaults:
    """What most benchmarks share (a benchmark class may start from it): one protocol, the
    measures as found, shown as computed, no further tables or metrics, no published files,
    no layout of its own, no report section beside EMPA."""

    protocols: tuple[str, ...] = ("",)
    measure_order: tuple[str, ...] = ()
    warn_offline: tuple[str, ...] = ()
    command = Command()
    published: PublishedFiles | None = None

    def shown(self, measure: str, value: float) -> float:
        """As computed."""
        return value

    def tables(self, parts: dict[str, Any]) -> tuple[str | None, list[TableData]]:
        """None."""
        return None, []

    def metrics(self, records: Sequence[BenchItemRecord]) -> dict[str, float]:
        """None."""
        return {}

    def read_published(self, path: Path, data: Path | None = None) -> list[PublishedRow]:
        """None: the benchmark publishes no result files we recompute."""
        return []

    def own_layout(self, out: Path) -> Path | None:
        """None: the run directory is the only layout."""
        return None

    def beside_empa(self, empa: Sequence[Path], runs: Sequence[Path], preset: str) -> str:
        """None."""
        return ""


def per_item(records: Sequence[BenchItemRecord], measure: str, key: str, scale: float) -> Values:
    """``measure``: each finished item's ``scores[key]`` x ``scale`` (items without it left
    out)."""
    out: Values = {}
    for r in records:
        if r.status == "done" and key in r.scores:
            out.setdefault(measure, {})[r.item_id] = scale * r.scores[key]
    return out


_LOADED: dict[str, Benchmark] = {}


def benchmark(name: str) -> Benchmark:
    """The registered benchmark of that name (ConfigError: none)."""
    if name not in REGISTRY:
        raise ConfigError(f"is not a benchmark (one of {', '.join(REGISTRY)})", field="bench")
    if name not in _LOADED:
        module, attr = REGISTRY[name].split(":")
        _LOADED[name] = getattr(importlib.import_module(module), attr)
    return _LOADED[name]


def registered() -> list[Benchmark]:
    """Every registered benchmark, in the registry's order."""
    return [benchmark(name) for name in REGISTRY]
