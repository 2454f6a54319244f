"""SAGE ("Sentient Agent as a Judge"): its rules (emotion dynamics, stop rules, the simulator's
prompts filled and its answers read, the Sentient numbers) in :mod:`.rules` (pure), and the
reader of the user's copy and of result files in :mod:`.copy`. The benchmark runs on them in
:mod:`empathos.bench.sage_bench`; the sandbox's SAGE reward source
(:mod:`empathos.sandbox.emotion`) too. See docs/bench.md, "SAGE"."""
