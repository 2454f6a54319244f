"""A bench run directory's numbers, and two directories compared item by item.

- :func:`load_bench_dir`: the manifest's benchmark and the item records of a directory that
  ``empathos bench`` wrote (None for any other directory: EMPA runs are scored elsewhere).
- :func:`summarise`: the benchmark's numbers from the records (pure): each measure's mean
  over the items (:meth:`~empathos.bench.protocol.Benchmark.values`) with a bootstrap
  interval, shown as the benchmark rounds it, and the benchmark's own numbers
  (:meth:`~empathos.bench.protocol.Benchmark.summary`). Items that ended as errors are left
  out and counted.
- :func:`compare_dirs`: per benchmark measure, the paired difference (trained - base) over
  the items both answered, its bootstrap interval and a sign-flip permutation p-value
  (:func:`empathos.scoring.stats.paired_summary`, each item its own cluster).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from empathos.bench.campaign import read_item
from empathos.bench.protocol import Values, benchmark
from empathos.bench.record import BenchItemRecord, BenchName
from empathos.bench.registry import REGISTRY
from empathos.errors import ConfigError, RecordError
from empathos.run.manifest import MANIFEST_NAME, read_manifest
from empathos.scoring.stats import (
    PairedSummary,
    bootstrap_means,
    cluster_bootstrap_weights,
    paired_summary,
)

__all__ = [
    "BenchDir",
    "BenchSummary",
    "Measure",
    "Paired",
    "compare_dirs",
    "item_values",
    "load_bench_dir",
    "shown",
    "summarise",
]


@dataclass(frozen=True)
class BenchDir:
    """A bench run directory: its benchmark, model label and item records."""

    path: Path
    name: BenchName
    model: str
    records: list[BenchItemRecord]
    protocol: str | None = None
    """How the run was made (the manifest's; None: before protocols were recorded)."""


def load_bench_dir(path: Path, problems: list[RecordError] | None = None) -> BenchDir | None:
    """The bench directory at ``path``; None when it is not one (no manifest ``bench``).

    A record that cannot be read raises, unless ``problems`` is given: then it is added
    there and left out (as ``empathos score`` skips a bad file), and the rest is read."""
    manifest = read_manifest(path) if path.is_dir() else None
    if manifest is None or manifest.bench is None:
        return None
    if manifest.bench.name not in REGISTRY:  # run/ cannot check it: it sits below bench/
        raise ConfigError(
            f"names the benchmark {manifest.bench.name!r}, which is not registered (one of "
            f"{', '.join(REGISTRY)})",
            file=path / MANIFEST_NAME,
        )
    records = []
    for f in sorted((path / "records").glob("*.json")):
        try:
            records.append(read_item(f))
        except RecordError as exc:
            if problems is None:
                raise
            problems.append(exc)
    if not records:
        raise RecordError("holds no item records", file=path / "records")
    return BenchDir(path, manifest.bench.name, records[0].model, records, manifest.bench.protocol)


@dataclass(frozen=True)
class Measure:
    """One number of a benchmark with its 95% interval (None: fewer than 2 values)."""

    name: str
    value: float | None
    low: float | None
    high: float | None
    n: int


@dataclass(frozen=True)
class BenchSummary:
    """A bench directory's numbers."""

    name: BenchName
    model: str
    items: int
    errors: int
    unparseable: int
    measures: list[Measure]
    protocol: str | None = None
    own: dict[str, Any] | None = None
    """The benchmark's own numbers by part (:meth:`Benchmark.summary`)."""


def _interval(values: Sequence[float], scale: float = 1.0) -> tuple[float | None, float | None]:
    if len(values) < 2:
        return None, None
    weights = cluster_bootstrap_weights(np.arange(len(values), dtype=np.int64))
    lo, hi = bootstrap_means(np.asarray(values, dtype=np.float64)[:, None], weights)[:, 0]
    return float(lo) * scale, float(hi) * scale


def item_values(records: Sequence[BenchItemRecord], name: BenchName) -> Values:
    """Measure -> item id -> the item's value (what the benchmark's score averages; its
    :meth:`~empathos.bench.protocol.Benchmark.values`)."""
    return benchmark(name).values(records)


def shown(name: BenchName, measure: str, value: float) -> float:
    """``value`` of ``measure`` as the benchmark rounds it for display, the one rule every
    command applies (score, compare, the report; its
    :meth:`~empathos.bench.protocol.Benchmark.shown`)."""
    return benchmark(name).shown(measure, value)


def _measures(values: dict[str, dict[str, float]]) -> list[Measure]:
    out = []
    for name, by_item in values.items():
        v = list(by_item.values())
        low, high = _interval(v)
        out.append(Measure(name, sum(v) / len(v) if v else None, low, high, len(v)))
    return out


def summarise(bench: BenchDir) -> BenchSummary:
    """The numbers of one bench directory (see the module docstring)."""
    recs = bench.records
    done = [r for r in recs if r.status == "done"]
    errors, unparseable = len(recs) - len(done), sum(r.unparseable for r in done)
    spec = benchmark(bench.name)
    order = {t: i for i, t in enumerate(spec.measure_order)}
    measures = sorted(_measures(spec.values(recs)), key=lambda m: order.get(m.name, 99))
    measures = [  # the benchmark's rounding of the mean
        Measure(m.name, spec.shown(m.name, m.value), m.low, m.high, m.n)
        if m.value is not None else m
        for m in measures
    ]  # fmt: skip
    return BenchSummary(
        bench.name,
        bench.model,
        len(recs),
        errors,
        unparseable,
        measures,
        bench.protocol,
        spec.summary(recs),
    )


@dataclass(frozen=True)
class Paired:
    """One measure of two directories compared over their shared items."""

    measure: str
    summary: PairedSummary


def compare_dirs(base: BenchDir, trained: BenchDir) -> list[Paired]:
    """Per measure, trained - base paired over the items both answered."""
    if base.name != trained.name:
        raise RecordError(f"is {trained.name}, the base is {base.name}", file=trained.path)
    if base.protocol != trained.protocol:
        raise RecordError(
            f"was run under the {trained.protocol or 'unrecorded'} protocol, the base under "
            f"the {base.protocol or 'unrecorded'} one: rerun one of them so both match",
            file=trained.path,
        )
    a_vals = item_values(trained.records, trained.name)
    b_vals = item_values(base.records, base.name)
    out = []
    for measure, a_items in a_vals.items():
        b_items = b_vals.get(measure, {})
        shared = sorted(set(a_items) & set(b_items))
        a = np.asarray([a_items[i] for i in shared], dtype=np.float64)
        b = np.asarray([b_items[i] for i in shared], dtype=np.float64)
        clusters = np.arange(len(shared), dtype=np.int64)
        out.append(Paired(measure, paired_summary(a, b, clusters)))
    return out
