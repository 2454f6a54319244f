"""``python with_toy.py ARGS``: the ``empathos`` command with the toy benchmark registered by
one registry line, as a user adding a benchmark would add it to ``bench/registry.py``."""

import sys

from empathos.bench.registry import REGISTRY

REGISTRY["toy"] = "toy_bench:TOY"

from empathos.cli.main import main  # noqa: E402  (the command is made from the registry)

sys.argv[0] = "empathos"
main()
