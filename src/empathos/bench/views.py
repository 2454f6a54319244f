"""What the bench commands show, as plain data: a summary's JSON, ``bench compare``'s table,
the report's bench section, and which directories are bench runs (the commands draw and
print them)."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from empathos.bench.protocol import TableData, num, registered
from empathos.bench.summary import BenchSummary, compare_dirs, load_bench_dir, shown, summarise
from empathos.errors import ConfigError, RecordError
from empathos.run.manifest import is_bench_dir

__all__ = ["compared", "is_bench_dir", "section_html", "summary_json"]


def summary_json(s: BenchSummary) -> dict[str, Any]:
    """One bench directory's summary as plain JSON values."""
    out: dict[str, Any] = {
        "bench": s.name, "protocol": s.protocol, "model": s.model, "items": s.items,
        "errors": s.errors,
        "unparseable": s.unparseable,
        "measures": {m.name: {"value": m.value, "low": m.low, "high": m.high, "n": m.n}
                     for m in s.measures},
    }  # fmt: skip
    out.update(s.own or {})  # the benchmark's own numbers, by part
    return out


def compared(base: Path, trained: Path, problems: list[RecordError] | None = None) -> TableData:
    """Trained - base per measure, paired over the items both answered; the means shown by
    the benchmark's rounding (:func:`empathos.bench.summary.shown`, as ``bench score``
    shows them) and the difference as the difference of those. Unreadable records are
    added to ``problems`` and left out (raised when it is None)."""
    a, b = load_bench_dir(base, problems), load_bench_dir(trained, problems)
    for path, bench in ((base, a), (trained, b)):
        if bench is None:
            raise ConfigError(
                "is not a bench run directory (empathos bench writes them)", file=path
            )
    assert a is not None and b is not None
    proto = f" ({a.protocol} protocol, both runs)" if a.protocol else ""
    table = TableData(
        f"{a.name}{proto}: {b.model} - {a.model}, paired over items",
        ("measure", "base", "trained", "difference", "95% interval", "p-value", "items"),
    )
    for p in compare_dirs(a, b):
        s = p.summary
        mb, ma = (None if x is None else shown(a.name, p.measure, x) for x in (s.mean_b, s.mean_a))
        diff = None if ma is None or mb is None else ma - mb
        ci = "-" if s.ci is None else f"{s.ci[0]:+.2f} - {s.ci[1]:+.2f}"
        table.rows.append((p.measure, num(mb), num(ma), num(diff, "{:+.2f}"), ci,
                           num(s.p_value, "{:.3f}"), str(s.pairs)))  # fmt: skip
    return table


def section_html(paths: list[Path]) -> str:
    """The report's section for bench directories: each benchmark's measures per model."""
    rows = []
    for path in paths:
        bench = load_bench_dir(path)
        if bench is None:
            continue
        s = summarise(bench)
        for m in s.measures:
            cells = (s.name, s.model, m.name, num(m.value), f"{num(m.low)} - {num(m.high)}",
                     str(m.n), str(s.errors), str(s.unparseable))  # fmt: skip
            rows.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
    head = "".join(
        f"<th>{h}</th>"
        for h in ("benchmark", "model", "measure", "value", "95% interval", "items", "errors",
                  "unparseable")
    )  # fmt: skip
    return (
        '<section id="sec-bench"><h2>Other benchmarks (empathos bench)</h2>'
        f'<table id="bench"><tr>{head}</tr>{"".join(rows)}</table>'
        f'<p class="note">{"; ".join(b.note for b in registered())}. '
        "Intervals: bootstrap over items; errors (endpoint "
        "failures) are left out. See docs/bench.md.</p></section>"
    )
