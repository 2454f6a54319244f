"""Every benchmark of ``empathos bench`` as an Inspect task, on its code: each name in
the registry of :mod:`empathos.bench.protocol` is the task ``empathos/<name>``
(:data:`BENCH_TASKS`, made from the registry when this module is imported), e.g.
``inspect eval empathos/emobench -T data=PATH --model M``. A benchmark's further roles
are Inspect model roles (``empathos/eqbench3``: ``--model-role judge=J``;
``empathos/sage``: ``--model-role user=U``). The task's description and its ``data``
help come from the benchmark's module (``about``, ``data_help``).

One sample per item (the benchmark's ``cases`` under its default protocol, read from
your copy, ``-T data``); the solver plays it with the case's own ``play`` coroutine, the
one ``empathos bench`` uses (its benchmark's module, found in the registry, as are its
roles and metrics), every model call through our client over the Inspect model
(:func:`.backend.role_client`), and keeps the item's record (the same JSON as a record
file of ``empathos bench``) in the sample's store under ``empathos:bench``. An item whose
endpoint failed raises, so the sample is an error in Inspect's terms, never a wrong
answer. The scorer reads the store; the task's metric aggregates as ``empathos bench
score`` does (:func:`empathos.bench.summary.summarise`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import get_model, model_roles
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, Value, metric, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver

from empathos import __version__
from empathos.bench.campaign import bench_cases
from empathos.bench.play import BenchCase, Roles, roles_of
from empathos.bench.protocol import benchmark
from empathos.bench.record import BenchItemRecord
from empathos.bench.registry import REGISTRY
from empathos.bench.summary import BenchDir, summarise
from empathos.errors import EmpathosError
from empathos.integrations.inspect.backend import role_client
from empathos.integrations.inspect.preflight import prerequisite
from empathos.llm import ChatModel

__all__ = [
    "BENCH_KEY",
    "BENCH_TASKS",
    "BenchItemFailed",
    "bench_item",
    "bench_metrics",
    "bench_score",
    "bench_task",
]

BENCH_KEY = "empathos:bench"


class BenchItemFailed(EmpathosError):
    """An item's endpoint failed (or its judge rated nothing): the sample is an error."""


def _cases(name: str, data: str) -> dict[str, BenchCase]:
    try:
        cases, _ = bench_cases(name, Path(data))  # the default protocol
    except EmpathosError as exc:
        raise prerequisite(f"empathos/{name}: -T data: {exc.line()}") from None
    return {c.id: c for c in cases}


def _roles(name: str) -> Roles:
    """The benchmark's roles: the model under test is Inspect's model, each other role the
    Inspect model role of its name (``--model-role judge=MODEL``)."""
    tested = get_model()
    models: list[tuple[str, ChatModel, str]] = [
        ("model_under_test", role_client(tested, "tested"), str(tested))
    ]
    for role in benchmark(name).roles[1:]:
        if role not in model_roles():
            raise prerequisite(f"empathos/{name}: no {role}: pass --model-role {role}=MODEL")
        model = get_model(role=role, required=True)
        models.append((role, role_client(model, role), str(model)))
    return roles_of(models)


@solver
def bench_item(  # inspect-evals-lint: ignore[custom_solver_tests] -- run by the task tests
    name: str, cases: Mapping[str, BenchCase]
) -> Solver:
    """Play the sample's item (its id is the item id) as ``empathos bench`` does."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        case = cases[str(state.sample_id)]
        record = await case.play(case, _roles(name))
        state.store.set(BENCH_KEY, record.model_dump(mode="json"))
        if record.status == "error":
            raise BenchItemFailed(record.error or "no answer", field=case.id)
        return state

    return solve


@metric
def bench_metrics() -> Metric:
    """The benchmark's numbers over the scored samples, as ``empathos bench score``."""

    def compute(scores: list[SampleScore]) -> Value:
        records = [
            BenchItemRecord.model_validate(s.score.metadata["record"])
            for s in scores
            if s.score.metadata and "record" in s.score.metadata
        ]
        if not records:
            return {"scored": 0.0}
        summary = summarise(BenchDir(Path(), records[0].bench, records[0].model, records))
        out: dict[str, float] = {
            m.name: float(m.value) for m in summary.measures if m.value is not None
        }
        out.update(benchmark(summary.name).metrics(records))
        out["unparseable"] = float(summary.unparseable)
        return out

    return compute


@scorer(metrics=[bench_metrics()])
def bench_score() -> Scorer:
    """The item's score from the record in the sample's store (its benchmark's measure:
    EmoBench the share of its tasks right; EQ-Bench the first-pass score; EQ-Bench 3 the
    task score, 0-20; SAGE the final emotion, 0-100); an unparseable answer scores as its
    benchmark counts it."""

    async def score(state: TaskState, target: Target) -> Score:
        data = state.store.get(BENCH_KEY)
        if data is None:
            return Score.unscored(reason="no_record", explanation="no item record stored")
        record = BenchItemRecord.model_validate(data)
        values = list(record.scores.values())
        first = record.scores.get("first_pass", record.scores.get("task"))
        value = first if first is not None else (sum(values) / len(values) if values else 0.0)
        return Score(
            value=value,
            answer=record.messages[-1].content if record.messages else "",
            explanation="unparseable" if record.unparseable else "",
            metadata={"record": data},
        )

    return score


def _task(name: str, data: str) -> Task:
    cases = _cases(name, data)
    return Task(
        dataset=[Sample(id=c.id, input=c.id, metadata={"bench": name}) for c in cases.values()],
        solver=bench_item(name, cases),
        scorer=bench_score(),
        version=1,
        metadata={"empathos_version": __version__, "bench": name, "data": data},
    )


def _doc(name: str) -> str:
    """The task's docstring (what ``inspect`` shows of it), from the benchmark's module."""
    bench = benchmark(name)
    roles = "".join(f" --model-role {r}=MODEL" for r in bench.roles[1:])
    run = f"inspect eval empathos/{name} -T data=PATH --model MODEL{roles}"
    return f"{bench.about}\n\n``{run}``\n\nArgs:\n    data: {bench.data_help}\n"


def bench_task(name: str) -> Callable[[str], Task]:
    """The registered benchmark ``name`` as an Inspect task, registered as
    ``empathos/<name>`` with its one parameter, ``data`` (the user's copy)."""

    def make(data: str) -> Task:
        return _task(name, data)

    make.__name__ = make.__qualname__ = name
    make.__doc__ = _doc(name)
    return task(name=name)(make)


#: Every registered benchmark's Inspect task, by name (:data:`empathos.bench.registry.
#: REGISTRY`, in its order); importing this module registers them with Inspect.
BENCH_TASKS: dict[str, Callable[[str], Task]] = {name: bench_task(name) for name in REGISTRY}
__all__ += list(BENCH_TASKS)


def __getattr__(name: str) -> Callable[[str], Task]:
    """A benchmark's task by its name (``emobench``, ``eqbench``, ``eqbench3``, ``sage``)."""
    try:
        return BENCH_TASKS[name]
    except KeyError:
        raise AttributeError(f"no {name!r} here (nor a benchmark of that name)") from None
