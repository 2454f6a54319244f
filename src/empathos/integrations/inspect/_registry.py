"""The module Inspect's entry point loads (``[project.entry-points.inspect_ai]``): importing
it registers the ``empa`` task, the ``epmq`` scorer and the judge's meta-check as
``empathos/empa``, ``empathos/epmq`` and ``empathos/empa_judge_check``, and the benchmarks of
``empathos bench`` as ``empathos/emobench``, ``empathos/eqbench`` and ``empathos/eqbench3``."""

from empathos.integrations.inspect.bench_tasks import emobench, eqbench, eqbench3
from empathos.integrations.inspect.judge_check import empa_judge_check
from empathos.integrations.inspect.scorer import epmq
from empathos.integrations.inspect.task import empa

__all__ = ["emobench", "empa", "empa_judge_check", "epmq", "eqbench", "eqbench3"]
