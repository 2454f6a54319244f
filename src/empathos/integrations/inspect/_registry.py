"""The module Inspect's entry point loads (``[project.entry-points.inspect_ai]``): importing
it registers the ``empa`` task and the ``epmq`` scorer as ``empathos/empa`` and
``empathos/epmq``, and the benchmarks of ``empathos bench`` as ``empathos/emobench``,
``empathos/eqbench`` and ``empathos/eqbench3``."""

from empathos.integrations.inspect.bench_tasks import emobench, eqbench, eqbench3
from empathos.integrations.inspect.scorer import epmq
from empathos.integrations.inspect.task import empa

__all__ = ["emobench", "empa", "epmq", "eqbench", "eqbench3"]
