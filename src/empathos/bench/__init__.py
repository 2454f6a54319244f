"""Other emotional-intelligence benchmarks on the same endpoints: EmoBench, EQ-Bench (v2) and
EQ-Bench 3's rubric pass.

Each benchmark's data and prompt files are read from the user's copy (``--data``), never
shipped; the answer parsing and the scoring follow each benchmark's published method and are
our own writing. Pure parts (parsing, scoring, aggregation) sit apart from the file readers
and the runner. See docs/bench.md.
"""
