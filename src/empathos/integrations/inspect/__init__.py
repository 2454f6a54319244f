"""EMPA as an Inspect AI task (the ``empathos[inspect]`` extra). See docs/inspect.md.

- :mod:`.task`: the ``empa`` task (``inspect eval empathos/empa``), registered through the
  package entry point;
- :mod:`.dataset`: its parameters and its dataset, one sample per scenario;
- :mod:`.solver`: the dialogue, ``empathos run``'s sandbox with Inspect's models as roles;
- :mod:`.backend`: an Inspect ``Model`` as a backend of our model client;
- :mod:`.transcript`: what a sample keeps in its store (the record, a turn table);
- :mod:`.scorer`: EPM-Q per dialogue and the task's metrics, as ``empathos score``;
- :mod:`.preflight`: the checks before the first sample (roles bound, servers reachable);
- :mod:`.judge_check`: ``empa_judge_check``, a meta-check of the judge role;
- :mod:`.bench_tasks`: every benchmark of ``empathos bench``'s registry as a task on its code
  (``emobench``, ``eqbench``, ``eqbench3``, ``sage``: :data:`.bench_tasks.BENCH_TASKS`);
- :mod:`.logs`: Inspect logs of the task back to our record files
  (``empathos import-inspect``).

Nothing else in empathos imports inspect-ai.
"""

from empathos.integrations.inspect.bench_tasks import BENCH_TASKS
from empathos.integrations.inspect.bench_tasks import __getattr__ as __getattr__
from empathos.integrations.inspect.judge_check import empa_judge_check
from empathos.integrations.inspect.scorer import empa_metrics, epmq
from empathos.integrations.inspect.task import empa

# emobench, eqbench, ...: each registered benchmark's task, by its name (``__getattr__``)
__all__ = ["BENCH_TASKS", "empa", "empa_judge_check", "empa_metrics", "epmq"]
__all__ += list(BENCH_TASKS)
