"""EmoBench, EQ-Bench (v2) and EQ-Bench 3's rubric pass as Inspect tasks, on the code of
``empathos bench``: ``inspect eval empathos/emobench -T data=PATH --model M`` (likewise
``empathos/eqbench``; ``empathos/eqbench3`` also takes ``--model-role judge=J``).

One sample per item (:func:`empathos.bench.campaign.bench_cases`, read from your copy of the
benchmark, ``-T data``); the solver plays it with the case's own ``play`` coroutine, the
one ``empathos bench`` uses (its benchmark's module, found in the registry of
:mod:`empathos.bench.protocol`, as are its roles and metrics), every model call through
our client over the Inspect model (:func:`.backend.role_client`), and keeps the item's
record (the same JSON as a record file of ``empathos bench``) in the sample's store under
``empathos:bench``. An item whose endpoint failed raises, so the sample is an error in
Inspect's terms, never a wrong answer. The scorer reads the store; the task's metric
aggregates as ``empathos bench score`` does (:func:`empathos.bench.summary.summarise`).
"""

from __future__ import annotations

from collections.abc import Mapping
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
from empathos.bench.record import BenchItemRecord, BenchName
from empathos.bench.summary import BenchDir, summarise
from empathos.errors import EmpathosError
from empathos.integrations.inspect.backend import role_client
from empathos.integrations.inspect.preflight import prerequisite
from empathos.llm import ChatModel

__all__ = [
    "BENCH_KEY",
    "BenchItemFailed",
    "bench_item",
    "bench_metrics",
    "bench_score",
    "emobench",
    "eqbench",
    "eqbench3",
]

BENCH_KEY = "empathos:bench"


class BenchItemFailed(EmpathosError):
    """An item's endpoint failed (or its judge rated nothing): the sample is an error."""


def _cases(name: BenchName, data: str) -> dict[str, BenchCase]:
    try:
        cases, _ = bench_cases(name, Path(data))
    except EmpathosError as exc:
        raise prerequisite(f"empathos/{name}: -T data: {exc.line()}") from None
    return {c.id: c for c in cases}


def _roles(name: BenchName) -> Roles:
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
    name: BenchName, cases: Mapping[str, BenchCase]
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
    task score, 0-20); an unparseable answer scores as its benchmark counts it."""

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


def _task(name: BenchName, data: str) -> Task:
    cases = _cases(name, data)
    return Task(
        dataset=[Sample(id=c.id, input=c.id, metadata={"bench": name}) for c in cases.values()],
        solver=bench_item(name, cases),
        scorer=bench_score(),
        version=1,
        metadata={"empathos_version": __version__, "bench": name, "data": data},
    )


@task
def emobench(data: str) -> Task:
    """EmoBench: multiple-choice emotional understanding and application.

    Args:
        data: Your copy of Sahandfer/EmoBench (a clone or its data folder).
    """
    return _task("emobench", data)


@task
def eqbench(data: str) -> Task:
    """EQ-Bench (v2): emotion intensities scored against the references.

    Args:
        data: Your copy of EQ-bench/EQ-Bench (a clone or its data folder).
    """
    return _task("eqbench", data)


@task
def eqbench3(data: str) -> Task:
    """EQ-Bench 3's rubric pass: scripted role-plays and a debrief, rated by the judge role.

    Args:
        data: Your copy of EQ-bench/eqbench3 (a clone or its data folder).
    """
    return _task("eqbench3", data)
