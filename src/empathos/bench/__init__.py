"""Other emotional-intelligence benchmarks on the same endpoints: EmoBench, EQ-Bench (v2),
EQ-Bench 3's rubric pass and SAGE, each one module behind the benchmark protocol and found
in its registry (:mod:`empathos.bench.protocol`).

Each benchmark's data and prompt files are read from the user's copy (``--data``), never
shipped; the answer parsing and the scoring follow each benchmark's published method and are
our own writing. Pure parts (parsing, scoring, aggregation) sit apart from the file readers
and the runner. See docs/bench.md.
"""
