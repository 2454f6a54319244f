"""A bench run directory's numbers, and two directories compared item by item.

- :func:`load_bench_dir`: the manifest's benchmark and the item records of a directory that
  ``empathos bench`` wrote (None for any other directory: EMPA runs are scored elsewhere).
- :func:`summarise`: the benchmark's numbers from the records (pure): EmoBench accuracy per
  task and language with a bootstrap interval; EQ-Bench's score and parse rate; EQ-Bench 3's
  rubric score (0-100) and the mean of every criterion. Items that ended as errors are left
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
from empathos.bench.emobench import TASKS, Accuracy, Scored, accuracy_table
from empathos.bench.eqbench import EqbenchScore, ItemResult, Ratings, eqbench_score
from empathos.bench.protocol import benchmark
from empathos.bench.record import BenchItemRecord, BenchName
from empathos.errors import RecordError
from empathos.run.manifest import read_manifest
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
    emobench: list[Accuracy] | None = None
    eqbench: EqbenchScore | None = None
    criteria: dict[str, float] | None = None
    protocol: str | None = None
    lenient_only: int | None = None
    """EmoBench: answers only the lenient diagnostic reader could read (never scored)."""
    own: dict[str, Any] | None = None
    """A registered benchmark's own numbers (:meth:`Benchmark.summary`)."""


def _interval(values: Sequence[float], scale: float = 1.0) -> tuple[float | None, float | None]:
    if len(values) < 2:
        return None, None
    weights = cluster_bootstrap_weights(np.arange(len(values), dtype=np.int64))
    lo, hi = bootstrap_means(np.asarray(values, dtype=np.float64)[:, None], weights)[:, 0]
    return float(lo) * scale, float(hi) * scale


def _eq_result(records: Sequence[BenchItemRecord]) -> EqbenchScore:
    done = [r for r in records if r.status == "done"]
    items = [
        ItemResult(r.scores.get("first_pass"), r.scores.get("revised"), Ratings({}, {}))
        for r in done
    ]
    return eqbench_score(items, len(records))


def item_values(records: Sequence[BenchItemRecord], name: BenchName) -> dict[str, dict[str, float]]:
    """Measure -> item id -> the item's value (what the benchmark's score averages):
    EmoBench 0/1 per task (in %; the paper protocol: the mean over choice orders), EQ-Bench
    the question score x 10 of the pass the benchmark's rule takes, EQ-Bench 3 task score
    x 5."""
    out: dict[str, dict[str, float]] = {}
    eq_key = "first_pass"
    if name == "eqbench" and _eq_result(records).uses_revised:
        eq_key = "revised"
    registered = benchmark(name)
    for r in records:
        if r.status != "done":
            continue
        if registered is not None:
            for measure, v in registered.item_values(r).items():
                out.setdefault(measure, {})[r.item_id] = v
        elif name == "emobench":
            for task, v in r.scores.items():
                out.setdefault(task, {})[f"{r.item_id}"] = 100.0 * v
        elif name == "eqbench" and eq_key in r.scores:
            out.setdefault("score", {})[r.item_id] = 10.0 * r.scores[eq_key]
        elif name == "eqbench3" and "task" in r.scores:
            out.setdefault("rubric", {})[r.item_id] = 5.0 * r.scores["task"]
    return out


def shown(name: BenchName, measure: str, value: float) -> float:
    """``value`` of ``measure`` as the benchmark rounds it for display, the one rule every
    command applies (score, compare, the report): EQ-Bench 3's rubric score is its 0-20
    mean rounded to 2 decimals, times 5; every other number is shown as computed (to 2
    decimals)."""
    if name == "eqbench3" and measure == "rubric":
        mean = round(value / 5.0, 9)  # float noise of how the mean was summed: not a digit
        return round(round(mean, 2) * 5.0, 2)
    return value


def _measures(values: dict[str, dict[str, float]]) -> list[Measure]:
    out = []
    for name, by_item in values.items():
        v = list(by_item.values())
        low, high = _interval(v)
        out.append(Measure(name, sum(v) / len(v) if v else None, low, high, len(v)))
    return out


def _emobench_rows(recs: Sequence[BenchItemRecord]) -> list[Scored]:
    return [
        Scored(r.task or "", r.language or "", r.scores if r.status == "done" else None,
               r.unparseable)
        for r in recs
    ]  # fmt: skip


def summarise(bench: BenchDir) -> BenchSummary:
    """The numbers of one bench directory (see the module docstring)."""
    recs = bench.records
    done = [r for r in recs if r.status == "done"]
    errors, unparseable = len(recs) - len(done), sum(r.unparseable for r in done)
    measures = _measures(item_values(recs, bench.name))
    emo = eq = criteria = own = None
    registered = benchmark(bench.name)
    if registered is not None:
        own = registered.summary(recs)
    elif bench.name == "emobench":
        order = {t: i for i, t in enumerate(TASKS)}
        measures.sort(key=lambda m: order.get(m.name, 99))
        emo = accuracy_table(_emobench_rows(recs))
    elif bench.name == "eqbench":
        eq = _eq_result(recs)
    else:
        rated: dict[str, list[float]] = {}
        for r in done:
            for c, v in r.judge.criteria.items() if r.judge else ():
                rated.setdefault(c, []).append(v)
        criteria = {c: sum(v) / len(v) for c, v in sorted(rated.items())}
        measures = [  # the benchmark's rounding of the mean
            Measure(m.name, shown(bench.name, m.name, m.value), m.low, m.high, m.n)
            if m.value is not None else m
            for m in measures
        ]  # fmt: skip
    lenient = None
    if bench.name == "emobench":
        lenient = sum(int((r.detail or {}).get("lenient_only", 0)) for r in done)
    return BenchSummary(
        bench.name, bench.model, len(recs), errors, unparseable, measures, emo, eq, criteria,
        bench.protocol, lenient, own,
    )  # fmt: skip


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
