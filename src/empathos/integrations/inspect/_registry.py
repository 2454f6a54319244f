"""The module Inspect's entry point loads (``[project.entry-points.inspect_ai]``): importing
it registers the ``empa`` task, the ``epmq`` scorer and the judge's meta-check as
``empathos/empa``, ``empathos/epmq`` and ``empathos/empa_judge_check``, and every benchmark
of ``empathos bench``'s registry (:data:`empathos.bench.registry.REGISTRY`) as
``empathos/<name>`` (:data:`.bench_tasks.BENCH_TASKS`: ``empathos/emobench``,
``empathos/eqbench``, ``empathos/eqbench3``, ``empathos/sage``)."""

from empathos.integrations.inspect.bench_tasks import BENCH_TASKS
from empathos.integrations.inspect.judge_check import empa_judge_check
from empathos.integrations.inspect.scorer import epmq
from empathos.integrations.inspect.task import empa

__all__ = ["BENCH_TASKS", "empa", "empa_judge_check", "epmq"]
