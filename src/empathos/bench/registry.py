"""The benchmark registry: every benchmark's name and where its implementation lives.

Plain data, importing nothing, so that the record schema (:mod:`empathos.bench.record`) can
check a benchmark's name against it without importing the benchmarks themselves. The
protocol (:mod:`empathos.bench.protocol`) finds each benchmark here by name. Adding a
benchmark adds its module and one line here (docs/architecture.md, "How to add a benchmark").
"""

from __future__ import annotations

__all__ = ["REGISTRY"]

#: Benchmark name -> "module:attribute" of its implementation (imported when first asked
#: for), in the order the commands and the report list them.
REGISTRY: dict[str, str] = {
    "emobench": "empathos.bench.emobench_bench:EMOBENCH",
    "eqbench": "empathos.bench.eqbench_bench:EQBENCH",
    "eqbench3": "empathos.bench.eqbench3_bench:EQBENCH3",
    "sage": "empathos.bench.sage_bench:SAGE",
}
