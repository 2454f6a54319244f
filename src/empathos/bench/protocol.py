"""The benchmark protocol: what one benchmark module gives ``empathos bench``, and the registry
that finds it by name.

A benchmark is one module implementing :class:`Benchmark`: read the user's copy and name the
files it read (:meth:`~Benchmark.cases`), play one item against the role models
(``BenchCase.play``), an item's values (:meth:`~Benchmark.item_values`: what the score
averages, per measure), the benchmark's own numbers over a run (:meth:`~Benchmark.summary`),
the published result files recomputed (:meth:`~Benchmark.read_published`) and its known
differences from the benchmark's own code (:attr:`~Benchmark.differences`). The campaign,
the summaries and the commands ask the registry (:func:`benchmark`) instead of branching by
name. SAGE is the first benchmark on it (:mod:`empathos.bench.sage_bench`); EmoBench and the
EQ-Benches still have their branches and could move onto it.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from empathos.bench.play import BenchCase
    from empathos.bench.record import BenchItemRecord

__all__ = ["REGISTRY", "Benchmark", "benchmark", "registered"]


class Benchmark(Protocol):
    """One benchmark behind ``empathos bench`` (see the module)."""

    name: str
    roles: tuple[str, ...]
    """The run config's roles it calls, the model under test first."""
    differences: tuple[str, ...]
    """Each known difference from the benchmark's own code, with its effect."""

    def cases(self, data: Path) -> tuple[list[BenchCase], list[Path]]:
        """Every item of the user's copy at ``data`` as a case, and the files read."""
        ...

    def item_values(self, record: BenchItemRecord) -> dict[str, float]:
        """Measure -> this item's value (what the benchmark's score averages); {}: none."""
        ...

    def summary(self, records: Sequence[BenchItemRecord]) -> dict[str, Any]:
        """The benchmark's own numbers over a run's finished items (plain JSON values)."""
        ...

    def read_published(self, path: Path) -> list[dict[str, Any]]:
        """The benchmark's numbers recomputed from published result files at ``path``."""
        ...


#: The registry: benchmark name -> "module:attribute" of its implementation (imported when
#: first asked for). Adding a benchmark adds its module and one line here.
REGISTRY: dict[str, str] = {
    "sage": "empathos.bench.sage_bench:SAGE",
}
_LOADED: dict[str, Benchmark] = {}


def benchmark(name: str) -> Benchmark | None:
    """The registered benchmark of that name (None: one with its own branches)."""
    if name not in REGISTRY:
        return None
    if name not in _LOADED:
        module, attr = REGISTRY[name].split(":")
        _LOADED[name] = getattr(importlib.import_module(module), attr)
    return _LOADED[name]


def registered() -> list[str]:
    """The names of the registered benchmarks."""
    return sorted(REGISTRY)
